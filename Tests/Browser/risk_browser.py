#!/usr/bin/env python3
"""A risky user remediated on the sign-in page (PROTOCOL §19) in a real browser: headless Chromium driven by Selenium,
against a real Portcullis binary.

    python3 Tests/Browser/risk_browser.py --binary .build/debug/portcullis [--output DIR]

What it does (each step fails the run with a message saying what was expected):
  1. Through the admin API: Microsoft's "Require password change for high-risk users" (MFA and a password change for
     high user risk), enforced; Carol's credentials reported leaked (her risk goes high).
  2. Blocked: Carol's password grant is refused (AADSTS50076: the policy's second factor first; an app without a page
     cannot remediate).
  3. On the page: her password, then a second factor (she registers an authenticator app; a code from pyotp), then the
     page asks for a new password; two that differ are refused with the form again; the old one is refused; a new one
     is taken and the app's redirect URI receives a code that redeems for tokens.
  4. Remediated: the admin API shows her risk remediated by a secure password change, with its history; the old
     password no longer signs in; the new one does, through the password grant the policy refused before.
  5. The console's Risk page: Carol remediated, Bob (reported) at high risk with the detections; Erin dismisses Bob's.
  6. Throughout: every request the browser made went to the server or the app; the console shows no CSP violation.
Screenshots (phone 390×844 and desktop 1280×800) go to --output (default .build/test-output/risk).
"""
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import signin_browser as common  # noqa: E402  (the server, the driver, screenshots, the app's redirect URI)

TENANT = common.TENANT
CLIENT = common.CLIENT
SCOPE = common.SCOPE
ADMIN_CLI = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
CAROL, CAROL_PASSWORD = common.CAROL, common.CAROL_PASSWORD
BOB = common.BOB
ERIN, ERIN_PASSWORD = "erin@contoso.example", "Erin-dev-pass1"
NEW_PASSWORD = "Carol-remediated-2026"
check = common.check


def admin_call(base, method, path, body=None, token=None):
    request = urllib.request.Request(f"{base}/admin/v1{path}", method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def password_grant(base, password):
    return common.post_form(f"{base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "password", "client_id": CLIENT, "username": CAROL, "password": password, "scope": SCOPE})


def set_up(base):
    status, issued = common.post_form(f"{base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "client_credentials", "client_id": ADMIN_CLI[0], "client_secret": ADMIN_CLI[1], "scope": "api://portcullis-admin/.default"})
    check(status == 200, "the admin CLI's token", issued)
    token = issued["access_token"]
    status, policy = admin_call(base, "POST", "/conditional-access/policies", {
        "displayName": "Require password change for high-risk users", "state": "enabled",
        "conditions": {"users": {"includeUsers": ["All"]}, "applications": {"includeApplications": ["All"]}, "userRiskLevels": ["high"]},
        "grantControls": {"operator": "AND", "builtInControls": ["mfa", "passwordChange"]}}, token)
    check(status == 201, "Microsoft's password-change policy is created, enforced", policy)
    status, detection = admin_call(base, "POST", "/identityProtection/riskDetections",
                                   {"userId": CAROL, "riskEventType": "leakedCredentials", "additionalInfo": "found in a paste"}, token)
    check(status == 201 and detection.get("riskLevel") == "high", "Carol's credentials reported leaked", detection)
    return token


def flows(run, token):
    import pyotp
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver

    status, refused = password_grant(run.base, CAROL_PASSWORD)
    check(status == 400 and 50076 in refused.get("error_codes", []), "blocked: the password grant is refused for the policy's second factor",
          [status, refused])
    print("PASS blocked: Carol's password grant refused (AADSTS50076) while her risk is high")

    verifier, challenge = common.pkce()
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": CLIENT, "redirect_uri": f"{run.app_base}/", "scope": SCOPE, "state": "risky",
        "code_challenge": challenge, "code_challenge_method": "S256"})
    driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?{query}")
    driver.find_element(By.ID, "username").send_keys(CAROL)
    driver.find_element(By.ID, "password").send_keys(CAROL_PASSWORD)
    driver.find_element(By.ID, "password").submit()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "otp"))
    secret = driver.find_element(By.ID, "secret").text.replace(" ", "")
    driver.find_element(By.ID, "otp").send_keys(pyotp.TOTP(secret).now())
    driver.find_element(By.ID, "otp").submit()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "new-password"))
    check(driver.title.startswith("Update your password") and "may be at risk" in driver.find_element(By.TAG_NAME, "main").text,
          "after the second factor the page asks for a new password, saying why", driver.title)
    fields = [driver.find_element(By.ID, "new-password"), driver.find_element(By.ID, "confirm-password")]
    check(all(f.get_attribute("autocomplete") == "new-password" and f.get_attribute("type") == "password" for f in fields),
          "both fields are new-password fields (a password manager offers a new one)")
    check(driver.find_element(By.CSS_SELECTOR, "label[for=new-password]").text and driver.find_element(By.CSS_SELECTOR, "label[for=confirm-password]").text,
          "each field has its label")
    run.shoot("password-change")

    fields[0].send_keys(NEW_PASSWORD)
    fields[1].send_keys(NEW_PASSWORD + "x")
    driver.find_element(By.ID, "change").click()
    WebDriverWait(driver, 15, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: any("not the same" in e.text for e in d.find_elements(By.ID, "error")))
    check("not the same" in driver.find_element(By.ID, "error").text, "two different passwords: the form again, saying so",
          driver.find_element(By.ID, "error").text)
    run.shoot("password-change-mismatch")
    driver.find_element(By.ID, "new-password").send_keys(CAROL_PASSWORD)
    driver.find_element(By.ID, "confirm-password").send_keys(CAROL_PASSWORD)
    driver.find_element(By.ID, "change").click()
    WebDriverWait(driver, 15, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: any("have not used" in e.text for e in d.find_elements(By.ID, "error")))
    print("PASS refused on the page: two different passwords, then the old password again")

    # The form is bound to this browser: posted from elsewhere (no CSRF cookie), or without the sign-in's session, it is refused.
    form = driver.find_element(By.ID, "password-form")
    action = form.get_attribute("action")
    fields = {f.get_attribute("name"): f.get_attribute("value") for f in form.find_elements(By.CSS_SELECTOR, "input[type=hidden]")}
    fields.update({"password": "Mallory-chose-this-1", "confirm": "Mallory-chose-this-1"})
    cookies = {c["name"]: c["value"] for c in driver.get_cookies()}
    body = urllib.parse.urlencode(fields).encode()
    short = urllib.parse.urlencode({**fields, "password": "short", "confirm": "short"}).encode()
    for sent, expected, data in (({}, "could not be verified", body), ({k: v for k, v in cookies.items() if "session" not in k}, "another browser", body),
                                 (cookies, "8 to 256 characters", short)):
        request = urllib.request.Request(action, data=data, method="POST", headers={
            "Content-Type": "application/x-www-form-urlencoded", "Cookie": "; ".join(f"{k}={v}" for k, v in sent.items())})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, page = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, page = error.code, error.read().decode()
        check(status == 400 and expected in page, f"the password form refused: {expected}", [status, page[:300]])
    print("PASS the password form is refused without this browser's CSRF cookie, without its session, and for a password too short")

    driver.find_element(By.ID, "new-password").send_keys(NEW_PASSWORD)
    driver.find_element(By.ID, "confirm-password").send_keys(NEW_PASSWORD)
    driver.find_element(By.ID, "change").click()
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    landed = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
    check(landed.get("code") and landed.get("state") == "risky", "changed: the app receives its code", landed)
    status, tokens = common.post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "authorization_code", "client_id": CLIENT, "code": landed["code"], "redirect_uri": f"{run.app_base}/", "code_verifier": verifier})
    check(status == 200 and tokens.get("access_token") and tokens.get("refresh_token"), "the code redeems for tokens", [status, tokens])
    print("PASS remediated on the page: password, second factor, a new password, and the app got tokens")

    status, users = admin_call(run.base, "GET", "/users", token=token)
    carol = next(u for u in users.get("value", []) if u.get("userPrincipalName") == CAROL)
    status, risky = admin_call(run.base, "GET", f"/identityProtection/riskyUsers/{carol['id']}", token=token)
    check(status == 200 and risky.get("riskState") == "remediated" and risky.get("riskDetail") == "userPerformedSecuredPasswordChange"
          and risky.get("riskLevel") == "none", "the admin API: remediated by a secure password change", risky)
    status, history = admin_call(run.base, "GET", f"/identityProtection/riskyUsers/{carol['id']}/history", token=token)
    check([h.get("riskState") for h in history.get("value", [])] == ["remediated", "atRisk"], "the history: at risk, then remediated", history)
    status, old = password_grant(run.base, CAROL_PASSWORD)
    check(status == 400 and old.get("error") == "invalid_grant", "the old password signs in no more", [status, old])
    status, allowed = password_grant(run.base, NEW_PASSWORD)
    check(status == 200 and allowed.get("access_token"), "allowed: the new password's grant goes through (the policy no longer applies)",
          [status, allowed])
    print("PASS allowed: risk remediated in the admin API; the old password refused, the new one's grant issued")

    # The console: Bob's credentials reported too; Erin sees both, and dismisses Bob's risk.
    status, _ = admin_call(run.base, "POST", "/identityProtection/riskDetections", {"userId": BOB, "riskEventType": "leakedCredentials"}, token)
    check(status == 201, "Bob's credentials reported leaked")
    import console_browser  # noqa: E402  (its sign-in to the console)
    console_browser.sign_in(run, ERIN, ERIN_PASSWORD)
    driver.get(f"{run.base}/admin/risk")
    check(driver.find_element(By.CSS_SELECTOR, "nav a[aria-current=page]").text == "Risk", "the console's navigation has Risk, current")
    rows = {row.find_element(By.CSS_SELECTOR, "td").text.split("\n")[-1]: row for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
            if row.find_elements(By.CSS_SELECTOR, "td small.mono")}
    check(set(rows) >= {CAROL, BOB}, "the risky users: Carol and Bob", list(rows))
    check("remediated" in rows[CAROL].text and not rows[CAROL].find_elements(By.CSS_SELECTOR, "button[value=dismiss]"),
          "Carol remediated: nothing to dismiss", rows[CAROL].text)
    check("high" in rows[BOB].text and "atRisk" in rows[BOB].text, "Bob at risk, high", rows[BOB].text)
    check("leakedCredentials" in driver.find_element(By.TAG_NAME, "main").text and "userPerformedSecuredPasswordChange" in rows[CAROL].text,
          "the detections and why Carol's risk closed")
    run.shoot("console-risk")
    rows[BOB].find_element(By.CSS_SELECTOR, "button[value=dismiss]").click()
    WebDriverWait(driver, 15).until(lambda d: "Risk dismissed." in d.page_source)
    status, bob = admin_call(run.base, "GET", f"/identityProtection/riskyUsers/{BOB}", token=token)
    check(status == 200 and bob.get("riskState") == "dismissed", "dismissed in the console: the admin API agrees", bob)
    print("PASS the console: risky users with their state and detections; Bob's risk dismissed from the page")


def main():
    return common.run_flows("risk_browser", __doc__, "risk", lambda base, _: set_up(base), flows)


if __name__ == "__main__":
    sys.exit(main())
