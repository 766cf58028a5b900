#!/usr/bin/env python3
"""Device conditions on the sign-in page (PROTOCOL §18) in a real browser: headless Chromium driven by Selenium, against
a real Portcullis binary. Chromium has no device key and does not offer PKeyAuth, so the page decides as for an
unregistered device, and the policy says what happens.

    python3 Tests/Browser/device_browser.py --binary .build/debug/portcullis [--output DIR]

What it does (each step fails the run with a message saying what was expected):
  1. Through the admin API: a web app (confidential: its code is redeemed by its server, not by a device, so nothing
     later can prove a device), a policy requiring a compliant device for Bob at that app, and a policy requiring a
     compliant device *or* MFA for Carol there.
  2. Chromium asks to sign Bob in: the page answers no PKeyAuth challenge (the browser did not offer it); after his
     password the page refuses: "This device can't be used here", AADSTS53000, what to do; the app gets nothing. The
     sign-in log has the refusal (53000, no device detail, the policy failed).
  3. Carol: after her password the page asks for a second factor (registering an authenticator app: she has none) —
     MFA is the way through for an unregistered device; a code from pyotp, the app's redirect URI gets its code, and the
     web app's server redeems it (client secret): amr has mfa, no deviceid.
  4. The web app's server refreshes Carol's tokens; the sign-in log has the redemption and the refresh as `browser`
     sign-ins (Entra's client app type of a web app). A policy blocking Dave's `browser` sign-ins blocks him on the page.
  5. Throughout: every request went to the server or the app; the console shows no CSP violation.
Screenshots (phone 390×844 and desktop 1280×800) go to --output (default .build/test-output/devices).
"""
import base64
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import signin_browser as common  # noqa: E402  (the server, the driver, screenshots, the app's redirect URI)

TENANT = common.TENANT
WEB_APP = "c0ffee00-d0d0-4a2b-8c3d-4e5f6a7b8c0d"
ADMIN_CLI = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
BOB, BOB_PASSWORD = common.BOB, common.BOB_PASSWORD
DAVE, DAVE_PASSWORD = common.DAVE, common.DAVE_PASSWORD
CAROL, CAROL_PASSWORD = common.CAROL, common.CAROL_PASSWORD
check = common.check


def admin_call(base, method, path, body=None, token=None):
    request = urllib.request.Request(f"{base}/admin/v1{path}", method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def user_id(base, token, upn):
    status, users = admin_call(base, "GET", "/users", token=token)
    check(status == 200, "the users", users)
    found = [u for u in users.get("value", users if isinstance(users, list) else []) if u.get("userPrincipalName") == upn]
    check(found, f"{upn} in the directory", users)
    return found[0]["id"]


def set_up(base, app_base):
    status, issued = common.post_form(f"{base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "client_credentials", "client_id": ADMIN_CLI[0], "client_secret": ADMIN_CLI[1], "scope": "api://portcullis-admin/.default"})
    check(status == 200, "the admin CLI's token", issued)
    token = issued["access_token"]
    status, app = admin_call(base, "POST", "/applications", {
        "appId": WEB_APP, "displayName": "Contoso Expenses (web)", "publicClient": False, "allowedGrantTypes": ["authorization_code", "refresh_token"],
        "redirectUris": ["http://localhost/"]}, token)
    check(status == 201, "the web app is created", app)
    status, secret = admin_call(base, "POST", f"/applications/{WEB_APP}/secrets", {"displayName": "web"}, token)
    check(status == 201, "its client secret", secret)
    web_secret = secret["secretText"]
    for upn, controls, name in ((BOB, ["compliantDevice"], "Compliant device for Expenses"),
                                (CAROL, ["compliantDevice", "mfa"], "Compliant device or MFA for Expenses")):
        status, policy = admin_call(base, "POST", "/conditional-access/policies", {
            "displayName": name, "state": "enabled",
            "conditions": {"users": {"includeUsers": [user_id(base, token, upn)]}, "applications": {"includeApplications": [WEB_APP]},
                           "clientAppTypes": ["all"]},
            "grantControls": {"operator": "OR", "builtInControls": controls}}, token)
        check(status == 201, f"the policy '{name}'", policy)
    # Entra's client app types: a web app's sign-in through the page is "browser" (Dave's is blocked there).
    status, policy = admin_call(base, "POST", "/conditional-access/policies", {
        "displayName": "Block browser sign-ins for Dave", "state": "enabled",
        "conditions": {"users": {"includeUsers": [user_id(base, token, DAVE)]}, "applications": {"includeApplications": ["All"]},
                       "clientAppTypes": ["browser"]},
        "grantControls": {"operator": "OR", "builtInControls": ["block"]}}, token)
    check(status == 201, "the policy blocking Dave's browser sign-ins", policy)
    return token, web_secret


def authorize(run):
    verifier, challenge = common.pkce()
    run.verifier = verifier
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": WEB_APP, "redirect_uri": f"{run.app_base}/", "scope": "openid profile offline_access",
        "state": "s", "code_challenge": challenge, "code_challenge_method": "S256"})
    run.driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?{query}")


def sign_in(run, username, password):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})  # every path: a new browser session
    authorize(run)
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "password").submit()
    WebDriverWait(driver, 15).until(lambda d: "Sign in ·" not in d.title or d.current_url.startswith(run.app_base))


def flows(run, token):
    from selenium.webdriver.common.by import By
    driver = run.driver

    sign_in(run, BOB, BOB_PASSWORD)
    check(not driver.current_url.startswith(run.app_base), "Bob's unregistered browser does not reach the app", driver.current_url)
    check(driver.title.startswith("This device can't be used here"), "the page says the device can't be used", driver.title)
    text = driver.find_element(By.TAG_NAME, "main").text
    check("53000" in text and "compliant" in text and "registered device" in text,
          "the refusal names AADSTS53000, the requirement and what to do", text)
    run.shoot("device-refused")
    print("PASS Bob: the page decided as for an unregistered device and refused (AADSTS53000)")

    status, log = admin_call(run.base, "GET", f"/sign-ins?app={WEB_APP}", token=token)
    records = log.get("value", []) if isinstance(log, dict) else []
    bob = [r for r in records if r.get("userPrincipalName") == BOB]
    check(status == 200 and bob and bob[0].get("errorCode") == 53000 and not bob[0].get("deviceDetail"),
          "the sign-in log has Bob's refusal: 53000, no device detail", log)
    print("PASS the sign-in log: Bob's sign-in refused 53000, from no registered device")

    sign_in(run, CAROL, CAROL_PASSWORD)
    check(not driver.current_url.startswith(run.app_base), "Carol is not let through on her password alone", driver.current_url)
    check(driver.find_elements(By.ID, "otp"), "compliant device or MFA, from an unregistered device: the page asks for a second factor",
          driver.page_source[:800])
    run.shoot("device-or-mfa")
    import pyotp
    from selenium.webdriver.support.ui import WebDriverWait
    secret = driver.find_element(By.ID, "secret").text.replace(" ", "")
    driver.find_element(By.ID, "otp").send_keys(pyotp.TOTP(secret).now())
    driver.find_element(By.ID, "otp").submit()
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    landed = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
    status, tokens = common.post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "authorization_code", "client_id": WEB_APP, "client_secret": run.web_secret, "code": landed.get("code", ""),
        "redirect_uri": f"{run.app_base}/", "code_verifier": run.verifier})
    payload = tokens.get("access_token", "..").split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))) if status == 200 else {}
    check(status == 200 and "mfa" in claims.get("amr", []) and "deviceid" not in claims,
          "after the code, the web app's server redeems: tokens with amr mfa and no device", [status, tokens, claims])
    print("PASS Carol: compliant device or MFA, from an unregistered device — the page asked for the second factor, then the app got tokens")

    # The web app's server refreshes; the sign-in log has the redemption and the refresh as browser sign-ins.
    status, refreshed = common.post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "refresh_token", "client_id": WEB_APP, "client_secret": run.web_secret, "refresh_token": tokens.get("refresh_token", "")})
    check(status == 200, "the web app refreshes Carol's tokens", refreshed)
    status, log = admin_call(run.base, "GET", f"/sign-ins?app={WEB_APP}", token=token)
    carol = [r for r in log.get("value", []) if r.get("userPrincipalName") == CAROL and r.get("errorCode") in (None, 0)]
    kinds = {(r.get("grantType"), r.get("clientAppType")) for r in carol}
    check(("authorization_code", "browser") in kinds and ("refresh_token", "browser") in kinds,
          "the web app's redemption and refresh are browser sign-ins in the log", carol)
    print("PASS the web app's code and refresh: clientAppType browser in the sign-in log")

    sign_in(run, DAVE, DAVE_PASSWORD)
    check(driver.title.startswith("Access blocked") and "53003" in driver.find_element(By.TAG_NAME, "main").text,
          "a policy on browser sign-ins blocks Dave's sign-in to the web app on the page (53003)", driver.title)
    run.shoot("browser-blocked")
    print("PASS a policy on clientAppTypes browser applies to the web app's page sign-in: Dave blocked (53003)")


def main():
    def flows_with_secret(run, prepared):
        token, run.web_secret = prepared
        flows(run, token)

    return common.run_flows("device_browser", __doc__, "devices", set_up, flows_with_secret)


if __name__ == "__main__":
    sys.exit(main())
