#!/usr/bin/env python3
"""MSAL for Python against a running Portcullis (Microsoft identity platform dialect).

Run by scripts/msal-interop inside a loopback-only network namespace, where
Portcullis serves TLS on port 443 with a `portcullis dev-cert` certificate:
MSAL accepts only https authorities, and its password grant calls user-realm
discovery on port 443 of the authority host whatever port the authority names.

    python3 msal_interop.py --cafile KEYS/dev-cert.pem [--base-url https://localhost]

Tests
  (a) ConfidentialClientApplication, client_credentials, client_capabilities=["protapp"]:
      an access token for api://contoso-mail/.default whose aud, roles/azp and xms_cc are right.
  (b) PublicClientApplication, password grant for alice with client_capabilities=["protapp"]:
      access token, id_token_claims, a refresh token in MSAL's cache; then
      acquire_token_silent(force_refresh=True), which redeems the refresh token.
  (c) Interactive sign-in (PROTOCOL §9): initiate_auth_code_flow (PKCE, state, nonce, a loopback
      redirect URI) → the real sign-in page driven over HTTP like a browser (cookies, CSRF token,
      hidden fields) → acquire_token_by_auth_code_flow (MSAL checks state and nonce) →
      acquire_token_silent with the refresh token; then SSO: a second flow completes without the page.
  (d) Device code: initiate_device_flow (MSAL reads device_authorization_endpoint from discovery) →
      acquire_token_by_device_flow polling while the test enters the code and signs in on /devicelogin.
  (e) protapp through the interactive flow, with MSAL's platform headers presented as MSAL for iOS
      (the demo policy requires app protection on mobile platforms): the code is issued, redemption is
      refused with 53005 protection_policy_required; remediation (a compliance-service token by SSO,
      enrollment, policy applied); then acquire_token_silent gets the token with xms_cc=protapp.
  (f) MFA (PROTOCOL §10) for Dave, whom the demo configuration's policy asks for a second factor on the
      mail API, with pyotp as the authenticator app: the password grant answers 50076 basic_action; the
      code flow registers a factor on the page (a wrong first code refused), amr pwd+mfa; a silent refresh
      keeps mfa; a later sign-in asks only for the code, refuses the replayed one and takes the next; five
      wrong codes lock (50053), the right code too while locked.
  (g) Secrets (PROTOCOL §8) checked from outside Swift: the admin writes the demo policy's password and a
      PKCS #12 identity made by `cryptography`; an instance key made by `cryptography` is registered at
      remediation; each secret is opened with pyhpke (RFC 9180: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
      AES-256-GCM, the info string of §8.2); a CSR signed by the key gets a device identity whose leaf
      verifies against GET /{tenant}/pki/ca.pem.
  (h) Authentication strengths (PROTOCOL §12): a policy requires the built-in multifactor strength of Carol; MSAL's
      password grant answers 50076 basic_action; a temporary access pass typed on the page through MSAL's
      auth-code flow meets it (amr tap+mfa), and a silent refresh keeps meeting it.
  (i) Sign-in frequency (PROTOCOL §13) under a moved clock (scripts/msal-interop preloads Tests/Interop/clockshift.c
      into the server): MSAL's silent refresh within the hour works; an hour later it gets 70043 bad_token and
      acquire_token_silent returns nothing.
  (j) Step-up (PROTOCOL §13): authentication context c1 needs mfa for Carol; the test, as the resource, challenges a
      token without acrs; acquire_token_silent(claims_challenge=…) answers 50076; the interactive flow with the claims
      asks for the factor (registered with pyotp); the token has acrs ["c1"], and a silent refresh keeps it unasked.
  (k) Token protection (PROTOCOL §15): a policy with sessionControls.secureSignInSession for Carol on the mail API;
      MSAL for Python (which cannot send DPoP proofs) gets invalid_grant 530084 on the password grant and on the
      auth-code flow's redemption; Alice, whom the policy does not name, still gets her token.
  (l) Continuous access evaluation (PROTOCOL §14) through `portcullis gateway` (--binary): a cp1 client's day-long token
      passes; Bob disabled → 401 insufficient_claims with the nbf claims request; acquire_token_silent(claims_challenge=…)
      refused; enabled again → MSAL's token with the claims passes. The same for a wipe of Alice's mail app enrollment.
  (m) B2B collaboration (PROTOCOL §17): Fabrikam's admin invites Erin of Contoso and requires MFA of guests; MSAL's
      auth-code flow at Fabrikam's authority: Fabrikam's page sends her home to Contoso's, her Contoso password, back to
      Fabrikam, whose own factor she registers (pyotp: Fabrikam does not trust Contoso's MFA); the token is Fabrikam's
      (tid, her guest object ID) with idp = Contoso's issuer and acct 1; MSAL's account is her home account
      ({Contoso oid}.{Contoso tid}, from client_info), and a silent refresh works.
  (n) Certificate credentials (PROTOCOL §21): an RSA 2048 certificate made by `cryptography` registered on the daemon
      through the admin API; MSAL's ConfidentialClientApplication with client_credential={"private_key", "thumbprint"}
      gets the app-role token (and again, with the assertion MSAL keeps, after its cache is cleared); azure-identity's
      CertificateCredential (the PEM with key and certificate) gets one too.
  (o) Workload identity federation (PROTOCOL §21): an OpenID Connect issuer the test serves over TLS on loopback (the
      dev certificate, which the server trusts through PORTCULLIS_CALLBACKS_CA_FILE) signs a service account's token; a
      federated credential for it on the daemon; azure-identity's ClientAssertionCredential (its callback returning the
      issuer's token) and MSAL's client_credential={"client_assertion": …} get the app-role token.
  (p) On-behalf-of (PROTOCOL §21): the demo's middle-tier API (confidential, its requiredResourceAccess naming the mail API's
      Mail.Read) receives Erin's token from the mail app; MSAL's acquire_token_on_behalf_of and azure-identity's
      OnBehalfOfCredential get her token for the mail API (azp the middle tier, her oid, Mail.Read), with a refresh token
      the middle tier redeems; with a DPoP proof, the token is bound to the middle tier's key. Refused: a token for
      another audience (50013), a public client (7000218), no requested_token_use (900144), Erin's token once her sessions
      were revoked (50173). A policy that
      requires MFA of a new user on the mail API: the exchange answers interaction_required with a `claims` naming the
      policy; MSAL's interactive flow with that claims challenge asks for a factor (registered with pyotp) although the
      sign-in is for the middle tier; the exchange of the new token succeeds, with amr pwd+mfa.

Exits 0 when every check passed, 1 on the first failure (with a message saying
what was expected and what came back), 2 on a usage error.
"""
import argparse
import base64
import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import time
import traceback
import urllib.parse
import warnings

from pageform import PageForm

TENANT_DOMAIN = "contoso.example"
TENANT_ID = "7e1b0c54-2f6a-4c1e-9d3b-5a8f0e2c4b71"
PUBLIC_CLIENT = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
DAEMON_CLIENT = "c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02"
DAEMON_SECRET = "daemon-dev-secret-change-me"
RESOURCE = "api://contoso-mail"
# Access tokens name the resource by its application ID, as Entra v2.0 tokens do (PROTOCOL §2.3).
RESOURCE_APP_ID = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"
USERNAME = "alice@contoso.example"
PASSWORD = "Alice-dev-pass1"
USER_OID = "0c9e3a1f-5b7d-4e2a-8c6f-1d3b5a7e9f01"
# Bob is in the demo policy's scope and no earlier test enrolls him.
BOB = "bob@contoso.example"
BOB_PASSWORD = "Bob-dev-pass1"
BOB_OID = "1d8f4b2a-6c8e-4f3b-9d7a-2e4c6b8f0a02"
COMPLIANCE_SCOPE = "api://portcullis-compliance/.default"
LOOPBACK_REDIRECT = "http://localhost:8400"
DAVE = "dave@contoso.example"  # the demo configuration requires MFA for Dave on the mail API
DAVE_PASSWORD = "Dave-dev-pass1"
CAROL = "carol@contoso.example"  # (h): a strength policy of her own, met with a temporary access pass
CAROL_PASSWORD = "Carol-dev-pass1"
CAROL_OID = "2e7a5c3b-7d9f-4a4c-8e8b-3f5d7c9a1b03"
ERIN = "erin@contoso.example"  # (k): excluded from the demo app-protection policy, named by no test's policy
ERIN_PASSWORD = "Erin-dev-pass1"
ERIN_OID = "4a5c7e5d-9f1b-4c6e-8a0d-5b7f9e1c3d05"
# (m) the second tenant of the demo configuration, Erin's host as a B2B guest.
FABRIKAM_DOMAIN = "fabrikam.example"
FABRIKAM_ID = "f4b1c2d3-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
FABRIKAM_CLIENT = "f0ca0000-1111-4a2b-8c3d-4e5f6a7b8c01"
FABRIKAM_ADMIN_CLIENT = "f0ca0000-3333-4a2b-8c3d-4e5f6a7b8c03"
FABRIKAM_ADMIN_SECRET = "fabrikam-admin-dev-secret-change-me"
FABRIKAM_RESOURCE = "api://fabrikam-projects"
FABRIKAM_RESOURCE_APP_ID = "f0ca0000-4444-4a2b-8c3d-4e5f6a7b8c04"
ADMIN_CLIENT = "c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03"
ADMIN_SECRET = "admin-dev-secret-change-me"
# The demo's app configuration policy for Contoso Mail (Config/app-configuration/contoso.example/mail-sales.json).
MAIL_CONFIGURATION_POLICY = "d4e5f6a7-0b1c-4d2e-8f3a-5b6c7d8e9f01"


class Failure(Exception):
    pass


def check(cond, what, got=None):
    if not cond:
        raise Failure(what + ("" if got is None else f"\n    got: {_short(got)}"))


def _short(value, limit=1500):
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"


def jwt_claims(token):
    """Decode a JWT's payload without verifying it (MSAL does not verify either)."""
    parts = token.split(".")
    check(len(parts) == 3, "access token is not a compact JWS (three dot-separated parts)", token)
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    return json.loads(base64.urlsafe_b64decode(payload))


def jwt_header(token):
    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def expect_token(result, what):
    check(isinstance(result, dict), f"{what}: MSAL returned {type(result).__name__}, not a dict", result)
    check("access_token" in result,
          f"{what}: no access_token (MSAL returns the server's error body as the result dict)",
          {k: v for k, v in result.items() if k not in ("refresh_token", "id_token")})


def check_xms_cc(claims, what):
    cc = [str(v).lower() for v in as_list(claims.get("xms_cc"))]
    check("protapp" in cc, f"{what}: access token xms_cc should contain 'protapp'", claims.get("xms_cc"))


def check_times(claims, what):
    for name in ("iat", "nbf", "exp"):
        check(isinstance(claims.get(name), int),
              f"{what}: '{name}' must be a whole-second integer NumericDate", claims.get(name))
    check(claims["nbf"] <= claims["iat"] < claims["exp"], f"{what}: expected nbf <= iat < exp", claims)


class Browser:
    """A cookie-keeping HTTP client that fills in and submits the sign-in pages."""

    def __init__(self, cafile, base):
        import requests
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.verify = cafile
        self.base = base
        self.pages = 0

    def get(self, url):
        return self.session.get(url, allow_redirects=False, timeout=30)

    def submit(self, response, fields, what):
        check(response.status_code in (200, 400), f"{what}: expected a page (200, or 400 showing an error)",
              [response.status_code, response.headers.get("Location"), response.text[:500]])
        check("default-src 'self'" in response.headers.get("Content-Security-Policy", ""),
              f"{what}: the page should carry its Content-Security-Policy", dict(response.headers))
        form = PageForm(response.text)
        check(form.action, f"{what}: the page has no form", response.text[:800])
        check(form.fields.get("csrf"), f"{what}: the form has no CSRF token", form.fields)
        data = dict(form.fields)
        data.update(fields)
        self.pages += 1
        action = form.action if form.action.startswith("http") else self.base + form.action
        return self.session.post(action, data=data, allow_redirects=False, timeout=30)

    @staticmethod
    def redirect_parameters(response, what):
        check(response.status_code == 302 and response.headers.get("Location"),
              f"{what}: expected a redirect to the app", [response.status_code, response.text[:800]])
        parsed = urllib.parse.urlsplit(response.headers["Location"])
        return {k: v[0] for k, v in urllib.parse.parse_qs(parsed.query).items()}


class PlatformSession:
    """An http_client for MSAL that presents its platform headers as MSAL for iOS's (the app the seeds
    are about), leaving everything else MSAL sends untouched."""

    def __init__(self, session, sku="MSAL.iOS", os_version="17.4"):
        self.inner = session
        self.sku = sku
        self.os_version = os_version

    def _headers(self, headers):
        headers = dict(headers or {})
        for name in list(headers):
            if name.lower() in ("x-client-sku", "x-client-os"):
                del headers[name]
        headers["x-client-SKU"] = self.sku
        headers["x-client-OS"] = self.os_version
        return headers

    def post(self, url, params=None, data=None, headers=None, **kwargs):
        return self.inner.post(url, params=params, data=data, headers=self._headers(headers), **kwargs)

    def get(self, url, params=None, headers=None, **kwargs):
        return self.inner.get(url, params=params, headers=self._headers(headers), **kwargs)

    def close(self):
        self.inner.close()


def make_session(cafile):
    import requests
    session = requests.Session()
    # REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE in the environment would override `verify`
    # (QUIRKS.md): ignore the environment altogether (also proxies; there is no network).
    session.trust_env = False
    session.verify = cafile
    return session


def test_client_credentials(msal, authority, issuer, session):
    what = "(a) client_credentials"
    app = msal.ConfidentialClientApplication(
        DAEMON_CLIENT,
        client_credential=DAEMON_SECRET,
        authority=authority,
        client_capabilities=["protapp"],
        instance_discovery=False,
        http_client=session,
    )
    scopes = [f"{RESOURCE}/.default"]
    result = app.acquire_token_for_client(scopes=scopes)
    expect_token(result, what)
    check(str(result.get("token_type", "")).lower() == "bearer", f"{what}: token_type should be Bearer",
          result.get("token_type"))
    header = jwt_header(result["access_token"])
    claims = jwt_claims(result["access_token"])
    check(header.get("alg") in ("ES256", "RS256") and header.get("kid"),
          f"{what}: access token header should carry alg ES256/RS256 and a kid", header)
    check(claims.get("aud") == RESOURCE_APP_ID,
          f"{what}: aud should be the resource's application ID {RESOURCE_APP_ID}", claims.get("aud"))
    check(claims.get("iss") == issuer, f"{what}: iss should be {issuer}", claims.get("iss"))
    check(claims.get("tid") == TENANT_ID, f"{what}: tid should be {TENANT_ID}", claims.get("tid"))
    check("Mail.ReadAll" in as_list(claims.get("roles")) or claims.get("azp") == DAEMON_CLIENT,
          f"{what}: expected roles to contain Mail.ReadAll or azp == {DAEMON_CLIENT}", claims)
    check_xms_cc(claims, what)
    check_times(claims, what)
    print(f"PASS {what}: access token aud={claims.get('aud')} roles={claims.get('roles')} "
          f"azp={claims.get('azp')} xms_cc={claims.get('xms_cc')} alg={header.get('alg')}")

    again = app.acquire_token_for_client(scopes=scopes)
    expect_token(again, f"{what} (second call)")
    check(again.get("token_source") == "cache",
          f"{what}: a second call should be served from MSAL's token cache", again.get("token_source"))
    print(f"PASS {what}: second call served from MSAL's cache")


def test_password_and_refresh(msal, authority, issuer, session):
    what = "(b) password"
    app = msal.PublicClientApplication(
        PUBLIC_CLIENT,
        authority=authority,
        client_capabilities=["protapp"],
        instance_discovery=False,
        http_client=session,
    )
    scopes = [f"{RESOURCE}/Mail.Read"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ROPC is deprecated for public clients
        result = app.acquire_token_by_username_password(USERNAME, PASSWORD, scopes=scopes)
    expect_token(result, what)
    claims = jwt_claims(result["access_token"])
    check(claims.get("aud") == RESOURCE_APP_ID,
          f"{what}: aud should be the resource's application ID {RESOURCE_APP_ID}", claims.get("aud"))
    check(claims.get("iss") == issuer, f"{what}: iss should be {issuer}", claims.get("iss"))
    check("Mail.Read" in str(claims.get("scp", "")).split(), f"{what}: scp should contain Mail.Read",
          claims.get("scp"))
    check(claims.get("azp") == PUBLIC_CLIENT, f"{what}: azp should be {PUBLIC_CLIENT}", claims.get("azp"))
    check(claims.get("oid") == USER_OID, f"{what}: oid should be alice's object ID {USER_OID}", claims.get("oid"))
    check_xms_cc(claims, what)
    check_times(claims, what)

    idc = result.get("id_token_claims")
    check(isinstance(idc, dict) and idc, f"{what}: no id_token_claims (MSAL adds openid/profile/offline_access "
          "and expects an id_token back)", {k: v for k, v in result.items() if k != "access_token"})
    check(idc.get("aud") == PUBLIC_CLIENT, f"{what}: id token aud should be the client ID", idc.get("aud"))
    check(idc.get("iss") == issuer, f"{what}: id token iss should be {issuer}", idc.get("iss"))
    check(idc.get("tid") == TENANT_ID and idc.get("oid") == USER_OID,
          f"{what}: id token should carry tid/oid", idc)
    check(str(idc.get("preferred_username", "")).lower() == USERNAME,
          f"{what}: id token preferred_username should be {USERNAME}", idc.get("preferred_username"))
    check(result.get("refresh_token"), f"{what}: no refresh_token in the response (offline_access)",
          sorted(result))

    rts = app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)
    check(len(rts) >= 1, f"{what}: MSAL's cache holds no refresh token", rts)
    accounts = app.get_accounts(username=USERNAME)
    check(len(accounts) == 1, f"{what}: MSAL's cache should hold exactly one account for {USERNAME} "
          "(built from client_info + id_token)", app.get_accounts())
    account = accounts[0]
    check(account.get("home_account_id") == f"{USER_OID}.{TENANT_ID}",
          f"{what}: home_account_id should be <oid>.<tid> (from client_info)", account)
    print(f"PASS {what}: access token scp={claims.get('scp')!r} xms_cc={claims.get('xms_cc')}; "
          f"id_token for {idc.get('preferred_username')}; refresh token cached; "
          f"account {account.get('home_account_id')} env={account.get('environment')}")

    what = "(b) refresh_token"
    old_rt = rts[0]["secret"]
    old_jti = claims.get("jti")
    silent = app.acquire_token_silent(scopes, account=account, force_refresh=True)
    check(silent is not None, f"{what}: acquire_token_silent(force_refresh=True) returned None: MSAL found no "
          "usable refresh token for the account (cache environment/home_account_id mismatch?)")
    expect_token(silent, what)
    check(silent.get("token_source") == "identity_provider",
          f"{what}: the token should come from the server, not the cache", silent.get("token_source"))
    claims2 = jwt_claims(silent["access_token"])
    check(claims2.get("jti") != old_jti, f"{what}: expected a new access token", claims2.get("jti"))
    check(claims2.get("oid") == USER_OID, f"{what}: oid should be {USER_OID}", claims2.get("oid"))
    check("Mail.Read" in str(claims2.get("scp", "")).split(), f"{what}: scp should contain Mail.Read",
          claims2.get("scp"))
    check_xms_cc(claims2, what)  # capabilities are re-read on refresh_token grants
    new_rts = [rt["secret"] for rt in app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)]
    check(new_rts and old_rt not in new_rts,
          f"{what}: the refresh token should have been rotated in MSAL's cache", len(new_rts))
    print(f"PASS {what}: acquire_token_silent(force_refresh=True) redeemed the refresh token; "
          f"new access token xms_cc={claims2.get('xms_cc')}; refresh token rotated")

    # API permissions (PROTOCOL 11): the mail app's refresh token does not redeem for a resource the app does
    # not list (the admin API), and MSAL hands back the server's consent_required refusal.
    what = "(b) API permissions"
    other = app.acquire_token_silent_with_error(["api://portcullis-admin/.default"], account=account, force_refresh=True)
    check(isinstance(other, dict) and other.get("error") == "invalid_grant" and 65001 in (other.get("error_codes") or [])
          and other.get("suberror") == "consent_required" and "access_token" not in other,
          f"{what}: a refresh token of the mail app must not redeem for the admin API (65001 consent_required)", other)
    print(f"PASS {what}: the mail app's refresh token for the admin API: {other.get('error')} {other.get('error_codes')} {other.get('suberror')}")

    # Presenting the rotated refresh token again must fail, and revoke its whole
    # family (PROTOCOL.md 2.3), so the current one stops working too. MSAL never
    # resends a rotated token, so post the form directly to the token endpoint.
    what = "(b) rotated refresh token"
    current_rt = new_rts[0]

    def redeem(rt):
        response = session.post(app.authority.token_endpoint, data={
            "grant_type": "refresh_token", "client_id": PUBLIC_CLIENT, "refresh_token": rt,
            "scope": " ".join(scopes + ["offline_access"])}, timeout=30)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text

    status, body = redeem(old_rt)
    check(status == 400 and isinstance(body, dict) and body.get("error") == "invalid_grant",
          f"{what}: presenting the rotated refresh token again should be 400 invalid_grant", [status, body])
    status2, body2 = redeem(current_rt)
    check(status2 == 400 and isinstance(body2, dict) and body2.get("error") == "invalid_grant",
          f"{what}: after a replay the family is revoked, so the current refresh token should be refused too",
          [status2, body2])
    print(f"PASS {what}: replay refused ({body.get('error')} {body.get('error_codes')}); "
          f"family revoked ({body2.get('error')} {body2.get('error_codes')})")


def test_auth_code_flow(msal, authority, issuer, session, cafile, base):
    what = "(c) authorization code"
    app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, client_capabilities=["protapp"],
                                       instance_discovery=False, http_client=session)
    scopes = [f"{RESOURCE}/Mail.Read"]
    flow = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT, login_hint=USERNAME)
    auth_uri = flow.get("auth_uri", "")
    check(auth_uri.startswith(f"{base}/"), f"{what}: MSAL should build the authorize URL from discovery", auth_uri)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(auth_uri).query)
    check(query.get("code_challenge_method") == ["S256"], f"{what}: MSAL should send PKCE S256", query)
    browser = Browser(cafile, base)
    started = time.monotonic()
    page = browser.get(auth_uri)
    check(f'value="{USERNAME}"' in page.text, f"{what}: login_hint should pre-fill the user name",
          [page.status_code, page.headers.get("Location"), page.text[:1200]])
    answer = browser.submit(page, {"username": USERNAME, "password": PASSWORD}, what)
    auth_response = Browser.redirect_parameters(answer, what)
    check(answer.headers["Location"].startswith(LOOPBACK_REDIRECT + "/") or answer.headers["Location"].startswith(LOOPBACK_REDIRECT + "?"),
          f"{what}: the code should go to the loopback redirect URI", answer.headers["Location"])
    result = app.acquire_token_by_auth_code_flow(flow, auth_response)
    elapsed = time.monotonic() - started
    expect_token(result, what)
    claims = jwt_claims(result["access_token"])
    check(claims.get("aud") == RESOURCE_APP_ID and claims.get("oid") == USER_OID, f"{what}: aud and oid", claims)
    check(claims.get("iss") == issuer, f"{what}: iss should be {issuer}", claims.get("iss"))
    check_xms_cc(claims, what)
    idc = result.get("id_token_claims") or {}
    # MSAL for Python sends SHA-256(nonce) as the nonce and checks the ID token against it (it also raises on a mismatch).
    sent_nonce = hashlib.sha256(flow.get("nonce", "").encode()).hexdigest()
    check(idc.get("nonce") == sent_nonce, f"{what}: the ID token should carry the nonce MSAL sent", [idc.get("nonce"), sent_nonce])
    check(idc.get("amr") == ["pwd"] and isinstance(idc.get("auth_time"), int), f"{what}: the ID token should carry amr and auth_time", idc)
    print(f"PASS {what}: initiate_auth_code_flow → page → acquire_token_by_auth_code_flow in {elapsed * 1000:.0f} ms "
          f"({browser.pages} form submitted); nonce, amr={idc.get('amr')}, xms_cc={claims.get('xms_cc')}")

    what = "(c) silent after interactive"
    accounts = app.get_accounts(username=USERNAME)
    check(len(accounts) == 1, f"{what}: one cached account", app.get_accounts())
    silent = app.acquire_token_silent(scopes, account=accounts[0], force_refresh=True)
    check(silent is not None, f"{what}: acquire_token_silent found no refresh token")
    expect_token(silent, what)
    check(silent.get("token_source") == "identity_provider", f"{what}: the token should come from the server", silent.get("token_source"))
    print(f"PASS {what}: acquire_token_silent(force_refresh=True) redeemed the refresh token from the code flow")

    what = "(c) single sign-on"
    again = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT)
    direct = browser.get(again["auth_uri"])
    second = Browser.redirect_parameters(direct, what + " (the session issues a code without the page)")
    result = app.acquire_token_by_auth_code_flow(again, second)
    expect_token(result, what)
    print(f"PASS {what}: a second flow completed from the session cookie, no page shown")

    what = "(c) prompt=none after sign-out"
    out = browser.get(f"{base}/{TENANT_ID}/oauth2/v2.0/logout")
    check(out.status_code == 200, f"{what}: sign-out page", [out.status_code, out.text[:300]])
    third = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT, prompt="none")
    refused = Browser.redirect_parameters(browser.get(third["auth_uri"]), what)
    check(refused.get("error") == "login_required", f"{what}: expected login_required", refused)
    print(f"PASS {what}: error={refused.get('error')} ({refused.get('error_codes')})")


def device_page(browser, flow, username, password, what, failures):
    try:
        entry = browser.get(flow["verification_uri"])
        sign_in = browser.submit(entry, {"user_code": flow["user_code"]}, what + " (code page)")
        done = browser.submit(sign_in, {"username": username, "password": password, "decision": "allow"}, what + " (sign-in page)")
        check(done.status_code == 200 and "signed in" in done.text, f"{what}: the device page should confirm",
              [done.status_code, done.text[:800]])
    except Exception as error:  # reported by the main thread
        failures.append(error)


def test_device_flow(msal, authority, issuer, session, cafile, base):
    what = "(d) device code"
    app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, client_capabilities=["protapp"],
                                       instance_discovery=False, http_client=session)
    scopes = [f"{RESOURCE}/Mail.Read"]
    flow = app.initiate_device_flow(scopes=scopes)
    check("user_code" in flow and flow.get("verification_uri") == f"{base}/devicelogin",
          f"{what}: initiate_device_flow should return a user code and the /devicelogin page", flow)
    failures = []
    browser = Browser(cafile, base)
    # The user completes the page a little after MSAL starts polling (it sees authorization_pending first).
    timer = threading.Timer(1.0, device_page, args=(browser, flow, USERNAME, PASSWORD, what, failures))
    timer.start()
    started = time.monotonic()
    result = app.acquire_token_by_device_flow(flow, exit_condition=lambda flow: time.monotonic() - started > 60)
    timer.join()
    if failures:
        raise failures[0]
    expect_token(result, what)
    claims = jwt_claims(result["access_token"])
    check(claims.get("oid") == USER_OID and claims.get("aud") == RESOURCE_APP_ID, f"{what}: oid and aud", claims)
    check_xms_cc(claims, what)
    print(f"PASS {what}: initiate_device_flow → /devicelogin (code, then sign-in) → acquire_token_by_device_flow "
          f"after {time.monotonic() - started:.1f} s of polling; user code {flow['user_code']}")


def test_protapp_interactive(msal, authority, issuer, session, cafile, base):
    what = "(e) protapp interactive"
    ios = PlatformSession(session)
    app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, client_capabilities=["protapp"],
                                       instance_discovery=False, http_client=ios)
    scopes = [f"{RESOURCE}/Mail.Read"]
    browser = Browser(cafile, base)
    flow = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT, login_hint=BOB)
    answer = browser.submit(browser.get(flow["auth_uri"]), {"username": BOB, "password": BOB_PASSWORD}, what)
    code_response = Browser.redirect_parameters(answer, what + " (the code is issued)")
    check("code" in code_response, f"{what}: app protection must not stop the sign-in itself", code_response)
    refused = app.acquire_token_by_auth_code_flow(flow, code_response)
    check("access_token" not in refused, f"{what}: redemption should be refused until the app is protected", sorted(refused))
    check(refused.get("suberror") == "protection_policy_required" and 53005 in as_list(refused.get("error_codes")),
          f"{what}: expected protection_policy_required (53005) at redemption", {k: v for k, v in refused.items() if k != "id_token"})
    print(f"PASS {what}: code issued; redemption refused: {refused.get('error')} {refused.get('suberror')} {refused.get('error_codes')}")

    what = "(e) remediation"
    # The Intune-style SDK's remediation: a token for the compliance service (which app protection never
    # blocks), by SSO from the session the sign-in created: no page this time.
    mam_flow = app.initiate_auth_code_flow([COMPLIANCE_SCOPE], redirect_uri=LOOPBACK_REDIRECT)
    mam_code = Browser.redirect_parameters(browser.get(mam_flow["auth_uri"]), what + " (SSO for the compliance service)")
    mam = app.acquire_token_by_auth_code_flow(mam_flow, mam_code)
    expect_token(mam, what + " (compliance token)")
    compliance = f"{base}/mam/v1"
    bearer = {"Authorization": f"Bearer {mam['access_token']}"}
    device = {"deviceId": "msal-interop-ios", "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1", "sdkVersion": "1.0", "silent": True}
    enrolled = session.post(f"{compliance}/remediations", json=device, headers=bearer, timeout=30)
    check(enrolled.status_code in (200, 201), f"{what}: remediation (enrollment)", [enrolled.status_code, enrolled.text[:800]])
    body = enrolled.json()
    enrollment_id = body.get("enrollmentId")
    version = (body.get("policy") or {}).get("version")
    check(enrollment_id and version, f"{what}: the enrollment should come with its policy", body)
    checked = session.post(f"{compliance}/enrollments/{enrollment_id}/checkin", headers=bearer, timeout=30, json={
        "osVersion": "17.4", "appVersion": "3.1", "jailbroken": False, "pinSet": True, "silent": True, "appliedPolicyVersion": version})
    status = (checked.json().get("complianceStatus") or {}).get("status") if checked.status_code == 200 else None
    check(status == "compliant", f"{what}: the check-in should end compliant", [checked.status_code, checked.text[:800]])
    print(f"PASS {what}: compliance token by SSO, enrolled {enrollment_id}, policy {version} applied: {status}")

    what = "(e) silent after remediation"
    accounts = app.get_accounts(username=BOB)
    check(len(accounts) == 1, f"{what}: the account is cached from the compliance-service sign-in", app.get_accounts())
    silent = app.acquire_token_silent(scopes, account=accounts[0])
    check(silent is not None, f"{what}: acquire_token_silent found nothing to redeem")
    expect_token(silent, what)
    claims = jwt_claims(silent["access_token"])
    check(claims.get("oid") == BOB_OID and claims.get("aud") == RESOURCE_APP_ID, f"{what}: oid and aud", claims)
    check_xms_cc(claims, what)
    print(f"PASS {what}: acquire_token_silent → token for {RESOURCE} with xms_cc={claims.get('xms_cc')}")


def shown_secret(page):
    """The TOTP key on the registration page (grouped by four), as a user would copy it into an app."""
    match = re.search(r'id="secret"[^>]*>([A-Z2-7 ]+)<', page.text)
    return match.group(1).replace(" ", "") if match else None


def test_mfa(msal, authority, issuer, session, cafile, base):
    """(f) PROTOCOL §10 with MSAL's own flows and pyotp as the authenticator app."""
    import pyotp
    scopes = [f"{RESOURCE}/Mail.Read"]
    app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session)

    def dave_signs_in(what):
        """A new browser: MSAL's authorize URL, Dave's password; the page that follows (the factor step)."""
        flow = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT, login_hint=DAVE)
        browser = Browser(cafile, base)
        return flow, browser, browser.submit(browser.get(flow["auth_uri"]), {"username": DAVE, "password": DAVE_PASSWORD}, what)

    what = "(f) password grant needs a factor"
    refused = app.acquire_token_by_username_password(DAVE, DAVE_PASSWORD, scopes=scopes)
    check(refused.get("error") == "invalid_grant" and 50076 in (refused.get("error_codes") or []) and refused.get("suberror") == "basic_action",
          f"{what}: expected invalid_grant 50076 basic_action", refused)
    print(f"PASS {what}: {refused.get('error')} {refused.get('error_codes')} suberror={refused.get('suberror')} (MSAL hands it to the app to go interactive)")

    what = "(f) registration on first sign-in"
    flow, browser, page = dave_signs_in(what)
    secret = shown_secret(page)
    check(page.status_code == 200 and secret, f"{what}: the page should show a key to register", [page.status_code, page.text[:1500]])
    check(f"otpauth://totp/Portcullis:{DAVE}?secret={secret}&amp;issuer=Portcullis" in page.text, f"{what}: the otpauth URI in the page text", page.text[:2000])
    check('autocomplete="one-time-code"' in page.text, f"{what}: the code field carries autocomplete=one-time-code")
    totp = pyotp.TOTP(secret)
    wrong = browser.submit(page, {"otp": totp.at(time.time() + 300)}, what + " (wrong code)")
    check(wrong.status_code == 400 and "AADSTS500121" in wrong.text and not wrong.headers.get("Location"),
          f"{what}: a wrong code gets no code", [wrong.status_code, wrong.headers.get("Location"), wrong.text[:800]])
    used_at = time.time()
    first_code = totp.at(used_at)
    done = browser.submit(wrong, {"otp": first_code}, what + " (the code)")
    result = app.acquire_token_by_auth_code_flow(flow, Browser.redirect_parameters(done, what))
    expect_token(result, what)
    idc = result.get("id_token_claims") or {}
    access = jwt_claims(result["access_token"])
    check(idc.get("amr") == ["pwd", "mfa"] and access.get("amr") == ["pwd", "mfa"], f"{what}: amr pwd+mfa in ID and access tokens", [idc, access])
    print(f"PASS {what}: key shown, a wrong code refused (500121), the first code registered the factor; amr={access.get('amr')}")

    what = "(f) refresh satisfies mfa"
    account = app.get_accounts(username=DAVE)[0]
    silent = app.acquire_token_silent(scopes, account=account, force_refresh=True)
    check(silent is not None, f"{what}: no refresh token")
    expect_token(silent, what)
    check(jwt_claims(silent["access_token"]).get("amr") == ["pwd", "mfa"], f"{what}: the family remembers the factor", jwt_claims(silent["access_token"]))
    print(f"PASS {what}: acquire_token_silent(force_refresh=True) → amr={jwt_claims(silent['access_token']).get('amr')}, no page")

    what = "(f) sign-in with a code"
    flow, browser, page = dave_signs_in(what)
    check(page.status_code == 200 and 'name="otp"' in page.text and shown_secret(page) is None,
          f"{what}: a registered user is asked for the code only", [page.status_code, page.text[:1000]])
    replayed = browser.submit(page, {"otp": first_code}, what + " (replayed code)")
    check(replayed.status_code == 400 and "AADSTS500121" in replayed.text and not replayed.headers.get("Location"),
          f"{what}: the code used at registration is refused", [replayed.status_code, replayed.text[:800]])
    done = browser.submit(replayed, {"otp": totp.at(used_at + 30)}, what + " (the next code)")
    result = app.acquire_token_by_auth_code_flow(flow, Browser.redirect_parameters(done, what))
    expect_token(result, what)
    check(jwt_claims(result["access_token"]).get("amr") == ["pwd", "mfa"], f"{what}: amr", jwt_claims(result["access_token"]))
    print(f"PASS {what}: the replayed code refused (500121), the next code accepted; amr pwd+mfa")

    what = "(f) five wrong codes lock"
    flow, browser, page = dave_signs_in(what)
    for attempt in range(5):
        page = browser.submit(page, {"otp": "000000" if totp.now() != "000000" else "111111"}, f"{what} (wrong code {attempt + 1})")
    check(page.status_code == 400 and "AADSTS50053" in page.text, f"{what}: the fifth wrong code locks", [page.status_code, page.text[:800]])
    locked = browser.submit(page, {"otp": totp.at(used_at + 60)}, what + " (right code while locked)")
    check(locked.status_code == 400 and "AADSTS50053" in locked.text and not locked.headers.get("Location"),
          f"{what}: while locked, even the right code gets no code", [locked.status_code, locked.text[:800]])
    print(f"PASS {what}: 50053 after the fifth wrong code, and for the right code while locked")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def admin_headers(msal, authority, session, what):
    """The admin API's Authorization header, with a token MSAL gets for the demo admin daemon (client credentials)."""
    daemon = msal.ConfidentialClientApplication(ADMIN_CLIENT, client_credential=ADMIN_SECRET, authority=authority,
                                                instance_discovery=False, http_client=session)
    admin_token = daemon.acquire_token_for_client(["api://portcullis-admin/.default"])
    expect_token(admin_token, what + " (admin token)")
    return {"Authorization": f"Bearer {admin_token['access_token']}"}


def test_secrets(msal, authority, issuer, session, cafile, base):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID
    import datetime
    from pyhpke import AEADId, CipherSuite, KDFId, KEMId, KEMKey

    what = "(g) secrets: admin writes"
    admin = admin_headers(msal, authority, session, what)
    policies = f"{base}/admin/v1/app-configuration/policies"
    smtp_password = "Interop-smtp-" + b64url(hashlib.sha256(str(time.time()).encode()).digest()[:9])
    written = session.put(f"{policies}/{MAIL_CONFIGURATION_POLICY}/secrets/com.contoso.mail.smtp", json={"password": smtp_password},
                          headers=admin, timeout=30)
    check(written.status_code in (200, 201) and smtp_password not in written.text, f"{what}: the demo policy's password", [written.status_code, written.text])
    # An uploaded identity, as an admin exports it from another PKI: PKCS #12 with a passphrase.
    vpn_key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "interop vpn")])
    vpn_cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(vpn_key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=30)).sign(vpn_key, hashes.SHA256()))
    bundle = pkcs12.serialize_key_and_certificates(b"vpn", vpn_key, vpn_cert, None, serialization.BestAvailableEncryption(b"interop-pass"))
    policy = {"displayName": "Interop identities", "priority": 500, "configuration": {},
              "targets": {"applications": [PUBLIC_CLIENT], "includeGroups": ["All"], "excludeGroups": []},
              "secrets": [{"identifier": "com.contoso.interop.vpn", "kind": "identity", "issuance": "uploaded"}]}
    created = session.post(policies, json=policy, headers=admin, timeout=30)
    check(created.status_code == 201, f"{what}: a policy declaring an uploaded identity", [created.status_code, created.text])
    policy_id = created.json()["id"]
    wrong = session.put(f"{policies}/{policy_id}/secrets/com.contoso.interop.vpn", headers=admin, timeout=30,
                        json={"pkcs12": base64.b64encode(bundle).decode(), "passphrase": "not-it"})
    check(wrong.status_code == 400 and "/pkcs12" in wrong.text, f"{what}: a wrong passphrase is a 400 naming /pkcs12", [wrong.status_code, wrong.text])
    uploaded = session.put(f"{policies}/{policy_id}/secrets/com.contoso.interop.vpn", headers=admin, timeout=30,
                           json={"pkcs12": base64.b64encode(bundle).decode(), "passphrase": "interop-pass"})
    fingerprint = vpn_cert.fingerprint(hashes.SHA256()).hex()
    check(uploaded.status_code == 201 and uploaded.json().get("fingerprint") == fingerprint, f"{what}: the PKCS #12 opened, its leaf's fingerprint",
          [uploaded.status_code, uploaded.text, fingerprint])
    print(f"PASS {what}: password (version {written.json().get('version')}) and a PKCS #12 identity (fingerprint {fingerprint[:16]}…)")

    what = "(g) secrets: the app"
    app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session)
    mam = app.acquire_token_by_username_password(USERNAME, PASSWORD, scopes=[COMPLIANCE_SCOPE])
    expect_token(mam, what + " (compliance token)")
    bearer = {"Authorization": f"Bearer {mam['access_token']}"}
    instance = ec.generate_private_key(ec.SECP256R1())
    numbers = instance.public_key().public_numbers()
    jwk = {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}
    compliance = f"{base}/mam/v1"
    device = {"deviceId": "python-secrets", "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1", "silent": True, "appKey": jwk}
    enrolled = session.post(f"{compliance}/remediations", json=device, headers=bearer, timeout=30)
    body = enrolled.json() if enrolled.status_code in (200, 201) else {}
    enrollment_id, version = body.get("enrollmentId"), (body.get("policy") or {}).get("version")
    check(enrollment_id and version, f"{what}: enrolled with an appKey", [enrolled.status_code, enrolled.text[:800]])
    checked = session.post(f"{compliance}/enrollments/{enrollment_id}/checkin", headers=bearer, timeout=30, json={
        "osVersion": "17.4", "appVersion": "3.1", "jailbroken": False, "pinSet": True, "appliedPolicyVersion": version})
    check(checked.status_code == 200 and (checked.json().get("complianceStatus") or {}).get("status") == "compliant", f"{what}: compliant", checked.text[:800])
    configuration = session.get(f"{compliance}/enrollments/{enrollment_id}/configuration", headers=bearer, timeout=30).json()
    listed = {entry["identifier"]: entry for entry in configuration.get("secrets", [])}
    check({"com.contoso.mail.smtp", "com.contoso.interop.vpn", "com.contoso.mail.license"} <= set(listed), f"{what}: the provisioned secrets", configuration)

    suite = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES256_GCM)
    recipient_key = KEMKey.from_pem(instance.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    def opened(identifier):
        reply = session.get(f"{compliance}/enrollments/{enrollment_id}/secrets/{identifier}", headers=bearer, timeout=30)
        check(reply.status_code == 200, f"{what}: GET secrets/{identifier}", [reply.status_code, reply.text[:800]])
        sealed = reply.json()
        info = f"portcullis-secret-v1:{enrollment_id}:{sealed['identifier']}:{sealed['version']}".encode()
        context = suite.create_recipient_context(b64url_decode(sealed["sealed"]["enc"]), recipient_key, info=info)
        return json.loads(context.open(b64url_decode(sealed["sealed"]["ciphertext"]), aad=b""))

    smtp = opened("com.contoso.mail.smtp")
    check(smtp == {"password": smtp_password}, f"{what}: pyhpke opens the password", smtp)
    vpn = opened("com.contoso.interop.vpn")
    leaf = x509.load_pem_x509_certificates(vpn["certificatesPem"].encode())[0]
    key = serialization.load_pem_private_key(vpn["privateKeyPem"].encode(), password=None)
    check(leaf.fingerprint(hashes.SHA256()).hex() == fingerprint and "BEGIN PRIVATE KEY" in vpn["privateKeyPem"]
          and key.public_key().public_numbers() == vpn_cert.public_key().public_numbers(), f"{what}: the PKCS #12's certificate and key (PKCS #8)", vpn)
    print(f"PASS {what}: enrolled {enrollment_id} with a cryptography key; pyhpke opened the password and the uploaded identity")

    what = "(g) secrets: device identity"
    csr = (x509.CertificateSigningRequestBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "python device")]))
           .sign(instance, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode())
    issued = session.post(f"{compliance}/enrollments/{enrollment_id}/identities/com.contoso.mail.license", json={"csr": csr}, headers=bearer, timeout=30)
    check(issued.status_code == 200, f"{what}: issued", [issued.status_code, issued.text[:800]])
    chain = x509.load_pem_x509_certificates(issued.json()["certificatesPem"].encode())
    ca_reply = session.get(f"{base}/{TENANT_DOMAIN}/pki/ca.pem", timeout=30)
    ca = x509.load_pem_x509_certificate(ca_reply.content)
    chain[0].verify_directly_issued_by(ca)
    check(chain[0].public_key().public_numbers() == instance.public_key().public_numbers(), f"{what}: the leaf certifies the instance key")
    subject = chain[0].subject.rfc4514_string()
    check(USERNAME in subject and enrollment_id in subject and TENANT_ID in subject, f"{what}: the subject names account, enrollment and tenant", subject)
    print(f"PASS {what}: {subject}, until {issued.json()['notAfter']}, verified against {TENANT_DOMAIN}/pki/ca.pem with cryptography")


@contextlib.contextmanager
def temporary_policy(session, base, admin, policy, what):
    """A conditional-access policy for the duration of a test: created (checked), then deleted whatever happens."""
    created = session.post(f"{base}/admin/v1/conditional-access/policies", headers=admin, timeout=30, json=policy)
    check(created.status_code == 201, f"{what}: the policy", [created.status_code, created.text[:800]])
    try:
        yield
    finally:
        session.delete(f"{base}/admin/v1/conditional-access/policies/{policy['id']}", headers={**admin, "If-Match": "*"}, timeout=30)


def test_strength(msal, authority, issuer, session, cafile, base):
    """(h) PROTOCOL §12.2-§12.3 with MSAL's own flows: a CA policy requires the built-in multifactor strength of Carol
    on the mail API; MSAL's password grant gets 50076 basic_action; a temporary access pass typed on the page through
    MSAL's auth-code flow meets the strength (amr tap+mfa), and acquire_token_silent keeps meeting it."""
    scopes = [f"{RESOURCE}/Mail.Read"]
    what = "(h) strength: admin"
    admin = admin_headers(msal, authority, session, what)
    policy = {
        "id": "b2000000-0000-4000-8000-0000000000a2", "displayName": "MFA strength for Carol on mail", "state": "enabled",
        "conditions": {"users": {"includeUsers": [CAROL_OID]}, "applications": {"includeApplications": [RESOURCE_APP_ID]},
                       "clientAppTypes": ["all"]},
        "grantControls": {"operator": "OR", "builtInControls": [],
                          "authenticationStrength": {"id": "00000000-0000-0000-0000-000000000002"}}}
    with temporary_policy(session, base, admin, policy, what):
        app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session)
        what = "(h) strength: password grant"
        refused = app.acquire_token_by_username_password(CAROL, CAROL_PASSWORD, scopes=scopes)
        check(refused.get("error") == "invalid_grant" and 50076 in (refused.get("error_codes") or [])
              and refused.get("suberror") == "basic_action", f"{what}: expected invalid_grant 50076 basic_action", refused)
        print(f"PASS {what}: {refused.get('error')} {refused.get('error_codes')} suberror={refused.get('suberror')}")

        what = "(h) strength: a temporary access pass on the page"
        issued = session.post(f"{base}/admin/v1/users/{CAROL}/authentication-methods/temporaryAccessPass", headers=admin,
                              timeout=30, json={"lifetimeInMinutes": 15, "isUsableOnce": True})
        check(issued.status_code == 201 and issued.json().get("temporaryAccessPass"), f"{what}: issued", [issued.status_code, issued.text])
        flow = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT, login_hint=CAROL)
        browser = Browser(cafile, base)
        done = browser.submit(browser.get(flow["auth_uri"]), {"username": CAROL, "password": issued.json()["temporaryAccessPass"]}, what)
        result = app.acquire_token_by_auth_code_flow(flow, Browser.redirect_parameters(done, what))
        expect_token(result, what)
        access = jwt_claims(result["access_token"])
        check(access.get("amr") == ["tap", "mfa"], f"{what}: amr tap+mfa", access)
        account = app.get_accounts(username=CAROL)[0]
        silent = app.acquire_token_silent(scopes, account=account, force_refresh=True)
        check(silent is not None, f"{what}: no refresh token")
        expect_token(silent, what + " (silent)")
        check(jwt_claims(silent["access_token"]).get("amr") == ["tap", "mfa"], f"{what}: the family remembers it", jwt_claims(silent["access_token"]))
        print(f"PASS {what}: amr={access.get('amr')}; acquire_token_silent(force_refresh=True) meets the strength with no page")


def resource_challenge(base, claims_request):
    """What a resource server answers a token without the context it needs (PROTOCOL §14.3, as Entra's resources do)."""
    encoded = base64.b64encode(json.dumps(claims_request).encode()).decode()
    return (f'Bearer realm="", authorization_uri="{base}/{TENANT_ID}/oauth2/v2.0/authorize", '
            f'error="insufficient_claims", claims="{encoded}"')


def claims_from_challenge(header):
    """The app's side: the claims of a WWW-Authenticate challenge, decoded, as MSAL's docs tell apps to do."""
    found = re.search(r'claims="([^"]+)"', header)
    check(found and 'error="insufficient_claims"' in header, "the challenge names insufficient_claims and carries claims", header)
    return base64.b64decode(found.group(1)).decode()


def test_step_up(msal, authority, issuer, session, cafile, base):
    """(j) PROTOCOL §13 step-up with MSAL's own calls: authentication context c1 needs mfa for Carol. A password token has
    no acrs; the test, as the resource, challenges with acrs c1; acquire_token_silent(claims_challenge=…) cannot meet it
    (50076: go interactive); the interactive flow with the claims asks for the factor c1's policy needs (Carol registers
    one with pyotp); the new token carries acrs ["c1"], and a later silent refresh keeps it without being asked."""
    import pyotp
    scopes = [f"{RESOURCE}/Mail.Read"]
    what = "(j) step-up: admin"
    admin = admin_headers(msal, authority, session, what)
    context = session.put(f"{base}/admin/v1/authentication-context-class-references/c1", headers={**admin, "If-None-Match": "*"}, timeout=30,
                          json={"displayName": "Sensitive actions", "description": "Payroll changes", "isAvailable": True})
    check(context.status_code == 201, f"{what}: the context c1", [context.status_code, context.text[:800]])
    policy = {
        "id": "b2000000-0000-4000-8000-0000000000a4", "displayName": "Step-up: mfa for c1 (Carol)", "state": "enabled",
        "conditions": {"users": {"includeUsers": [CAROL_OID]},
                       "applications": {"includeApplications": [], "includeAuthenticationContextClassReferences": ["c1"]},
                       "clientAppTypes": ["all"]},
        "grantControls": {"operator": "OR", "builtInControls": ["mfa"]}}
    try:
        with temporary_policy(session, base, admin, policy, what):
            app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session,
                                               client_capabilities=["cp1"])
            what = "(j) step-up: a token without acrs"
            first = app.acquire_token_by_username_password(CAROL, CAROL_PASSWORD, scopes=scopes)
            expect_token(first, what)
            check("acrs" not in jwt_claims(first["access_token"]), f"{what}: no acrs", jwt_claims(first["access_token"]))

            what = "(j) step-up: the resource's challenge, silently"
            challenge = resource_challenge(base, {"access_token": {"acrs": {"essential": True, "value": "c1"}}})
            claims = claims_from_challenge(challenge)
            account = app.get_accounts(username=CAROL)[0]
            silent = app.acquire_token_silent_with_error(scopes, account=account, claims_challenge=claims)
            check(silent and silent.get("error") == "invalid_grant" and 50076 in (silent.get("error_codes") or []),
                  f"{what}: 50076 (the factor is missing; go interactive)", silent)
            print(f"PASS {what}: acquire_token_silent(claims_challenge=…) → {silent.get('error')} {silent.get('error_codes')}")

            what = "(j) step-up: interactively"
            flow = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT, login_hint=CAROL, claims_challenge=claims)
            check("claims=" in flow["auth_uri"], f"{what}: MSAL puts the claims on /authorize", flow["auth_uri"])
            browser = Browser(cafile, base)
            page = browser.submit(browser.get(flow["auth_uri"]), {"username": CAROL, "password": CAROL_PASSWORD}, what)
            secret = shown_secret(page)
            check(page.status_code == 200 and secret, f"{what}: the page asks for the factor c1 needs (registration)", [page.status_code, page.text[:1500]])
            done = browser.submit(page, {"otp": pyotp.TOTP(secret).now()}, what + " (the code)")
            result = app.acquire_token_by_auth_code_flow(flow, Browser.redirect_parameters(done, what))  # MSAL keeps the claims in the flow
            expect_token(result, what)
            access = jwt_claims(result["access_token"])
            check(access.get("acrs") == ["c1"] and access.get("amr") == ["pwd", "mfa"], f"{what}: acrs c1, amr pwd+mfa", access)
            print(f"PASS {what}: the page asked for the factor; the new token has acrs={access.get('acrs')} amr={access.get('amr')}")

            what = "(j) step-up: kept unasked"
            account = app.get_accounts(username=CAROL)[0]
            later = app.acquire_token_silent(scopes, account=account, force_refresh=True)
            check(later is not None, f"{what}: no refresh token")
            expect_token(later, what)
            check(jwt_claims(later["access_token"]).get("acrs") == ["c1"], f"{what}: acrs without asking", jwt_claims(later["access_token"]))
            print(f"PASS {what}: acquire_token_silent(force_refresh=True), no claims → acrs={jwt_claims(later['access_token']).get('acrs')}")
    finally:
        session.delete(f"{base}/admin/v1/authentication-context-class-references/c1", headers={**admin, "If-Match": "*"}, timeout=30)


GATEWAY_RECEIVER = ("c0ffee00-8888-4a2b-8c3d-4e5f6a7b8c08", "gateway-dev-secret-change-me")  # the demo's Shared Signals receiver


@contextlib.contextmanager
def gateway_in_front_of_an_upstream(binary, cafile, authority, what):
    """A trivial upstream (it echoes the subject the gateway forwards) and `portcullis gateway` in front of it, whose
    poller keeps a stream at the authority (over TLS: it trusts the dev certificate with --ca-file). The upstream and the
    gateway process are cae_interop's and dpop_interop's."""
    import tempfile
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cae_interop import Upstream
    from dpop_interop import GatewayProcess, free_port

    upstream = Upstream()
    workdir = tempfile.mkdtemp(prefix="portcullis-msal-gateway-")
    gateway = GatewayProcess(binary, workdir, free_port())
    try:
        try:
            gateway.start(["--upstream", f"http://127.0.0.1:{upstream.port}", "--authority", authority, "--audience", RESOURCE_APP_ID,
                           "--ssf-client-id", GATEWAY_RECEIVER[0], "--ssf-client-secret", GATEWAY_RECEIVER[1], "--ca-file", cafile])
        except RuntimeError as error:
            raise Failure(f"{what}: the gateway starts: {error}")
        yield gateway.base, gateway.log_path
    finally:
        gateway.stop()
        upstream.server.shutdown()
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)


def gateway_challenge(header):
    """error and the decoded claims request of a 401's Bearer challenge."""
    found = re.search(r'error="([^"]*)"', header or "")
    claims = re.search(r'claims="([^"]*)"', header or "")
    return (found.group(1) if found else None), (base64.b64decode(claims.group(1)).decode() if claims else None)


def test_cae_gateway(msal, authority, issuer, session, cafile, base, binary):
    """(l) continuous access evaluation through `portcullis gateway` with MSAL's own cp1 client: a token that lives a day
    passes the gateway; Bob disabled → the gateway's next answer is 401 insufficient_claims with the nbf claims request;
    acquire_token_silent(claims_challenge=…) is refused (Bob is disabled); enabled again → the token MSAL gets with that
    claims request passes. The same for a wipe of Alice's enrollment of the mail app: her token for the app is refused,
    the silent refresh too (the wipe ended the app's tokens), and a new sign-in passes."""
    import requests
    scopes = [f"{RESOURCE}/Mail.Read"]
    what = "(l) CAE through the gateway"
    admin = admin_headers(msal, authority, session, what)

    def refused_within(url, token, seconds, what):
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            answer = requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
            if answer.status_code == 401:
                error, claims = gateway_challenge(answer.headers.get("WWW-Authenticate"))
                nbf = json.loads(claims or "{}").get("access_token", {}).get("nbf", {})
                check(error == "insufficient_claims" and nbf.get("essential") is True and nbf.get("value"),
                      f"{what}: 401 insufficient_claims with the nbf claims request", answer.headers.get("WWW-Authenticate"))
                return claims, (time.monotonic() - started) * 1000
            check(answer.status_code == 200, f"{what}: 200 until the event arrives", [answer.status_code, answer.text[:300]])
        raise Failure(f"{what}: the gateway still answers 200 {seconds} s after the event")

    def set_enabled(oid, enabled):
        document = session.get(f"{base}/admin/v1/users/{oid}", headers=admin, timeout=30)
        check(document.status_code == 200, f"{what}: read the user", document.text[:500])
        body = document.json()
        body["accountEnabled"] = enabled
        replaced = session.put(f"{base}/admin/v1/users/{oid}", headers={**admin, "If-Match": document.headers["ETag"]}, json=body, timeout=30)
        check(replaced.status_code == 200, f"{what}: accountEnabled={enabled}", replaced.text[:500])

    with gateway_in_front_of_an_upstream(binary, cafile, authority, what) as (gateway, log):
        deadline = time.monotonic() + 30
        while GATEWAY_RECEIVER[0] not in session.get(f"{base}/admin/v1/ssf-streams", headers=admin, timeout=30).text:
            check(time.monotonic() < deadline, f"{what}: the gateway made its stream at the transmitter", open(log).read()[-2000:])
            time.sleep(0.1)
        time.sleep(0.5)  # its first long poll is under way

        app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session,
                                           client_capabilities=["cp1"])
        first = app.acquire_token_by_username_password(BOB, BOB_PASSWORD, scopes=scopes)
        expect_token(first, what)
        claims = jwt_claims(first["access_token"])
        check(claims["exp"] - claims["iat"] >= 23 * 3600 and "cp1" in as_list(claims.get("xms_cc")),
              f"{what}: a cp1 token for the CAE resource lives a day", claims)
        through = requests.get(f"{gateway}/inbox", headers={"Authorization": f"Bearer {first['access_token']}"}, timeout=10)
        check(through.status_code == 200 and through.json().get("subject") == BOB_OID, f"{what}: 200 through the gateway", through.text[:300])
        try:
            set_enabled(BOB_OID, False)
            challenge, took = refused_within(f"{gateway}/inbox", first["access_token"], 10, what + ": Bob disabled")
            account = app.get_accounts(username=BOB)[0]
            silent = app.acquire_token_silent_with_error(scopes, account=account, claims_challenge=challenge)
            check(silent is not None and silent.get("error") == "invalid_grant", f"{what}: the silent refresh with the claims is refused", silent)
            print(f"PASS {what}: Bob disabled → 401 insufficient_claims after {took:.0f} ms; "
                  f"acquire_token_silent(claims_challenge=…) → {silent.get('error')} {silent.get('error_codes')}")
        finally:
            set_enabled(BOB_OID, True)
        time.sleep(1.05)  # a token of a later second than the revocation
        again = app.acquire_token_by_username_password(BOB, BOB_PASSWORD, scopes=scopes, claims_challenge=challenge)
        expect_token(again, what + ": enabled again")
        nbf = int(json.loads(challenge)["access_token"]["nbf"]["value"])
        check(jwt_claims(again["access_token"])["iat"] >= nbf, f"{what}: the new token is no older than the nbf asked for",
              [jwt_claims(again["access_token"]), nbf])
        through = requests.get(f"{gateway}/inbox", headers={"Authorization": f"Bearer {again['access_token']}"}, timeout=10)
        check(through.status_code == 200, f"{what}: enabled again, the new token passes", [through.status_code, through.headers])
        print(f"PASS {what}: enabled again, MSAL's token with the claims request (iat ≥ nbf {nbf}) passes the gateway")

        # A wipe: Alice's mail app enrolled (remediated over the compliance API as the SDK does), then wiped by the admin.
        what = "(l) CAE through the gateway: a wipe"
        alice = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session,
                                             client_capabilities=["cp1"])
        compliance = alice.acquire_token_by_username_password(USERNAME, PASSWORD, scopes=[COMPLIANCE_SCOPE])
        expect_token(compliance, what + " (compliance token)")
        bearer = {"Authorization": f"Bearer {compliance['access_token']}"}
        remediated = session.post(f"{base}/mam/v1/remediations", headers=bearer, timeout=30, json={
            "deviceId": "msal-interop-cae", "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1", "silent": True})
        check(remediated.status_code == 200, f"{what}: enrolled", remediated.text[:800])
        enrollment = remediated.json()["enrollmentId"]
        token = alice.acquire_token_by_username_password(USERNAME, PASSWORD, scopes=scopes)
        expect_token(token, what)
        check(requests.get(f"{gateway}/inbox", headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=10).status_code == 200,
              f"{what}: Alice's token passes before the wipe")
        wiped = session.post(f"{base}/admin/v1/enrollments/{enrollment}/wipe", headers=admin, timeout=30)
        check(wiped.status_code == 202, f"{what}: the wipe is accepted", wiped.text[:500])
        challenge, took = refused_within(f"{gateway}/inbox", token["access_token"], 10, what)
        account = alice.get_accounts(username=USERNAME)[0]
        silent = alice.acquire_token_silent_with_error(scopes, account=account, claims_challenge=challenge)
        check(silent is not None and silent.get("error") == "invalid_grant", f"{what}: the app's refresh token ended with the wipe", silent)
        time.sleep(1.05)
        fresh = alice.acquire_token_by_username_password(USERNAME, PASSWORD, scopes=scopes, claims_challenge=challenge)
        expect_token(fresh, what + ": signed in again")
        through = requests.get(f"{gateway}/inbox", headers={"Authorization": f"Bearer {fresh['access_token']}"}, timeout=10)
        check(through.status_code == 200, f"{what}: a new sign-in's token passes", [through.status_code, through.headers])
        print(f"PASS {what}: wiped → 401 insufficient_claims after {took:.0f} ms; silent refresh → {silent.get('error')}; "
              "a new sign-in's token passes")


@contextlib.contextmanager
def shifted_clock(offset_file):
    """Puts the server's clock back (offset 0) after the test, whatever happens."""
    try:
        yield
    finally:
        set_clock_offset(offset_file, 0)


def set_clock_offset(offset_file, seconds):
    with open(offset_file, "w") as file:
        file.write(f"{seconds}\n")
    time.sleep(0.5)  # the shim re-reads the offset at most every 100 ms


def test_token_protection(msal, authority, issuer, session, cafile, base):
    """(k) PROTOCOL §15: secureSignInSession for Carol on the mail API. MSAL for Python sends no DPoP proof, so its
    requests are bearer requests: 530084 on the password grant and on the code redemption; others are not concerned."""
    scopes = [f"{RESOURCE}/Mail.Read"]
    what = "(k) token protection: admin"
    admin = admin_headers(msal, authority, session, what)
    policy = {
        "id": "b2000000-0000-4000-8000-0000000000a6", "displayName": "Token protection for Carol on mail", "state": "enabled",
        "conditions": {"users": {"includeUsers": [CAROL_OID]}, "applications": {"includeApplications": [RESOURCE_APP_ID]},
                       "clientAppTypes": ["all"]},
        "grantControls": None, "sessionControls": {"secureSignInSession": {"isEnabled": True}}}
    with temporary_policy(session, base, admin, policy, what):
        app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session)
        what = "(k) token protection: password grant"
        refused = app.acquire_token_by_username_password(CAROL, CAROL_PASSWORD, scopes=scopes)
        check(refused.get("error") == "invalid_grant" and 530084 in (refused.get("error_codes") or []),
              f"{what}: expected invalid_grant 530084", refused)
        print(f"PASS {what}: {refused.get('error')} {refused.get('error_codes')}")
        what = "(k) token protection: auth-code flow"
        flow = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT, login_hint=CAROL)
        browser = Browser(cafile, base)
        done = browser.submit(browser.get(flow["auth_uri"]), {"username": CAROL, "password": CAROL_PASSWORD}, what)
        result = app.acquire_token_by_auth_code_flow(flow, Browser.redirect_parameters(done, what))
        check(result.get("error") == "invalid_grant" and 530084 in (result.get("error_codes") or []),
              f"{what}: expected invalid_grant 530084 at the redemption", result)
        print(f"PASS {what}: the code redemption answers {result.get('error')} {result.get('error_codes')}")
        what = "(k) token protection: another user"
        other = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session)
        expect_token(other.acquire_token_by_username_password(ERIN, ERIN_PASSWORD, scopes=scopes), what)
        print(f"PASS {what}: a user the policy does not name gets a bearer token")


def test_certificate_credentials(msal, authority, issuer, session, cafile, base):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tls_loopback import Certificate
    what = "(n) certificate credentials"
    made = Certificate("rsa", name="contoso mail sync")
    certificate_pem, key_pem, thumbprint = made.pem, made.private_pem, made.sha1.hex()
    headers = admin_headers(msal, authority, session, what)
    current = session.get(f"{base}/admin/v1/applications/{DAEMON_CLIENT}", headers=headers)
    document = current.json()
    document["keyCredentials"] = document.get("keyCredentials", []) + [{"key": certificate_pem, "displayName": "msal_interop"}]
    stored = session.put(f"{base}/admin/v1/applications/{DAEMON_CLIENT}", json=document,
                         headers={**headers, "If-Match": current.headers.get("ETag", "*")})
    check(stored.status_code == 200 and any(c.get("thumbprint") == thumbprint.upper() for c in stored.json().get("keyCredentials", [])),
          f"{what}: the admin API registers the certificate", stored.text)
    app = msal.ConfidentialClientApplication(
        DAEMON_CLIENT, client_credential={"private_key": key_pem, "thumbprint": thumbprint}, authority=authority,
        instance_discovery=False, http_client=session)
    scopes = [f"{RESOURCE}/.default"]
    result = app.acquire_token_for_client(scopes=scopes)
    expect_token(result, what)
    claims = jwt_claims(result["access_token"])
    check(claims.get("azp") == DAEMON_CLIENT and "Mail.ReadAll" in as_list(claims.get("roles")),
          f"{what}: MSAL's certificate assertion gets the daemon's app-role token", claims)
    app.remove_tokens_for_client()
    again = app.acquire_token_for_client(scopes=scopes)
    expect_token(again, f"{what} (again, MSAL's kept assertion)")
    check(again.get("token_source") != "cache", f"{what}: the second token came from the server", again.get("token_source"))
    print(f"PASS {what}: MSAL client_credential={{private_key, thumbprint}}: two tokens, roles={claims.get('roles')}")
    from azure.identity import CertificateCredential
    credential = CertificateCredential(
        TENANT_ID, DAEMON_CLIENT, certificate_data=(key_pem + certificate_pem).encode(), authority=base, disable_instance_discovery=True,
        connection_verify=cafile)
    token = credential.get_token(f"{RESOURCE}/.default").token
    azure_claims = jwt_claims(token)
    check(azure_claims.get("azp") == DAEMON_CLIENT and "Mail.ReadAll" in as_list(azure_claims.get("roles")),
          f"{what}: azure-identity's CertificateCredential gets the token", azure_claims)
    print(f"PASS {what}: azure-identity CertificateCredential: a token with roles={azure_claims.get('roles')}")


def test_federated_credentials(msal, authority, issuer, session, cafile, base):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tls_loopback import OIDCIssuer
    what = "(o) workload identity federation"
    cluster = OIDCIssuer(cert_path=cafile, key_path=os.path.join(os.path.dirname(cafile), "dev-key.pem"), host="localhost")
    subject = "system:serviceaccount:mail:sync"
    try:
        headers = admin_headers(msal, authority, session, what)
        current = session.get(f"{base}/admin/v1/applications/{DAEMON_CLIENT}", headers=headers)
        document = current.json()
        document["federatedIdentityCredentials"] = [{"name": "mail-cluster", "issuer": cluster.issuer, "subject": subject}]
        stored = session.put(f"{base}/admin/v1/applications/{DAEMON_CLIENT}", json=document,
                             headers={**headers, "If-Match": current.headers.get("ETag", "*")})
        check(stored.status_code == 200 and stored.json().get("federatedIdentityCredentials", [{}])[0].get("issuer") == cluster.issuer,
              f"{what}: the admin API registers the cluster's service account", stored.text)
        from azure.identity import ClientAssertionCredential
        credential = ClientAssertionCredential(
            TENANT_ID, DAEMON_CLIENT, lambda: cluster.token(subject), authority=base, disable_instance_discovery=True,
            connection_verify=cafile)
        claims = jwt_claims(credential.get_token(f"{RESOURCE}/.default").token)
        check(claims.get("azp") == DAEMON_CLIENT and "Mail.ReadAll" in as_list(claims.get("roles")) and claims.get("azpacr") == "2",
              f"{what}: azure-identity's ClientAssertionCredential gets the daemon's app-role token", claims)
        print(f"PASS {what}: azure-identity ClientAssertionCredential with the issuer's token: roles={claims.get('roles')}")
        app = msal.ConfidentialClientApplication(
            DAEMON_CLIENT, client_credential={"client_assertion": cluster.token(subject)}, authority=authority, instance_discovery=False,
            http_client=session)
        result = app.acquire_token_for_client(scopes=[f"{RESOURCE}/.default"])
        expect_token(result, f"{what} (MSAL client_assertion)")
        print(f"PASS {what}: MSAL client_credential={{client_assertion}} with the issuer's token")
        other = msal.ConfidentialClientApplication(
            DAEMON_CLIENT, client_credential={"client_assertion": cluster.token("system:serviceaccount:mail:other")}, authority=authority,
            instance_discovery=False, http_client=session)
        refused = other.acquire_token_for_client(scopes=[f"{RESOURCE}/.default"])
        check(refused.get("error") == "invalid_client" and 700213 in refused.get("error_codes", []),
              f"{what}: another service account's token is refused (700213)", refused)
        print(f"PASS {what}: another subject refused with 700213")
    finally:
        cluster.stop()


MIDDLE_TIER = "c0ffee00-cccc-4a2b-8c3d-4e5f6a7b8c0c"
MIDDLE_TIER_URI = "api://contoso-mail-tier"
MIDDLE_TIER_SECRET = "mail-tier-dev-secret-change-me"
FRANK = "frank@contoso.example"
FRANK_PASSWORD = "Frank-dev-pass1"


def dpop_proof(key, url, nonce=None):
    """An RFC 9449 proof by `key` (P-256) for POST `url`."""
    import jwt
    import uuid
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    payload = {"jti": str(uuid.uuid4()), "htm": "POST", "htu": url, "iat": int(time.time())}
    if nonce:
        payload["nonce"] = nonce
    return jwt.encode(payload, key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": public})


def test_on_behalf_of(msal, authority, issuer, session, cafile, base):
    import pyotp
    from cryptography.hazmat.primitives.asymmetric import ec
    what = "(p) on-behalf-of"
    admin = admin_headers(msal, authority, session, what)
    # The demo's middle tier (Config/directory.json): confidential, its requiredResourceAccess the mail API's Mail.Read.
    secret = MIDDLE_TIER_SECRET
    public = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session)
    tier_scopes = [f"{MIDDLE_TIER_URI}/access_as_user"]
    incoming = public.acquire_token_by_username_password(ERIN, ERIN_PASSWORD, scopes=tier_scopes)
    expect_token(incoming, f"{what}: Erin's token for the middle tier")
    check(jwt_claims(incoming["access_token"]).get("aud") == MIDDLE_TIER, f"{what}: its audience is the middle tier", jwt_claims(incoming["access_token"]))
    tier = msal.ConfidentialClientApplication(MIDDLE_TIER, client_credential=secret, authority=authority, instance_discovery=False,
                                              http_client=session)
    result = tier.acquire_token_on_behalf_of(incoming["access_token"], [f"{RESOURCE}/Mail.Read"])
    expect_token(result, f"{what}: MSAL acquire_token_on_behalf_of")
    claims = jwt_claims(result["access_token"])
    check(claims.get("aud") == RESOURCE_APP_ID and claims.get("oid") == ERIN_OID and claims.get("azp") == MIDDLE_TIER
          and claims.get("scp") == "Mail.Read" and claims.get("idtyp") == "user", f"{what}: the downstream token keeps Erin, azp the tier", claims)
    check(result.get("refresh_token"), f"{what}: with offline_access (MSAL asks for it), a refresh token", sorted(result))
    token_url = f"{base}/{TENANT_ID}/oauth2/v2.0/token"
    refreshed = session.post(token_url, timeout=30, data={
        "grant_type": "refresh_token", "client_id": MIDDLE_TIER, "client_secret": secret, "refresh_token": result["refresh_token"],
        "scope": f"{RESOURCE}/Mail.Read"})
    check(refreshed.status_code == 200 and jwt_claims(refreshed.json()["access_token"]).get("oid") == ERIN_OID,
          f"{what}: the middle tier redeems the refresh token", [refreshed.status_code, refreshed.text[:600]])
    print(f"PASS {what}: MSAL: Erin's token for the mail API (azp the middle tier, scp {claims.get('scp')}), and a refresh token that works")
    from azure.identity import OnBehalfOfCredential
    credential = OnBehalfOfCredential(TENANT_ID, MIDDLE_TIER, client_secret=secret, user_assertion=incoming["access_token"], authority=base,
                                      disable_instance_discovery=True, connection_verify=cafile)
    azure_claims = jwt_claims(credential.get_token(f"{RESOURCE}/.default").token)
    check(azure_claims.get("oid") == ERIN_OID and azure_claims.get("azp") == MIDDLE_TIER and "Mail.Read" in (azure_claims.get("scp") or ""),
          f"{what}: azure-identity's OnBehalfOfCredential gets Erin's token", azure_claims)
    print(f"PASS {what}: azure-identity OnBehalfOfCredential: scp {azure_claims.get('scp')}")

    def exchange(assertion, client_id=MIDDLE_TIER, client_secret=secret, headers=None, **extra):
        data = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "requested_token_use": "on_behalf_of", "assertion": assertion,
                "client_id": client_id, "scope": f"{RESOURCE}/Mail.Read"}
        if client_secret:
            data["client_secret"] = client_secret
        data.update(extra)
        return session.post(token_url, data=data, headers=headers or {}, timeout=30)

    key = ec.generate_private_key(ec.SECP256R1())
    first = exchange(incoming["access_token"], headers={"DPoP": dpop_proof(key, token_url)})
    nonce = first.headers.get("DPoP-Nonce")
    bound = exchange(incoming["access_token"], headers={"DPoP": dpop_proof(key, token_url, nonce)}) if first.status_code != 200 else first
    bound_claims = jwt_claims(bound.json()["access_token"]) if bound.status_code == 200 else {}
    check(bound.status_code == 200 and bound.json().get("token_type") == "DPoP" and (bound_claims.get("cnf") or {}).get("jkt"),
          f"{what}: with the middle tier's DPoP proof, a DPoP-bound token", [bound.status_code, bound.text[:600]])
    print(f"PASS {what}: with a DPoP proof: token_type DPoP, cnf.jkt {bound_claims['cnf']['jkt'][:12]}…")

    def refused(name, reply, error, code):
        body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
        check(reply.status_code in (400, 401) and body.get("error") == error and code in body.get("error_codes", []),
              f"{what}: {name}", [reply.status_code, reply.text[:600]])
        print(f"PASS {what}: {name}: {error} {code}")

    direct = public.acquire_token_by_username_password(ERIN, ERIN_PASSWORD, scopes=[f"{RESOURCE}/Mail.Read"])
    expect_token(direct, f"{what}: Erin's token for the mail API itself")
    refused("a token for another audience", exchange(direct["access_token"]), "invalid_grant", 50013)
    refused("from a public client", exchange(incoming["access_token"], client_id=PUBLIC_CLIENT, client_secret=None), "invalid_client", 7000218)
    refused("without requested_token_use", exchange(incoming["access_token"], requested_token_use="bearer"), "invalid_request", 900144)
    before = exchange(incoming["access_token"])
    check(before.status_code == 200, f"{what}: Erin's token exchanges before her sessions are revoked", [before.status_code, before.text[:600]])
    # No later test uses Erin (the gateway's and the sign-in frequency's are Alice's and Bob's).
    revoked = session.post(f"{base}/admin/v1/users/{ERIN_OID}/revokeSignInSessions", headers=admin, timeout=30)
    check(revoked.status_code in (200, 204), f"{what}: Erin's sessions revoked", [revoked.status_code, revoked.text[:300]])
    refused("a user whose sessions were revoked", exchange(incoming["access_token"]), "invalid_grant", 50173)

    what = "(p) on-behalf-of and conditional access"
    made = session.post(f"{base}/admin/v1/users", headers=admin, timeout=30, json={
        "userPrincipalName": FRANK, "displayName": "Frank Fischer", "password": FRANK_PASSWORD})
    check(made.status_code == 201, f"{what}: Frank is created", [made.status_code, made.text[:500]])
    frank = made.json()["id"]
    policy = {
        "id": "b2000000-0000-4000-8000-0000000000b7", "displayName": "MFA for Frank on mail", "state": "enabled",
        "conditions": {"users": {"includeUsers": [frank]}, "applications": {"includeApplications": [RESOURCE_APP_ID]},
                       "clientAppTypes": ["all"]},
        "grantControls": {"operator": "OR", "builtInControls": ["mfa"]}}
    with temporary_policy(session, base, admin, policy, what):
        password = public.acquire_token_by_username_password(FRANK, FRANK_PASSWORD, scopes=tier_scopes)
        expect_token(password, f"{what}: Frank's password token for the middle tier (no policy there)")
        challenge = tier.acquire_token_on_behalf_of(password["access_token"], [f"{RESOURCE}/Mail.Read"])
        named = json.loads(challenge.get("claims") or "{}").get("access_token", {}).get("polids", {}).get("values", [])
        check(challenge.get("error") == "interaction_required" and 50076 in (challenge.get("error_codes") or []) and policy["id"] in named,
              f"{what}: the exchange answers interaction_required with claims naming the policy", challenge)
        print(f"PASS {what}: interaction_required {challenge.get('error_codes')} claims={challenge.get('claims')}")
        flow = public.initiate_auth_code_flow(tier_scopes, redirect_uri=LOOPBACK_REDIRECT, login_hint=FRANK, claims_challenge=challenge["claims"])
        browser = Browser(cafile, base)
        page = browser.submit(browser.get(flow["auth_uri"]), {"username": FRANK, "password": FRANK_PASSWORD}, what)
        key_shown = shown_secret(page)
        check(page.status_code == 200 and key_shown, f"{what}: with the claims, the middle tier's sign-in asks for a factor", page.text[:1500])
        done = browser.submit(page, {"otp": pyotp.TOTP(key_shown).now()}, what + " (the code)")
        stepped = public.acquire_token_by_auth_code_flow(flow, Browser.redirect_parameters(done, what))
        expect_token(stepped, f"{what}: Frank's token after the factor")
        check(jwt_claims(stepped["access_token"]).get("amr") == ["pwd", "mfa"], f"{what}: amr pwd+mfa", jwt_claims(stepped["access_token"]))
        passed = tier.acquire_token_on_behalf_of(stepped["access_token"], [f"{RESOURCE}/Mail.Read"])
        expect_token(passed, f"{what}: the exchange of the new token")
        check(jwt_claims(passed["access_token"]).get("amr") == ["pwd", "mfa"] and jwt_claims(passed["access_token"]).get("oid") == frank,
              f"{what}: the downstream token carries the original sign-in's amr", jwt_claims(passed["access_token"]))
        print(f"PASS {what}: the claims passed back to the client → a factor → the exchange succeeds (amr pwd+mfa)")


def test_b2b(msal, authority, issuer, session, cafile, base):
    """(m) PROTOCOL §17: a Contoso user invited to Fabrikam signs in at Fabrikam through the page and MSAL."""
    import pyotp
    what = "(m) B2B collaboration"
    fabrikam = f"{base}/{FABRIKAM_DOMAIN}"
    admin_app = msal.ConfidentialClientApplication(FABRIKAM_ADMIN_CLIENT, client_credential=FABRIKAM_ADMIN_SECRET, authority=fabrikam,
                                                   instance_discovery=False, http_client=session)
    admin = admin_app.acquire_token_for_client(["api://portcullis-admin/.default"])
    expect_token(admin, what + " (Fabrikam's admin token)")
    headers = {"Authorization": f"Bearer {admin['access_token']}"}
    invited = session.post(f"{base}/admin/v1/invitations", headers=headers, timeout=30,
                           json={"invitedUserEmailAddress": ERIN, "inviteRedirectUrl": "http://localhost", "invitedUserDisplayName": "Erin (Contoso)"})
    check(invited.status_code == 201, f"{what}: Fabrikam invites Erin", [invited.status_code, invited.text[:600]])
    guest_id = invited.json()["invitedUser"]["id"]
    policy = {
        "displayName": "MFA for guests (msal_interop m)", "state": "enabled",
        "conditions": {"users": {"includeGuestsOrExternalUsers": {"guestOrExternalUserTypes": "b2bCollaborationGuest",
                                                                  "externalTenants": {"membershipKind": "all"}}},
                       "applications": {"includeApplications": ["All"]}},
        "grantControls": {"operator": "OR", "builtInControls": ["mfa"]},
    }
    created = session.post(f"{base}/admin/v1/conditional-access/policies", headers=headers, json=policy, timeout=30)
    check(created.status_code == 201, f"{what}: a Fabrikam policy for guests", [created.status_code, created.text[:600]])
    try:
        scopes = [f"{FABRIKAM_RESOURCE}/Projects.Read"]
        app = msal.PublicClientApplication(FABRIKAM_CLIENT, authority=fabrikam, instance_discovery=False, http_client=session)
        flow = app.initiate_auth_code_flow(scopes, redirect_uri=LOOPBACK_REDIRECT)
        browser = Browser(cafile, base)
        sent = browser.submit(browser.get(flow["auth_uri"]), {"username": ERIN, "password": ""}, what + " (Fabrikam's page)")
        home = sent.headers.get("Location", "")
        check(sent.status_code == 302 and home.startswith(f"/{TENANT_ID}/oauth2/v2.0/authorize/home?"),
              f"{what}: Fabrikam's page sends her to Contoso's", [sent.status_code, home, sent.text[:400]])
        home_page = browser.get(base + home)
        check(home_page.status_code == 200 and "as a guest" in home_page.text and "Contoso" in home_page.text,
              f"{what}: Contoso's page, saying where she goes", [home_page.status_code, home_page.text[:800]])
        back = browser.submit(home_page, {"username": ERIN, "password": ERIN_PASSWORD}, what + " (Contoso's page)")
        returned = back.headers.get("Location", "")
        check(back.status_code == 302 and returned.startswith(f"/{FABRIKAM_ID}/oauth2/v2.0/authorize/guest?"),
              f"{what}: back to Fabrikam", [back.status_code, returned, back.text[:400]])
        factor = browser.get(base + returned)
        secret = shown_secret(factor)
        check(factor.status_code == 200 and secret, f"{what}: Fabrikam asks its own second factor (Contoso's MFA is not trusted)",
              [factor.status_code, factor.text[:1200]])
        done = browser.submit(factor, {"otp": pyotp.TOTP(secret).now()}, what + " (the code)")
        result = app.acquire_token_by_auth_code_flow(flow, Browser.redirect_parameters(done, what))
        expect_token(result, what)
        claims = jwt_claims(result["access_token"])
        check(claims.get("tid") == FABRIKAM_ID and claims.get("oid") == guest_id and claims.get("aud") == FABRIKAM_RESOURCE_APP_ID,
              f"{what}: Fabrikam's token for her guest object", claims)
        check(claims.get("iss") == f"{base}/{FABRIKAM_ID}/v2.0" and claims.get("idp") == issuer and claims.get("acct") == 1,
              f"{what}: iss Fabrikam's, idp Contoso's issuer, acct 1", claims)
        check(claims.get("amr") == ["pwd", "mfa"], f"{what}: amr pwd+mfa", claims.get("amr"))
        accounts = app.get_accounts()
        check(len(accounts) == 1 and accounts[0].get("home_account_id") == f"{ERIN_OID}.{TENANT_ID}",
              f"{what}: MSAL's account is her home account, from client_info", accounts)
        silent = app.acquire_token_silent(scopes, account=accounts[0], force_refresh=True)
        check(silent is not None, f"{what}: acquire_token_silent found no refresh token")
        expect_token(silent, what + " (silent)")
        check(jwt_claims(silent["access_token"]).get("oid") == guest_id, f"{what}: the refreshed token is hers", jwt_claims(silent["access_token"]))
        print(f"PASS {what}: Fabrikam → Contoso's page → Fabrikam's factor → MSAL's token (tid Fabrikam, idp {claims.get('idp')}, acct 1); "
              f"MSAL's account {accounts[0].get('home_account_id')}; silent refresh")
    finally:
        policy_id = created.json().get("id")
        if policy_id:
            session.delete(f"{base}/admin/v1/conditional-access/policies/{policy_id}", headers={**headers, "If-Match": "*"}, timeout=30)


def test_sign_in_frequency(msal, authority, issuer, session, cafile, base, offset_file):
    """(i) PROTOCOL §13 against the real binary under a moved clock: a one-hour sign-in frequency for Alice (a policy of
    session controls only); within the hour MSAL's silent refresh works; with the server's clock an hour and a minute
    ahead, the refresh is refused with 70043 bad_token and acquire_token_silent returns nothing (go interactive)."""
    scopes = [f"{RESOURCE}/Mail.Read"]
    what = "(i) sign-in frequency"
    admin = admin_headers(msal, authority, session, what)
    policy = {
        "id": "b2000000-0000-4000-8000-0000000000a3", "displayName": "Sign-in frequency 1 hour for Alice", "state": "enabled",
        "conditions": {"users": {"includeUsers": [USER_OID]}, "applications": {"includeApplications": ["All"]}, "clientAppTypes": ["all"]},
        "grantControls": None,
        "sessionControls": {"signInFrequency": {"isEnabled": True, "type": "hours", "value": 1, "frequencyInterval": "timeBased",
                                                "authenticationType": "primaryAndSecondaryAuthentication"}}}
    with temporary_policy(session, base, admin, policy, what), shifted_clock(offset_file):
        app = msal.PublicClientApplication(PUBLIC_CLIENT, authority=authority, instance_discovery=False, http_client=session)
        expect_token(app.acquire_token_by_username_password(USERNAME, PASSWORD, scopes=scopes), what)
        account = app.get_accounts(username=USERNAME)[0]
        expect_token(app.acquire_token_silent(scopes, account=account, force_refresh=True), what + " (within the hour)")
        set_clock_offset(offset_file, 3660)
        refused = app.acquire_token_silent_with_error(scopes, account=account, force_refresh=True)
        check(refused and refused.get("error") == "invalid_grant" and 70043 in (refused.get("error_codes") or [])
              and refused.get("suberror") == "bad_token", f"{what}: the refresh an hour later: 70043 bad_token", refused)
        check(app.acquire_token_silent(scopes, account=account, force_refresh=True) is None,
              f"{what}: acquire_token_silent returns nothing (the app goes interactive)")
        print(f"PASS {what}: refresh within the hour; with the server's clock 61 min ahead: {refused.get('error')} "
              f"{refused.get('error_codes')} suberror={refused.get('suberror')}; acquire_token_silent → None")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cafile", required=True, help="PEM certificate to trust (portcullis dev-cert output)")
    parser.add_argument("--base-url", default="https://localhost", help="the server's public https base URL")
    parser.add_argument("--tenant", default=TENANT_DOMAIN, help="tenant domain or ID in the authority")
    parser.add_argument("--clock-offset-file", help="the server's clock shim offset file (test i); without it, test i is skipped")
    parser.add_argument("--binary", help="the portcullis binary, for `portcullis gateway` (test l); without it, test l is skipped")
    args = parser.parse_args()
    if not args.base_url.startswith("https://"):
        print("msal_interop: --base-url must be https (MSAL refuses other authorities)", file=sys.stderr)
        return 2
    try:
        import msal
        import requests  # noqa: F401  (an msal dependency)
        import pyhpke  # noqa: F401  (test g)
    except ImportError as error:
        print(f"msal_interop: {error}; install with: python3 -m pip install msal pyotp pyhpke", file=sys.stderr)
        return 2

    base = args.base_url.rstrip("/")
    authority = f"{base}/{args.tenant}"
    issuer = f"{base}/{TENANT_ID}/v2.0"
    print(f"msal {msal.__version__}; authority {authority}; expected issuer {issuer}")
    session = make_session(args.cafile)
    failures = 0
    interactive = (test_auth_code_flow, test_device_flow, test_protapp_interactive, test_mfa, test_secrets, test_strength, test_step_up, test_token_protection,
                   test_b2b, test_certificate_credentials, test_federated_credentials, test_on_behalf_of)
    timed = (test_sign_in_frequency,) if args.clock_offset_file else ()
    gateway = (test_cae_gateway,) if args.binary else ()
    if not gateway:
        print("msal_interop: no --binary: (l) CAE through the gateway is not run")
    if not timed:
        print("msal_interop: no --clock-offset-file: (i) sign-in frequency under a moved clock is not run")
    for test in (test_client_credentials, test_password_and_refresh) + interactive + gateway + timed:
        try:
            if test in gateway:
                test(msal, authority, issuer, session, args.cafile, base, args.binary)
            elif test in timed:
                test(msal, authority, issuer, session, args.cafile, base, args.clock_offset_file)
            elif test in interactive:
                test(msal, authority, issuer, session, args.cafile, base)
            else:
                test(msal, authority, issuer, session)
        except Failure as failure:
            failures += 1
            print(f"FAIL {failure}", file=sys.stderr)
        except Exception:  # MSAL raises for transport/discovery problems (e.g. in the constructor)
            failures += 1
            print(f"FAIL {test.__name__}: MSAL raised:\n{traceback.format_exc()}", file=sys.stderr)
    if failures:
        print(f"msal_interop: {failures} test group(s) failed", file=sys.stderr)
        return 1
    print("msal_interop: all MSAL interop checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
