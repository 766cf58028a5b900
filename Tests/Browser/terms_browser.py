#!/usr/bin/env python3
"""Terms of use on the sign-in page (PROTOCOL §17) in a real browser: headless Chromium driven by Selenium, against a
real Portcullis binary whose wall clock this script moves (Tests/Interop/clockshift.c, preloaded).

    python3 Tests/Browser/terms_browser.py --binary .build/debug/portcullis [--output DIR]

What it does (each step fails the run with a message saying what was expected):
  1. Through the admin API: an agreement with an English and a Spanish text file, to be accepted again every day, and
     a conditional-access policy requiring it for the mail API.
  2. Bob signs in: the terms page (the agreement's name, its text in a scrollable region that takes focus, Accept and
     Decline); he declines, and the app's redirect URI receives access_denied.
  3. Alice signs in with a Spanish browser: the Spanish text; she accepts, the app receives a code that redeems for
     tokens; asked again, the browser goes straight back to the app (accepted, nothing to show).
  4. The server's clock moves a day and an hour ahead: Alice is asked again, accepts again, and the app gets its code.
  5. Throughout: every request the browser made went to the server or the app; the console shows no CSP violation.
Screenshots (phone 390×844 and desktop 1280×800) go to --output (default .build/test-output/terms).
"""
import argparse
import base64
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import signin_browser as common  # noqa: E402  (the server, the driver, screenshots, the app's redirect URI)

TENANT = common.TENANT
CLIENT = common.CLIENT
SCOPE = common.SCOPE
MAIL_API = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"
ADMIN_CLI = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
ALICE, ALICE_PASSWORD = "alice@contoso.example", "Alice-dev-pass1"
BOB, BOB_PASSWORD = "bob@contoso.example", "Bob-dev-pass1"
ENGLISH = "Contoso terms of use.\n\n1. Use the mail app for work.\n2. Report a lost device at once.\n"
SPANISH = "Condiciones de uso de Contoso.\n\n1. Use la aplicación de correo para el trabajo.\n"
check = common.check


def admin_call(base, method, path, body=None, token=None):
    request = urllib.request.Request(f"{base}/admin/v1{path}", method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def set_up(base):
    status, issued = common.post_form(f"{base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "client_credentials", "client_id": ADMIN_CLI[0], "client_secret": ADMIN_CLI[1], "scope": "api://portcullis-admin/.default"})
    check(status == 200, "the admin CLI's token", issued)
    token = issued["access_token"]
    status, agreement = admin_call(base, "POST", "/agreements", {
        "displayName": "Contoso terms of use", "isViewingBeforeAcceptanceRequired": True, "isPerDeviceAcceptanceRequired": False,
        "userReacceptRequiredFrequency": "P1D",
        "files": [
            {"fileName": "terms-en.txt", "language": "en", "isDefault": True, "fileData": {"data": base64.b64encode(ENGLISH.encode()).decode()}},
            {"fileName": "terms-es.txt", "language": "es", "isDefault": False, "fileData": {"data": base64.b64encode(SPANISH.encode()).decode()}},
        ]}, token)
    check(status == 201, "the agreement is created", agreement)
    status, policy = admin_call(base, "POST", "/conditional-access/policies", {
        "displayName": "Terms of use for the mail API", "state": "enabled",
        "conditions": {"users": {"includeUsers": ["All"]}, "applications": {"includeApplications": [MAIL_API]}},
        "grantControls": {"operator": "OR", "builtInControls": [], "termsOfUse": [agreement["id"]]}}, token)
    check(status == 201, "the policy is created", policy)
    return token, agreement["id"]


def authorize(run, state):
    verifier, challenge = common.pkce()
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": CLIENT, "redirect_uri": f"{run.app_base}/", "scope": SCOPE, "state": state,
        "code_challenge": challenge, "code_challenge_method": "S256"})
    run.driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?{query}")
    return verifier


def sign_in(run, username, password):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "password").submit()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "accept") or d.current_url.startswith(run.app_base))


def landed(run):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(run.driver.current_url).query))


def redeem(run, code, verifier):
    return common.post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "authorization_code", "client_id": CLIENT, "code": code, "redirect_uri": f"{run.app_base}/", "code_verifier": verifier})


def flows(run, offset_file):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver

    # Bob declines.
    authorize(run, "bob")
    sign_in(run, BOB, BOB_PASSWORD)
    check(driver.title.startswith("Terms of use") and "Contoso terms of use" in driver.page_source, "the terms page", driver.title)
    region = driver.find_element(By.ID, "terms-text")
    check("Report a lost device" in region.text and region.get_attribute("tabindex") == "0", "the text, in a focusable region", region.text)
    check(driver.find_element(By.ID, "accept").tag_name == "button" and driver.find_element(By.ID, "decline").tag_name == "button",
          "Accept and Decline are buttons")
    run.shoot("terms")
    driver.find_element(By.ID, "decline").click()
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    check(landed(run).get("error") == "access_denied" and landed(run).get("state") == "bob", "declined: the app hears access_denied", landed(run))
    print("PASS decline: Bob saw the terms and declined; the app received access_denied")

    # Alice accepts, in Spanish.
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Accept-Language": "es-ES,es;q=0.9,en;q=0.5"}})
    verifier = authorize(run, "alice")
    sign_in(run, ALICE, ALICE_PASSWORD)
    check("Condiciones de uso" in driver.find_element(By.ID, "terms-text").text, "the Spanish file for a Spanish browser")
    run.shoot("terms-spanish")
    driver.find_element(By.ID, "accept").click()
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    code = landed(run).get("code")
    check(code and landed(run).get("state") == "alice", "accepted: the app receives the code", landed(run))
    status, tokens = redeem(run, code, verifier)
    check(status == 200 and tokens.get("access_token"), "the code redeems for tokens", [status, tokens])
    authorize(run, "again")
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    check(landed(run).get("code"), "accepted: single sign-on goes straight back with a code", driver.current_url)
    print("PASS accept: Alice saw the Spanish terms, accepted, and the app got tokens; asked again, nothing to accept")

    # A day and an hour later: asked again.
    with open(offset_file, "w") as handle:
        handle.write(str(25 * 3600))
    time.sleep(0.3)
    verifier = authorize(run, "next-day")
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "accept") or d.find_elements(By.ID, "username"))
    if driver.find_elements(By.ID, "username"):
        sign_in(run, ALICE, ALICE_PASSWORD)
    check(driver.find_elements(By.ID, "accept"), "after the frequency the terms are asked again", driver.page_source[:600])
    run.shoot("terms-again")
    driver.find_element(By.ID, "accept").click()
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    code = landed(run).get("code")
    status, tokens = redeem(run, code, verifier)
    check(code and status == 200, "accepted again: the app gets its tokens", [status, tokens])
    print("PASS re-accept: a day and an hour later (the server's clock moved) Alice accepted again and the app got tokens")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(common.ROOT, ".build/debug/portcullis"))
    parser.add_argument("--output", default=os.path.join(common.ROOT, ".build/test-output/terms"))
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="portcullis-terms.")
    shim = os.path.join(work, "clockshift.so")
    built = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(common.ROOT, "Tests/Interop/clockshift.c"), "-ldl"],
                           capture_output=True, text=True)
    if built.returncode != 0:
        print(f"terms_browser: cannot build the clock shim: {built.stderr}", file=sys.stderr)
        return 1
    offset_file = os.path.join(work, "clock-offset")
    with open(offset_file, "w") as handle:
        handle.write("0")
    app_port = common.free_port()
    capture = http.server.ThreadingHTTPServer(("127.0.0.1", app_port), common.Capture)
    threading.Thread(target=capture.serve_forever, daemon=True).start()
    process = driver = None
    status = 0
    try:
        process, base = common.start_server(
            os.path.abspath(args.binary), work, env={"LD_PRELOAD": shim, "PORTCULLIS_CLOCK_OFFSET_FILE": offset_file})
        set_up(base)
        driver = common.make_driver()
        run = common.Run(driver, base, args.output, f"http://localhost:{app_port}")
        print(f"terms_browser: {driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}; server {base}")
        flows(run, offset_file)
        run.check_hygiene()
        print(f"terms_browser: {len(run.shots)} screenshots in {args.output}")
    except Exception as failure:  # a Failure, or Selenium's own (a wait that timed out)
        status = 1
        common.report_failure(driver, args.output, "terms_browser", failure)
    finally:
        if driver is not None:
            driver.quit()
        capture.shutdown()
        common.stop_server(process, work, failed=status != 0)
    if status == 0:
        print("terms_browser: all terms-of-use checks passed")
    return status


if __name__ == "__main__":
    sys.exit(main())
