#!/usr/bin/env python3
"""The sign-in pages in a real browser: headless Chromium (Debian's `chromium` + `chromium-driver`)
driven by Selenium, against a real Portcullis binary.

    python3 Tests/Browser/signin_browser.py --binary .build/debug/portcullis [--output DIR]

What it does (each step fails the run with a message saying what was expected):
  1. Code flow: the authorize URL (PKCE S256, state, nonce, a loopback redirect URI served by this
     script) → the sign-in page: focus starts in the user name, Tab goes user name → password → button;
     a wrong password shows the reason and AADSTS50126; the right one lands on the app's loopback
     redirect with the code and the state; the code is redeemed (PKCE) for tokens.
  2. SSO: the same browser asks again and is sent straight back with a code (no page).
  3. Device code: the device authorization endpoint; /devicelogin: the code typed loosely, the sign-in,
     the confirmation; the polling client then gets its tokens.
  4. MFA (PROTOCOL §10) for Dave, whom the demo configuration asks for a second factor on the mail API:
     the password, then the registration page (the key, the otpauth link, focus in the code field with
     autocomplete="one-time-code"), a code computed with pyotp; then a new browser session: the password,
     then the code page alone, the next code → the app gets its code; amr pwd+mfa in the tokens.
  5. B2B collaboration (PROTOCOL §17): Fabrikam's admin invites Bob of Contoso; the authorize URL at Fabrikam, his
     Contoso address on Fabrikam's page → Contoso's page (saying he signs in to Fabrikam as a guest; focus in the
     password) → back to Fabrikam → the app's code; Fabrikam's tokens carry idp (Contoso's issuer) and acct 1. Carol,
     not invited, gets Fabrikam's AADSTS50020 page after her home tenant signs her in.
  6. Throughout: every request the browser made went to the server (or the app's redirect URI), the
     console shows no Content-Security-Policy violation, and the pages need no JavaScript.
Screenshots (phone 390×844 and desktop 1280×800) of every page go to --output (default
.build/test-output/browser).
"""
import argparse
import base64
import hashlib
import http.server
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

TENANT = "contoso.example"
CLIENT = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
USER = "alice@contoso.example"
PASSWORD = "Alice-dev-pass1"
SCOPE = "api://contoso-mail/Mail.Read openid profile offline_access"
DAVE = "dave@contoso.example"
DAVE_PASSWORD = "Dave-dev-pass1"
FABRIKAM = "fabrikam.example"
FABRIKAM_ID = "f4b1c2d3-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
FABRIKAM_CLIENT = "f0ca0000-1111-4a2b-8c3d-4e5f6a7b8c01"
FABRIKAM_SCOPE = "api://fabrikam-projects/Projects.Read openid profile offline_access"
CONTOSO_ID = "7e1b0c54-2f6a-4c1e-9d3b-5a8f0e2c4b71"
BOB = "bob@contoso.example"
BOB_PASSWORD = "Bob-dev-pass1"
CAROL = "carol@contoso.example"
CAROL_PASSWORD = "Carol-dev-pass1"
PHONE = (390, 844)
DESKTOP = (1280, 800)


class Failure(Exception):
    pass



def focus_lands_on(driver, element_id, timeout=5):
    """Whether the page puts focus on `element_id` (autofocus): read until it does, for up to `timeout` seconds — a
    loaded machine applies autofocus a moment after the load event that driver.get waits for."""
    deadline = time.monotonic() + timeout
    while True:
        if driver.switch_to.active_element.get_attribute("id") == element_id:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)

def check(condition, message, got=None):
    if not condition:
        raise Failure(message + ("" if got is None else f"\n    got: {str(got)[:1500]}"))


class Capture(http.server.BaseHTTPRequestHandler):
    """The app's loopback redirect URI: records what the server delivered."""
    received = []

    def do_GET(self):  # noqa: N802 (http.server's naming)
        Capture.received.append(self.path)
        body = b"<!doctype html><title>App</title><p>Signed in; the app has the code.</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(binary, work, env=None):
    shutil.copytree(os.path.join(ROOT, "Config"), os.path.join(work, "config"))
    log = open(os.path.join(work, "server.log"), "w")
    process = subprocess.Popen(
        [binary, "serve", "--config", "./config", "--data", "./data", "--keys", "./keys", "--host", "127.0.0.1", "--port", "0"],
        cwd=work, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PORTCULLIS_BCRYPT_COST="4", **(env or {})))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = open(os.path.join(work, "server.log")).read()
        found = re.search(r"Portcullis is listening on (http://127\.0\.0\.1:\d+)", text)
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            raise Failure(f"the server exited:\n{text[-3000:]}")
        time.sleep(0.1)
    raise Failure("the server did not say where it listens within 60 s")


def stop_server(process, work, failed):
    """SIGTERM (a drain), SIGKILL after 15 s; the server's log on a failure; the work directory removed."""
    if process is not None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
    if failed:
        print(open(os.path.join(work, "server.log")).read()[-4000:], file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)


def make_driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-default-apps", "--disable-extensions", f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


class Run:
    def __init__(self, driver, base, output, app_base):
        self.driver = driver
        self.base = base
        self.output = output
        self.app_base = app_base
        self.shots = []
        self.requested = []

    def shoot(self, name):
        """Screenshots at phone and desktop widths (the page is reloaded by neither: only the window changes)."""
        for label, (width, height) in (("phone", PHONE), ("desktop", DESKTOP)):
            self.driver.set_window_size(width, height)
            time.sleep(0.2)
            # The whole page: grow the window to the document's height.
            full = self.driver.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
            self.driver.set_window_size(width, max(height, int(full) + 120))
            path = os.path.join(self.output, f"{name}-{label}.png")
            self.driver.save_screenshot(path)
            self.shots.append(path)
            overflow = self.driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth")
            check(not overflow, f"{name} at {label} width: the page scrolls sideways")
        self.driver.set_window_size(*DESKTOP)

    def collect_network(self):
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                self.requested.append(message["params"]["request"]["url"])

    def check_hygiene(self, ignore=()):
        """Every request the browser made went to the server (or the app's redirect URI, or a data: URL), and the console
        shows no Content-Security-Policy violation or error (but those containing any of `ignore`)."""
        self.collect_network()
        allowed = (self.base + "/", self.app_base + "/", "data:")
        outside = [url for url in self.requested if not url.startswith(allowed)]
        check(not outside, "every request the browser made should go to the server or the app's redirect URI", outside)
        problems = [p for p in self.console_problems() if not any(text in p for text in ignore)]
        check(not problems, "the console should show no CSP violation or error", problems)
        print(f"PASS {len(self.requested)} browser requests, all to the server or the app; no console errors")

    def console_problems(self):
        problems = []
        for entry in self.driver.get_log("browser"):
            text = entry.get("message", "")
            # A 4xx answer is logged as "Failed to load resource" (the error pages are 400s by design; no favicon).
            if "Failed to load resource" in text:
                continue
            if "Content Security Policy" in text or "Refused to" in text or entry.get("level") == "SEVERE":
                problems.append(text)
        return problems


def pkce():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def post_form(url, fields):
    """A form POST as a desktop MSAL app would send it (its platform headers: the demo policy requires app
    protection on mobile platforms, which this browser test is not about)."""
    import urllib.request
    request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(), method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded",
                                              "x-client-SKU": "MSAL.Desktop", "x-client-OS": "Linux"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def code_flow(run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(12)
    redirect = f"{run.app_base}/"
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": CLIENT, "redirect_uri": redirect, "scope": SCOPE, "state": state,
        "nonce": "browser-nonce", "code_challenge": challenge, "code_challenge_method": "S256"})
    started = time.monotonic()
    driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?{query}")
    check(driver.title.startswith("Sign in"), "the authorize URL should show the sign-in page", driver.title)
    check(driver.switch_to.active_element.get_attribute("id") == "username", "focus should start in the user name",
          driver.switch_to.active_element.get_attribute("outerHTML"))
    username = driver.find_element(By.ID, "username")
    check(username.get_attribute("autocomplete") == "username webauthn", "user name autocomplete token (conditional mediation)")
    check(driver.find_element(By.ID, "password").get_attribute("autocomplete") == "current-password", "password autocomplete token")
    check(driver.find_element(By.CSS_SELECTOR, "label[for=username]").text and driver.find_element(By.CSS_SELECTOR, "label[for=password]").text,
          "both fields have labels")
    run.shoot("signin")
    username.send_keys(USER)
    username.send_keys(Keys.TAB)
    check(driver.switch_to.active_element.get_attribute("id") == "password", "Tab should go from the user name to the password")
    driver.switch_to.active_element.send_keys("wrong-password")
    driver.switch_to.active_element.send_keys(Keys.TAB)
    check(driver.switch_to.active_element.tag_name == "button", "Tab should go from the password to the sign-in button")
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "error"))
    alert = driver.find_element(By.ID, "error")
    check("AADSTS50126" in alert.text and alert.get_attribute("role") == "alert", "a wrong password shows its reason and AADSTS50126", alert.text)
    check(driver.find_element(By.ID, "username").get_attribute("value") == USER, "the user name is kept after a failure")
    run.shoot("signin-error")
    password = driver.find_element(By.ID, "password")
    password.send_keys(PASSWORD)
    password.send_keys(Keys.ENTER)  # submitting with Enter, as people do
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    elapsed = time.monotonic() - started
    landed = urllib.parse.urlsplit(driver.current_url)
    delivered = dict(urllib.parse.parse_qsl(landed.query))
    check(delivered.get("state") == state and delivered.get("code"), "the app should receive the code and its state", delivered)
    status, tokens = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "authorization_code", "client_id": CLIENT, "code": delivered["code"], "redirect_uri": redirect, "code_verifier": verifier})
    check(status == 200 and tokens.get("access_token") and tokens.get("id_token"), "the code should redeem for tokens", [status, tokens])
    print(f"PASS code flow in a real browser: page → wrong password (AADSTS50126 shown) → signed in → code → tokens "
          f"({elapsed * 1000:.0f} ms including the failed attempt)")

    driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?{query}")
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    check("code=" in driver.current_url, "SSO: the session should send the browser straight back with a code", driver.current_url)
    print("PASS single sign-on in a real browser: the second authorization request went straight back to the app")

    select = urllib.parse.urlencode({
        "response_type": "code", "client_id": CLIENT, "redirect_uri": redirect, "scope": SCOPE, "state": state, "prompt": "select_account",
        "code_challenge": challenge, "code_challenge_method": "S256"})
    driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?{select}")
    check(driver.title.startswith("Pick an account") and USER in driver.page_source, "prompt=select_account shows the account picker", driver.title)
    run.shoot("account-picker")
    driver.find_element(By.CSS_SELECTOR, "button[value=session]").click()
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    print("PASS account picker: continuing as the signed-in user returned a code")

    driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?client_id={CLIENT}&redirect_uri=https://evil.example/&response_type=code")
    check(driver.current_url.startswith(run.base) and "AADSTS50011" in driver.page_source,
          "an unregistered redirect URI shows an error page and never leaves the server", driver.current_url)
    run.shoot("error-redirect-uri")
    return elapsed


def device_flow(run):
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    driver.delete_all_cookies()
    status, started = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/devicecode", {"client_id": CLIENT, "scope": SCOPE})
    check(status == 200 and started.get("user_code"), "the device authorization endpoint should answer a code", [status, started])
    driver.get(started["verification_uri"])
    check(focus_lands_on(driver, "user_code"), "focus should start in the code field")
    run.shoot("device-code")
    field = driver.find_element(By.ID, "user_code")
    field.send_keys(started["user_code"].lower().replace("-", " "))  # typed loosely
    field.submit()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "password"))
    check(started["user_code"] in driver.page_source, "the sign-in page names the code being approved")
    run.shoot("device-signin")
    driver.find_element(By.ID, "username").send_keys(USER)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "button[value=allow]").click()
    # The page is replaced by the next one while we read it: a stale element is "not yet", not a failure — Chrome says so
    # either as a stale element or, its node gone mid-read, as an inspector error ("does not belong to the document").
    def signed_in(d):
        try:
            return "signed in" in d.find_element(By.TAG_NAME, "main").text
        except WebDriverException as error:
            if isinstance(error, StaleElementReferenceException) or "does not belong to the document" in str(error):
                return False
            raise

    WebDriverWait(driver, 15).until(signed_in)
    run.shoot("device-done")
    status, tokens = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "client_id": CLIENT, "device_code": started["device_code"]})
    check(status == 200 and tokens.get("access_token"), "the device should get its tokens once the user approved", [status, tokens])
    print(f"PASS device code in a real browser: /devicelogin → code {started['user_code']} → sign-in → approved → the device got tokens")


def mfa_flow(run):
    import pyotp
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    redirect = f"{run.app_base}/"

    def sign_in():
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})  # a new browser session: every path, every site
        verifier, challenge = pkce()
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": CLIENT, "redirect_uri": redirect, "scope": SCOPE, "state": "mfa",
            "code_challenge": challenge, "code_challenge_method": "S256", "login_hint": DAVE})
        driver.get(f"{run.base}/{TENANT}/oauth2/v2.0/authorize?{query}")
        driver.find_element(By.ID, "password").send_keys(DAVE_PASSWORD)
        driver.find_element(By.ID, "password").submit()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "otp"))
        otp = driver.find_element(By.ID, "otp")
        check(focus_lands_on(driver, "otp"), "focus should start in the code field")
        check(otp.get_attribute("autocomplete") == "one-time-code" and otp.get_attribute("inputmode") == "numeric",
              "the code field carries autocomplete=one-time-code and a numeric keyboard")
        check(driver.find_element(By.CSS_SELECTOR, "label[for=otp]").text, "the code field has a label")
        return verifier

    def finish(verifier, code, what):
        driver.find_element(By.ID, "otp").send_keys(code)
        driver.find_element(By.ID, "otp").submit()
        WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
        delivered = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
        check(delivered.get("code"), f"{what}: the app should receive a code", delivered)
        status, tokens = post_form(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
            "grant_type": "authorization_code", "client_id": CLIENT, "code": delivered["code"], "redirect_uri": redirect, "code_verifier": verifier})
        check(status == 200 and tokens.get("access_token"), f"{what}: the code should redeem", [status, tokens])
        payload = tokens["access_token"].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        check(claims.get("amr") == ["pwd", "mfa"], f"{what}: amr pwd+mfa", claims)

    verifier = sign_in()
    check(driver.title.startswith("Set up your authenticator app"), "a user without a factor registers one", driver.title)
    secret = driver.find_element(By.ID, "secret").text.replace(" ", "")
    link = driver.find_element(By.CSS_SELECTOR, "a[href^='otpauth://']").get_attribute("href")
    check(secret and f"secret={secret}" in link and link.startswith(f"otpauth://totp/Portcullis:{DAVE}"), "the key and its otpauth link", [secret, link])
    run.shoot("mfa-register")
    registered_at = time.time()
    finish(verifier, pyotp.TOTP(secret).at(registered_at), "registration")
    print("PASS MFA registration in a real browser: password → key + otpauth link → first code (pyotp) → the app's code; amr pwd+mfa")

    verifier = sign_in()
    check(driver.title.startswith("Enter your code") and not driver.find_elements(By.ID, "secret"), "a registered user is asked for the code only", driver.title)
    run.shoot("mfa-code")
    finish(verifier, pyotp.TOTP(secret).at(registered_at + 30), "sign-in with a code")
    print("PASS MFA sign-in in a real browser: password → code page → the next code → the app's code; amr pwd+mfa")


def b2b_flow(run):
    """5. A Contoso user invited to Fabrikam signs in at Fabrikam: Fabrikam's page, Contoso's, back, the code."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
    import urllib.request
    driver = run.driver
    status, admin = post_form(f"{run.base}/{FABRIKAM}/oauth2/v2.0/token", {
        "grant_type": "client_credentials", "client_id": "f0ca0000-3333-4a2b-8c3d-4e5f6a7b8c03",
        "client_secret": "fabrikam-admin-dev-secret-change-me", "scope": "api://portcullis-admin/.default"})
    check(status == 200, "Fabrikam's admin token", [status, admin])
    request = urllib.request.Request(
        f"{run.base}/admin/v1/invitations", method="POST",
        data=json.dumps({"invitedUserEmailAddress": BOB, "inviteRedirectUrl": run.app_base + "/"}).encode(),
        headers={"Authorization": f"Bearer {admin['access_token']}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        invited = json.loads(response.read())
    guest_id = invited["invitedUser"]["id"]

    def authorize(extra=None):
        verifier, challenge = pkce()
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": FABRIKAM_CLIENT, "redirect_uri": f"{run.app_base}/", "scope": FABRIKAM_SCOPE,
            "state": "b2b", "code_challenge": challenge, "code_challenge_method": "S256", **(extra or {})})
        driver.get(f"{run.base}/{FABRIKAM}/oauth2/v2.0/authorize?{query}")
        check(driver.title.startswith("Sign in") and "Fabrikam" in driver.page_source, "Fabrikam's sign-in page", driver.title)
        return verifier

    def go_home(address):
        username = driver.find_element(By.ID, "username")
        username.send_keys(address)
        username.send_keys(Keys.ENTER)  # the name alone: its domain is another tenant's
        WebDriverWait(driver, 15).until(lambda d: f"/{CONTOSO_ID}/oauth2/v2.0/authorize/home" in d.current_url)
        check("Contoso" in driver.page_source and "as a guest" in driver.page_source, "Contoso's page says where the user goes",
              driver.page_source[:1500])
        check(driver.find_element(By.ID, "username").get_attribute("value") == address, "the typed name is kept at home")
        check(driver.switch_to.active_element.get_attribute("id") == "password", "focus starts in the password at home",
              driver.switch_to.active_element.get_attribute("outerHTML"))

    verifier = authorize()
    run.shoot("b2b-resource-signin")
    go_home(BOB)
    run.shoot("b2b-home-signin")
    password = driver.find_element(By.ID, "password")
    password.send_keys(BOB_PASSWORD)
    password.send_keys(Keys.ENTER)
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(run.app_base))
    delivered = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
    check(delivered.get("state") == "b2b" and delivered.get("code"), "the app gets Fabrikam's code", delivered)
    status, tokens = post_form(f"{run.base}/{FABRIKAM}/oauth2/v2.0/token", {
        "grant_type": "authorization_code", "client_id": FABRIKAM_CLIENT, "code": delivered["code"], "redirect_uri": f"{run.app_base}/",
        "code_verifier": verifier})
    check(status == 200, "the code redeems at Fabrikam", [status, tokens])
    claims = json.loads(base64.urlsafe_b64decode(tokens["access_token"].split(".")[1] + "=="))
    check(claims.get("tid") == FABRIKAM_ID and claims.get("oid") == guest_id and claims.get("acct") == 1
          and claims.get("idp") == f"{run.base}/{CONTOSO_ID}/v2.0", "Fabrikam's token for the guest, idp and acct", claims)
    print("PASS B2B in a real browser: Fabrikam's page → Contoso's (focus in the password) → back → code; idp and acct in the token")

    authorize({"prompt": "login"})  # Bob's session at Fabrikam would sign him in again
    go_home(CAROL)
    password = driver.find_element(By.ID, "password")
    password.send_keys(CAROL_PASSWORD)
    password.send_keys(Keys.ENTER)
    WebDriverWait(driver, 15).until(lambda d: "AADSTS50020" in d.page_source)
    check(f"/{FABRIKAM_ID}/oauth2/v2.0/authorize/guest" in driver.current_url, "the refusal is Fabrikam's page", driver.current_url)
    run.shoot("b2b-not-invited")
    print("PASS B2B, not invited: her home tenant signed her in; Fabrikam's page says AADSTS50020")


def report_failure(driver, output, name, failure):
    """Prints what failed, with a screenshot (failure.png) and the start of the page it happened on."""
    print(f"FAIL {type(failure).__name__}: {failure}", file=sys.stderr)
    if driver is None:
        return
    try:
        driver.save_screenshot(os.path.join(output, "failure.png"))
        print(f"{name}: the page at the failure: {driver.current_url}\n{driver.page_source[:3000]}", file=sys.stderr)
    except Exception:  # the driver itself may be what failed
        pass


def run_flows(name, description, output, prepare, flows, env=None):
    """The frame of a browser script: its arguments (--binary, --output), a server over a fresh directory (`env` added to
    its environment), the app's redirect URI on loopback, the driver; `prepare(base, app_base)` sets the tenant up through
    the admin API and returns what `flows(run, prepared)` needs; then the hygiene check, and on any failure a screenshot
    and the page. Returns the exit status."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/debug/portcullis"))
    parser.add_argument("--output", default=os.path.join(ROOT, f".build/test-output/{output}"))
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f"portcullis-{output}.")
    app_port = free_port()
    capture = http.server.ThreadingHTTPServer(("127.0.0.1", app_port), Capture)
    threading.Thread(target=capture.serve_forever, daemon=True).start()
    process = driver = None
    status = 0
    try:
        process, base = start_server(os.path.abspath(args.binary), work, env=env(work) if callable(env) else env)
        app_base = f"http://localhost:{app_port}"
        prepared = prepare(base, app_base)
        driver = make_driver()
        run = Run(driver, base, args.output, app_base)
        print(f"{name}: {driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}; server {base}")
        flows(run, prepared)
        run.check_hygiene()
        print(f"{name}: {len(run.shots)} screenshots in {args.output}")
    except Exception as failure:  # a Failure, or Selenium's own (a wait that timed out)
        status = 1
        report_failure(driver, args.output, name, failure)
    finally:
        if driver is not None:
            driver.quit()
        capture.shutdown()
        stop_server(process, work, failed=status != 0)
    if status == 0:
        print(f"{name}: all checks passed")
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/debug/portcullis"))
    parser.add_argument("--output", default=os.path.join(ROOT, ".build/test-output/browser"))
    args = parser.parse_args()
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("signin_browser: selenium is not installed (python3 -m pip install selenium)", file=sys.stderr)
        return 2
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="portcullis-browser.")
    app_port = free_port()
    capture = http.server.ThreadingHTTPServer(("127.0.0.1", app_port), Capture)
    threading.Thread(target=capture.serve_forever, daemon=True).start()
    process = None
    driver = None
    status = 0
    try:
        process, base = start_server(os.path.abspath(args.binary), work)
        driver = make_driver()
        run = Run(driver, base, args.output, f"http://localhost:{app_port}")
        print(f"signin_browser: {driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}; server {base}")
        code_flow(run)
        run.collect_network()
        device_flow(run)
        run.collect_network()
        mfa_flow(run)
        run.collect_network()
        b2b_flow(run)
        run.check_hygiene()
        print(f"signin_browser: {len(run.shots)} screenshots in {args.output}")
    except Failure as failure:
        status = 1
        report_failure(driver, args.output, "signin_browser", failure)
    finally:
        if driver is not None:
            driver.quit()
        capture.shutdown()
        stop_server(process, work, failed=status != 0)
    if status == 0:
        print("signin_browser: all browser checks passed")
    return status


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

if __name__ == "__main__":
    sys.exit(main())
