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
  federated an OpenID Connect issuer served here over TLS on loopback (its own CA, trusted through
            PORTCULLIS_CALLBACKS_CA_FILE) stands for a Kubernetes cluster: `portcullis app credential add --federated
            ISSUER SUBJECT` registers its service account on a daemon with no secret or certificate; Graph lists, reads,
            creates, updates and deletes federatedIdentityCredentials; the issuer's token is the client assertion → a token
            with the app role (azpacr 2; the sign-in log says federatedIdentityCredential); the same token again, and one
            valid for two hours, are accepted (no jti or ten-minute rules); after the issuer rotates its key, a token
            under the new kid is accepted (keys fetched again). Refused, each an OAuth error and never a 5xx: another
            subject (700213), another audience (700212), an issuer not registered (700211), an expired token (700024),
            another key under the issuer's kid and an unknown kid (700027), a registered issuer whose keys cannot be
            fetched (50166, its address not in the answer); a remembered token after its credential is deleted (700211).
Exit status 0 when every check passes, 1 otherwise, 2 when a prerequisite is missing.
"""

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
from tls_loopback import Certificate, OIDCIssuer, free_port  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DAEMON = "c0ffee00-aaaa-4a2b-8c3d-4e5f6a7b8c0a"
OTHER = "c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02"  # the demo's mail sync daemon
WORKLOAD = "c0ffee00-bbbb-4a2b-8c3d-4e5f6a7b8c0b"
GRAPH_TOOLS = ("c0ffee00-9999-4a2b-8c3d-4e5f6a7b8c09", "graph-tools-dev-secret-change-me")
SERVICE_ACCOUNT = "system:serviceaccount:reports:exporter"
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
        tenant["applications"].append({
            "appId": WORKLOAD, "displayName": "Reports exporter (Kubernetes workload)", "publicClient": False,
            "allowedGrantTypes": ["client_credentials"],
            "requiredResourceAccess": [{"resourceAppId": "api://contoso-mail", "appRoles": ["Mail.ReadAll"]}],
        })
        tenant["appRoleAssignments"].append({"principalId": WORKLOAD, "resource": "api://contoso-mail", "role": "Mail.ReadAll"})
        tenant["appRoleAssignments"].append(
            {"principalId": GRAPH_TOOLS[0], "resource": "https://graph.microsoft.com", "role": "Application.ReadWrite.All"})
        for app in tenant["applications"]:
            if app["appId"] == GRAPH_TOOLS[0]:
                app["requiredResourceAccess"][0]["appRoles"].append("Application.ReadWrite.All")
    return config_with(workdir, edit)


class Run(AdminCaller):
    def __init__(self, server, checks, binary, workdir, issuer):
        import requests
        self.base, self.checks, self.binary, self.workdir, self.issuer = server.base, checks, binary, workdir, issuer
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

    def cli(self, *arguments):
        env = dict(os.environ, PORTCULLIS_AUTHORITY=f"{self.base}/{TENANT}", PORTCULLIS_ADMIN_CLIENT_ID=ADMIN[0],
                   PORTCULLIS_ADMIN_CLIENT_SECRET=ADMIN[1])
        return subprocess.run([self.binary, "app", "credential", "add", *arguments], capture_output=True, text=True, env=env, timeout=60)

    def cli_add(self, path, name):
        return self.cli(DAEMON, "--certificate", path, "--display-name", name)

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


    # ------------------------------------------------------------------------------------------------------------

    def graph(self, method, path, body=None):
        if getattr(self, "graph_token", None) is None:
            self.graph_token = self.session.post(self.token_url, data={
                "grant_type": "client_credentials", "client_id": GRAPH_TOOLS[0], "client_secret": GRAPH_TOOLS[1],
                "scope": "https://graph.microsoft.com/.default"}, timeout=30).json()["access_token"]
        return self.session.request(method, f"{self.base}/v1.0{path}", json=body, headers={"Authorization": "Bearer " + self.graph_token},
                                    timeout=30)

    def federated_grant(self, token, client_id=WORKLOAD):
        return self.grant(token, client_id=client_id)

    def federated_group(self):
        issuer = self.issuer
        done = self.cli(WORKLOAD, "--federated", issuer.issuer, SERVICE_ACCOUNT)
        shown = json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip().startswith("{") else {}
        self.checks.require("`portcullis app credential add --federated ISSUER SUBJECT` registers the service account, audience "
                            "api://AzureADTokenExchange by default",
                            shown.get("issuer") == issuer.issuer and shown.get("subject") == SERVICE_ACCOUNT
                            and shown.get("audiences") == ["api://AzureADTokenExchange"], f"{done.returncode} {done.stdout} {done.stderr}")
        listed = self.graph("GET", f"/applications(appId='{WORKLOAD}')/federatedIdentityCredentials")
        listed = listed if listed.status_code == 200 else self.graph("GET", f"/applications/{WORKLOAD}/federatedIdentityCredentials")
        values = listed.json().get("value", []) if listed.status_code == 200 else []
        self.checks.check("Graph lists the application's federatedIdentityCredentials", len(values) == 1 and
                          values[0].get("subject") == SERVICE_ACCOUNT and values[0].get("name") == shown.get("name"), short(listed.text, 400))
        dead_port = free_port()
        unreachable = f"https://127.0.0.1:{dead_port}"
        made = self.graph("POST", f"/applications/{WORKLOAD}/federatedIdentityCredentials", {
            "name": "unreachable-cluster", "issuer": unreachable, "subject": SERVICE_ACCOUNT, "audiences": ["api://AzureADTokenExchange"],
            "description": "a cluster that is down"})
        self.checks.require("Graph creates a federated credential (201)", made.status_code == 201 and made.json().get("id"), short(made.text, 400))
        patched = self.graph("PATCH", f"/applications/{WORKLOAD}/federatedIdentityCredentials/unreachable-cluster",
                             {"description": "a cluster that cannot be reached"})
        read = self.graph("GET", f"/applications/{WORKLOAD}/federatedIdentityCredentials/{made.json()['id']}")
        self.checks.check("Graph updates it (204) and reads it by ID", patched.status_code == 204 and read.status_code == 200 and
                          read.json().get("description") == "a cluster that cannot be reached", f"{patched.status_code} {short(read.text, 300)}")
        renamed = self.graph("PATCH", f"/applications/{WORKLOAD}/federatedIdentityCredentials/unreachable-cluster", {"name": "other"})
        bad = self.graph("POST", f"/applications/{WORKLOAD}/federatedIdentityCredentials", {
            "name": "x", "issuer": "http://cluster.test", "subject": SERVICE_ACCOUNT, "audiences": ["a", "b"]})
        self.checks.check("Graph refuses a rename, a short name, an http issuer and two audiences, each at its pointer",
                          renamed.status_code == 400 and bad.status_code == 400 and
                          {"/name", "/issuer", "/audiences"} <= {d.get("target") or d.get("pointer") for d in
                                                                 bad.json().get("error", {}).get("details", [])},
                          f"{renamed.status_code} {short(renamed.text, 200)} {bad.status_code} {short(bad.text, 400)}")

        first = issuer.token(SERVICE_ACCOUNT)
        reply = self.federated_grant(first)
        body = reply.json() if reply.status_code == 200 else {}
        import jwt
        claims = jwt.decode(body["access_token"], options={"verify_signature": False}) if "access_token" in body else {}
        self.checks.check("the issuer's token as the client assertion: a token with the app role, azpacr 2",
                          reply.status_code == 200 and claims.get("azp") == WORKLOAD and "Mail.ReadAll" in claims.get("roles", [])
                          and claims.get("azpacr") == "2", f"{reply.status_code} {short(reply.text, 400)}")
        self.checks.check("the same token again: accepted (it is the issuer's, with no jti rule)", self.federated_grant(first).status_code == 200)
        two_hours = self.federated_grant(issuer.token(SERVICE_ACCOUNT, lifetime=7200))
        self.checks.check("a token valid for two hours: accepted (no ten-minute rule)", two_hours.status_code == 200, short(two_hours.text, 300))
        deadline, found = time.time() + 10, []
        while time.time() < deadline and not found:
            records = self.admin("GET", f"/sign-ins?app={WORKLOAD}").json().get("value", [])
            found = [r for r in records if r.get("clientCredentialType") == "federatedIdentityCredential"]
            time.sleep(0.25)
        self.checks.check("the sign-in log records clientCredentialType federatedIdentityCredential", found, records if not found else None)

        self.refused("another subject: 700213", self.federated_grant(issuer.token("system:serviceaccount:reports:other")),
                     "invalid_client", 700213)
        self.refused("another audience: 700212", self.federated_grant(issuer.token(SERVICE_ACCOUNT, audience="api://elsewhere")),
                     "invalid_client", 700212)
        self.refused("an issuer not registered: 700211",
                     self.federated_grant(issuer.token(SERVICE_ACCOUNT, issuer="https://cluster.elsewhere.test")), "invalid_client", 700211)
        self.refused("an expired token: 700024", self.federated_grant(issuer.token(SERVICE_ACCOUNT, lifetime=-600)), "invalid_client", 700024)
        from cryptography.hazmat.primitives.asymmetric import rsa
        forged = issuer.token(SERVICE_ACCOUNT, key=rsa.generate_private_key(public_exponent=65537, key_size=2048))
        self.refused("signed by another key under the issuer's kid: 700027", self.federated_grant(forged), "invalid_client", 700027)
        self.refused("a kid the issuer does not publish: 700027", self.federated_grant(issuer.token(SERVICE_ACCOUNT, kid="not-published")),
                     "invalid_client", 700027)
        down = self.federated_grant(issuer.token(SERVICE_ACCOUNT, issuer=unreachable))
        self.refused("a registered issuer whose keys cannot be fetched: 50166", down, "invalid_client", 50166)
        self.checks.check("... its answer names no address", str(dead_port) not in down.text, short(down.text, 300))
        self.checks.check("after every refusal, the issuer's token still gets a token",
                          self.federated_grant(issuer.token(SERVICE_ACCOUNT)).status_code == 200)
        # A rotation: the issuer publishes a new key; a token under its kid makes the server fetch the keys again (at
        # most every 10 s, so wait until 10 s have passed since the last fetch).
        issuer.rotate()
        time.sleep(max(0.0, (issuer.jwks_fetches[-1] if issuer.jwks_fetches else 0) + 10.5 - time.time()))
        rotated = self.federated_grant(issuer.token(SERVICE_ACCOUNT))
        self.checks.check("after the issuer rotates its key, a token under the new kid is accepted (keys fetched again)",
                          rotated.status_code == 200, short(rotated.text, 300))
        kept = issuer.token(SERVICE_ACCOUNT)
        self.checks.require("a token accepted (and so remembered)", self.federated_grant(kept).status_code == 200)
        gone = self.graph("DELETE", f"/applications/{WORKLOAD}/federatedIdentityCredentials/{shown.get('name')}")
        self.checks.require("Graph deletes the cluster's credential (204)", gone.status_code == 204, short(gone.text, 300))
        self.refused("the remembered token after its credential was deleted: 700211", self.federated_grant(kept), "invalid_client", 700211)


def main():
    def start_issuer(workdir):
        issuer = OIDCIssuer(workdir)
        os.environ.update({"PORTCULLIS_CALLBACKS_ALLOW_LOOPBACK": "1", "PORTCULLIS_CALLBACKS_CA_FILE": issuer.ca_path})
        return issuer

    return interop_main(
        "client_assertion_interop", __doc__, ["requests", "cryptography", "jwt"], "requests cryptography pyjwt", prepare_config,
        lambda server, checks, binary, workdir, issuer: (lambda run: [run.register, run.grant_group, run.refused_group, run.federated_group])(
            Run(server, checks, binary, workdir, issuer)), before_start=start_issuer, after_stop=lambda issuer: issuer.stop())


if __name__ == "__main__":
    sys.exit(main())
