#!/usr/bin/env python3
"""One interactive sign-in through the page, against the password grant (the interactive issue's measurement).

    python3 bench/scenarios/signin.py --binary .build/release/portcullis [--rounds 30] [--cost 10]

Starts the server on a copy of Config/ with bcrypt at the production cost (10). Each round of the
interactive flow is what a browser and an app do over loopback: GET /authorize (the page), POST the form
(password checked, session created, 302 to the redirect URI with the code), and the app's redemption of
the code with its PKCE verifier. The baseline, in the same run and the same process, is the password grant
for the same user (one bcrypt, one token response): the ratio is what the page, the session and the code
cost on top of the password check. Also prints the page's weight (HTML + stylesheet, plain and gzip) and
an SSO round (a second authorization with the session cookie: no page, no bcrypt).
"""

import argparse
import base64
import gzip
import hashlib
import os
import re
import secrets
import statistics
import time
import urllib.parse

import requests

import benchserver
from benchserver import CLIENT, REPO
REDIRECT = "http://localhost:7777/"
SCOPE = "api://contoso-mail/Mail.Read openid profile offline_access"
USER, PASSWORD = "carol@contoso.example", "Carol-dev-pass1"


def pkce():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def form_of(page):
    action = re.search(r'<form[^>]*action="([^"]+)"', page).group(1).replace("&amp;", "&")
    fields = dict(re.findall(r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page))
    return action, fields


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/release/portcullis"))
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--cost", type=int, default=10)
    parser.add_argument("--port", type=int, default=18191)
    parser.add_argument("--smoke", action="store_true", help="two rounds, no timing claims")
    args = parser.parse_args()
    rounds = 2 if args.smoke else args.rounds

    settings = {"passwords": {"bcryptCost": args.cost}, "logLevel": "warning"}
    with benchserver.running(args.binary, args.port, settings, "portcullis-signin-") as base:
        authority = f"{base}/contoso.example/oauth2/v2.0"
        headers = {"x-client-OS": "Linux"}

        def authorize_url(challenge, state):
            return f"{authority}/authorize?" + urllib.parse.urlencode({
                "response_type": "code", "client_id": CLIENT, "redirect_uri": REDIRECT, "scope": SCOPE, "state": state,
                "nonce": secrets.token_urlsafe(8), "code_challenge": challenge, "code_challenge_method": "S256", "login_hint": USER})

        def redeem(browser, location, verifier, state):
            query = urllib.parse.parse_qs(urllib.parse.urlparse(location).query)
            assert query.get("state") == [state], location
            reply = requests.post(f"{authority}/token", headers=headers, data={
                "grant_type": "authorization_code", "client_id": CLIENT, "code": query["code"][0], "redirect_uri": REDIRECT,
                "code_verifier": verifier, "scope": SCOPE}, timeout=60)
            assert reply.status_code == 200 and "access_token" in reply.json(), reply.text
            return reply.json()

        def interactive(browser):
            verifier, challenge = pkce()
            state = secrets.token_urlsafe(8)
            started = time.monotonic()
            page = browser.get(authorize_url(challenge, state), timeout=60)
            assert page.status_code == 200 and 'name="password"' in page.text, page.text[:300]
            action, fields = form_of(page.text)
            fields.update(username=USER, password=PASSWORD)
            reply = browser.post(urllib.parse.urljoin(page.url, action), data=fields, allow_redirects=False, timeout=60)
            assert reply.status_code == 302, (reply.status_code, reply.text[:300])
            redeem(browser, reply.headers["Location"], verifier, state)
            return time.monotonic() - started, page

        def single_sign_on(browser):
            verifier, challenge = pkce()
            state = secrets.token_urlsafe(8)
            started = time.monotonic()
            reply = browser.get(authorize_url(challenge, state) + "&prompt=none", allow_redirects=False, timeout=60)
            assert reply.status_code == 302 and "code=" in reply.headers["Location"], reply.text[:300]
            redeem(browser, reply.headers["Location"], verifier, state)
            return time.monotonic() - started

        def password_grant():
            started = time.monotonic()
            reply = requests.post(f"{authority}/token", headers=headers, data={
                "grant_type": "password", "client_id": CLIENT, "username": USER, "password": PASSWORD, "scope": SCOPE}, timeout=60)
            assert reply.status_code == 200, reply.text
            return time.monotonic() - started

        # Warm-up, then interleaved rounds so that noise falls on both sides alike.
        interactive(requests.Session()); password_grant()
        flows, grants, ssos = [], [], []
        page = None
        for _ in range(rounds):
            browser = requests.Session()
            elapsed, page = interactive(browser)
            flows.append(elapsed)
            ssos.append(single_sign_on(browser))
            grants.append(password_grant())
        css = requests.get(f"{base}/static/portcullis.css", timeout=10).content
        html = page.content
        if args.smoke:
            print(f"bench smoke: signin ok ({rounds} interactive sign-ins, SSO and password grants; debug build — not a measurement)")
            return
        ms = lambda values: f"p50 {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"
        print(f"interactive sign-in (page + form + redemption), {rounds} rounds: {ms(flows)}")
        print(f"password grant (baseline, same run):           {ms(grants)}")
        print(f"ratio interactive / password grant (p50):      {statistics.median(flows) / statistics.median(grants):.2f}")
        print(f"SSO (prompt=none with the session + redemption): {ms(ssos)}")
        print(f"page weight: HTML {len(html)} B ({len(gzip.compress(html))} B gzip), stylesheet {len(css)} B "
              f"({len(gzip.compress(css))} B gzip), total {len(html) + len(css)} B; no scripts, images or fonts")


if __name__ == "__main__":
    main()
