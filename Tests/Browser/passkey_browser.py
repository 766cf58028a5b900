#!/usr/bin/env python3
"""Passkeys (PROTOCOL §12) in a real browser: headless Chromium with a virtual authenticator (Selenium's
`add_virtual_authenticator`: ctap2, internal, resident key, user verification), against a real Portcullis binary
whose base URL is http://localhost:PORT (WebAuthn refuses IP addresses as relying party IDs).

    python3 Tests/Browser/passkey_browser.py --binary .build/debug/portcullis [--output DIR]

  1. Dave registers a TOTP factor on the mail API (the demo policy asks him for MFA), then opens Security info and
     adds a passkey ("Add a passkey"): the page lists it.
  2. An admin requires phishing-resistant MFA (…0004) of Dave on the mail API.
  3. A new browser session: "Sign in with a passkey" with no user name → the app's code → tokens with amr fido+mfa;
     a silent refresh keeps it. The time is compared with a password sign-in (Alice) in the same run.
  4. User name first: the name typed, "Sign in with a passkey" → the passkey page → the code.
  5. Password + TOTP under the strength: the page asks for a passkey; the passkey finishes the sign-in.
  6. Refusals: user verification off → no sign-in; a credential with a sign count below the server's → AADSTS50053,
     the passkey marked suspect (the admin API lists it so, and an admin clears it).
  7. A temporary access pass: the admin issues a one-time pass for Carol (no method yet); she signs in to Security
     info with it in place of the password, adds a passkey, the pass is used up, the passkey signs her in.
  8. persistentBrowser never for Carol: her session cookie is a browser-session cookie (Alice's, without the policy,
     persists).
  9. Security info with a password alone (Dave has methods): nothing can be added or removed before verifying.
  9b. A pass under the phishing-resistant strength: Bob (no method) signs in with it, the page offers "Create a
     passkey", and the new passkey takes him on to the app (amr fido+mfa).
  10. Microsoft's "block device code flow" policy: the approval page refuses (AADSTS53003), the device gets access_denied.
Before 1, the default registration rule: Dave's first factor with a password alone from loopback is refused (53003).
Screenshots (phone and desktop) go to --output (default .build/test-output/passkeys).
"""
import argparse
import base64
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import signin_browser as base  # noqa: E402 (the shared browser helpers)
from signin_browser import Failure, check, pkce, post_form  # noqa: E402

TENANT = base.TENANT
CLIENT = base.CLIENT
SCOPE = base.SCOPE
DAVE, DAVE_PASSWORD = base.DAVE, base.DAVE_PASSWORD
DAEMON, DAEMON_SECRET = "c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me"
MAIL_API = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"
DAVE_ID = "3f6b6d4c-8e0a-4b5d-9f9c-4a6e8d0b2c04"
CAROL = "carol@contoso.example"
CAROL_ID = "2e7a5c3b-7d9f-4a4c-8e8b-3f5d7c9a1b03"
BOB = "bob@contoso.example"
BOB_ID = "1d8f4b2a-6c8e-4f3b-9d7a-2e4c6b8f0a02"
STRENGTH_POLICY = "b2000000-0000-4000-8000-000000000004"


def start_server(binary, work):
    shutil.copytree(os.path.join(base.ROOT, "Config"), os.path.join(work, "config"))
    port = base.free_port()
    log = open(os.path.join(work, "server.log"), "w")
    process = subprocess.Popen(
        [binary, "serve", "--config", "./config", "--data", "./data", "--keys", "./keys", "--host", "127.0.0.1", "--port", str(port),
         "--base-url", f"http://localhost:{port}"],
        cwd=work, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PORTCULLIS_BCRYPT_COST="4"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if re.search(r"Portcullis is listening", open(os.path.join(work, "server.log")).read()):
            return process, f"http://localhost:{port}"
        if process.poll() is not None:
            raise Failure("the server exited:\n" + open(os.path.join(work, "server.log")).read()[-3000:])
        time.sleep(0.1)
    raise Failure("the server did not start within 60 s")


def admin_request(run, method, path, body=None, headers=None):
    status, token = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "client_credentials", "client_id": DAEMON, "client_secret": DAEMON_SECRET, "scope": "api://portcullis-admin/.default"})
    check(status == 200, "the admin daemon gets a token", token)
    request = urllib.request.Request(f"{run.base}/admin/v1{path}", method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Bearer {token['access_token']}", "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Flow:
    def __init__(self, run):
        self.run = run
        self.driver = run.driver
        self.redirect = f"{run.app_base}/"

    def authorize(self, login_hint=None, fresh=True):
        if fresh:
            self.driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        verifier, challenge = pkce()
        fields = {"response_type": "code", "client_id": CLIENT, "redirect_uri": self.redirect, "scope": SCOPE, "state": "pk",
                  "code_challenge": challenge, "code_challenge_method": "S256"}
        if login_hint:
            fields["login_hint"] = login_hint
        self.driver.get(f"{self.run.base}/{TENANT}/oauth2/v2.0/authorize?{urllib.parse.urlencode(fields)}")
        return verifier

    def wait(self, condition, what, timeout=15):
        from selenium.webdriver.support.ui import WebDriverWait
        from selenium.common.exceptions import StaleElementReferenceException, TimeoutException, WebDriverException

        def settled(driver):
            # A page replaced while the condition reads it is "not yet": Chrome says so as a stale element or, its node
            # gone mid-read, as an inspector error ("does not belong to the document").
            try:
                return condition(driver)
            except WebDriverException as error:
                if isinstance(error, StaleElementReferenceException) or "does not belong to the document" in str(error):
                    return False
                raise

        try:
            WebDriverWait(self.driver, timeout).until(settled)
        except TimeoutException:
            raise Failure(f"{what} (the page: {self.driver.title} {self.driver.current_url})")

    def landed(self, verifier, what):
        self.wait(lambda d: d.current_url.startswith(self.run.app_base), f"{what}: the app should get its code")
        delivered = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.driver.current_url).query))
        check(delivered.get("code"), f"{what}: a code", delivered)
        status, tokens = post_form(f"{self.run.base}/{TENANT}/oauth2/v2.0/token", {
            "grant_type": "authorization_code", "client_id": CLIENT, "code": delivered["code"], "redirect_uri": self.redirect,
            "code_verifier": verifier})
        check(status == 200 and tokens.get("access_token"), f"{what}: the code redeems", [status, tokens])
        return tokens

    def click_passkey(self):
        from selenium.webdriver.common.by import By
        self.wait(lambda d: any(b.is_displayed() for b in d.find_elements(By.CSS_SELECTOR, "button[data-passkey]")),
                  "the passkey button shows once the script ran")
        button = [b for b in self.driver.find_elements(By.CSS_SELECTOR, "button[data-passkey]") if b.is_displayed()][0]
        check("passkey" in button.text.lower(), "the button's text names a passkey", button.text)
        button.click()


def run_flows(run):
    import pyotp
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.virtual_authenticator import Credential, Protocol, Transport, VirtualAuthenticatorOptions
    driver = run.driver
    flow = Flow(run)

    # A password sign-in in this run, for comparison (Alice: no second factor asked).
    verifier = flow.authorize()
    started = time.monotonic()
    driver.find_element(By.ID, "username").send_keys(base.USER)
    driver.find_element(By.ID, "password").send_keys(base.PASSWORD)
    driver.find_element(By.ID, "password").submit()
    flow.landed(verifier, "password sign-in")
    password_ms = (time.monotonic() - started) * 1000
    persistent = session_cookie(driver)
    check(persistent and not persistent.get("session") and persistent.get("expires", 0) > time.time(),
          "without a persistentBrowser policy the session cookie outlives the browser (Max-Age)", persistent)

    # 0. The default registration rule (PROTOCOL §12.3): Dave, password only, from loopback (not a trusted location) may
    #    not register a first factor; the demo tenant's "anywhere" setting is put back after.
    status, tenant = admin_request(run, "GET", "/tenant")
    set_registration = lambda value: admin_request(run, "PUT", "/tenant", {**tenant, "passwordOnlyRegistration": value}, {"If-Match": "*"})
    check(set_registration(None)[0] == 200, "the tenant's default registration rule")
    flow.authorize(login_hint=DAVE)
    driver.find_element(By.ID, "password").send_keys(DAVE_PASSWORD)
    driver.find_element(By.ID, "password").submit()
    flow.wait(lambda d: "add a sign-in method" in d.title, "a first factor with a password alone is refused outside a trusted location")
    check("AADSTS53003" in driver.page_source and "temporary access pass" in driver.page_source, "the page says why and what to do")
    run.shoot("registration-refused")
    check(set_registration("anywhere")[0] == 200, "the demo tenant's setting again")
    print("PASS the default registration rule: no first factor with a password alone from an untrusted address (AADSTS53003)")

    # 1. Dave: password + a new TOTP factor, then Security info → Add a passkey.
    verifier = flow.authorize(login_hint=DAVE)
    driver.find_element(By.ID, "password").send_keys(DAVE_PASSWORD)
    driver.find_element(By.ID, "password").submit()
    flow.wait(lambda d: d.find_elements(By.ID, "secret"), "Dave registers a TOTP factor")
    secret = driver.find_element(By.ID, "secret").text.replace(" ", "")
    registered = time.time()
    driver.find_element(By.ID, "otp").send_keys(pyotp.TOTP(secret).at(registered))
    driver.find_element(By.ID, "otp").submit()
    flow.landed(verifier, "Dave with TOTP")

    options = VirtualAuthenticatorOptions()
    options.protocol = Protocol.CTAP2
    options.transport = Transport.INTERNAL
    options.has_resident_key = True
    options.has_user_verification = True
    options.is_user_verified = True
    options.is_user_consenting = True
    driver.add_virtual_authenticator(options)

    driver.get(f"{run.base}/{TENANT}/securityinfo")
    check(driver.title.startswith("Security info"), "Security info opens for the signed-in session", driver.title)
    driver.find_element(By.ID, "passkey-name").send_keys("Virtual key")
    flow.click_passkey()
    flow.wait(lambda d: d.find_elements(By.ID, "notice"), "the passkey is added")
    check("Virtual key" in driver.page_source and "Passkey added" in driver.find_element(By.ID, "notice").text, "the page lists the new passkey")
    run.shoot("passkey-security-info")
    check(len(driver.get_credentials()) == 1 and driver.get_credentials()[0].is_resident_credential, "one discoverable credential was created")
    print("PASS a passkey added on Security info after TOTP (virtual authenticator, ctap2 internal, resident key, UV)")

    # 2. Phishing-resistant MFA for Dave on the mail API.
    status, body = admin_request(run, "POST", "/conditional-access/policies", {
        "id": STRENGTH_POLICY, "displayName": "Phishing-resistant MFA for Dave on mail", "state": "enabled",
        "conditions": {"users": {"includeUsers": [base_user_id(run)]}, "applications": {"includeApplications": [MAIL_API]}, "clientAppTypes": ["all"]},
        "grantControls": {"operator": "OR", "builtInControls": [], "authenticationStrength": {"id": "00000000-0000-0000-0000-000000000004"}}})
    check(status == 201, "the admin requires the phishing-resistant strength", [status, body])

    # 3. Discoverable sign-in.
    verifier = flow.authorize()
    run.shoot("passkey-signin")
    started = time.monotonic()
    flow.click_passkey()
    tokens = flow.landed(verifier, "discoverable passkey sign-in")
    passkey_ms = (time.monotonic() - started) * 1000
    check(claims(tokens["access_token"]).get("amr") == ["fido", "mfa"], "amr fido+mfa after a passkey", claims(tokens["access_token"]))
    status, refreshed = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "refresh_token", "client_id": CLIENT, "refresh_token": tokens["refresh_token"], "scope": SCOPE})
    check(status == 200 and claims(refreshed["access_token"]).get("amr") == ["fido", "mfa"], "a silent refresh keeps amr and meets the strength", refreshed)
    print(f"PASS discoverable passkey sign-in: amr fido+mfa, the refresh keeps it; {passkey_ms:.0f} ms vs a password sign-in {password_ms:.0f} ms")

    # 4. User name first.
    verifier = flow.authorize()
    driver.find_element(By.ID, "username").send_keys(DAVE)
    flow.click_passkey()
    flow.wait(lambda d: d.title.startswith("Sign in with a passkey"), "the user-name-first passkey page")
    run.shoot("passkey-username-first")
    flow.click_passkey()
    flow.landed(verifier, "user-name-first passkey sign-in")
    print("PASS user-name-first passkey sign-in")

    # 5. Password + TOTP no longer meets the strength: the page asks for a passkey.
    verifier = flow.authorize(login_hint=DAVE)
    driver.find_element(By.ID, "password").send_keys(DAVE_PASSWORD)
    driver.find_element(By.ID, "password").submit()
    flow.wait(lambda d: d.find_elements(By.ID, "otp"), "Dave's code page")
    driver.find_element(By.ID, "otp").send_keys(pyotp.TOTP(secret).at(registered + 30))
    driver.find_element(By.ID, "otp").submit()
    flow.wait(lambda d: "requires a passkey" in d.page_source, "password + TOTP under the strength: the page asks for a passkey")
    run.shoot("passkey-strength-step")
    flow.click_passkey()
    flow.landed(verifier, "the passkey after password + TOTP")
    print("PASS phishing-resistant strength: password + TOTP refused on the page, the passkey accepted")

    # 6a. User verification off: no sign-in.
    driver.set_user_verified(False)
    verifier = flow.authorize()
    flow.click_passkey()
    time.sleep(2)
    check(not driver.current_url.startswith(run.app_base), "without user verification there is no sign-in", driver.current_url)
    error = driver.find_elements(By.ID, "passkey-error") + driver.find_elements(By.ID, "error")
    check(any(e.is_displayed() and e.text for e in error), "the page says why", driver.page_source[:2000])
    driver.set_user_verified(True)
    print("PASS user verification off: refused, the page says why")

    # 6b. A copy of the credential with a lower sign count: refused (50053) and the passkey marked suspect.
    credential = driver.get_credentials()[0]
    check(credential.sign_count >= 3, "the authenticator counted the sign-ins", credential.sign_count)
    driver.remove_credential(credential.id)
    copy = credential.to_dict()
    copy["signCount"] = 1
    driver.add_credential(Credential.from_dict(copy))
    verifier = flow.authorize()
    flow.click_passkey()
    flow.wait(lambda d: d.find_elements(By.ID, "error"), "a regressed counter is refused on the page")
    check("AADSTS50053" in driver.find_element(By.ID, "error").text, "the refusal carries AADSTS50053", driver.find_element(By.ID, "error").text)
    run.shoot("passkey-suspect")
    status, methods = admin_request(run, "GET", f"/users/{base_user_id(run)}/authentication-methods")
    suspect = [m for m in methods.get("value", []) if m.get("@odata.type") == "#microsoft.graph.fido2AuthenticationMethod" and m.get("suspect")]
    check(status == 200 and len(suspect) == 1, "the admin API lists the passkey as suspect", [status, methods])
    status, cleared = admin_request(run, "POST", f"/users/{base_user_id(run)}/authentication-methods/{suspect[0]['id']}/clearSuspicion")
    check(status == 200 and cleared.get("suspect") is False, "an admin clears it", [status, cleared])
    print("PASS a credential with a lower sign count is refused (AADSTS50053); the admin sees it suspect and clears it")

    # 7. A temporary access pass: Carol has no method; the admin issues a one-time pass, she signs in with it in place of
    #    the password (amr tap+mfa), adds a passkey on Security info, then signs in with the passkey.
    status, issued = admin_request(run, "POST", f"/users/{CAROL}/authentication-methods/temporaryAccessPass",
                                   {"lifetimeInMinutes": 60, "isUsableOnce": True})
    check(status == 201 and len(issued.get("temporaryAccessPass", "")) == 12, "the admin issues a one-time pass", [status, issued])
    # Carol's own device: a discoverable request (user name first is one too) lets a virtual authenticator answer with
    # any of its credentials for the site, where a person would pick from a list.
    driver.remove_virtual_authenticator()
    driver.add_virtual_authenticator(options)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(f"{run.base}/{TENANT}/securityinfo")
    flow.wait(lambda d: d.find_elements(By.ID, "username"), "Security info asks Carol to sign in first")
    driver.find_element(By.ID, "username").send_keys(CAROL)
    driver.find_element(By.ID, "password").send_keys(issued["temporaryAccessPass"])
    driver.find_element(By.ID, "password").submit()
    flow.wait(lambda d: d.title.startswith("Security info"), "the pass signs Carol in to Security info")
    check("Add an authenticator app" in driver.page_source, "a pass lets Carol add a first method", driver.page_source[:2000])
    driver.find_element(By.ID, "passkey-name").send_keys("Carol's key")
    flow.click_passkey()
    flow.wait(lambda d: d.find_elements(By.ID, "notice"), "Carol's passkey is added")
    run.shoot("tap-security-info")
    status, methods = admin_request(run, "GET", f"/users/{CAROL}/authentication-methods")
    kinds = sorted(m.get("@odata.type", "") for m in methods.get("value", []))
    check(kinds == ["#microsoft.graph.fido2AuthenticationMethod", "#microsoft.graph.temporaryAccessPassAuthenticationMethod"], "the pass (used) and the passkey", methods)
    used = [m for m in methods["value"] if m["@odata.type"].startswith("#microsoft.graph.temporaryAccess")][0]
    check(used["methodUsabilityReason"] == "OneTimePassUsed", "the one-time pass is used up", used)
    verifier = flow.authorize(login_hint=CAROL)
    driver.find_element(By.ID, "password").send_keys(issued["temporaryAccessPass"])
    driver.find_element(By.ID, "password").submit()
    flow.wait(lambda d: d.find_elements(By.ID, "error"), "the used pass is refused")
    verifier = flow.authorize()
    driver.find_element(By.ID, "username").send_keys(CAROL)
    flow.click_passkey()
    flow.wait(lambda d: d.title.startswith("Sign in with a passkey"), "Carol's user-name-first passkey page")
    flow.click_passkey()
    tokens = flow.landed(verifier, "Carol's passkey sign-in")
    check(claims(tokens["access_token"]).get("amr") == ["fido", "mfa"], "amr fido+mfa", claims(tokens["access_token"]))
    print("PASS a temporary access pass: Carol signs in with it, adds a passkey, the pass is used up, the passkey signs her in")

    # 8. persistentBrowser never (PROTOCOL §13) for Carol: her next session cookie is a browser-session cookie.
    status, body = admin_request(run, "POST", "/conditional-access/policies", {
        "displayName": "No persistent browser for Carol", "state": "enabled",
        "conditions": {"users": {"includeUsers": [CAROL_ID]}, "applications": {"includeApplications": ["All"]}, "clientAppTypes": ["all"]},
        "grantControls": None, "sessionControls": {"persistentBrowser": {"isEnabled": True, "mode": "never"}}})
    check(status == 201, "the admin adds a persistentBrowser never policy (grantControls null)", [status, body])
    verifier = flow.authorize()
    driver.find_element(By.ID, "username").send_keys(CAROL)
    flow.click_passkey()
    flow.wait(lambda d: d.title.startswith("Sign in with a passkey"), "Carol's passkey page")
    flow.click_passkey()
    flow.landed(verifier, "Carol under persistentBrowser never")
    cookie = session_cookie(driver)
    check(cookie and cookie.get("session") is True, "the session cookie ends with the browser (no Expires/Max-Age)", cookie)
    print("PASS persistentBrowser never: Chromium holds the session cookie as a browser-session cookie; without the policy it persists")

    # 9. A password-only session of Dave (who has methods) on Security info: no Remove, no Add, verify first.
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(f"{run.base}/{TENANT}/securityinfo")
    flow.wait(lambda d: d.find_elements(By.ID, "username"), "Security info asks Dave to sign in")
    driver.find_element(By.ID, "username").send_keys(DAVE)
    driver.find_element(By.ID, "password").send_keys(DAVE_PASSWORD)
    driver.find_element(By.ID, "password").submit()
    flow.wait(lambda d: d.title.startswith("Security info"), "Security info with a password-only session")
    buttons = [b.text for b in driver.find_elements(By.TAG_NAME, "button") if b.is_displayed()]
    check("Remove" not in buttons and "Add a passkey" not in buttons and "Verify with your authenticator app" in buttons,
          "a password alone neither adds nor removes a method", buttons)
    run.shoot("securityinfo-password-only")
    print("PASS Security info with a password alone: methods listed, nothing added or removed before verifying")

    # 9b. A pass that must become a passkey (PROTOCOL §12.1): the strength asks Bob (no method yet) for a passkey on the
    #     mail API; he signs in with a pass, the page offers "Create a passkey", and the new passkey signs him in.
    status, body = admin_request(run, "PUT", f"/conditional-access/policies/{STRENGTH_POLICY}", {
        "id": STRENGTH_POLICY, "displayName": "Phishing-resistant MFA for Dave and Bob on mail", "state": "enabled",
        "conditions": {"users": {"includeUsers": [base_user_id(run), BOB_ID]}, "applications": {"includeApplications": [MAIL_API]},
                       "clientAppTypes": ["all"]},
        "grantControls": {"operator": "OR", "builtInControls": [], "authenticationStrength": {"id": "00000000-0000-0000-0000-000000000004"}}},
        {"If-Match": "*"})
    check(status == 200, "the strength now names Bob too", [status, body])
    status, issued = admin_request(run, "POST", f"/users/{BOB}/authentication-methods/temporaryAccessPass", {"lifetimeInMinutes": 60})
    check(status == 201, "the admin issues Bob a pass", [status, issued])
    before = len(driver.get_credentials())
    # Driven as a person would: fields found by their autocomplete tokens and labels, buttons by their text.
    verifier = flow.authorize()
    driver.find_element(By.CSS_SELECTOR, "input[autocomplete~='username']").send_keys(BOB)
    driver.find_element(By.CSS_SELECTOR, "input[autocomplete='current-password']").send_keys(issued["temporaryAccessPass"])
    driver.find_element(By.XPATH, "//button[normalize-space()='Sign in']").click()
    flow.wait(lambda d: d.title.startswith("Create a passkey"), "a pass under a passkey strength: the registration page")
    check("Phishing-resistant MFA" in driver.page_source, "the page names the strength", driver.page_source[:2000])
    name = driver.find_element(By.XPATH, "//label[normalize-space()='Name for your passkey']").get_attribute("for")
    driver.find_element(By.ID, name).send_keys("Bob's key")
    create = driver.find_element(By.XPATH, "//button[normalize-space()='Create a passkey']")
    flow.wait(lambda d: create.is_displayed(), "the button shows once the script ran")
    run.shoot("tap-passkey-onboarding")
    create.click()
    tokens = flow.landed(verifier, "Bob's inline passkey registration")
    check(claims(tokens["access_token"]).get("amr") == ["fido", "mfa"], "the tokens carry the new passkey's amr", claims(tokens["access_token"]))
    check(len(driver.get_credentials()) == before + 1, "the authenticator holds Bob's new credential", driver.get_credentials())
    status, methods = admin_request(run, "GET", f"/users/{BOB}/authentication-methods")
    check(any(m.get("displayName") == "Bob's key" for m in methods.get("value", [])), "the admin API lists Bob's key", methods)
    print("PASS a pass under a phishing-resistant strength: the page registers a passkey inline and the app gets tokens (amr fido+mfa)")

    # 10. Microsoft's "block device code flow" policy: the approval page refuses (AADSTS53003).
    status, body = admin_request(run, "POST", "/conditional-access/policies", {
        "displayName": "Block device code flow", "state": "enabled",
        "conditions": {"users": {"includeUsers": ["All"]}, "applications": {"includeApplications": ["All"]}, "clientAppTypes": ["all"],
                       "authenticationFlows": {"transferMethods": "deviceCodeFlow"}},
        "grantControls": {"operator": "OR", "builtInControls": ["block"]}})
    check(status == 201, "the admin blocks the device code flow", [status, body])
    status, started = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/devicecode", {"client_id": CLIENT, "scope": SCOPE})
    check(status == 200 and started.get("user_code"), "a device code", started)
    driver.get(f"{run.base}/devicelogin")
    driver.find_element(By.ID, "user_code").send_keys(started["user_code"])
    driver.find_element(By.ID, "user_code").submit()
    flow.wait(lambda d: d.find_elements(By.ID, "password"), "the device sign-in page")
    driver.find_element(By.ID, "username").send_keys(DAVE)
    driver.find_element(By.ID, "password").send_keys(DAVE_PASSWORD)
    driver.find_element(By.ID, "password").submit()
    flow.wait(lambda d: d.title.startswith("Sign-in blocked"), "the device code approval is blocked")
    check("AADSTS53003" in driver.page_source, "with AADSTS53003")
    run.shoot("device-code-blocked")
    status, polled = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "client_id": CLIENT, "device_code": started["device_code"]})
    check(status == 400 and polled.get("error") == "access_denied", "the device stops waiting", [status, polled])
    print("PASS block device code flow: the approval page refuses (AADSTS53003) and the device gets access_denied")
    return passkey_ms, password_ms


def session_cookie(driver):
    """The session cookie as Chromium holds it (DevTools: `session` true when it has no expiry)."""
    cookies = driver.execute_cdp_cmd("Network.getAllCookies", {}).get("cookies", [])
    found = [c for c in cookies if c.get("name") == "portcullis_session"]
    return found[-1] if found else None


def base_user_id(run):
    return DAVE_ID


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(base.ROOT, ".build/debug/portcullis"))
    parser.add_argument("--output", default=os.path.join(base.ROOT, ".build/test-output/passkeys"))
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="portcullis-passkeys.")
    app_port = base.free_port()
    capture = http.server.ThreadingHTTPServer(("127.0.0.1", app_port), base.Capture)
    threading.Thread(target=capture.serve_forever, daemon=True).start()
    process = driver = None
    status = 0
    try:
        process, server = start_server(os.path.abspath(args.binary), work)
        driver = base.make_driver()
        run = base.Run(driver, server, args.output, f"http://localhost:{app_port}")
        run_flows(run)
        run.check_hygiene(ignore=("NotAllowedError",))
        print(f"passkey_browser: {len(run.shots)} screenshots in {args.output}")
    except Failure as failure:
        status = 1
        base.report_failure(driver, args.output, "passkey_browser", failure)
    finally:
        if driver is not None:
            driver.quit()
        capture.shutdown()
        base.stop_server(process, work, failed=status != 0)
    if status == 0:
        print("passkey_browser: all passkey browser checks passed")
    return status


if __name__ == "__main__":
    sys.exit(main())
