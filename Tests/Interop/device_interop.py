#!/usr/bin/env python3
"""Devices (PROTOCOL §18) against a real Portcullis binary, with a PKeyAuth client written here the way MSAL for .NET's
DeviceAuthHelper / DeviceAuthManager answer (an RSA 2048 device key, RS256), and `cryptography` for keys, requests and
certificates.

    python3 Tests/Interop/device_interop.py [--binary .build/debug/portcullis] [--keep]

What it does
  setup     Config/ copied (the Contoso Mail app lists the device registration service, api://portcullis-devices,
            Device.Register, in its API permissions); `portcullis serve`.
  register  Erin's token for Device.Register (password grant), a PKCS #10 request for a new RSA 2048 key, POST
            /{tenant}/devices/v1/register: 201, the device (Workplace, not compliant) and a certificate that chains to the
            tenant's CA (/{tenant}/pki/ca.pem), subject CN = the device ID.
  policy    the admin API: a policy requiring a compliant device for Erin at the mail API (forced past the lock-out
            warning).
  pkeyauth  the token request as MSAL for .NET makes it: `x-ms-PKeyAuth: 1.0`; the 401 challenge parsed as
            DeviceAuthHelper.ParseChallengeData does (one WWW-Authenticate value, `PKeyAuth ` then key="value" pairs split on
            commas outside quotes, every quote dropped); Context, Version, nonce, CertAuthorities (naming the CA the
            certificate was issued by) and SubmitUrl present; the answer `PKeyAuth AuthToken="<JWT>", Context="…",
            Version="…"`, the JWT's header {x5c: [base64 DER], typ, alg RS256} and payload {iat, aud = SubmitUrl, nonce},
            re-POSTed with the same body:
            - not compliant yet: AADSTS53000 (interaction_required); a client without the header: 53000 directly; the
              bypass answer (no AuthToken, as MSAL sends without a certificate): 53000;
            - the admin marks the device compliant: the answer gets tokens, `deviceid` in the access and ID tokens;
            - forged answers refused with AADSTS50097: another key, the nonce used twice, a stale iat, a wrong aud, a
              certificate for the same device from another CA, the device disabled, the device deleted.
  checkins  a Windows compliance policy (encryption required) in Intune's Graph shape; a second device checks in with a
            JWS signed by its RSA key (x5c, aud = the check-in URL, iat, jti): compliant, and its PKeyAuth answer gets
            tokens; a third device's check-in with its disk unencrypted: not compliant (the failure named), its sign-in
            refused 53000; the same check-in again (jti used) refused 401.
  page      PKeyAuth on the sign-in page as MSAL's web views answer it: /authorize with `x-ms-PKeyAuth: 1.0` → 302 to
            `urn:http-auth:PKeyAuth?CertAuthorities&Version&Context&nonce&SubmitUrl`; the SubmitUrl loaded with the answer
            (aud = SubmitUrl) → the sign-in page → the code, redeemed with no proof of its own → `deviceid` of the device
            proven on the page; its refresh, with no proof of its own, too (the family keeps the device); the admin
            marks the device not compliant: the family ends (70008), and stays ended when it is compliant again. Refused: the nonce used again, the answer moved to another sign-in's Context, a Context
            not sealed here (the 50097 page); the bypass answer → the page's 53000 refusal; the device re-keyed, then disabled,
            between the page and the redemption → 50097. A browser that offers no PKeyAuth gets the page, unchallenged.
  cli       the CLI as a device: `portcullis device register` (Erin's password; a P-256 key under --state), `device checkin`
            (iOS, no iOS policy: compliant), then `portcullis token` silently for the mail API: the SDK answers the
            challenge and the token names the device (deviceid).
Exit status 0 when every check passes, 1 otherwise, 2 when a prerequisite is missing.
"""

import base64
import datetime
import json
import os
import shutil
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpop_interop import interop_main, short  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TENANT = "contoso.example"
ADMIN = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
MAIL = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
MAIL_API = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"
ERIN = ("erin@contoso.example", "Erin-dev-pass1", "4a5c7e5d-9f1b-4c6e-8a0d-5b7f9e1c3d05")
DEVICES = "api://portcullis-devices"
POLICY_ID = "d0d0d0d0-0000-4000-8000-00000000d001"


def prepare_config(workdir):
    config = os.path.join(workdir, "config")
    shutil.copytree(os.path.join(REPO, "Config"), config)
    path = os.path.join(config, "directory.json")
    with open(path) as f:
        directory = json.load(f)
    tenant = next(t for t in directory["tenants"] if t["domain"] == TENANT)
    mail = next(a for a in tenant["applications"] if a["appId"] == MAIL)
    access = mail.setdefault("requiredResourceAccess", [])
    if not any(entry.get("resourceAppId") == DEVICES for entry in access):
        access.append({"resourceAppId": DEVICES, "scopes": ["Device.Register"]})
    with open(path, "w") as f:
        json.dump(directory, f, indent=2)
    return config


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def parse_challenge(value):
    """DeviceAuthHelper.ParseChallengeData: drop "PKeyAuth ", split on ',' outside quotes, then on '=' outside quotes; keep
    pairs of exactly two parts; trim, and remove every quote from values."""
    def split(text, separator):
        parts, current, quoted = [], "", False
        for ch in text:
            if ch == '"':
                quoted = not quoted
            if ch == separator and not quoted:
                parts.append(current)
                current = ""
            else:
                current += ch
        parts.append(current)
        return parts
    pairs = {}
    for piece in split(value[len("PKeyAuth") + 1:], ","):
        kv = split(piece, "=")
        if len(kv) == 2:
            pairs[kv[0].strip()] = kv[1].strip().replace('"', "")
    return pairs


class Device:
    """A device key and its certificate, answering challenges as MSAL for .NET does (RS256)."""

    def __init__(self):
        from cryptography.hazmat.primitives.asymmetric import rsa
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.certificate = None

    def csr(self):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import NameOID
        request = x509.CertificateSigningRequestBuilder().subject_name(
            x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "device")])).sign(self.key, hashes.SHA256())
        return request.public_bytes(serialization.Encoding.PEM).decode()

    def answer(self, challenge, key=None, certificate=None, nonce=None, aud=None, iat=None):
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding
        certificate = certificate or self.certificate
        der = certificate.public_bytes(serialization.Encoding.DER)
        header = {"x5c": [base64.b64encode(der).decode()], "typ": "JWT", "alg": "RS256"}
        payload = {"iat": int(iat if iat is not None else time.time()), "aud": aud or challenge.get("SubmitUrl"),
                   "nonce": nonce or challenge["nonce"]}
        signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + \
            b64url(json.dumps(payload, separators=(",", ":")).encode())
        signature = (key or self.key).sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        token = signing_input + "." + b64url(signature)
        return f'PKeyAuth AuthToken="{token}", Context="{challenge["Context"]}", Version="{challenge["Version"]}"'


class AdminCaller:
    """The admin API with the demo admin daemon's token (client credentials, fetched once): for a run that has
    `session`, `token_url`, `base` and `admin_token`."""

    def admin(self, method, path, body=None, headers=None):
        if self.admin_token is None:
            reply = self.session.post(self.token_url, data={
                "grant_type": "client_credentials", "client_id": ADMIN[0], "client_secret": ADMIN[1],
                "scope": "api://portcullis-admin/.default"}, timeout=30)
            self.admin_token = reply.json()["access_token"]
        all_headers = {"Authorization": "Bearer " + self.admin_token, **(headers or {})}
        return self.session.request(method, f"{self.base}/admin/v1{path}", json=body, headers=all_headers, timeout=30)


class Run(AdminCaller):
    def __init__(self, base, checks):
        import requests
        self.base, self.checks = base, checks
        self.session = requests.Session()
        self.session.trust_env = False
        self.token_url = f"{base}/{TENANT}/oauth2/v2.0/token"
        self.admin_token = None
        self.device = Device()
        self.device_object = None

    def mail_grant(self, headers=None):
        return self.session.post(self.token_url, data={
            "grant_type": "password", "client_id": MAIL, "username": ERIN[0], "password": ERIN[1],
            "scope": "api://contoso-mail/Mail.Read openid offline_access"}, headers=headers or {}, timeout=30)

    def expect_code(self, name, response, status, code):
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        self.checks.check(name, response.status_code == status and code in body.get("error_codes", []),
                          f"{response.status_code} {short(response.text, 400)}")

    def challenge(self):
        """The token request MSAL for .NET makes on a Windows it can sign on: x-ms-PKeyAuth announced."""
        reply = self.mail_grant({"x-ms-PKeyAuth": "1.0"})
        values = reply.raw.headers.getlist("WWW-Authenticate") if hasattr(reply.raw.headers, "getlist") else [reply.headers.get("WWW-Authenticate")]
        ok = reply.status_code == 401 and len(values) == 1 and values[0].lower().startswith("pkeyauth")
        self.checks.require("a token request with x-ms-PKeyAuth is challenged: 401, one WWW-Authenticate PKeyAuth value", ok,
                            f"{reply.status_code} {reply.headers}")
        return parse_challenge(values[0])

    def set_device(self, **members):
        return self.update_device(self.device_object["id"], **members)

    def update_device(self, object_id, **members):
        current = self.admin("GET", f"/devices/{object_id}")
        document = current.json()
        document.update(members)
        return self.admin("PUT", f"/devices/{object_id}", document, {"If-Match": current.headers.get("ETag", "*")})

    def register(self):
        reply = self.session.post(self.token_url, data={
            "grant_type": "password", "client_id": MAIL, "username": ERIN[0], "password": ERIN[1],
            "scope": f"{DEVICES}/Device.Register"}, timeout=30)
        token = reply.json().get("access_token")
        self.checks.require("Erin's token for the device registration service (Device.Register)", token, reply.text)
        registered = self.session.post(
            f"{self.base}/{TENANT}/devices/v1/register", headers={"Authorization": "Bearer " + token},
            json={"csr": self.device.csr(), "displayName": "Erin's Surface", "operatingSystem": "Windows",
                  "operatingSystemVersion": "10.0.22631"}, timeout=30)
        self.checks.require("registration answers 201 with the device and its certificate", registered.status_code == 201, registered.text)
        body = registered.json()
        self.device_object = body["device"]
        from cryptography import x509
        from cryptography.hazmat.primitives.asymmetric import ec
        self.device.certificate = x509.load_pem_x509_certificate(body["certificate"].encode())
        ca = x509.load_pem_x509_certificate(self.session.get(f"{self.base}/{TENANT}/pki/ca.pem", timeout=30).content)
        try:
            ca.public_key().verify(self.device.certificate.signature, self.device.certificate.tbs_certificate_bytes,
                                   ec.ECDSA(self.device.certificate.signature_hash_algorithm))
            chained = self.device.certificate.issuer == ca.subject
        except Exception:
            chained = False
        self.checks.check("the certificate chains to the tenant's CA (/{tenant}/pki/ca.pem)", chained)
        cn = self.device.certificate.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
        self.checks.check("its subject names the device ID", cn == self.device_object["deviceId"], cn)
        self.checks.check("the device is registered (Workplace), not compliant",
                          self.device_object["trustType"] == "Workplace" and self.device_object["isCompliant"] is False, self.device_object)

    def policy(self):
        policy = {
            "id": POLICY_ID, "displayName": "Compliant device for mail (device_interop)", "state": "enabled",
            "conditions": {"users": {"includeUsers": [ERIN[2]]}, "applications": {"includeApplications": [MAIL_API]}, "clientAppTypes": ["all"]},
            "grantControls": {"operator": "OR", "builtInControls": ["compliantDevice"]},
        }
        reply = self.admin("POST", "/conditional-access/policies?force=true", policy)
        self.checks.require("a policy requiring a compliant device for Erin at the mail API", reply.status_code == 201, reply.text)

    def pkeyauth(self):
        self.expect_code("a client without x-ms-PKeyAuth: 53000 as from an unregistered device", self.mail_grant(), 400, 53000)
        challenge = self.challenge()
        for member in ["Context", "Version", "nonce", "CertAuthorities", "SubmitUrl"]:
            self.checks.check(f"the challenge carries {member}", challenge.get(member), challenge)
        self.checks.check("CertAuthorities names the CA that issued the device's certificate",
                          challenge.get("CertAuthorities") == self.device.certificate.issuer.rfc4514_string()
                          or "Portcullis issuing CA" in challenge.get("CertAuthorities", ""), challenge.get("CertAuthorities"))
        self.checks.check("SubmitUrl is the token endpoint", challenge.get("SubmitUrl") == self.token_url, challenge.get("SubmitUrl"))
        self.expect_code("an answer from a device that is not compliant: 53000", self.mail_grant({"Authorization": self.device.answer(challenge)}),
                         400, 53000)
        challenge = self.challenge()
        bypass = f'PKeyAuth Context="{challenge["Context"]}",Version="{challenge["Version"]}"'
        self.expect_code("the bypass answer (no device certificate): 53000", self.mail_grant({"Authorization": bypass}), 400, 53000)

        marked = self.set_device(isCompliant=True)
        self.checks.require("the admin marks the device compliant", marked.status_code == 200, marked.text)
        challenge = self.challenge()
        answer = self.device.answer(challenge)
        granted = self.mail_grant({"Authorization": answer})
        self.checks.require("the answer from the compliant device gets tokens", granted.status_code == 200, granted.text)
        claims = json.loads(base64.urlsafe_b64decode(granted.json()["access_token"].split(".")[1] + "=="))
        id_claims = json.loads(base64.urlsafe_b64decode(granted.json()["id_token"].split(".")[1] + "=="))
        self.checks.check("the access token's deviceid is the device's", claims.get("deviceid") == self.device_object["deviceId"], claims)
        self.checks.check("the ID token's deviceid is the device's", id_claims.get("deviceid") == self.device_object["deviceId"], id_claims)
        self.expect_code("the same answer again (nonce used): 50097", self.mail_grant({"Authorization": answer}), 400, 50097)

        from cryptography.hazmat.primitives.asymmetric import rsa
        challenge = self.challenge()
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.expect_code("an answer signed by another key: 50097", self.mail_grant({"Authorization": self.device.answer(challenge, key=other)}), 400, 50097)
        self.expect_code("a stale iat: 50097", self.mail_grant({"Authorization": self.device.answer(challenge, iat=time.time() - 3600)}), 400, 50097)
        self.expect_code("another aud: 50097", self.mail_grant({"Authorization": self.device.answer(challenge, aud="https://elsewhere/token")}), 400, 50097)
        self.expect_code("a nonce this server never gave: 50097", self.mail_grant({"Authorization": self.device.answer(challenge, nonce=b64url(os.urandom(40)))}),
                         400, 50097)
        self.expect_code("a certificate for the same device from another CA: 50097",
                         self.mail_grant({"Authorization": self.device.answer(challenge, certificate=self.foreign_certificate())}), 400, 50097)
        disabled = self.set_device(accountEnabled=False)
        self.checks.check("the admin disables the device", disabled.status_code == 200, disabled.text)
        self.expect_code("the disabled device's answer: 50097", self.mail_grant({"Authorization": self.device.answer(challenge)}), 400, 50097)
        deleted = self.admin("DELETE", f"/devices/{self.device_object['id']}", headers={"If-Match": "*"})
        self.checks.check("the admin deletes the device", deleted.status_code == 204, deleted.text)
        challenge = self.challenge()
        self.expect_code("the deleted device's answer: 50097", self.mail_grant({"Authorization": self.device.answer(challenge)}), 400, 50097)

    def new_device(self, name):
        """Registers another device of Erin's; returns it with its certificate."""
        from cryptography import x509
        device = Device()
        token = self.session.post(self.token_url, data={
            "grant_type": "password", "client_id": MAIL, "username": ERIN[0], "password": ERIN[1],
            "scope": f"{DEVICES}/Device.Register"}, timeout=30).json()["access_token"]
        registered = self.session.post(
            f"{self.base}/{TENANT}/devices/v1/register", headers={"Authorization": "Bearer " + token},
            json={"csr": device.csr(), "displayName": name, "operatingSystem": "Windows"}, timeout=30)
        self.checks.require(f"{name} registered", registered.status_code == 201, registered.text)
        device.certificate = x509.load_pem_x509_certificate(registered.json()["certificate"].encode())
        device.object = registered.json()["device"]
        return device

    def check_in(self, device, encrypted, jti=None):
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding
        url = f"{self.base}/{TENANT}/devices/v1/{device.object['deviceId']}/checkin"
        der = device.certificate.public_bytes(serialization.Encoding.DER)
        header = {"x5c": [base64.b64encode(der).decode()], "typ": "JWT", "alg": "RS256"}
        payload = {"aud": url, "iat": int(time.time()), "jti": jti or str(uuid.uuid4()), "deviceId": device.object["deviceId"],
                   "operatingSystem": "Windows", "operatingSystemVersion": "10.0.22631", "passcodeSet": True,
                   "storageEncrypted": encrypted, "jailbroken": False}
        text = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(payload).encode())
        jws = text + "." + b64url(device.key.sign(text.encode(), padding.PKCS1v15(), hashes.SHA256()))
        return self.session.post(url, data=jws, headers={"Content-Type": "application/jwt"}, timeout=30)

    def checkins(self):
        policy = {"@odata.type": "#microsoft.graph.windows10CompliancePolicy", "displayName": "Windows baseline (device_interop)",
                  "osMinimumVersion": "10.0.19045", "passwordRequired": True, "storageRequireEncryption": True}
        created = self.admin("POST", "/device-compliance/policies", policy)
        self.checks.require("a Windows compliance policy in Intune's Graph shape", created.status_code == 201, created.text)
        good = self.new_device("Erin's desktop")
        passed = self.check_in(good, encrypted=True)
        self.checks.check("a signed check-in that meets the policy: compliant and managed",
                          passed.status_code == 200 and passed.json().get("isCompliant") is True and passed.json().get("isManaged") is True, passed.text)
        granted = self.mail_grant({"Authorization": good.answer(self.challenge())})
        self.checks.check("the checked-in device's PKeyAuth answer gets tokens", granted.status_code == 200, granted.text)
        self.good = good
        bad = self.new_device("Erin's old laptop")
        jti = str(uuid.uuid4())
        failed = self.check_in(bad, encrypted=False, jti=jti)
        failures = failed.json().get("complianceFailures", []) if failed.status_code == 200 else []
        self.checks.check("a check-in with the disk unencrypted: not compliant, the failure named",
                          failed.status_code == 200 and failed.json().get("isCompliant") is False
                          and any("storageRequireEncryption" in f for f in failures), failed.text)
        self.expect_code("that device's sign-in: 53000", self.mail_grant({"Authorization": bad.answer(self.challenge())}), 400, 53000)
        again = self.check_in(bad, encrypted=True, jti=jti)
        self.checks.check("the same check-in sent again is refused (429 too soon, or 401 jti used)", again.status_code in (401, 429), again.text)

    def browser(self):
        """A browser of its own: cookies (its session after a sign-in), no proxies."""
        import requests
        browser = requests.Session()
        browser.trust_env = False
        return browser

    def page_challenge(self, browser, answer_header=True):
        """GET /authorize as MSAL's web views load it (x-ms-PKeyAuth: 1.0): the urn:http-auth:PKeyAuth redirect, its query
        read as MSAL for Android reads it (URL-decoded pairs). Returns the challenge and the PKCE verifier."""
        import hashlib
        import urllib.parse
        verifier = b64url(os.urandom(32))
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": MAIL, "redirect_uri": "http://localhost", "scope": "api://contoso-mail/Mail.Read openid offline_access",
            "code_challenge": b64url(hashlib.sha256(verifier.encode()).digest()), "code_challenge_method": "S256", "state": "s1"})
        headers = {"x-ms-PKeyAuth": "1.0"} if answer_header else {}
        reply = browser.get(f"{self.base}/{TENANT}/oauth2/v2.0/authorize?{query}", headers=headers, allow_redirects=False, timeout=30)
        location = reply.headers.get("Location", "")
        if not answer_header:
            return reply, verifier
        self.checks.require("/authorize with x-ms-PKeyAuth: 302 to urn:http-auth:PKeyAuth?…", reply.status_code == 302
                            and location.startswith("urn:http-auth:PKeyAuth?"), [reply.status_code, location[:300]])
        return dict(urllib.parse.parse_qsl(location.split("?", 1)[1])), verifier

    def page_sign_in(self, browser, page):
        """The sign-in page's form, posted with Erin's password: the reply (a 302 to the app, or a page)."""
        from pageform import PageForm
        form = PageForm(page.text)
        self.checks.require("the sign-in page (a form with its ticket)", page.status_code == 200 and form.action and form.fields.get("ticket"),
                            [page.status_code, page.text[:400]])
        action = form.action if form.action.startswith("http") else self.base + form.action
        return browser.post(action, data=dict(form.fields, username=ERIN[0], password=ERIN[1]), allow_redirects=False, timeout=30)

    def page(self):
        """PKeyAuth on the sign-in page, as MSAL's web views (Android, iOS) answer it: the SubmitUrl loaded with the answer
        in an Authorization header; the code then redeemed by the app with no device proof of its own."""
        import urllib.parse
        browser = self.browser()
        challenge, verifier = self.page_challenge(browser)
        for member in ["CertAuthorities", "Version", "Context", "nonce", "SubmitUrl"]:
            self.checks.check(f"the page's challenge carries {member}", challenge.get(member), challenge)
        submit = challenge.get("SubmitUrl", "")
        self.checks.check("its SubmitUrl is the tenant's authorize/pkeyauth", submit.endswith("/oauth2/v2.0/authorize/pkeyauth"), submit)
        page = browser.get(submit, headers={"Authorization": self.good.answer(challenge)}, allow_redirects=False, timeout=30)
        signed = self.page_sign_in(browser, page)
        location = signed.headers.get("Location", "")
        self.checks.require("the compliant device's answer, then the password: 302 to the app with a code",
                            signed.status_code == 302 and "code=" in location, [signed.status_code, location, signed.text[:400]])
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))["code"]
        redeemed = self.session.post(self.token_url, data={
            "grant_type": "authorization_code", "client_id": MAIL, "code": code, "redirect_uri": "http://localhost", "code_verifier": verifier},
            timeout=30)
        claims = json.loads(base64.urlsafe_b64decode(redeemed.json()["access_token"].split(".")[1] + "==")) if redeemed.status_code == 200 else {}
        self.checks.check("the code redeems with no proof of its own: the device proven on the page is in the token (deviceid)",
                          claims.get("deviceid") == self.good.object["deviceId"], [redeemed.status_code, redeemed.text[:300]])
        refresh = {"grant_type": "refresh_token", "client_id": MAIL, "refresh_token": redeemed.json().get("refresh_token", ""),
                    "scope": "api://contoso-mail/Mail.Read"}
        refreshed = self.session.post(self.token_url, data=refresh, timeout=30)
        claims = json.loads(base64.urlsafe_b64decode(refreshed.json()["access_token"].split(".")[1] + "==")) if refreshed.status_code == 200 else {}
        self.checks.check("its refresh, with no proof of its own, is from the same device (the family keeps it): deviceid",
                          claims.get("deviceid") == self.good.object["deviceId"], [refreshed.status_code, refreshed.text[:300]])
        marked = self.update_device(self.good.object["id"], isCompliant=False)
        self.checks.check("the admin marks that device not compliant", marked.status_code == 200, marked.text)
        refresh["refresh_token"] = refreshed.json().get("refresh_token", "")
        self.expect_code("the families granted on that device end with it: the next refresh is refused, 70008 (revoked)",
                         self.session.post(self.token_url, data=refresh, timeout=30), 400, 70008)
        marked = self.update_device(self.good.object["id"], isCompliant=True)
        self.checks.check("compliant again", marked.status_code == 200, marked.text)
        self.expect_code("an ended family stays ended when the device is compliant again (70008)",
                         self.session.post(self.token_url, data=refresh, timeout=30), 400, 70008)
        replayed = browser.get(submit, headers={"Authorization": self.good.answer(challenge)}, allow_redirects=False, timeout=30)
        self.checks.check("the same challenge answered again (nonce used): the 50097 page", replayed.status_code == 403
                          and "50097" in replayed.text, [replayed.status_code, replayed.text[:300]])

        challenge, _ = self.page_challenge(browser)
        other, _ = self.page_challenge(browser)
        crossed = dict(challenge, Context=other["Context"])
        spliced = browser.get(submit, headers={"Authorization": self.good.answer(challenge).replace(challenge["Context"], other["Context"])},
                              allow_redirects=False, timeout=30)
        self.checks.check("an answer moved to another sign-in (its nonce with another Context): the 50097 page",
                          spliced.status_code == 403 and "50097" in spliced.text and crossed, [spliced.status_code, spliced.text[:300]])
        forged = browser.get(submit, headers={"Authorization": f'PKeyAuth AuthToken="x", Context="forged", Version="1.0"'},
                             allow_redirects=False, timeout=30)
        self.checks.check("a Context this server did not seal: refused, no sign-in page", forged.status_code in (400, 403)
                          and 'name="ticket"' not in forged.text, [forged.status_code, forged.text[:300]])

        browser = self.browser()  # no single sign-on from the sign-in above: the page again
        challenge, _ = self.page_challenge(browser)
        bypass = f'PKeyAuth Context="{challenge["Context"]}",Version="{challenge["Version"]}"'
        refused = self.page_sign_in(browser, browser.get(submit, headers={"Authorization": bypass}, allow_redirects=False, timeout=30))
        self.checks.check("the bypass answer (no device certificate), then the password: the page refuses, AADSTS53000",
                          refused.status_code == 403 and "53000" in refused.text, [refused.status_code, refused.text[:400]])

        def proven_code():
            browser = self.browser()
            challenge, verifier = self.page_challenge(browser)
            page = browser.get(submit, headers={"Authorization": self.good.answer(challenge)}, allow_redirects=False, timeout=30)
            signed = self.page_sign_in(browser, page)
            code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(signed.headers.get("Location", "")).query)).get("code")
            self.checks.require("proven again: a code", code, [signed.status_code, signed.text[:300]])
            return code, verifier

        def redeem(code, verifier):
            return self.session.post(self.token_url, data={
                "grant_type": "authorization_code", "client_id": MAIL, "code": code, "redirect_uri": "http://localhost", "code_verifier": verifier},
                timeout=30)

        # Re-keyed between the page and the redemption (another key's request): the certificate that proved it is void.
        code, verifier = proven_code()
        new_key = Device()
        rekeyed = self.update_device(self.good.object["id"], csr=new_key.csr())
        self.checks.check("the admin re-keys that device (a request for another key)", rekeyed.status_code == 200, rekeyed.text)
        self.expect_code("its code redeemed after the device was re-keyed: 50097", redeem(code, verifier), 400, 50097)
        self.good.key = new_key.key
        from cryptography import x509
        self.good.certificate = x509.load_pem_x509_certificate(rekeyed.json()["certificate"]["pem"].encode())

        code, verifier = proven_code()
        current = self.admin("GET", f"/devices/{self.good.object['id']}")
        document = dict(current.json(), accountEnabled=False)
        disabled = self.admin("PUT", f"/devices/{self.good.object['id']}", document, {"If-Match": current.headers.get("ETag", "*")})
        self.checks.check("the admin disables that device", disabled.status_code == 200, disabled.text)
        self.expect_code("its code redeemed after the device was disabled: 50097", redeem(code, verifier), 400, 50097)

        reply, _ = self.page_challenge(self.browser(), answer_header=False)
        self.checks.check("a browser that does not offer PKeyAuth gets the sign-in page, no challenge", reply.status_code == 200
                          and 'name="ticket"' in reply.text, [reply.status_code, reply.headers.get("Location")])

    def cli(self, binary, workdir):
        import subprocess
        state = os.path.join(workdir, "cli-state")
        common = ["--authority", f"{self.base}/{TENANT}", "--client-id", MAIL, "--state", state, "--platform", "iOS"]

        def run(*arguments):
            done = subprocess.run([binary, *arguments, *common], capture_output=True, text=True, timeout=120)
            try:
                return done.returncode, json.loads(done.stdout)
            except ValueError:
                return done.returncode, {"stdout": done.stdout, "stderr": done.stderr[-800:]}
        code, registered = run("device", "register", "--username", ERIN[0], "--password", ERIN[1], "--name", "Erin's phone (CLI)",
                               "--os", "iOS", "--os-version", "17.4")
        self.checks.require("portcullis device register", code == 0 and registered.get("deviceId"), registered)
        code, checked = run("device", "checkin", "--os", "iOS", "--os-version", "17.4")
        self.checks.check("portcullis device checkin: compliant (no iOS policy)", code == 0 and checked.get("isCompliant") is True, checked)
        code, token = run("token", "--scope", "api://contoso-mail/Mail.Read", "--username", ERIN[0])
        claims = token.get("claims", {}) if isinstance(token, dict) else {}
        self.checks.check("portcullis token answers the challenge: the token names the CLI's device",
                          code == 0 and claims.get("deviceid") == registered.get("deviceId"), token)

    def foreign_certificate(self):
        """A CA of our own (another tenant's, say) certifying the device's key under the device's own subject."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        ca_key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        return (x509.CertificateBuilder().subject_name(self.device.certificate.subject).issuer_name(self.device.certificate.issuer)
                .public_key(self.device.key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
                .sign(ca_key, hashes.SHA256()))


def main():
    def groups(server, checks, binary, workdir, _):
        run = Run(server.base, checks)

        def cli():
            run.cli(binary, workdir)
        return [run.register, run.policy, run.pkeyauth, run.checkins, run.page, cli]

    return interop_main("device_interop", __doc__, ["requests", "cryptography"], "requests cryptography", prepare_config, groups)


if __name__ == "__main__":
    sys.exit(main())
