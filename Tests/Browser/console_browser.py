#!/usr/bin/env python3
"""The admin console (GET /admin) in a real browser: headless Chromium (Debian's `chromium` +
`chromium-driver`) driven by Selenium, against a real Portcullis binary with the demo configuration.

    python3 Tests/Browser/console_browser.py --binary .build/debug/portcullis [--output DIR] [--docs DIR]

What it does (each step fails the run with a message saying what was expected):
  1. Bob (no Portcullis.Admin role) signs in at /admin: the "No access" page, and no page of the
     console shows him any data.
  2. Erin (the demo's administrator) signs in through the sign-in page (authorization code + PKCE with
     the built-in console client); the Policies page lists the demo's policies with their states.
  3. She edits the "require app protection" policy with a deliberate error: the problem is shown at its
     JSON Pointer next to the text; then correctly (state disabled): the next token request for Alice's
     iOS mail app, refused with 53005 before, is granted.
  4. What if: Alice, the mail app, iOS, protapp → the decision and each policy's result.
  5. Sign-ins: the token requests of step 3 are found by their correlation IDs, the refusal with the policy that refused
     it; the daemon's three app-only tokens are one record counting three.
  6. Enrollments: Alice's enrollment (made over HTTP after step 3) → detail with history → Wipe… →
     confirm; then her refresh token for the mail app no longer works.
  7. Callbacks, Audit (the edit with its diff), Directory and App configuration render. Devices: a joined device from
     the directory's template with a certificate request made here (the saved device carries its certificate), a
     Windows compliance policy, both listed in the directory, the device disabled in the editor and listed so.
  8. Throughout: every request the browser made went to the server, the browser console shows no CSP
     violation, and no page needs JavaScript. Screenshots of every page at phone (390×844) and desktop
     (1280×800) widths go to --output; with --docs, a few are copied there for the README.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import signin_browser as common  # noqa: E402  (the server, the driver, screenshots)

TENANT = "contoso.example"
MAIL_CLIENT = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
MAIL_SCOPE = "api://contoso-mail/Mail.Read"
ALICE, ALICE_PASSWORD = "alice@contoso.example", "Alice-dev-pass1"
BOB, BOB_PASSWORD = "bob@contoso.example", "Bob-dev-pass1"
BOB_ID = "1d8f4b2a-6c8e-4f3b-9d7a-2e4c6b8f0a02"
ERIN, ERIN_PASSWORD = "erin@contoso.example", "Erin-dev-pass1"
ERIN_ID = "4a5c7e5d-9f1b-4c6e-8a0d-5b7f9e1c3d05"
CA_POLICY = "Require app protection"
NAV = ["Policies", "What if", "Sign-ins", "Enrollments", "Callbacks", "Audit", "Directory", "App configuration", "Signals", "Risk"]
GATEWAY = ("c0ffee00-8888-4a2b-8c3d-4e5f6a7b8c08", "gateway-dev-secret-change-me")  # the demo's Shared Signals receiver
SESSION_REVOKED = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
check = common.check
Failure = common.Failure


def post(url, fields, headers=None):
    request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(), method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def post_json(url, body, token):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


IOS = {"x-client-SKU": "MSAL.iOS", "x-client-OS": "17.4"}
DAEMON = ("c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02", "daemon-dev-secret-change-me")


def mail_token(base, correlation=None):
    headers = dict(IOS)
    if correlation:
        headers["client-request-id"] = correlation
    return post(f"{base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "password", "client_id": MAIL_CLIENT, "username": ALICE, "password": ALICE_PASSWORD,
        "scope": f"{MAIL_SCOPE} offline_access", "claims": json.dumps({"access_token": {"xms_cc": {"values": ["protapp"]}}})}, headers)


def enroll_alice(base):
    """Alice's iOS mail app remediates over HTTP (what the SDK does): enrolled, policy applied, compliant."""
    status, body = post(f"{base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "password", "client_id": MAIL_CLIENT, "username": ALICE, "password": ALICE_PASSWORD,
        "scope": "api://portcullis-compliance/.default"}, IOS)
    check(status == 200, "a compliance token for Alice", body)
    token = body["access_token"]
    status, enrolled = post_json(f"{base}/mam/v1/remediations", {
        "deviceId": "console-browser-phone", "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1", "silent": True}, token)
    check(status == 200 and enrolled.get("enrollmentId"), "Alice's remediation", enrolled)
    status, checked = post_json(f"{base}/mam/v1/enrollments/{enrolled['enrollmentId']}/checkin", {
        "appliedPolicyVersion": enrolled["policy"]["version"], "osVersion": "17.4", "appVersion": "3.1", "jailbroken": False, "pinSet": True}, token)
    check(status == 200 and checked["complianceStatus"]["status"] == "compliant", "Alice's check-in", checked)
    return enrolled["enrollmentId"]


def sign_in(run, username, password):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(f"{run.base}/admin")
    # The demo configuration has two tenants: the console asks which organization first.
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "password") or d.find_elements(By.ID, "tenant"))
    if driver.find_elements(By.ID, "tenant"):
        check(driver.switch_to.active_element.get_attribute("id") == "tenant", "focus starts in the organization field")
        if not any(shot.endswith("console-organization-phone.png") for shot in run.shots):
            run.shoot("console-organization")
        driver.find_element(By.ID, "tenant").send_keys(username.split("@")[1])
        driver.find_element(By.ID, "tenant").submit()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "password"))
    check("Portcullis admin console" in driver.page_source, "the sign-in page names the console")
    run.shoot("console-signin")
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "password").submit()
    WebDriverWait(driver, 15).until(lambda d: "/admin/" in d.current_url and "/oauth2/" not in d.current_url)


def nav_ok(driver):
    from selenium.webdriver.common.by import By
    labels = [link.text for link in driver.find_elements(By.CSS_SELECTOR, "nav[aria-label=Console] a")]
    check(labels == NAV, "the navigation labels, exactly", labels)


def go(run, path, shot):
    run.driver.get(f"{run.base}{path}")
    nav_ok(run.driver)
    run.shoot(shot)


def no_access(run):
    from selenium.webdriver.common.by import By
    sign_in(run, BOB, BOB_PASSWORD)
    driver = run.driver
    check(driver.find_element(By.TAG_NAME, "h1").text == "No access" and BOB in driver.page_source, "Bob sees the no-access page", driver.page_source[:1500])
    run.shoot("console-no-access")
    for path in ("/admin/policies", "/admin/enrollments", "/admin/sign-ins", "/admin/audit", "/admin/directory", "/admin/risk"):
        driver.get(f"{run.base}{path}")
        check(driver.find_element(By.TAG_NAME, "h1").text == "No access" and CA_POLICY not in driver.page_source and ALICE not in driver.page_source,
              f"{path}: no data without the role", driver.page_source[:800])
    print("PASS a user without Portcullis.Admin sees the no-access page and no data on any console page")


def policies_and_editor(run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    sign_in(run, ERIN, ERIN_PASSWORD)
    check(driver.current_url.endswith("/admin/policies"), "an admin lands on the policies", driver.current_url)
    nav_ok(driver)
    rows = driver.find_elements(By.CSS_SELECTOR, "#main table tbody tr")
    check(any(CA_POLICY in row.text for row in rows), "the policies are listed", [row.text for row in rows])
    check(driver.find_elements(By.CSS_SELECTOR, ".state-enabledForReportingButNotEnforced"), "a report-only policy shows its state")
    run.shoot("console-policies")
    refused_correlation = str(uuid.uuid4())
    status, refused = mail_token(run.base, refused_correlation)
    check(status == 400 and 53005 in refused.get("error_codes", []), "before the edit, Alice's iOS mail app is refused (53005)", refused)

    driver.find_element(By.PARTIAL_LINK_TEXT, CA_POLICY).click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "document"))
    area = driver.find_element(By.ID, "document")
    text = area.get_attribute("value")
    check('"compliantApplication"' in text and '"state": "enabled"' in text, "the editor shows the policy as JSON", text[:800])
    run.shoot("console-editor")

    def submit(new_text):
        area = driver.find_element(By.ID, "document")
        driver.execute_cdp_cmd("Runtime.evaluate", {"expression": "void 0"})  # (the page itself runs no script)
        area.clear()
        area.send_keys(new_text)
        driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()

    submit(text.replace('"compliantApplication"', '"teleport"'))
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "problems") or d.find_elements(By.CSS_SELECTOR, ".notice"))
    problems = driver.find_element(By.ID, "problems").text
    check("/grantControls/builtInControls/0" in problems and "teleport" in problems, "the error is shown at its pointer, with what stands there", problems)
    check(driver.find_element(By.ID, "document").get_attribute("aria-describedby") == "problems", "the text field points at its problems")
    run.shoot("console-editor-error")
    submit(text.replace('"state": "enabled"', '"state": "disabled"'))
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    check("Saved." in driver.find_element(By.CSS_SELECTOR, ".notice").text, "saved")
    correlation = str(uuid.uuid4())
    status, granted = mail_token(run.base, correlation)
    check(status == 200 and granted.get("access_token"), "after the edit, the next token request obeys it (granted)", granted)
    print("PASS policies: listed with states; an edit with an error shows the pointer next to the text; the correct edit saved; the next token request obeyed it")
    return correlation, refused_correlation


def what_if(run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    driver = run.driver
    go(run, "/admin/what-if", "console-what-if")
    Select(driver.find_element(By.ID, "user")).select_by_value(ALICE)
    Select(driver.find_element(By.ID, "app")).select_by_value(MAIL_CLIENT)
    Select(driver.find_element(By.ID, "resource")).select_by_value("api://contoso-mail")
    Select(driver.find_element(By.ID, "platform")).select_by_value("iOS")
    driver.find_element(By.NAME, "protapp").click()
    driver.find_element(By.CSS_SELECTOR, "#main form.grid-form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "decision"))
    decision = driver.find_element(By.ID, "decision").text
    check(("Allowed" in decision or "Refused" in decision) and "Require" in decision, "the decision with each policy's result", decision)
    run.shoot("console-what-if-result")
    print(f"PASS what if: {decision.splitlines()[0]}")


def step_up(run):
    """PROTOCOL §13 in the console: an authentication context created from the directory's template, listed there, and
    what-if asked about a sign-in that asks for it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    driver = run.driver
    go(run, "/admin/new/authentication-contexts", "console-new-context")
    check('"c1"' in driver.find_element(By.ID, "document").get_attribute("value"), "the template is a context c1")
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    go(run, "/admin/new/named-locations?template=country", "console-new-country-location")
    check("countryNamedLocation" in driver.find_element(By.ID, "document").get_attribute("value"), "the country template")
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    go(run, "/admin/directory", "console-directory-contexts")
    check("c1: Sensitive actions" in driver.page_source, "the directory lists the context", driver.page_source[-3000:])
    check("countries: KP" in driver.page_source, "the directory lists the country location with its countries", driver.page_source[-5000:])
    go(run, "/admin/what-if", "console-what-if")
    Select(driver.find_element(By.ID, "user")).select_by_value(ALICE)
    Select(driver.find_element(By.ID, "app")).select_by_value(MAIL_CLIENT)
    Select(driver.find_element(By.ID, "resource")).select_by_value("api://contoso-mail")
    driver.find_element(By.ID, "contexts").send_keys("c1")
    driver.find_element(By.CSS_SELECTOR, "#main form.grid-form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "decision"))
    decision = driver.find_element(By.ID, "decision").text
    check("c1 (required)" in decision, "what-if shows the context asked for", decision)
    run.shoot("console-what-if-context")
    driver.find_element(By.ID, "contexts").clear()
    driver.find_element(By.ID, "contexts").send_keys("high")
    driver.find_element(By.CSS_SELECTOR, "#main form.grid-form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: "is not an authentication context" in d.page_source)
    run.shoot("console-what-if-context-error")
    # A real sign-in that asks for c1 (no policy targets it yet: met): its detail in the sign-in log names the context.
    correlation = str(uuid.uuid4())
    status, body = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "password", "client_id": MAIL_CLIENT, "username": ERIN, "password": ERIN_PASSWORD, "scope": MAIL_SCOPE,
        "claims": json.dumps({"access_token": {"acrs": {"essential": True, "value": "c1"}}})}, {"client-request-id": correlation})
    check(status == 200, "Erin's token asking for c1", body)
    go(run, "/admin/sign-ins", "console-sign-ins")
    field = driver.find_element(By.ID, "f-correlation")
    field.send_keys(correlation)
    field.submit()
    # The unfiltered page has rows already: wait for the filtered one (its rows would go stale under the reload).
    WebDriverWait(driver, 15).until(
        lambda d: correlation in d.current_url and d.find_elements(By.CSS_SELECTOR, "table.records > tbody > tr"))
    row = driver.find_elements(By.CSS_SELECTOR, "table.records > tbody > tr")[0]
    row.find_element(By.TAG_NAME, "summary").click()
    details = row.find_element(By.TAG_NAME, "details").text
    check("c1 (required)" in details, "the sign-in's detail names the context asked for", details)
    run.shoot("console-sign-in-context")
    print("PASS step-up and countries: a context and a country location from the directory's templates; what-if with acrs c1 (and a bad one explained)")


def certificate_der_base64():
    """A self-signed P-256 certificate, base64 DER (what Graph's keyCredential `key` takes), valid for a month."""
    import base64
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Interop"))
    from tls_loopback import Certificate
    return base64.b64encode(Certificate("ec", name="payroll robot").der).decode()


def token_protection(run):
    """PROTOCOL §15 in the console: an application created from the template with requireDPoP (and, PROTOCOL §21, a
    certificate and a federated credential), shown in the directory;
    a token-protection policy from its template (report-only); what-if with and without a DPoP proof."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    driver = run.driver
    go(run, "/admin/new/applications", "console-new-application")
    area = driver.find_element(By.ID, "document")
    text = area.get_attribute("value")
    check('"requireDPoP": false' in text, "the application template shows requireDPoP", text)
    area.clear()
    # A web app with a certificate and a federated credential (PROTOCOL §21), as well as DPoP required.
    credentials = ('"requireDPoP": true, "keyCredentials": [{"key": "%s"}], "federatedIdentityCredentials": '
                   '[{"name": "payroll-cluster", "issuer": "https://k8s.contoso.example", "subject": "system:serviceaccount:payroll:robot"}]'
                   % certificate_der_base64())
    area.send_keys(text.replace('"requireDPoP": false', credentials).replace('"publicClient": true', '"publicClient": false')
                   .replace("New application", "Payroll robot"))
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    go(run, "/admin/directory", "console-directory-dpop")
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tr") if "Payroll robot" in row.text]
    check(rows and "DPoP required" in rows[0], "the directory says the application requires DPoP", rows)
    check("1 certificate (1 valid now)" in rows[0] and "1 federated credential" in rows[0],
          "the directory shows the application's certificate and federated credential", rows)
    go(run, "/admin/new/conditional-access?template=tokenProtection", "console-new-token-protection")
    check("secureSignInSession" in driver.find_element(By.ID, "document").get_attribute("value"), "the token protection template")
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    results = {}
    for bound in (False, True):
        go(run, "/admin/what-if", "console-what-if")
        Select(driver.find_element(By.ID, "user")).select_by_value(ALICE)
        Select(driver.find_element(By.ID, "app")).select_by_value(MAIL_CLIENT)
        Select(driver.find_element(By.ID, "resource")).select_by_value("api://contoso-mail")
        if bound:
            driver.find_element(By.NAME, "dpop").click()
        driver.find_element(By.CSS_SELECTOR, "#main form.grid-form button[type=submit]").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "decision"))
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#decision tbody tr") if "token protection" in row.text]
        check(rows, "what-if lists the token protection policy", driver.find_element(By.ID, "decision").text)
        results[bound] = rows[0]
        run.shoot("console-what-if-dpop" if bound else "console-what-if-bearer")
    check("reportOnlyFailure" in results[False] and "DPoP" in results[False], "without a proof the policy would refuse, and says why", results[False])
    check("reportOnlySuccess" in results[True], "with a proof it would pass", results[True])
    # A real DPoP-bound grant (requests-oauth2client's key makes the proofs): its sign-in detail says the token was bound.
    from requests_oauth2client import DPoPKey
    key = DPoPKey.generate(alg="ES256")
    url = f"{run.base}/{TENANT}/oauth2/v2.0/token"
    correlation = str(uuid.uuid4())
    fields = {"grant_type": "password", "client_id": MAIL_CLIENT, "username": ERIN, "password": ERIN_PASSWORD, "scope": MAIL_SCOPE}
    nonce = None
    for _ in range(2):
        request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(), method="POST", headers={
            "Content-Type": "application/x-www-form-urlencoded", "client-request-id": correlation,
            "DPoP": str(key.proof(htm="POST", htu=url, nonce=nonce))})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, body = response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            status, body, nonce = error.code, json.loads(error.read() or b"{}"), error.headers.get("DPoP-Nonce")
        if status == 200:
            break
    check(status == 200 and body.get("token_type") == "DPoP", "Erin's DPoP-bound token", body)
    go(run, "/admin/sign-ins", "console-sign-ins")
    field = driver.find_element(By.ID, "f-correlation")
    field.send_keys(correlation)
    field.submit()
    # The unfiltered page has rows already: wait for the filtered one (its rows would go stale under the reload).
    WebDriverWait(driver, 15).until(
        lambda d: correlation in d.current_url and d.find_elements(By.CSS_SELECTOR, "table.records > tbody > tr"))
    row = driver.find_elements(By.CSS_SELECTOR, "table.records > tbody > tr")[0]
    row.find_element(By.TAG_NAME, "summary").click()
    details = row.find_element(By.TAG_NAME, "details").text
    check("bound to a DPoP key" in details, "the sign-in's detail says the token was bound", details)
    run.shoot("console-sign-in-dpop")
    print("PASS token protection: requireDPoP from the application template, shown in the directory; a token protection policy; what-if with and without a proof")


def sign_ins(run, correlations):
    """The granted request of step 3 and the refused one before it, by correlation ID: the refusal with the policy that
    refused it (a record keeps the policies that applied, issue 32); then an app's own tokens, counted into one record."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    granted, refused = correlations

    def find(correlation):
        go(run, "/admin/sign-ins", "console-sign-ins")
        field = driver.find_element(By.ID, "f-correlation")
        field.send_keys(correlation)
        field.submit()
        WebDriverWait(driver, 15).until(lambda d: correlation in d.current_url)
        rows = driver.find_elements(By.CSS_SELECTOR, "table.records > tbody > tr")
        check(len(rows) == 1 and ALICE in rows[0].text, "the sign-in is found by its correlation ID", [row.text for row in rows])
        rows[0].find_element(By.TAG_NAME, "summary").click()
        return rows[0].find_element(By.TAG_NAME, "details").text

    details = find(granted)
    check(granted in details and "interactive" in details and "0 policies" in details, "the granted sign-in: no policy applied", details)
    details = find(refused)
    check(refused in details and CA_POLICY in details and "failure" in details, "the refusal with the policy that refused it", details)
    run.shoot("console-sign-in-detail")
    # The daemon's own tokens, three times: one record that counts them.
    for _ in range(3):
        status, body = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
            "grant_type": "client_credentials", "client_id": DAEMON[0], "client_secret": DAEMON[1], "scope": "api://contoso-mail/.default"}, {})
        check(status == 200, "the daemon's token", body)
    # The sign-in log is written after the answers (batched): look again until the third one is in, for up to 15 s.
    deadline = time.monotonic() + 15
    while True:
        go(run, "/admin/sign-ins?app=" + DAEMON[0], "console-sign-ins")
        rows = driver.find_elements(By.CSS_SELECTOR, "table.records > tbody > tr")
        if (len(rows) == 1 and "× 3" in rows[0].text) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    check(len(rows) == 1 and "× 3" in rows[0].text, "three app-only sign-ins in one record, with its count", [row.text for row in rows])
    rows[0].find_element(By.TAG_NAME, "summary").click()
    details = rows[0].find_element(By.TAG_NAME, "details").text
    check("non-interactive, 3 sign-ins" in details and "(first)" in details and "(last)" in details, "the aggregate's detail", details)
    run.shoot("console-sign-in-aggregate")
    print("PASS sign-ins: found by correlation ID; a refusal with the policy that refused it; an app's three tokens counted in one record")


def enrollments(run, refresh_token):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    go(run, "/admin/enrollments", "console-enrollments")
    driver.find_element(By.LINK_TEXT, ALICE).click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.LINK_TEXT, "Wipe…"))
    check("enrolled" in driver.page_source and "checkIn" in driver.page_source, "the history is shown", driver.page_source[:1500])
    run.shoot("console-enrollment")
    driver.find_element(By.LINK_TEXT, "Wipe…").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, "button.danger"))
    run.shoot("console-wipe-confirm")
    driver.find_element(By.CSS_SELECTOR, "#main button.danger").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    check("wipePending" in driver.page_source, "the enrollment shows the wipe", driver.page_source[:1500])
    status, body = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "refresh_token", "client_id": MAIL_CLIENT, "refresh_token": refresh_token, "scope": MAIL_SCOPE}, IOS)
    check(status == 400 and body.get("error") == "invalid_grant", "after the wipe, Alice's refresh token for the mail app fails", body)
    print("PASS enrollments: detail with history, wipe with confirmation; the next refresh for that account fails")


def the_rest(run):
    from selenium.webdriver.common.by import By
    driver = run.driver
    go(run, "/admin/callbacks", "console-callbacks")
    go(run, "/admin/audit", "console-audit")
    summaries = driver.find_elements(By.TAG_NAME, "summary")
    check(summaries, "the audit lists changes with their diffs")
    for summary in summaries[:10]:
        summary.click()
    diffs = [details.text for details in driver.find_elements(By.TAG_NAME, "details")]
    check(any('~ /state: "enabled" → "disabled"' in text for text in diffs), "the policy edit's diff, line by line", diffs)
    check(ERIN in driver.page_source, "who made it")
    run.shoot("console-audit-diff")
    go(run, "/admin/directory", "console-directory")
    check(ALICE in driver.page_source and "Sales" in driver.page_source, "the directory lists users and groups")
    check("calls 1 API" in driver.page_source, "the directory shows an application's API permissions (Contoso Mail for iOS calls the mail API)")
    check("Phishing-resistant MFA (built-in)" in driver.page_source, "the directory lists the built-in authentication strengths")
    go(run, "/admin/app-configuration", "console-app-configuration")
    check("Contoso Mail for Sales" in driver.page_source, "the app configuration policy is listed")
    print("PASS callbacks, audit (with diffs), directory and app configuration render")


def sign_in_methods(run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    go(run, "/admin/directory", "console-directory")
    links = [a for a in driver.find_elements(By.LINK_TEXT, "Sign-in methods") if BOB_ID in a.get_attribute("href")]
    check(links, "the directory links each user's sign-in methods")
    links[0].click()
    WebDriverWait(driver, 15).until(lambda d: d.title.startswith("Sign-in methods"))
    check(driver.title.startswith("Sign-in methods") and BOB in driver.page_source, "Bob's sign-in methods", driver.title)
    lifetime = driver.find_element(By.ID, "lifetime")
    lifetime.clear()
    lifetime.send_keys("120")
    driver.find_element(By.XPATH, "//button[text()='Issue a temporary access pass']").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "pass") or d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
    passes = driver.find_elements(By.ID, "pass")
    check(passes and len(passes[0].text) == 12, "the pass is shown once", driver.page_source[:1500])
    check("Temporary access pass (one-time, 120 min)" in driver.page_source and "Usable" in driver.page_source, "and listed")
    nav_ok(driver)
    run.shoot("console-temporary-access-pass")
    status, tokens = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "password", "client_id": MAIL_CLIENT, "username": BOB, "password": passes[0].text, "scope": "api://contoso-mail/Mail.Read"})
    check(status == 400, "a pass is not a password for the password grant", [status, tokens])
    driver.get(f"{run.base}/admin/users/{BOB_ID}/methods")
    check(not driver.find_elements(By.ID, "pass"), "opened again, the page shows the pass no more")
    driver.find_element(By.XPATH, "//button[text()='Remove']").click()
    WebDriverWait(driver, 15).until(lambda d: "Removed." in d.page_source or d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
    check("Removed." in driver.page_source and "No sign-in method besides the password." in driver.page_source, "the pass removed")
    print("PASS sign-in methods: a temporary access pass issued (shown once, listed, not a password for the grant), then removed")


def signals(run):
    """A receiver's stream (made as the demo gateway makes it), Bob's sessions revoked from his page, the event waiting on
    the stream's page; the stream paused, then deleted."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    driver = run.driver
    status, body = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "client_credentials", "client_id": GATEWAY[0], "client_secret": GATEWAY[1], "scope": "api://portcullis-ssf/.default"})
    check(status == 200, "the demo gateway gets a token for the transmitter", body)
    status, stream = post_json(f"{run.base}/{TENANT}/ssf/stream", {
        "events_requested": [SESSION_REVOKED], "delivery": {"method": "urn:ietf:rfc:8936"}, "description": "Mail gateway (console_browser)"},
        body["access_token"])
    check(status == 201 and stream.get("stream_id"), "a poll stream", stream)
    status, tokens = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "password", "client_id": MAIL_CLIENT, "username": BOB, "password": BOB_PASSWORD, "scope": f"{MAIL_SCOPE} offline_access"})
    check(status == 200 and tokens.get("refresh_token"), "Bob has a refresh token", tokens)

    driver.get(f"{run.base}/admin/users/{BOB_ID}/methods")
    nav_ok(driver)
    driver.find_element(By.XPATH, "//button[text()='Revoke sign-in sessions']").click()
    WebDriverWait(driver, 15).until(lambda d: "Sign-in sessions revoked" in d.page_source or d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
    check("Sign-in sessions revoked" in driver.page_source, "the notice says what happened", driver.page_source[:1500])
    run.shoot("console-sessions-revoked")
    status, refused = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "refresh_token", "client_id": MAIL_CLIENT, "refresh_token": tokens["refresh_token"]})
    check(status == 400 and refused.get("error") == "invalid_grant", "Bob's refresh token is refused after the revocation", refused)

    go(run, "/admin/signals", "console-signals")
    check("Mail gateway (console_browser)" in driver.page_source and "Contoso Mail gateway" in driver.page_source, "the stream is listed with its receiver")
    driver.find_element(By.LINK_TEXT, "Contoso Mail gateway (Shared Signals receiver)").click()
    WebDriverWait(driver, 15).until(lambda d: d.title.startswith("Signal stream"))
    nav_ok(driver)
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
    check(any("session-revoked" in row and "Waiting for the receiver" in row for row in rows), "the revocation waits for the receiver's poll", rows)
    run.shoot("console-signal-stream")
    Select(driver.find_element(By.ID, "status")).select_by_value("paused")
    driver.find_element(By.ID, "reason").send_keys("gateway maintenance")
    driver.find_element(By.XPATH, "//button[text()='Set status']").click()
    WebDriverWait(driver, 15).until(lambda d: "State changed." in d.page_source or d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
    check("Paused: gateway maintenance" in driver.page_source, "the stream is paused, with the reason", driver.page_source[:2000])
    run.shoot("console-signal-stream-paused")
    driver.find_element(By.XPATH, "//button[text()='Delete the stream']").click()
    WebDriverWait(driver, 15).until(lambda d: "Deleted." in d.page_source or d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
    check("No receiver has created a stream." in driver.page_source, "the stream is gone")
    print("PASS signals: Bob's sessions revoked from his page (his refresh token refused), the event waiting on the stream, paused, deleted")


def from_template(run):
    """PROTOCOL §17 in the console: one of Microsoft's templates chosen on the Policies page opens the editor on the policy
    as the portal makes it (report-only, the signed-in administrator excluded); Create stores it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    driver = run.driver
    go(run, "/admin/policies", "console-policies-templates")
    Select(driver.find_element(By.ID, "ca-template")).select_by_visible_text("Block legacy authentication")
    driver.find_element(By.CSS_SELECTOR, "form.toolbar button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "document"))
    text = driver.find_element(By.ID, "document").get_attribute("value")
    check('"exchangeActiveSync"' in text and '"enabledForReportingButNotEnforced"' in text, "the template's policy, report-only", text[:600])
    check(ERIN_ID in text and "Current administrator" not in text, "Erin, who creates it, is excluded", text[:1200])
    run.shoot("console-from-template")
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    check("Created." in driver.find_element(By.CSS_SELECTOR, ".notice").text, "created")
    go(run, "/admin/policies", "console-policies-after-template")
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#main table tbody tr") if "Block legacy authentication" in row.text]
    check(rows and "Report-only" in rows[0], "listed, report-only", rows)
    print("PASS create from template: Microsoft's 'Block legacy authentication' opened as the portal makes it (Erin excluded), created report-only")


ADMIN_CLI = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
CONDITIONAL_ACCESS_ADMINISTRATOR = "b1be1c3e-b65d-4f19-8427-f6fa0d97feb9"
REPORTS_READER = "4a5d8f65-41da-4de4-8968-e035b65339cf"
CAROL, CAROL_PASSWORD, CAROL_ID = "carol@contoso.example", "Carol-dev-pass1", "2e7a5c3b-7d9f-4a4c-8e8b-3f5d7c9a1b03"


def role_holder(run):
    """PROTOCOL §17 in the console: Bob, a Conditional Access Administrator (a directory role, no Portcullis.Admin), opens
    the console, reads the policies and the directory, creates a policy; a user he may not create is refused with the
    no-access page, and nothing is stored."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    status, issued = post(f"{run.base}/{TENANT}/oauth2/v2.0/token", {
        "grant_type": "client_credentials", "client_id": ADMIN_CLI[0], "client_secret": ADMIN_CLI[1], "scope": "api://portcullis-admin/.default"})
    check(status == 200, "the admin CLI's token", issued)
    status, assignment = post_json(f"{run.base}/admin/v1/role-management/directory/role-assignments",
                                   {"principalId": BOB_ID, "roleDefinitionId": CONDITIONAL_ACCESS_ADMINISTRATOR}, issued["access_token"])
    check(status == 201, "Bob holds Conditional Access Administrator", assignment)
    driver = run.driver
    sign_in(run, BOB, BOB_PASSWORD)
    check(driver.current_url.endswith("/admin/policies") and driver.find_element(By.TAG_NAME, "h1").text == "Policies",
          "Bob lands on the policies", driver.current_url)
    run.shoot("console-role-holder-policies")
    go(run, "/admin/new/conditional-access?template=mfa", "console-role-holder-new-policy")
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    check("Created." in driver.find_element(By.CSS_SELECTOR, ".notice").text, "Bob created a policy")
    go(run, "/admin/directory", "console-role-holder-directory")
    check(ALICE in driver.page_source, "Bob reads the directory")
    go(run, "/admin/new/users", "console-role-holder-new-user")
    area = driver.find_element(By.ID, "document")
    text = area.get_attribute("value")
    area.clear()
    area.send_keys(text.replace("new.user@", "mallory@"))
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.title.startswith("Not allowed"))
    check(driver.find_element(By.TAG_NAME, "h1").text == "Not allowed" and "Conditional Access Administrator" in driver.page_source,
          "a user is outside Bob's role: said, with his roles", driver.page_source[:800])
    run.shoot("console-role-holder-refused")
    go(run, "/admin/directory", "console-role-holder-directory-after")
    check("mallory@" not in driver.page_source, "nothing was stored")
    # A Reports Reader (Carol) starts at the sign-in log, which her role reads.
    status, assignment = post_json(f"{run.base}/admin/v1/role-management/directory/role-assignments",
                                   {"principalId": CAROL_ID, "roleDefinitionId": REPORTS_READER}, issued["access_token"])
    check(status == 201, "Carol holds Reports Reader", assignment)
    sign_in(run, CAROL, CAROL_PASSWORD)
    check(driver.current_url.endswith("/admin/sign-ins") and driver.find_element(By.TAG_NAME, "h1").text == "Sign-ins",
          "a Reports Reader lands on the sign-ins", driver.current_url)
    run.shoot("console-reports-reader")
    print("PASS role holder: a Conditional Access Administrator reads and writes policies in the console, reads the directory, and cannot create a user; a Reports Reader lands on the sign-ins")


def terms_of_use(run):
    """PROTOCOL §17 in the console: terms of use created from the directory's template, listed in the directory."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    go(run, "/admin/new/agreements", "console-new-agreement")
    check('"userReacceptRequiredFrequency"' in driver.find_element(By.ID, "document").get_attribute("value"), "the agreement template")
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice"))
    text = driver.find_element(By.ID, "document").get_attribute("value")
    check('"size"' in text and '"data"' not in text, "stored: the editor shows the file's size, not its bytes", text[:800])
    go(run, "/admin/directory", "console-directory-terms")
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tr") if "Terms of use" in row.text]
    check(rows and "en (text)" in rows[0], "the directory lists the terms of use with their files", rows)
    print("PASS terms of use: created from the template, listed in the directory with its file")


def save_document(run, path, shot, edit):
    """The JSON editor at `path` (a new document from its template, or one to change): its text edited, saved, and the
    notice that says so."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    go(run, path, shot)
    editor = driver.find_element(By.ID, "document")
    text = edit(editor.get_attribute("value"))
    # Long JSON is set directly (typing it key by key is slow); the form is submitted as a person would.
    driver.execute_script("arguments[0].value = arguments[1];", editor, text)
    driver.find_element(By.CSS_SELECTOR, "#main form button[type=submit]").click()
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".notice") or d.find_elements(By.CSS_SELECTOR, ".alert"))
    check(driver.find_elements(By.CSS_SELECTOR, ".notice"), f"{path}: saved", driver.page_source[-2500:])


def devices(run):
    """PROTOCOL §18 in the console: a joined device created from the directory's template with the device's certificate
    request (its key made here, P-256), the saved device carrying the certificate from the tenant's CA; a Windows
    compliance policy from its template; both listed in the directory (joined, not compliant, never checked in; what the
    policy requires); the device disabled in the editor, and listed so."""
    import re
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from selenium.webdriver.common.by import By
    driver = run.driver
    key = ec.generate_private_key(ec.SECP256R1())
    csr = (x509.CertificateSigningRequestBuilder().subject_name(x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "reception")]))
           .sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode())
    save_document(run, "/admin/new/devices", "console-new-device",
                  lambda text: re.sub(r'"csr": "[^"]*"', lambda _: '"csr": ' + json.dumps(csr), text))
    saved = driver.find_element(By.ID, "document").get_attribute("value")
    check("BEGIN CERTIFICATE" in saved and '"trustType": "AzureAd"' in saved, "the saved device carries its certificate, joined", saved[:800])
    run.shoot("console-device-saved")
    save_document(run, "/admin/new/device-compliance", "console-new-device-compliance", lambda text: text)
    go(run, "/admin/directory", "console-directory-devices")
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tr")]
    device_rows = [row for row in rows if "Reception desktop" in row]
    check(device_rows and "joined" in device_rows[0] and "Windows 10.0.22631" in device_rows[0] and "not compliant" in device_rows[0]
          and "never checked in" in device_rows[0], "the directory lists the device: joined, Windows, not compliant, never checked in", rows)
    check(any("Windows baseline" in row and "Windows: OS 10.0.19045 or later, a passcode, encryption" in row for row in rows),
          "the directory lists the compliance policy and what it requires", rows)
    link = driver.find_element(By.XPATH, "//tr[contains(., 'Reception desktop')]//a").get_attribute("href")
    save_document(run, link[len(run.base):], "console-edit-device", lambda text: text.replace('"accountEnabled": true', '"accountEnabled": false'))
    go(run, "/admin/directory", "console-directory-device-disabled")
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tr") if "Reception desktop" in row.text]
    check(rows and "disabled" in rows[0], "the disabled device is listed as disabled", rows)
    print("PASS devices: a joined device from the template (its certificate in the saved document), a Windows compliance policy; "
          "both in the directory; the device disabled in the editor")


def invitations(run):
    """PROTOCOL §17 in the console: Fabrikam's Frank invited from the directory's template (his address typed in), the
    B2B user it made listed among the users as a guest from Fabrikam, and Fabrikam trusted for MFA."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver

    def save(path, shot, edit):
        save_document(run, path, shot, edit)

    save("/admin/new/invitations", "console-new-invitation", lambda text: text.replace("someone@partner.example", "frank@fabrikam.example"))
    save("/admin/new/cross-tenant-access", "console-new-cross-tenant-access",
         lambda text: text.replace("00000000-0000-0000-0000-000000000000", "f4b1c2d3-5e6f-4a7b-8c9d-0e1f2a3b4c5d"))
    go(run, "/admin/directory", "console-directory-b2b")
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tr")]
    check(any("frank_fabrikam.example#EXT#@contoso.example" in row and "guest from frank@fabrikam.example" in row for row in rows),
          "the directory lists the B2B user as a guest from Fabrikam", rows)
    check(any("frank@fabrikam.example" in row and "Guest" in row for row in rows), "the directory lists the invitation", rows)
    check(any("Fabrikam (development)" in row and "MFA trusted" in row for row in rows), "the directory lists the partner's trust", rows)
    print("PASS invitations: Frank of Fabrikam invited from the template, listed as a guest from Fabrikam; Fabrikam's MFA trusted")


CORPUS = os.environ.get("PORTCULLIS_CA_CORPUS") or os.path.join(common.ROOT, "..", "shared", "ca-corpus")
SALES, ENGINEERING = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c51", "9b2c3d4e-5f6a-4b7c-9d8e-1f2a3b4c5d62"


def import_policies(run):
    """PROTOCOL §17 in the console: a Graph export from another tenant pasted with a map of its group IDs; the mapped
    policy is created, one naming an unmapped group is refused at its pointer."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver = run.driver
    with open(os.path.join(CORPUS, "j0eyv-baseline", "CA002-Global-IdentityProtection-AnyApp-AnyPlatform-Block-LegacyAuthentication.json")) as handle:
        exported = json.load(handle)
    stray = {"displayName": "Names an unmapped group", "state": "enabledForReportingButNotEnforced",
             "conditions": {"users": {"includeGroups": ["0f000000-0000-4000-8000-00000000dead"]}, "applications": {"includeApplications": ["All"]}},
             "grantControls": {"operator": "OR", "builtInControls": ["mfa"]}}
    export = json.dumps({"@odata.context": "https://graph.microsoft.com/beta/$metadata#identity/conditionalAccess/policies", "value": [exported, stray]})
    mapping = json.dumps({"2802b872-ccfb-4b29-a9a9-459808dfb11b": SALES, "8861a932-f1d1-4d1d-a5e6-cdce20fada27": ENGINEERING})
    go(run, "/admin/policies", "console-policies-import")
    # Long JSON is set directly (typing it key by key is slow); the form is submitted as a person would.
    driver.execute_script("document.getElementById('import-policies').value = arguments[0];"
                          "document.getElementById('import-map').value = arguments[1];", export, mapping)
    driver.find_element(By.CSS_SELECTOR, "form[action$='/admin/policies/import'] button[type=submit]").click()
    # The policies page has a table too: wait for the import's answer itself (its URL and its rows), not any table.
    WebDriverWait(driver, 15).until(
        lambda d: d.current_url.endswith("/admin/policies/import") and d.find_elements(By.CSS_SELECTOR, "#main table tbody tr"))
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#main table tbody tr")]
    check(len(rows) == 2 and "created" in rows[0] and "refused" in rows[1] and "/value/1/conditions/users/includeGroups/0" in rows[1],
          "the mapped policy created, the unmapped one refused at its pointer", rows)
    run.shoot("console-import-result")
    print("PASS import: a Graph list from another tenant, its groups mapped: one created, one refused at /value/1/conditions/users/includeGroups/0")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(common.ROOT, ".build/debug/portcullis"))
    parser.add_argument("--output", default=os.path.join(common.ROOT, ".build/test-output/console"))
    parser.add_argument("--docs", help="copy a few screenshots here (docs/images)")
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="portcullis-console.")
    process = driver = None
    status = 0
    try:
        process, base = common.start_server(os.path.abspath(args.binary), work)
        driver = common.make_driver()
        run = common.Run(driver, base, args.output, base)
        print(f"console_browser: {driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}; server {base}")
        no_access(run)
        correlation = policies_and_editor(run)
        from_template(run)
        role_holder(run)
        sign_in(run, ERIN, ERIN_PASSWORD)
        enroll_alice(base)
        answered, tokens = mail_token(base)
        check(answered == 200 and tokens.get("refresh_token"), "Alice's mail app has tokens", tokens)
        refresh_token = tokens["refresh_token"]
        what_if(run)
        step_up(run)
        token_protection(run)
        sign_ins(run, correlation)
        enrollments(run, refresh_token)
        the_rest(run)
        terms_of_use(run)
        invitations(run)
        devices(run)
        import_policies(run)
        sign_in_methods(run)
        signals(run)
        run.check_hygiene()
        print(f"console_browser: {len(run.shots)} screenshots in {args.output}")
        if args.docs:
            os.makedirs(args.docs, exist_ok=True)
            for name in ("console-policies-desktop", "console-editor-error-desktop", "console-what-if-result-desktop", "console-enrollment-phone"):
                shutil.copy(os.path.join(args.output, f"{name}.png"), os.path.join(args.docs, f"{name}.png"))
    except Exception as failure:  # a Failure, or Selenium's own (a wait that timed out)
        status = 1
        common.report_failure(driver, args.output, "console_browser", failure)
    finally:
        if driver is not None:
            driver.quit()
        common.stop_server(process, work, failed=status != 0)
    if status == 0:
        print("console_browser: all console checks passed")
    return status


if __name__ == "__main__":
    sys.exit(main())
