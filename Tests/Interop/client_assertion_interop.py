#!/usr/bin/env python3
"""Client assertions signed with certificates (RFC 7523, PROTOCOL §21) against a real Portcullis binary: certificates
made by `cryptography`, registered with `portcullis app credential add --certificate`, assertions signed by PyJWT the
way MSAL for Python makes them (RS256, `x5t` the SHA-1 thumbprint, `aud` the token endpoint, `exp` ten minutes ahead,
fractional `nbf`/`iat`, a fresh `jti`). MSAL and azure-identity themselves run in msal_interop.py (they need https).

    python3 Tests/Interop/client_assertion_interop.py [--binary .build/debug/portcullis] [--keep]

What it does
  register  the CLI adds an RSA 2048 certificate (PEM) and a P-256 one (DER) to a daemon with no secret; the admin API
            shows them (thumbprint, validity; never a private key); a private key given as a certificate is refused at
            its pointer; discovery lists private_key_jwt.
  grant     client_credentials with an RS256 assertion (x5t), an ES256 one (x5t#S256), a PS256 one (kid = thumbprint)
            → tokens for the mail API's app role; the very same assertion again → a token (MSAL reuses one for ten
            minutes); azpacr 2; the sign-in log's and what-if's clientCredentialType; the assertion on the
            introspection endpoint authenticates the client too.
  refused   each an OAuth error with Entra's code and never a 5xx, and the grant after it still works: another
            assertion with a used jti (50013), signed by another key under the registered x5t (700027), an unknown x5t
            (700027), an expired and a not-yet-valid certificate (700027), another aud (700023), exp an hour ahead and
            exp past (700024), iss ≠ client (700021), HS256 (50027), a wrong client_assertion_type (50027), a secret
            beside the assertion (90014), an assertion from a public client (700025); an accepted (remembered)
            assertion sent as another daemon that holds the same certificate (700021), and after its certificate was
            removed (700027).
Exit status 0 when every check passes, 1 otherwise, 2 when a prerequisite is missing.
"""

import base64
import datetime
import json
import os
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpop_interop import config_with, interop_main, short  # noqa: E402
from device_interop import ADMIN, MAIL, TENANT, AdminCaller  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DAEMON = "c0ffee00-aaaa-4a2b-8c3d-4e5f6a7b8c0a"
OTHER = "c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02"  # the demo's mail sync daemon
SCOPE = "api://contoso-mail/.default"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def prepare_config(workdir):
    """Config/ copied, plus a daemon with no secret that holds the mail API's app role."""
    def edit(tenant):
        tenant["applications"].append({
            "appId": DAEMON, "displayName": "Reports daemon (certificate only)", "publicClient": False,
            "allowedGrantTypes": ["client_credentials"],
            "requiredResourceAccess": [{"resourceAppId": "api://contoso-mail", "appRoles": ["Mail.ReadAll"]}],
        })
        tenant["appRoleAssignments"].append({"principalId": DAEMON, "resource": "api://contoso-mail", "role": "Mail.ReadAll"})
    return config_with(workdir, edit)


class Certificate:
    """A key and a self-signed certificate for it, valid from `start` for `days`."""

    def __init__(self, kind="rsa", start=None, days=30):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        from cryptography.x509.oid import NameOID
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if kind == "rsa" else ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        start = start or now - datetime.timedelta(hours=1)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"reports-daemon-{kind}")])
        self.certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(self.key.public_key())
                            .serial_number(x509.random_serial_number()).not_valid_before(start)
                            .not_valid_after(start + datetime.timedelta(days=days)).sign(self.key, hashes.SHA256()))
        self.der = self.certificate.public_bytes(serialization.Encoding.DER)
        self.pem = self.certificate.public_bytes(serialization.Encoding.PEM).decode()
        self.sha1 = self.certificate.fingerprint(hashes.SHA1())
        self.sha256 = self.certificate.fingerprint(hashes.SHA256())
        self.private_pem = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()).decode()

    def x5t(self):
        return base64.urlsafe_b64encode(self.sha1).rstrip(b"=").decode()

    def x5t_s256(self):
        return base64.urlsafe_b64encode(self.sha256).rstrip(b"=").decode()


class Run(AdminCaller):
    def __init__(self, server, checks, binary, workdir):
        import requests
        self.base, self.checks, self.binary, self.workdir = server.base, checks, binary, workdir
        self.session = requests.Session()
        self.session.trust_env = False
        self.token_url = f"{self.base}/{TENANT}/oauth2/v2.0/token"
        self.admin_token = None
        self.rsa, self.ec = Certificate("rsa"), Certificate("ec")
        self.expired = Certificate("rsa", start=datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=40), days=30)
        self.future = Certificate("rsa", start=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2))

    def assertion(self, certificate=None, alg="RS256", header=None, key=None, **claims):
        import jwt
        certificate = certificate or self.rsa
        now = time.time()
        payload = {"iss": DAEMON, "sub": DAEMON, "aud": self.token_url, "exp": int(now) + 600, "nbf": now, "iat": now,
                   "jti": str(uuid.uuid4())}
        payload.update(claims)
        headers = header if header is not None else {"x5t": certificate.x5t()}
        if alg == "HS256":
            return jwt.encode(payload, "not-a-key-but-a-shared-secret-of-32b", algorithm="HS256", headers=headers)
        return jwt.encode(payload, key or certificate.key, algorithm=alg, headers=headers)

    def grant(self, assertion, client_id=DAEMON, **extra):
        data = {"grant_type": "client_credentials", "client_id": client_id, "scope": SCOPE, "client_assertion_type": ASSERTION_TYPE,
                "client_assertion": assertion}
        data.update(extra)
        return self.session.post(self.token_url, data=data, timeout=30)

    def granted(self, name, reply):
        import jwt
        body = reply.json() if reply.status_code == 200 else {}
        claims = jwt.decode(body["access_token"], options={"verify_signature": False}) if "access_token" in body else {}
        self.checks.check(name, reply.status_code == 200 and claims.get("azp") == DAEMON and "Mail.ReadAll" in claims.get("roles", []),
                          f"{reply.status_code} {short(reply.text, 400)}")

    def refused(self, name, reply, error, code):
        body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
        self.checks.check(name, reply.status_code in (400, 401) and body.get("error") == error and code in body.get("error_codes", []),
                          f"{reply.status_code} {short(reply.text, 400)}")

    def cli_add(self, path, name):
        env = dict(os.environ, PORTCULLIS_AUTHORITY=f"{self.base}/{TENANT}", PORTCULLIS_ADMIN_CLIENT_ID=ADMIN[0],
                   PORTCULLIS_ADMIN_CLIENT_SECRET=ADMIN[1])
        return subprocess.run([self.binary, "app", "credential", "add", DAEMON, "--certificate", path, "--display-name", name],
                              capture_output=True, text=True, env=env, timeout=60)

    # ------------------------------------------------------------------------------------------------------------

    def register(self):
        files = {}
        for label, certificate, data in [("rsa", self.rsa, self.rsa.pem.encode()), ("ec", self.ec, self.ec.der),
                                         ("expired", self.expired, self.expired.pem.encode()),
                                         ("future", self.future, self.future.pem.encode())]:
            path = os.path.join(self.workdir, f"{label}.cert")
            with open(path, "wb") as f:
                f.write(data)
            files[label] = path
            done = self.cli_add(path, f"reports {label}")
            shown = json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip().startswith("{") else {}
            self.checks.require(f"`portcullis app credential add --certificate` registers the {label} certificate "
                                f"({'DER' if label == 'ec' else 'PEM'}); it prints its SHA-1 thumbprint",
                                shown.get("thumbprint") == certificate.sha1.hex().upper(), f"{done.returncode} {done.stdout} {done.stderr}")
        app = self.admin("GET", f"/applications/{DAEMON}").json()
        credentials = app.get("keyCredentials", [])
        self.checks.check("the admin API shows four certificates with their validity, type and usage, and no private key",
                          len(credentials) == 4 and all(c.get("type") == "AsymmetricX509Cert" and c.get("usage") == "Verify"
                                                        and c.get("endDateTime") for c in credentials)
                          and "PRIVATE" not in json.dumps(app), credentials)
        again = self.cli_add(files["rsa"], "reports rsa")
        self.checks.check("the same certificate registered again is the same credential (four still)", again.returncode == 0 and
                          len(self.admin("GET", f"/applications/{DAEMON}").json().get("keyCredentials", [])) == 4, again.stderr)
        current = self.admin("GET", f"/applications/{DAEMON}")
        document = current.json()
        document["keyCredentials"] = document.get("keyCredentials", []) + [{"key": self.rsa.private_pem}]
        refused = self.admin("PUT", f"/applications/{DAEMON}", document, {"If-Match": current.headers.get("ETag", "*")})
        pointers = [d.get("pointer") for d in refused.json().get("error", {}).get("details", [])] if refused.status_code == 400 else []
        self.checks.check("a private key given as a certificate is refused at its pointer, never stored",
                          refused.status_code == 400 and "/keyCredentials/4/key" in pointers, f"{refused.status_code} {refused.text}")
        discovery = self.session.get(f"{self.base}/{TENANT}/v2.0/.well-known/openid-configuration", timeout=30).json()
        self.checks.check("discovery lists private_key_jwt", "private_key_jwt" in discovery.get("token_endpoint_auth_methods_supported", []),
                          discovery.get("token_endpoint_auth_methods_supported"))

    def grant_group(self):
        first = self.assertion()
        self.granted("client_credentials with an RS256 assertion (x5t): a token with the app role", self.grant(first))
        self.granted("the very same assertion again: a token (MSAL reuses one for ten minutes)", self.grant(first))
        self.granted("an ES256 assertion naming its certificate by x5t#S256",
                     self.grant(self.assertion(self.ec, alg="ES256", header={"x5t#S256": self.ec.x5t_s256()})))
        self.granted("a PS256 assertion naming its certificate by kid (the thumbprint)",
                     self.grant(self.assertion(self.rsa, alg="PS256", header={"kid": self.rsa.sha1.hex().upper()})))
        self.granted("aud the tenant's issuer (one of Entra's accepted spellings)", self.grant(self.assertion(aud=f"{self.base}/{TENANT}/v2.0")))
        token = self.grant(self.assertion()).json().get("access_token", "")
        import jwt
        claims = jwt.decode(token, options={"verify_signature": False}) if token else {}
        self.checks.check("the token says the client authenticated with a certificate (azpacr 2)", claims.get("azpacr") == "2", claims)
        deadline, found = time.time() + 10, []
        while time.time() < deadline and not found:
            records = self.admin("GET", f"/sign-ins?app={DAEMON}").json().get("value", [])
            found = [r for r in records if r.get("clientCredentialType") == "certificate"]
            time.sleep(0.25)
        self.checks.check("the sign-in log records clientCredentialType certificate", found, records if not found else None)
        answer = self.admin("POST", "/conditional-access/evaluate", {"signIn": {
            "clientAppId": DAEMON, "resourceAppId": "api://contoso-mail", "clientCredentialType": "certificate"}})
        self.checks.check("what-if shows how the client authenticates", answer.status_code == 200 and
                          answer.json().get("signIn", {}).get("clientCredentialType") == "certificate", short(answer.text, 300))
        wrong = self.admin("POST", "/conditional-access/evaluate", {"signIn": {
            "clientAppId": MAIL, "resourceAppId": "api://contoso-mail", "userId": "alice@contoso.example", "clientCredentialType": "certificate"}})
        pointers = [p.get("pointer") for p in wrong.json().get("error", {}).get("details", [])] if wrong.status_code == 400 else []
        self.checks.check("what-if refuses a certificate for a public client at its pointer", "/signIn/clientCredentialType" in pointers,
                          f"{wrong.status_code} {short(wrong.text, 300)}")
        introspected = self.session.post(f"{self.base}/{TENANT}/oauth2/v2.0/introspect", data={
            "token": token, "client_id": DAEMON, "client_assertion_type": ASSERTION_TYPE, "client_assertion": self.assertion()}, timeout=30)
        self.checks.check("an assertion authenticates the client at introspection too", introspected.status_code == 200 and
                          introspected.json().get("active") is True, f"{introspected.status_code} {short(introspected.text, 300)}")

    def refused_group(self):
        used = self.assertion()
        self.granted("an assertion with a fresh jti", self.grant(used))
        import jwt
        jti = jwt.decode(used, options={"verify_signature": False})["jti"]
        other = self.assertion(jti=jti, exp=int(time.time()) + 500)
        self.refused("another assertion with a jti already used: 50013", self.grant(other), "invalid_client", 50013)
        self.refused("... and sent again: still refused", self.grant(other), "invalid_client", 50013)
        self.refused("signed by another key under the registered x5t: 700027",
                     self.grant(self.assertion(key=Certificate("rsa").key)), "invalid_client", 700027)
        self.refused("an x5t not registered: 700027", self.grant(self.assertion(Certificate("rsa"))), "invalid_client", 700027)
        self.refused("an expired certificate: 700027", self.grant(self.assertion(self.expired)), "invalid_client", 700027)
        self.refused("a certificate not yet valid: 700027", self.grant(self.assertion(self.future)), "invalid_client", 700027)
        self.refused("another aud: 700023", self.grant(self.assertion(aud="https://elsewhere.test/token")), "invalid_client", 700023)
        self.refused("exp an hour ahead: 700024", self.grant(self.assertion(exp=int(time.time()) + 3600)), "invalid_client", 700024)
        self.refused("exp in the past: 700024", self.grant(self.assertion(exp=int(time.time()) - 600)), "invalid_client", 700024)
        self.refused("iss and sub another client: 700021", self.grant(self.assertion(iss=MAIL, sub=MAIL)), "invalid_client", 700021)
        self.refused("HS256: 50027", self.grant(self.assertion(alg="HS256")), "invalid_request", 50027)
        self.refused("a wrong client_assertion_type: 50027", self.grant(self.assertion(), client_assertion_type="urn:x"), "invalid_request", 50027)
        self.refused("a secret beside the assertion: 90014", self.grant(self.assertion(), client_secret="x"), "invalid_request", 90014)
        self.refused("an assertion from a public client: 700025", self.grant(self.assertion(iss=MAIL, sub=MAIL), client_id=MAIL),
                     "invalid_client", 700025)
        self.granted("after every refusal, a good assertion still gets a token", self.grant(self.assertion()))
        # An accepted assertion is remembered; it still counts only for its own client and while its certificate is held.
        kept = self.assertion()
        self.granted("an assertion accepted (and so remembered)", self.grant(kept))
        other = self.admin("GET", f"/applications/{OTHER}")
        document = other.json()
        document["keyCredentials"] = [{"key": self.rsa.pem}]
        shared = self.admin("PUT", f"/applications/{OTHER}", document, {"If-Match": other.headers.get("ETag", "*")})
        self.checks.require("another daemon registers the same certificate", shared.status_code == 200, shared.text)
        self.refused("the remembered assertion sent as that other daemon: 700021", self.grant(kept, client_id=OTHER), "invalid_client", 700021)
        current = self.admin("GET", f"/applications/{DAEMON}")
        document = current.json()
        document["keyCredentials"] = [c for c in document["keyCredentials"] if c["thumbprint"] != self.rsa.sha1.hex().upper()]
        removed = self.admin("PUT", f"/applications/{DAEMON}", document, {"If-Match": current.headers.get("ETag", "*")})
        self.checks.require("the certificate is removed from the daemon", removed.status_code == 200, removed.text)
        self.refused("the remembered assertion after its certificate was removed: 700027", self.grant(kept), "invalid_client", 700027)


def main():
    return interop_main(
        "client_assertion_interop", __doc__, ["requests", "cryptography", "jwt"], "requests cryptography pyjwt", prepare_config,
        lambda server, checks, binary, workdir, _: (lambda run: [run.register, run.grant_group, run.refused_group])(
            Run(server, checks, binary, workdir)))


if __name__ == "__main__":
    sys.exit(main())
