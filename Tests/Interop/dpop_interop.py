#!/usr/bin/env python3
"""DPoP (RFC 9449, PROTOCOL §15) against a real Portcullis binary, driven by requests-oauth2client's DPoP support: the
token server (`portcullis serve`) and the resource side (`portcullis gateway`, PROTOCOL §14.3).

    python3 Tests/Interop/dpop_interop.py [--binary .build/debug/portcullis] [--keep]

Needs `python3 -m pip install requests-oauth2client` (it brings jwskate, used here to craft broken proofs), and `cc` for
the wall-clock shim of the gateway's exp/nbf checks (Tests/Interop/clockshift.c, as scripts/msal-interop builds it).

What it does
  setup   a temporary copy of Config/ plus one extra confidential application that sets `requireDPoP`, fresh data and
          keys directories, a free port; `portcullis serve` until /health/ready.
  checks  (each printed as PASS/FAIL with what was expected and what came back)
          - the RFC 7638 thumbprint helper of this script (hashlib + base64url over the required members, not the
            library's helper) reproduces the RFC 7638 §3.1 example; every `cnf.jkt` below is compared with it,
            computed from the `jwk` of the proof that actually went over the wire;
          - discovery publishes dpop_signing_alg_values_supported = ES256, RS256, EdDSA;
          - client_credentials (daemon app) with DPoPKey.generate("ES256"): the library's first proof has no nonce, the
            server answers 400 use_dpop_nonce (9002351) with DPoP-Nonce, the library retries with that nonce (the
            proof checked with the library's validate_dpop_proof), 200 with DPoP-Nonce, token_type DPoP, an access
            token signed by a key of the JWKS whose cnf.jkt is the proof key's thumbprint; the same with RS256 and
            EdDSA keys (RSA and OKP thumbprint members);
          - password grant (public mail app, Erin, who no CA/app-protection policy stops) with the same nonce dance,
            then refresh_token with the same key (one request, the nonce it was given): DPoP, same cnf.jkt;
          - the public client's refresh token is bound: without a proof, and with a valid proof by another key, 400
            invalid_dpop_proof 9002353; the same token still redeems with the right key afterwards (nothing consumed);
          - a confidential client's refresh token (admin CLI app, password grant with DPoP) is not bound: it refreshes
            without a proof (Bearer) and with another key (DPoP, cnf.jkt of that key);
          - authorization code: requests-oauth2client's authorization request with dpop_key (dpop_jkt in the URL),
            the sign-in page driven with requests + form parsing, the code redeemed without a proof and with another
            key (both 9002353), then by the library with the bound key (DPoP, cnf.jkt, ID token validated by the
            library); the refresh token from the code flow is bound too;
          - a proof replayed byte for byte: 200 then 400 invalid_dpop_proof (9002350);
          - a proof whose htu names another URL (the introspection endpoint; the token endpoint by domain while the
            request goes to the one by tenant ID): 9002350; the domain-form URL with its own htu is accepted;
          - other broken proofs: htm GET, iat 5 minutes old, private key members in jwk, typ JWT, alg HS256, a
            signature by another key, two DPoP headers: 9002350; an unknown nonce: use_dpop_nonce + DPoP-Nonce;
          - an application with requireDPoP: without a proof 9002352, with one a DPoP token;
          - introspection by the resource (the mail API) of the DPoP access token: token_type DPoP and cnf.jkt; of a
            bearer token: token_type Bearer, no cnf.
          Every error is checked for its Microsoft shape: `error`, `error_codes` [n], `error_description` "AADSTSn: ...".
  gateway (the resource side) an echoing upstream in this process (http.server in a thread: method, path, query, body and
          every header field back as JSON, plus `X-Upstream` and two `X-Multi` fields, `?status=N`), and `portcullis
          gateway --upstream it --authority {server}/contoso.example --audience <the mail API's appId from
          Config/directory.json> --audience api://contoso-mail --public-url http://127.0.0.1:port`, with clockshift.so
          preloaded; until it prints "gateway listening on". Refusals are parsed with an RFC 9110 §11.6.1 challenge
          parser of this script (requests-oauth2client has none: its DPoPToken only tests whether WWW-Authenticate starts
          with "DPoP"), itself checked first on RFC examples and malformed values; every refusal must be a 401 that did
          not reach the upstream with exactly one challenge, a DPoP one per RFC 9449 §7.1 (`algs` of JWS algs including
          ES256, `error`, `error_description` in RFC 6749's character set), a Bearer one with realm and authorization_uri.
          - no Authorization, and `Basic`: two challenges, `Bearer realm="", authorization_uri=<the authority's authorize
            endpoint>` and `DPoP algs="..."`, without error; an authorization request (library-built) at that
            authorization_uri shows the sign-in form;
          - a bearer client_credentials token (daemon app, library BearerToken auth), POST with a query and a JSON body
            and spoofed X-Portcullis-Subject/-Roles/-Token-Binding/-Evil: 200; the upstream got method, path, query,
            body, the client's other headers, exactly the X-Portcullis-* headers of the token's signature-checked claims
            (Subject, Tenant-Id, Client-Id = the daemon, Token-Id, Token-Binding bearer, Roles Mail.ReadAll, ...), once
            each, no Authorization; the upstream's body and headers come back, and a 418 to a DELETE with both X-Multi;
            hop-by-hop fields (Connection, Keep-Alive, TE and a field named by Connection, RFC 9110 §7.6.1) not forwarded;
            the bearer token presented as DPoP with a valid proof: DPoP invalid_token;
          - DPoP-bound tokens through the library's DPoPToken auth (Authorization: DPoP + a proof with ath, which passes
            the library's validate_dpop_proof for GET, the URL without its query, and ath): ES256 (a percent-encoded
            path with a query; then a PATCH with a body and a new proof), RS256, EdDSA: 200, Token-Binding dpop, neither
            Authorization nor DPoP upstream; Erin's delegated DPoP token (password grant, public mail app): User,
            Scopes (Mail.Read), Object-Id, no Roles;
          - the bound token stolen and sent as Bearer: `DPoP error="invalid_token"`; a hand-made proof by the bound key:
            200, the same headers again (replayed proof): invalid_dpop_proof; likewise invalid_dpop_proof for no DPoP
            header, a valid proof by another key, no ath, the ath of another token, htm POST on a GET, htu of another
            path, htu of another origin (sent with that Host: htu comes from --public-url), iat 5 minutes old, a
            signature by another key than its jwk, no jti, two DPoP headers; the library's DPoPToken with a key other
            than the bound one gets the 401 invalid_dpop_proof without DPoP-Nonce (requests-oauth2client 1.8 then
            raises MissingDPoPNonce, as it reads every DPoP challenge as a nonce request);
          - invalid_token (Bearer challenge): the admin API token (api://portcullis-admin/.default, admin CLI app: another
            aud), a payload changed under the same signature, a changed signature, alg none, a bound token with cnf
            removed, not-a-jwt;
          - the gateway's clock moved (clockshift): 30 s after exp and 30 s before nbf accepted, 90 s refused.
Exit status 0 when every check passes, 1 otherwise (the server's and the gateway's log tails are printed), 2 when a
prerequisite is missing.
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import uuid

from pageform import PageForm

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TENANT = "contoso.example"
TENANT_ID = "7e1b0c54-2f6a-4c1e-9d3b-5a8f0e2c4b71"
DAEMON = ("c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02", "daemon-dev-secret-change-me")  # client_credentials, api://contoso-mail
ADMIN = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")  # confidential: password + refresh_token
MAIL_API = ("c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04", "mail-api-dev-secret-change-me")  # the resource (introspects)
MAIL = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"  # public: authorization_code, password, refresh_token
STRICT = ("c0ffee00-9999-4a2b-8c3d-4e5f6a7b8c99", "dpop-only-secret")  # added to the copy of the directory: requireDPoP
USER = ("erin@contoso.example", "Erin-dev-pass1")  # excluded from the app-protection CA policy, in no targeted group
MAIL_SCOPE = "api://contoso-mail/Mail.Read openid profile offline_access"
DAEMON_SCOPE = "api://contoso-mail/.default"
ADMIN_SCOPE = "api://portcullis-admin/Admin.ReadWrite offline_access"
REDIRECT = "http://localhost:8400/"  # registered as http://localhost (any port); nothing listens: the Location is read
TIMEOUT = (10, 30)

# RFC 7638 §3.1: the RSA key of RFC 7517 Appendix A.1 and its thumbprint.
RFC7638_EXAMPLE = {
    "kty": "RSA", "e": "AQAB", "alg": "RS256", "kid": "2011-04-29",
    "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3o"
         "knjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6"
         "qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJ"
         "zKnqDKgw",
}
RFC7638_EXAMPLE_THUMBPRINT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


# ---------------------------------------------------------------------------------------------------------------
# Bookkeeping


class Abort(Exception):
    """A prerequisite of the rest of a group failed (already recorded as a FAIL)."""


class Checks:
    def __init__(self):
        self.passed = []
        self.failed = []

    def check(self, name, ok, got=None, note=None):
        """Records one check; prints PASS (with `note`) or FAIL (with `got`). Returns whether it passed."""
        if ok:
            self.passed.append(name)
            print(f"PASS {name}" + (f"  ({note})" if note else ""), flush=True)
        else:
            self.failed.append(name)
            print(f"FAIL {name}" + ("" if got is None else f"\n     got: {short(got)}"), flush=True)
        return bool(ok)

    def require(self, name, ok, got=None, note=None):
        if not self.check(name, ok, got, note):
            raise Abort(name)


def prerequisites(name, binary, modules, install):
    """The binary's absolute path when it is built and `modules` import; else None, with what to do on stderr (exit 2)."""
    import importlib
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            print(f"{name}: {error}; install with: python3 -m pip install {install}", file=sys.stderr)
            return None
    path = os.path.abspath(binary)
    if not os.access(path, os.X_OK):
        print(f"{name}: no executable at {path} (build it, or pass --binary PATH)", file=sys.stderr)
        return None
    return path


def run_groups(checks, groups):
    """Runs the groups of checks in order; the first that aborts or raises ends the run (recorded as a FAIL)."""
    for group in groups:
        name = getattr(group, "__name__", "group")
        try:
            group()
        except Abort as abort:
            print(f"     ({name}: the rest was not run after {abort})", flush=True)
            break
        except Exception:
            checks.check(f"{name} ran to the end", False, traceback.format_exc())
            break


def config_with(workdir, edit):
    """Config/ copied into `workdir`, the demo tenant's part of directory.json changed by `edit(tenant)`; the copy's path."""
    config = os.path.join(workdir, "config")
    shutil.copytree(os.path.join(REPO, "Config"), config)
    path = os.path.join(config, "directory.json")
    with open(path) as f:
        directory = json.load(f)
    edit(next(t for t in directory["tenants"] if t["domain"] == TENANT))
    with open(path, "w") as f:
        json.dump(directory, f, indent=2)
    return config


def interop_main(name, description, modules, install, prepare, groups, before_start=None, after_stop=None):
    """The shape every interop script's main shares: --binary and --keep; the prerequisites; a server on a free port with
    the configuration `prepare(workdir)` makes; the groups `groups(server, checks, binary, workdir, extra)` returns, run in
    order (`extra` is what `before_start(workdir)` made, stopped by `after_stop(extra)`); the server's log tail when a
    check failed; a summary line. Exit status 0, 1 when a check failed, 2 when a prerequisite is missing."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/debug/portcullis"), help="the portcullis binary")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (config, data, keys, server.log)")
    args = parser.parse_args()
    binary = prerequisites(name, args.binary, modules, install)
    if binary is None:
        return 2
    workdir = tempfile.mkdtemp(prefix=f"portcullis-{name}.")
    extra = before_start(workdir) if before_start else None
    server = Server(binary, workdir, free_port())
    checks = Checks()
    try:
        ready = server.start(prepare(workdir))
        print(f"{name}: server {server.base} ready in {ready:.1f} s ({binary})", flush=True)
        run_groups(checks, groups(server, checks, binary, workdir, extra))
    finally:
        server.stop()
        if after_stop:
            after_stop(extra)
        if checks.failed:
            print(server.tail(40))
        if args.keep:
            print(f"{name}: kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{name}: {len(checks.passed)} passed, {len(checks.failed)} failed")
    return 1 if checks.failed else 0


def short(value, limit=1200):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_parts(token):
    header, payload, _ = token.split(".")
    return json.loads(b64url_decode(header)), json.loads(b64url_decode(payload))


THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


def thumbprint(jwk):
    """RFC 7638: SHA-256 over the required members, lexicographic order, no whitespace; base64url without padding."""
    members = {name: jwk[name] for name in THUMBPRINT_MEMBERS[jwk["kty"]]}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def proof_jkt(proof):
    """The thumbprint of the public key a proof carries in its header (what went over the wire)."""
    return thumbprint(jwt_parts(proof)[0]["jwk"])


def body_of(response):
    try:
        return response.json()
    except ValueError:
        return {"_status": response.status_code, "_text": response.text[:400]}


def error_shape(response, status, error, code):
    """Whether `response` is the Microsoft-shaped error (status, error, error_codes [code], 'AADSTS<code>: ...')."""
    body = body_of(response)
    return (response.status_code == status and body.get("error") == error and body.get("error_codes") == [code]
            and str(body.get("error_description", "")).startswith(f"AADSTS{code}:"))


def shown(response):
    body = body_of(response)
    keep = {k: body.get(k) for k in ("error", "error_codes", "error_description", "token_type") if k in body}
    return {"status": response.status_code, "DPoP-Nonce": response.headers.get("DPoP-Nonce"), **(keep or {"body": body})}


# ---------------------------------------------------------------------------------------------------------------
# The server process


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare_config(workdir):
    """Config/ copied, plus an application that requires DPoP on every token request (PROTOCOL §15 `requireDPoP`)."""
    config = os.path.join(workdir, "config")
    shutil.copytree(os.path.join(REPO, "Config"), config)
    path = os.path.join(config, "directory.json")
    with open(path) as f:
        directory = json.load(f)
    tenant = next(t for t in directory["tenants"] if t["domain"] == TENANT)
    tenant["applications"].append({
        "appId": STRICT[0], "displayName": "DPoP-only daemon (dpop_interop)", "publicClient": False,
        "secrets": [{"secret": STRICT[1]}], "allowedGrantTypes": ["client_credentials"], "requireDPoP": True,
        "requiredResourceAccess": [{"resourceAppId": "api://contoso-mail", "appRoles": ["Mail.ReadAll"]}],
    })
    tenant["appRoleAssignments"].append({"principalId": STRICT[0], "resource": "api://contoso-mail", "role": "Mail.ReadAll"})
    with open(path, "w") as f:
        json.dump(directory, f, indent=2)
    return config


class LoggedProcess:
    """A child `portcullis` process with its output in a log file: started until the log says `needle`, stopped with
    SIGTERM (SIGKILL after `grace` seconds)."""

    def __init__(self, binary, log_path, what):
        self.binary, self.log_path, self.what = binary, log_path, what
        self.process = None

    def launch(self, arguments, needle, timeout, env=None, cwd=None):
        started = time.monotonic()
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [self.binary, *arguments], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError("the %s exited with status %s during start-up:\n%s" % (self.what, self.process.returncode, self.tail()))
            with open(self.log_path, errors="replace") as f:
                if needle in f.read():
                    return started
            time.sleep(0.05)
        raise RuntimeError("the %s did not print %r within %d s:\n%s" % (self.what, needle, timeout, self.tail()))

    def stop(self, grace=15):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self, lines=30):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"


class Server(LoggedProcess):
    def __init__(self, binary, workdir, port):
        super().__init__(binary, os.path.join(workdir, "server.log"), "server")
        self.workdir, self.port = workdir, port
        self.base = "http://127.0.0.1:%d" % port

    def start(self, config, timeout=60):
        import requests
        env = dict(os.environ, PORTCULLIS_BCRYPT_COST="4")
        started = self.launch(
            ["serve", "--config", config, "--data", os.path.join(self.workdir, "data"), "--keys", os.path.join(self.workdir, "keys"),
             "--host", "127.0.0.1", "--port", str(self.port)],
            "Portcullis is listening on %s" % self.base, timeout, env=env, cwd=self.workdir)
        while time.monotonic() - started < timeout:  # and is ready (store reachable, keys loaded)
            try:
                if requests.get(self.base + "/health/ready", timeout=5).status_code == 200:
                    return time.monotonic() - started
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError("the server did not become ready within %d s:\n%s" % (timeout, self.tail()))


# ---------------------------------------------------------------------------------------------------------------
# The run


class RecordingSession:
    """A requests.Session for OAuth2Client that keeps every response (and so the request and its DPoP header)."""

    def __init__(self):
        import requests
        self.session = requests.Session()
        self.session.trust_env = False
        self.exchanges = []
        self.session.hooks["response"].append(lambda response, *args, **kwargs: self.exchanges.append(response))

    def mark(self):
        return len(self.exchanges)

    def since(self, mark):
        return self.exchanges[mark:]


class Run:
    def __init__(self, base, checks):
        import requests
        import jwskate
        from requests_oauth2client import OAuth2Client
        self.requests, self.jwskate, self.OAuth2Client = requests, jwskate, OAuth2Client
        self.base = base
        self.c = checks
        self.http = requests.Session()
        self.http.trust_env = False
        self.recorder = RecordingSession()
        self.discovery = self.http.get(f"{base}/{TENANT}/v2.0/.well-known/openid-configuration", timeout=TIMEOUT).json()
        self.jwks = jwskate.JwkSet(self.http.get(self.discovery["jwks_uri"], timeout=TIMEOUT).json())
        self.token_endpoint = self.discovery["token_endpoint"]
        self.nonce = None  # the last DPoP-Nonce the server handed out

    # -- helpers -----------------------------------------------------------------------------------------------

    def client(self, auth=None, client_id=None, **kwargs):
        kwargs.setdefault("session", self.recorder.session)
        if auth is not None:
            return self.OAuth2Client(self.token_endpoint, auth=auth, testing=True, **kwargs)
        return self.OAuth2Client(self.token_endpoint, client_id=client_id, testing=True, **kwargs)

    def post(self, data, proofs=(), auth=None, url=None):
        headers = {"DPoP": proofs[0]} if len(proofs) == 1 else {}
        response = self.http.post(url or self.token_endpoint, data=data, auth=auth, headers=headers, timeout=TIMEOUT)
        if response.headers.get("DPoP-Nonce"):
            self.nonce = response.headers["DPoP-Nonce"]
        return response

    def fresh_nonce(self, key):
        """A server nonce, learned as a client does: a proof without one (400 use_dpop_nonce + DPoP-Nonce)."""
        if self.nonce is None:
            answer = self.post(dict(grant_type="client_credentials", client_id=DAEMON[0], client_secret=DAEMON[1], scope=DAEMON_SCOPE),
                               [str(key.proof("POST", self.token_endpoint))])
            self.c.require("a proof without a nonce gets 400 use_dpop_nonce 9002351 with a DPoP-Nonce header",
                           error_shape(answer, 400, "use_dpop_nonce", 9002351) and self.nonce, shown(answer))
        return self.nonce

    def proof(self, key, htu=None, htm="POST", nonce=...):
        return str(key.proof(htm, htu or self.token_endpoint, nonce=self.fresh_nonce(key) if nonce is ... else nonce))

    def verified_claims(self, token):
        """The access token's claims, after checking its signature with the tenant's JWKS (so its cnf is the server's)."""
        header, claims = jwt_parts(token)
        key = self.jwks.get_jwk_by_kid(header["kid"])
        if not self.jwskate.SignedJwt(token).verify_signature(key, alg=header["alg"]):
            raise AssertionError("the access token's signature does not verify with the JWKS")
        return claims

    def check_cnf(self, name, access_token, jkt):
        try:
            claims = self.verified_claims(access_token)
        except Exception as error:  # noqa: BLE001 (reported as the check's failure)
            return self.c.check(name, False, f"{type(error).__name__}: {error}")
        cnf = claims.get("cnf")
        return self.c.check(name, isinstance(cnf, dict) and cnf.get("jkt") == jkt,
                            {"expected cnf.jkt": jkt, "cnf": cnf, "claims": sorted(claims)}, note=f"cnf.jkt {jkt}")

    def check_nonce_dance(self, name, exchanges, alg):
        """requests-oauth2client's nonce retry, seen on the wire: proof without nonce → 400 use_dpop_nonce + DPoP-Nonce →
        proof with that nonce → 200 (+ DPoP-Nonce). Returns the proof of the successful request."""
        from requests_oauth2client.dpop import validate_dpop_proof
        calls = [(r.status_code, r.request.headers.get("DPoP"), r) for r in exchanges]
        got = [{"status": s, "proof nonce": p and jwt_parts(p)[1].get("nonce"), "DPoP-Nonce": r.headers.get("DPoP-Nonce"),
                "error": body_of(r).get("error")} for s, p, r in calls]
        ok = (len(calls) == 2 and calls[0][1] and calls[1][1] and "nonce" not in jwt_parts(calls[0][1])[1]
              and error_shape(calls[0][2], 400, "use_dpop_nonce", 9002351) and calls[0][2].headers.get("DPoP-Nonce")
              and jwt_parts(calls[1][1])[1].get("nonce") == calls[0][2].headers["DPoP-Nonce"]
              and calls[1][0] == 200 and calls[1][2].headers.get("DPoP-Nonce"))
        self.c.require(name, ok, got, note="first proof without nonce → 400 use_dpop_nonce 9002351 + DPoP-Nonce → retried with it → 200 + DPoP-Nonce")
        proof = calls[1][1]
        try:  # the client side is spec-conformant too, so that a refusal could not be blamed on the library
            validate_dpop_proof(proof, htm="POST", htu=self.token_endpoint, nonce=calls[0][2].headers["DPoP-Nonce"], alg=alg)
            problem = None
        except Exception as error:  # noqa: BLE001
            problem = f"{type(error).__name__}: {error}"
        self.c.check(f"{name}: the retried proof passes the library's validate_dpop_proof (htm, htu, nonce, {alg})",
                     problem is None, problem)
        self.nonce = calls[1][2].headers["DPoP-Nonce"]
        return proof

    def expect_error(self, name, response, status, error, code):
        return self.c.check(name, error_shape(response, status, error, code), shown(response), note=f"{status} {error} {code}")

    # -- the groups ----------------------------------------------------------------------------------------------

    def thumbprint_helper(self):
        self.c.check("RFC 7638 thumbprint helper reproduces the RFC 7638 §3.1 example",
                     thumbprint(RFC7638_EXAMPLE) == RFC7638_EXAMPLE_THUMBPRINT, thumbprint(RFC7638_EXAMPLE))

    def discovery_metadata(self):
        algs = self.discovery.get("dpop_signing_alg_values_supported")
        self.c.check("discovery: dpop_signing_alg_values_supported = ES256, RS256, EdDSA",
                     isinstance(algs, list) and sorted(algs) == ["ES256", "EdDSA", "RS256"], algs, note=str(algs))

    def client_credentials(self):
        from requests_oauth2client import DPoPKey, DPoPToken
        key = DPoPKey.generate("ES256")
        client = self.client(auth=DAEMON)
        mark = self.recorder.mark()
        token = client.client_credentials(DAEMON_SCOPE, dpop=True, dpop_key=key)
        proof = self.check_nonce_dance("client_credentials: nonce retry by requests-oauth2client", self.recorder.since(mark), "ES256")
        jkt = proof_jkt(proof)
        self.c.check("client_credentials: the proof's key is the DPoPKey (library dpop_jkt = thumbprint computed here)",
                     key.dpop_jkt == jkt == thumbprint(key.public_jwk.to_dict()), [key.dpop_jkt, jkt])
        self.c.check("client_credentials: token_type DPoP", isinstance(token, DPoPToken) and token.token_type == "DPoP",
                     [type(token).__name__, token.token_type])
        self.check_cnf("client_credentials: access token cnf.jkt = RFC 7638 thumbprint of the proof key", token.access_token, jkt)
        for alg in ("RS256", "EdDSA"):
            other = DPoPKey.generate(alg)
            mark = self.recorder.mark()
            token = client.client_credentials(DAEMON_SCOPE, dpop=True, dpop_key=other)
            sent = [r.request.headers.get("DPoP") for r in self.recorder.since(mark)][-1]
            self.c.check(f"client_credentials with an {alg} key (kty {jwt_parts(sent)[0]['jwk']['kty']}): token_type DPoP",
                         token.token_type == "DPoP" and jwt_parts(sent)[0]["alg"] == alg, token.token_type)
            self.check_cnf(f"client_credentials with an {alg} key: cnf.jkt = its thumbprint", token.access_token, proof_jkt(sent))

    def password_and_refresh(self):
        from requests_oauth2client import DPoPKey, DPoPToken
        key = DPoPKey.generate("ES256")
        public = self.client(client_id=MAIL)
        mark = self.recorder.mark()
        token = public.resource_owner_password(USER[0], USER[1], scope=MAIL_SCOPE, dpop=True, dpop_key=key)
        proof = self.check_nonce_dance("password (public client): nonce retry by requests-oauth2client", self.recorder.since(mark), "ES256")
        jkt = proof_jkt(proof)
        self.c.require("password (public client): token_type DPoP with a refresh token",
                       isinstance(token, DPoPToken) and token.token_type == "DPoP" and token.refresh_token,
                       [token.token_type, bool(token.refresh_token)])
        self.check_cnf("password (public client): cnf.jkt = thumbprint of the proof key", token.access_token, jkt)

        mark = self.recorder.mark()
        refreshed = public.refresh_token(token)  # a DPoPToken: the library proves with its key
        calls = self.recorder.since(mark)
        sent = calls[-1].request.headers.get("DPoP") if calls else None
        self.c.require("refresh_token with the same key (library): 200, token_type DPoP, one request with the nonce it was given",
                       isinstance(refreshed, DPoPToken) and refreshed.token_type == "DPoP" and refreshed.refresh_token
                       and len(calls) == 1 and calls[0].status_code == 200 and sent
                       and key.as_nonce and jwt_parts(sent)[1].get("nonce") == key.as_nonce,
                       [[shown(r) for r in calls], refreshed.token_type])
        self.check_cnf("refresh_token with the same key: cnf.jkt unchanged", refreshed.access_token, jkt)
        self.nonce = calls[-1].headers.get("DPoP-Nonce") or self.nonce

        form = dict(grant_type="refresh_token", client_id=MAIL, refresh_token=refreshed.refresh_token)
        self.expect_error("public client's bound refresh token without a proof → invalid_dpop_proof 9002353",
                          self.post(form), 400, "invalid_dpop_proof", 9002353)
        self.expect_error("public client's bound refresh token with another key's valid proof → invalid_dpop_proof 9002353",
                          self.post(form, [self.proof(DPoPKey.generate("ES256"))]), 400, "invalid_dpop_proof", 9002353)
        again = self.post(form, [self.proof(key)])
        self.c.check("the same refresh token then redeems with the bound key (the refusals consumed nothing)",
                     again.status_code == 200 and body_of(again).get("token_type") == "DPoP", shown(again))

    def confidential_refresh(self):
        from requests_oauth2client import DPoPKey
        key = DPoPKey.generate("ES256")
        admin = self.client(auth=ADMIN)
        token = admin.resource_owner_password(USER[0], USER[1], scope=ADMIN_SCOPE, dpop=True, dpop_key=key)
        self.c.require("password (confidential client) with DPoP: token_type DPoP with a refresh token",
                       token.token_type == "DPoP" and token.refresh_token, [token.token_type, bool(token.refresh_token)])
        self.nonce = key.as_nonce or self.nonce
        form = dict(grant_type="refresh_token", client_id=ADMIN[0], client_secret=ADMIN[1], refresh_token=token.refresh_token)
        bare = self.post(form)
        self.c.require("confidential client's refresh token is not key-bound: refreshes without a proof (Bearer)",
                       bare.status_code == 200 and body_of(bare).get("token_type") == "Bearer", shown(bare))
        other = DPoPKey.generate("ES256")
        form["refresh_token"] = body_of(bare)["refresh_token"]
        proof = self.proof(other)
        moved = self.post(form, [proof])
        self.c.require("confidential client's refresh token with another key: 200, token_type DPoP",
                       moved.status_code == 200 and body_of(moved).get("token_type") == "DPoP", shown(moved))
        self.check_cnf("confidential client's refresh with another key: cnf.jkt = that key's thumbprint",
                       body_of(moved)["access_token"], proof_jkt(proof))

    def authorization_code(self):
        from requests_oauth2client import BearerToken, DPoPKey, DPoPToken
        key = DPoPKey.generate("ES256")
        client = self.OAuth2Client.from_discovery_document(
            self.discovery, client_id=MAIL, redirect_uri=REDIRECT, authorization_server_jwks=self.jwks, testing=True,
            session=self.recorder.session, id_token_signed_response_alg=self.discovery["id_token_signing_alg_values_supported"][0])
        request = client.authorization_request(scope=MAIL_SCOPE, dpop=True, dpop_key=key, login_hint=USER[0])
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(str(request.uri)).query))
        jkt = thumbprint(key.public_jwk.to_dict())
        self.c.require("authorization request (library): dpop_jkt = thumbprint of the DPoP key, PKCE S256",
                       query.get("dpop_jkt") == jkt and query.get("code_challenge_method") == "S256", query)

        browser = self.requests.Session()
        browser.trust_env = False
        page = browser.get(str(request.uri), allow_redirects=False, timeout=TIMEOUT)
        form = PageForm(page.text)
        self.c.require("authorize with dpop_jkt shows the sign-in page (a form with a CSRF token)",
                       page.status_code == 200 and form.action and form.fields.get("csrf"),
                       [page.status_code, page.headers.get("Location"), page.text[:500]])
        fields = dict(form.fields, username=USER[0], password=USER[1])
        action = form.action if form.action.startswith("http") else self.base + form.action
        answer = browser.post(action, data=fields, allow_redirects=False, timeout=TIMEOUT)
        location = answer.headers.get("Location", "")
        self.c.require("sign-in page → 302 to the app's redirect URI with a code",
                       answer.status_code == 302 and location.startswith(REDIRECT) and "code=" in location,
                       [answer.status_code, location, answer.text[:500]])
        response = request.validate_callback(location)  # state checked by the library; carries the DPoP key

        form = dict(grant_type="authorization_code", client_id=MAIL, code=response.code, redirect_uri=REDIRECT,
                    code_verifier=response.code_verifier)
        self.expect_error("code bound by dpop_jkt, redeemed without a proof → invalid_dpop_proof 9002353",
                          self.post(form), 400, "invalid_dpop_proof", 9002353)
        self.expect_error("code bound by dpop_jkt, redeemed with another key's valid proof → invalid_dpop_proof 9002353",
                          self.post(form, [self.proof(DPoPKey.generate("ES256"))]), 400, "invalid_dpop_proof", 9002353)

        mark = self.recorder.mark()
        token = client.authorization_code(response, validate=False)  # see below for the ID token
        sent = [r.request.headers.get("DPoP") for r in self.recorder.since(mark)]
        self.c.require("authorization_code (library, the bound key): token_type DPoP with ID and refresh tokens",
                       isinstance(token, DPoPToken) and token.token_type == "DPoP" and token.id_token and token.refresh_token
                       and sent and sent[-1] and proof_jkt(sent[-1]) == jkt,
                       [[shown(r) for r in self.recorder.since(mark)], token.token_type])
        self.check_cnf("authorization_code: cnf.jkt = the dpop_jkt of the authorization request", token.access_token, jkt)
        # requests-oauth2client 1.8's validate_id_token rebuilds a DPoPToken without its key (TypeError): the ID token
        # is validated by the same library code on a Bearer-typed copy (signature by the JWKS, iss, aud, azp, exp, nonce).
        try:
            BearerToken(access_token=token.access_token, token_type="Bearer", id_token=str(token.id_token),
                        expires_at=token.expires_at).validate_id_token(client, response)
            self.c.check("authorization_code: ID token validated by requests-oauth2client (signature, iss, aud, nonce)", True)
        except Exception as error:  # noqa: BLE001
            self.c.check("authorization_code: ID token validated by requests-oauth2client (signature, iss, aud, nonce)", False,
                         f"{type(error).__name__}: {error}")
        self.nonce = key.as_nonce or self.nonce
        self.expect_error("refresh token from the bound code, without a proof → invalid_dpop_proof 9002353",
                          self.post(dict(grant_type="refresh_token", client_id=MAIL, refresh_token=token.refresh_token)),
                          400, "invalid_dpop_proof", 9002353)

    def replay_and_htu(self):
        from requests_oauth2client import DPoPKey
        key = DPoPKey.generate("ES256")
        form = dict(grant_type="client_credentials", client_id=DAEMON[0], client_secret=DAEMON[1], scope=DAEMON_SCOPE)
        proof = self.proof(key)
        first = self.post(form, [proof])
        self.c.require("a fresh proof with the server nonce: 200, token_type DPoP, DPoP-Nonce in the answer",
                       first.status_code == 200 and body_of(first).get("token_type") == "DPoP" and first.headers.get("DPoP-Nonce"),
                       shown(first))
        self.expect_error("the same DPoP header sent again (replayed jti) → invalid_dpop_proof 9002350",
                          self.post(form, [proof]), 400, "invalid_dpop_proof", 9002350)

        introspect = self.discovery["introspection_endpoint"]
        self.expect_error("proof whose htu is the introspection endpoint → invalid_dpop_proof 9002350",
                          self.post(form, [self.proof(key, htu=introspect)]), 400, "invalid_dpop_proof", 9002350)
        by_domain = f"{self.base}/{TENANT}/oauth2/v2.0/token"
        self.expect_error("proof whose htu is the token endpoint by domain, sent to it by tenant ID → invalid_dpop_proof 9002350",
                          self.post(form, [self.proof(key, htu=by_domain)]), 400, "invalid_dpop_proof", 9002350)
        own = self.post(form, [self.proof(key, htu=by_domain)], url=by_domain)
        self.c.check("the token endpoint by domain with a proof naming that URL: 200 DPoP (htu is the URL requested)",
                     own.status_code == 200 and body_of(own).get("token_type") == "DPoP", shown(own))

    def broken_proofs(self):
        from requests_oauth2client import DPoPKey
        jwskate = self.jwskate
        key = DPoPKey.generate("ES256")
        form = dict(grant_type="client_credentials", client_id=DAEMON[0], client_secret=DAEMON[1], scope=DAEMON_SCOPE)

        def claims(**overrides):
            value = {"jti": str(uuid.uuid4()), "htm": "POST", "htu": self.token_endpoint, "iat": int(time.time()),
                     "nonce": self.fresh_nonce(key)}
            value.update(overrides)
            return value

        def signed(payload, signer, alg="ES256", typ="dpop+jwt", jwk=None):
            return str(jwskate.SignedJwt.sign(payload, key=signer, alg=alg, typ=typ,
                                              extra_headers={"jwk": jwk if jwk is not None else key.public_jwk.to_dict()}))

        symmetric = jwskate.SymmetricJwk.generate(alg="HS256")
        cases = [
            ("htm GET", str(key.proof("GET", self.token_endpoint, nonce=self.fresh_nonce(key)))),
            ("iat 5 minutes old", signed(claims(iat=int(time.time()) - 300), key.private_key)),
            ("private key members (d) in jwk", signed(claims(), key.private_key, jwk=key.private_key.to_dict())),
            ("typ JWT", signed(claims(), key.private_key, typ="JWT")),
            ("alg HS256 (symmetric jwk)", signed(claims(), symmetric, alg="HS256", jwk=symmetric.to_dict())),
            ("signature by another key", signed(claims(), jwskate.Jwk.generate(alg="ES256"))),
        ]
        for what, proof in cases:
            self.expect_error(f"proof with {what} → invalid_dpop_proof 9002350", self.post(form, [proof]), 400, "invalid_dpop_proof", 9002350)

        # Two DPoP header fields (RFC 9449 §4.3: not more than one): http.client, as requests folds duplicates.
        body = urllib.parse.urlencode(form)
        target = urllib.parse.urlsplit(self.token_endpoint)
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        try:
            connection.putrequest("POST", target.path)
            connection.putheader("Content-Type", "application/x-www-form-urlencoded")
            connection.putheader("Content-Length", str(len(body)))
            connection.putheader("DPoP", self.proof(key))
            connection.putheader("DPoP", self.proof(key))
            connection.endheaders(body.encode())
            answer = connection.getresponse()
            payload = json.loads(answer.read() or b"{}")
        finally:
            connection.close()
        self.c.check("two DPoP headers → invalid_dpop_proof 9002350",
                     answer.status == 400 and payload.get("error") == "invalid_dpop_proof" and payload.get("error_codes") == [9002350],
                     [answer.status, payload])

        unknown = self.post(form, [self.proof(key, nonce="not-a-nonce-of-this-server")])
        self.c.check("proof with an unknown nonce → 400 use_dpop_nonce 9002351 with a DPoP-Nonce header",
                     error_shape(unknown, 400, "use_dpop_nonce", 9002351) and unknown.headers.get("DPoP-Nonce"), shown(unknown))

    def required_dpop(self):
        from requests_oauth2client import DPoPKey
        form = dict(grant_type="client_credentials", client_id=STRICT[0], client_secret=STRICT[1], scope=DAEMON_SCOPE)
        self.expect_error("requireDPoP application without a proof → invalid_dpop_proof 9002352",
                          self.post(form), 400, "invalid_dpop_proof", 9002352)
        key = DPoPKey.generate("ES256")
        token = self.client(auth=STRICT).client_credentials(DAEMON_SCOPE, dpop=True, dpop_key=key)
        self.c.check("requireDPoP application with a proof (library): token_type DPoP", token.token_type == "DPoP", token.token_type)

    def introspection(self):
        from requests_oauth2client import DPoPKey
        endpoint = self.discovery["introspection_endpoint"]
        mark = self.recorder.mark()
        token = self.client(auth=DAEMON).client_credentials(DAEMON_SCOPE, dpop=True, dpop_key=DPoPKey.generate("ES256"))
        jkt = proof_jkt(self.recorder.since(mark)[-1].request.headers["DPoP"])
        answer = self.http.post(endpoint, data={"token": token.access_token}, auth=MAIL_API, timeout=TIMEOUT)
        body = body_of(answer)
        self.c.check("introspection (by the resource) of a DPoP access token: active, token_type DPoP, cnf.jkt",
                     answer.status_code == 200 and body.get("active") is True and body.get("token_type") == "DPoP"
                     and (body.get("cnf") or {}).get("jkt") == jkt, {"expected cnf.jkt": jkt, "body": body})
        bearer = self.post(dict(grant_type="client_credentials", client_id=DAEMON[0], client_secret=DAEMON[1], scope=DAEMON_SCOPE))
        plain = body_of(self.http.post(endpoint, data={"token": body_of(bearer).get("access_token", "")}, auth=MAIL_API, timeout=TIMEOUT))
        self.c.check("control: a bearer access token introspects as token_type Bearer without cnf",
                     body_of(bearer).get("token_type") == "Bearer" and plain.get("active") is True
                     and plain.get("token_type") == "Bearer" and "cnf" not in plain, [shown(bearer), plain])


# ---------------------------------------------------------------------------------------------------------------
# The resource side: `portcullis gateway` in front of an echoing upstream


class Upstream:
    """A tiny HTTP service in a thread that answers every request with what it received, as JSON: method, path, query,
    body and every header field (in order, duplicates kept). `?status=N` sets the status; it always adds `X-Upstream:
    echo` and two `X-Multi` fields, so that what the gateway passes back can be seen."""

    def __init__(self):
        import http.server
        import threading
        self.received = []
        upstream = self

        class Echo(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def read_body(self):
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def answer(self):
                parts = urllib.parse.urlsplit(self.path)
                record = {"method": self.command, "path": parts.path, "query": parts.query,
                          "body": self.read_body().decode("utf-8", "replace"), "headers": [[k, v] for k, v in self.headers.items()]}
                upstream.received.append(record)
                status = int(dict(urllib.parse.parse_qsl(parts.query)).get("status", "200"))
                payload = json.dumps(record).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("X-Upstream", "echo")
                self.send_header("X-Multi", "one")
                self.send_header("X-Multi", "two")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
        self.server.daemon_threads = True
        self.base = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="upstream", daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class GatewayProcess(LoggedProcess):
    """`portcullis gateway`, its output in gateway.log, started until it says it is listening."""

    def __init__(self, binary, workdir, port):
        super().__init__(binary, os.path.join(workdir, "gateway.log"), "gateway")
        self.port = port
        self.base = "http://127.0.0.1:%d" % port

    def start(self, arguments, env=None, timeout=30):
        started = self.launch(
            ["gateway", "--host", "127.0.0.1", "--port", str(self.port), *arguments], "gateway listening on http://127.0.0.1:%d" % self.port,
            timeout, env=env)
        return time.monotonic() - started

    def stop(self):
        super().stop(grace=10)


class ChallengeSyntaxError(ValueError):
    pass


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_OWS = re.compile(r"[ \t]*")


def parse_challenges(values):
    """RFC 9110 §11.2/§11.6.1: the challenges of WWW-Authenticate field values (a field may hold several).
    challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]; auth-param = token BWS "=" BWS ( token / quoted-string ).
    Returns [(scheme, {param name (lower case): value}, token68 or None)]; raises ChallengeSyntaxError on anything else
    (a parameter named twice in one challenge included)."""
    text = ", ".join(values)
    pos, challenges = 0, []

    def skip(pattern, at):
        return pattern.match(text, at).end()

    def list_separators(at):  # OWS *( "," OWS )
        at = skip(_OWS, at)
        while at < len(text) and text[at] == ",":
            at = skip(_OWS, at + 1)
        return at

    def param_at(at):
        """(name, value, end) when an auth-param starts at `at`, else None."""
        name = _TOKEN.match(text, at)
        if not name:
            return None
        after = skip(_OWS, name.end())
        if after >= len(text) or text[after] != "=":
            return None
        after = skip(_OWS, after + 1)
        quoted = _QUOTED.match(text, after)
        if quoted:
            return name.group().lower(), re.sub(r"\\(.)", r"\1", quoted.group(1)), quoted.end()
        token = _TOKEN.match(text, after)
        if token:
            return name.group().lower(), token.group(), token.end()
        return None  # not an auth-param (perhaps a token68 such as abc==); the caller refuses what is neither

    def separator(at, what):
        """After a challenge or a parameter: the end, or a comma (and the list's empty elements)."""
        after = skip(_OWS, at)
        if after < len(text) and text[after] != ",":
            raise ChallengeSyntaxError(f"no comma after {what} at {after}: {text!r}")
        return list_separators(after)

    pos = list_separators(0)
    while pos < len(text):
        scheme = _TOKEN.match(text, pos)
        if not scheme:
            raise ChallengeSyntaxError(f"no auth-scheme at {pos}: {text!r}")
        pos = scheme.end()
        params, token68 = {}, None
        if pos < len(text) and text[pos] == " ":
            pos = skip(re.compile(r" +"), pos)
            if param_at(pos) is not None:
                while True:
                    name, value, pos = param_at(pos)
                    if name in params:
                        raise ChallengeSyntaxError(f"parameter {name!r} twice in one challenge: {text!r}")
                    params[name] = value
                    pos = separator(pos, f"the parameter {name!r}")
                    if pos >= len(text) or param_at(pos) is None:
                        break  # the end, or the next challenge's scheme
                challenges.append((scheme.group(), params, None))
                continue
            t68 = _TOKEN68.match(text, pos)
            if t68:
                token68, pos = t68.group(), t68.end()
        pos = separator(pos, f"the challenge {scheme.group()!r}")
        challenges.append((scheme.group(), params, token68))
    return challenges


# RFC 6749 §5.2 (by RFC 6750 §3 and RFC 9449 §7.1): error and error_description use %x20-21 / %x23-5B / %x5D-7E.
_ERROR_TEXT = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")


class GatewayRun:
    """The resource-side checks: requests through `portcullis gateway` to the echoing upstream."""

    def __init__(self, run, gateway, upstream, resource_app_id):
        import requests
        self.run, self.c, self.gateway, self.upstream = run, run.c, gateway, upstream
        self.base = gateway.base
        self.resource_app_id = resource_app_id
        self.http = requests.Session()
        self.http.trust_env = False
        # The challenge names the authority's authorize endpoint; the gateway builds it from --authority (the tenant's
        # domain here) while discovery names it by tenant ID: either form is the same endpoint.
        endpoint = run.discovery["authorization_endpoint"]
        self.authorize_uris = {endpoint, endpoint.replace(f"/{TENANT_ID}/", f"/{TENANT}/")}

    # -- helpers -----------------------------------------------------------------------------------------------

    def send(self, method, path, headers=None, **kwargs):
        """A request to the gateway; returns (response, the upstream's record of it or None when it did not get there)."""
        before = len(self.upstream.received)
        response = self.http.request(method, self.base + path, headers=headers or {}, timeout=TIMEOUT, **kwargs)
        reached = self.upstream.received[before:]
        return response, (reached[-1] if reached else None)

    @staticmethod
    def challenges(response):
        values = response.raw.headers.getlist("WWW-Authenticate") if response.raw is not None else []
        try:
            return parse_challenges(values), values
        except ChallengeSyntaxError as error:
            return error, values

    @staticmethod
    def fields(record, name):
        return [v for k, v in (record or {}).get("headers", []) if k.lower() == name.lower()]

    def shown(self, response, record):
        parsed, values = self.challenges(response)
        return {"status": response.status_code, "WWW-Authenticate": values, "body": response.text[:300],
                "upstream reached": record is not None}

    def dpop_challenge_ok(self, scheme, params, error):
        """RFC 9449 §7.1: a DPoP challenge whose algs (space-delimited JWS algs) includes ES256, with `error` (or no
        error when None), error_description in RFC 6749's character set."""
        algs = params.get("algs", "").split(" ")
        return (scheme.lower() == "dpop" and "ES256" in algs and all(_TOKEN.fullmatch(a) for a in algs)
                and params.get("error") == error
                and (error is None or (params.get("error_description") and _ERROR_TEXT.fullmatch(params["error_description"]))))

    def expect_refusal(self, name, response, record, scheme, error):
        """401, not forwarded, exactly one challenge: `scheme` with error=`error` (a DPoP one per RFC 9449 §7.1)."""
        parsed, values = self.challenges(response)
        ok = (response.status_code == 401 and record is None and isinstance(parsed, list) and len(parsed) == 1
              and parsed[0][0].lower() == scheme.lower())
        if ok and scheme == "DPoP":
            ok = self.dpop_challenge_ok(parsed[0][0], parsed[0][1], error)
        elif ok:
            params = parsed[0][1]
            ok = (params.get("error") == error and "realm" in params and params.get("authorization_uri") in self.authorize_uris
                  and bool(_ERROR_TEXT.fullmatch(params.get("error_description", "") or "\x00")))
        described = parsed[0][1].get("error_description") if isinstance(parsed, list) and parsed else None
        return self.c.check(name, ok, self.shown(response, record), note=f'401 {scheme} error="{error}": {described}')

    def expected_claim_headers(self, claims, binding):
        expected = {"x-portcullis-subject": claims["sub"], "x-portcullis-tenant-id": claims["tid"],
                    "x-portcullis-client-id": claims["azp"], "x-portcullis-token-id": claims["jti"],
                    "x-portcullis-token-binding": binding}
        for header, claim in (("x-portcullis-object-id", "oid"), ("x-portcullis-user", "upn"), ("x-portcullis-scopes", "scp")):
            if claims.get(claim):
                expected[header] = claims[claim]
        for header, claim in (("x-portcullis-roles", "roles"), ("x-portcullis-acrs", "acrs")):
            if claims.get(claim):
                expected[header] = " ".join(claims[claim])
        return expected

    def claim_headers(self, record):
        got = {}
        for k, v in (record or {}).get("headers", []):
            if k.lower().startswith("x-portcullis-"):
                got.setdefault(k.lower(), []).append(v)
        return got

    def check_forwarded(self, name, response, record, token, binding, extra=()):
        """200 from the upstream; it got exactly the X-Portcullis-* headers of the (signature-checked) token's claims,
        once each, and neither Authorization nor DPoP. Returns the claims."""
        claims = self.run.verified_claims(token)
        expected = self.expected_claim_headers(claims, binding)
        got = self.claim_headers(record)
        ok = (response.status_code == 200 and record is not None and got == {k: [v] for k, v in expected.items()}
              and not self.fields(record, "Authorization") and not self.fields(record, "DPoP")
              and all(condition for condition, _ in extra))
        self.c.check(name, ok, {"status": response.status_code, "expected X-Portcullis-*": expected, "upstream got": record,
                                "failed extras": [what for condition, what in extra if not condition]},
                     note=", ".join(f"{k[len('x-portcullis-'):]}={v}" for k, v in expected.items() if k not in
                                    ("x-portcullis-subject", "x-portcullis-token-id", "x-portcullis-object-id")))
        return claims

    def token(self, auth, scope, key=None):
        client = self.run.client(auth=auth)
        return client.client_credentials(scope, dpop=key is not None, dpop_key=key) if key else client.client_credentials(scope)

    @staticmethod
    def ath(token):
        return b64url(hashlib.sha256(token.encode("ascii")).digest())

    # -- the groups ----------------------------------------------------------------------------------------------

    def no_token(self):
        for what, headers in (("no Authorization", {}), ("Authorization: Basic (neither scheme)", {"Authorization": "Basic ZGFlbW9uOng="})):
            response, record = self.send("GET", "/mail/inbox", headers)
            parsed, values = self.challenges(response)
            ok = response.status_code == 401 and record is None and isinstance(parsed, list) and len(parsed) == 2
            if ok:
                (s1, p1, _), (s2, p2, _) = sorted(parsed, key=lambda c: c[0].lower())
                ok = (s1.lower() == "bearer" and set(p1) == {"realm", "authorization_uri"} and p1["realm"] == ""
                      and p1["authorization_uri"] in self.authorize_uris and self.dpop_challenge_ok(s2, p2, None) and set(p2) == {"algs"})
                authorization_uri = p1.get("authorization_uri")
            self.c.check(f"gateway, {what} → 401 with two challenges: Bearer realm=\"\" authorization_uri=<the authority's "
                         f"authorize endpoint> and DPoP algs (ES256 among them), no error (RFC 6750 §3.1), not forwarded",
                         ok, self.shown(response, record), note=" | ".join(values))
        if not ok:
            return
        # The authorization_uri a client would follow: an authorization request there shows the sign-in page.
        client = self.run.OAuth2Client.from_discovery_document(self.run.discovery, client_id=MAIL, redirect_uri=REDIRECT, testing=True)
        request = client.authorization_request(scope="openid", login_hint=USER[0])
        query = urllib.parse.urlsplit(str(request.uri)).query
        page = self.http.get(f"{authorization_uri}?{query}", allow_redirects=False, timeout=TIMEOUT)
        form = PageForm(page.text)
        self.c.check("gateway challenge's authorization_uri works: an authorization request there (library-built) shows the sign-in form",
                     page.status_code == 200 and form.fields.get("csrf"), [authorization_uri, page.status_code, page.text[:300]])

    def bearer(self):
        token = self.token(DAEMON, DAEMON_SCOPE)
        self.c.require("gateway: client_credentials bearer token for the mail API (library)", token.token_type == "Bearer", token.token_type)
        body = json.dumps({"subject": "hello", "to": ["erin@contoso.example"]})
        spoofed = {"X-Portcullis-Subject": "attacker", "x-portcullis-roles": "Mail.Admin", "X-PORTCULLIS-TOKEN-BINDING": "dpop",
                   "X-Portcullis-Evil": "1", "X-Client-Header": "kept", "Content-Type": "application/json"}
        response, record = self.send("POST", "/mail/messages?folder=inbox&top=5&q=a%20b", spoofed, data=body, auth=token)
        received = record or {}
        claims = self.check_forwarded(
            "gateway, bearer token: 200 via the upstream with exactly the token's X-Portcullis-* headers (spoofed ones dropped), "
            "no Authorization", response, record, token.access_token, "bearer",
            extra=[(received.get("method") == "POST", "method POST"), (received.get("path") == "/mail/messages", "path"),
                   (received.get("query") == "folder=inbox&top=5&q=a%20b", "query string as sent"),
                   (received.get("body") == body, "body as sent"),
                   (self.fields(record, "X-Client-Header") == ["kept"], "the client's other headers forwarded"),
                   (self.fields(record, "Content-Type") == ["application/json"], "Content-Type forwarded")])
        got = self.claim_headers(record)
        self.c.check("gateway, bearer token: Client-Id = the daemon, Tenant-Id = the tenant, Token-Binding bearer, Roles Mail.ReadAll",
                     got.get("x-portcullis-client-id") == [DAEMON[0]] and got.get("x-portcullis-tenant-id") == [TENANT_ID]
                     and got.get("x-portcullis-token-binding") == ["bearer"] and got.get("x-portcullis-roles") == ["Mail.ReadAll"],
                     got)
        self.c.check("gateway, bearer token: the client's X-Portcullis-Subject: attacker replaced by the token's sub "
                     "(and no X-Portcullis-Evil)", got.get("x-portcullis-subject") == [claims["sub"]] != ["attacker"]
                     and "x-portcullis-evil" not in got, got)
        self.c.check("gateway: the upstream's answer comes back (its JSON body, its headers)",
                     response.status_code == 200 and response.headers.get("X-Upstream") == "echo"
                     and response.headers.get("Content-Type") == "application/json" and response.json() == record,
                     {"status": response.status_code, "headers": dict(response.headers)})

        teapot, record = self.send("DELETE", "/mail/messages/42?status=418", auth=token)
        multi = teapot.raw.headers.getlist("X-Multi")
        self.c.check("gateway: the upstream's status (418 to a DELETE), repeated header fields and body come back as they are",
                     teapot.status_code == 418 and record is not None and record["method"] == "DELETE"
                     and multi in (["one", "two"], ["one, two"]) and teapot.json().get("path") == "/mail/messages/42",
                     {"status": teapot.status_code, "X-Multi": multi, "body": teapot.text[:200]})

        # RFC 9110 §7.6.1: a proxy removes the fields a Connection header names, and Connection itself.
        response, record = self.send("GET", "/mail/inbox", {"Connection": "keep-alive, X-Hop-Secret", "X-Hop-Secret": "s3cr3t",
                                                             "Keep-Alive": "timeout=5", "TE": "trailers"}, auth=token)
        self.c.check("gateway: hop-by-hop fields not forwarded (Connection, Keep-Alive, TE, and X-Hop-Secret named by Connection)",
                     response.status_code == 200 and record is not None
                     and not any(self.fields(record, h) for h in ("X-Hop-Secret", "Keep-Alive", "TE"))
                     and all("x-hop-secret" not in v.lower() for v in self.fields(record, "Connection")),
                     record and [h for h in record["headers"] if h[0].lower() in ("connection", "keep-alive", "te", "x-hop-secret")])

        # The same bearer token presented as DPoP, with a valid proof (ath and all) by some key.
        from requests_oauth2client import DPoPKey
        key = DPoPKey.generate("ES256")
        proof = str(key.proof("GET", self.base + "/mail/inbox", ath=self.ath(token.access_token)))
        response, record = self.send("GET", "/mail/inbox", {"Authorization": f"DPoP {token.access_token}", "DPoP": proof})
        self.expect_refusal("gateway, a bearer (unbound) token presented as DPoP with a proof → 401 DPoP invalid_token",
                            response, record, "DPoP", "invalid_token")
        return token

    def dpop_library(self):
        from requests_oauth2client import DPoPKey, DPoPToken
        from requests_oauth2client.dpop import validate_dpop_proof
        key = DPoPKey.generate("ES256")
        token = self.token(DAEMON, DAEMON_SCOPE, key)
        self.c.require("gateway: client_credentials DPoP token for the mail API (library, ES256)",
                       isinstance(token, DPoPToken) and token.token_type == "DPoP", token.token_type)
        path = "/mail/folders/Sent%20Items?top=1"
        response, record = self.send("GET", path, auth=token)  # the library's DPoPToken: Authorization DPoP + proof with ath
        sent = response.request.headers
        try:  # what went over the wire is RFC 9449 §7: checked with the library's own validator
            validate_dpop_proof(sent.get("DPoP", ""), htm="GET", htu=self.base + "/mail/folders/Sent%20Items",
                                ath=self.ath(token.access_token), alg="ES256")
            problem = None
        except Exception as error:  # noqa: BLE001
            problem = f"{type(error).__name__}: {error}"
        self.c.check("gateway, library DPoPToken: it sent Authorization: DPoP and a proof that passes validate_dpop_proof "
                     "(GET, htu without the query, ath)", sent.get("Authorization") == f"DPoP {token.access_token}" and problem is None,
                     [sent.get("Authorization", "")[:20], problem])
        self.check_forwarded("gateway, library DPoPToken (GET, percent-encoded path and a query): 200, Token-Binding dpop, "
                             "no Authorization/DPoP upstream", response, record, token.access_token, "dpop",
                             extra=[(record and record["path"] == "/mail/folders/Sent%20Items" and record["query"] == "top=1",
                                     "path and query as sent")])
        body = json.dumps({"read": True})
        response, record = self.send("PATCH", "/mail/messages/7", {"Content-Type": "application/json"}, data=body, auth=token)
        self.check_forwarded("gateway, library DPoPToken again (PATCH with a body, a new proof): 200, Token-Binding dpop",
                             response, record, token.access_token, "dpop",
                             extra=[(record and record["method"] == "PATCH" and record["body"] == body, "method and body")])
        for alg in ("RS256", "EdDSA"):
            other = self.token(DAEMON, DAEMON_SCOPE, DPoPKey.generate(alg))
            response, record = self.send("GET", "/mail/inbox", auth=other)
            self.check_forwarded(f"gateway, library DPoPToken with an {alg} key: 200, Token-Binding dpop",
                                 response, record, other.access_token, "dpop")

        # Delegated: Erin through the public mail app (password grant, DPoP): user, scopes, object ID.
        user_key = DPoPKey.generate("ES256")
        delegated = self.run.client(client_id=MAIL).resource_owner_password(USER[0], USER[1], scope=MAIL_SCOPE, dpop=True,
                                                                             dpop_key=user_key)
        response, record = self.send("GET", "/mail/me", auth=delegated)
        got = self.claim_headers(record)
        self.check_forwarded("gateway, Erin's delegated DPoP token (library): 200 with User, Scopes, Object-Id", response, record,
                             delegated.access_token, "dpop",
                             extra=[(got.get("x-portcullis-user") == [USER[0]], "User = Erin"),
                                    ("Mail.Read" in (got.get("x-portcullis-scopes") or [""])[0].split(" "), "Scopes has Mail.Read"),
                                    (bool(got.get("x-portcullis-object-id")), "Object-Id"),
                                    ("x-portcullis-roles" not in got, "no Roles")])
        return token, key

    def dpop_refusals(self, token, key):
        from requests_oauth2client import DPoPKey, DPoPToken, MissingDPoPNonce
        jwskate = self.run.jwskate
        url = self.base + "/mail/inbox"
        ath = self.ath(token.access_token)
        authorization = {"Authorization": f"DPoP {token.access_token}"}

        response, record = self.send("GET", "/mail/inbox", {"Authorization": f"Bearer {token.access_token}"})
        self.expect_refusal("gateway, the DPoP-bound token stolen and sent as Bearer → 401 DPoP invalid_token, not forwarded",
                            response, record, "DPoP", "invalid_token")

        proof = str(key.proof("GET", url, ath=ath))
        first, record = self.send("GET", "/mail/inbox", dict(authorization, DPoP=proof))
        self.c.check("gateway, a hand-made proof (GET, htu, ath) by the bound key: 200", first.status_code == 200 and record is not None,
                     self.shown(first, record))
        response, record = self.send("GET", "/mail/inbox", dict(authorization, DPoP=proof))
        self.expect_refusal("gateway, the same Authorization and DPoP headers sent again (replayed proof) → 401 invalid_dpop_proof",
                            response, record, "DPoP", "invalid_dpop_proof")

        def signed(claims, signer=key.private_key, alg="ES256", jwk=None):
            payload = {"jti": str(uuid.uuid4()), "htm": "GET", "htu": url, "iat": int(time.time()), "ath": ath}
            payload.update(claims)
            payload = {k: v for k, v in payload.items() if v is not None}
            return str(jwskate.SignedJwt.sign(payload, key=signer, alg=alg, typ="dpop+jwt",
                                              extra_headers={"jwk": jwk or key.public_jwk.to_dict()}))

        thief = DPoPKey.generate("ES256")
        other_token = self.token(DAEMON, DAEMON_SCOPE)  # any other access token, for a wrong ath
        cases = [
            ("no DPoP header", None),
            ("a valid proof by another key (the thief's)", str(thief.proof("GET", url, ath=ath))),
            ("no ath", str(key.proof("GET", url))),
            ("ath of another access token", str(key.proof("GET", url, ath=self.ath(other_token.access_token)))),
            ("htm POST on a GET", str(key.proof("POST", url, ath=ath))),
            ("htu another path (/mail/outbox)", str(key.proof("GET", self.base + "/mail/outbox", ath=ath))),
            ("htu another origin (http://localhost:port, sent with Host: localhost:port)",
             str(key.proof("GET", "http://localhost:%d/mail/inbox" % self.gateway.port, ath=ath))),
            ("iat 5 minutes old", signed({"iat": int(time.time()) - 300})),
            ("a signature by another key than its jwk", signed({}, signer=thief.private_key)),
            ("no jti", signed({"jti": None})),
        ]
        for what, value in cases:
            headers = dict(authorization)
            if value is not None:
                headers["DPoP"] = value
            if "Host:" in what:
                headers["Host"] = "localhost:%d" % self.gateway.port
            response, record = self.send("GET", "/mail/inbox", headers)
            self.expect_refusal(f"gateway, bound token with {what} → 401 DPoP invalid_dpop_proof", response, record, "DPoP",
                                "invalid_dpop_proof")

        # Two DPoP fields (RFC 9449 §4.3 / §7: exactly one): http.client, as requests folds duplicates.
        before = len(self.upstream.received)
        connection = http.client.HTTPConnection("127.0.0.1", self.gateway.port, timeout=30)
        try:
            connection.putrequest("GET", "/mail/inbox")
            connection.putheader("Authorization", f"DPoP {token.access_token}")
            connection.putheader("DPoP", str(key.proof("GET", url, ath=ath)))
            connection.putheader("DPoP", str(key.proof("GET", url, ath=ath)))
            connection.endheaders()
            answer = connection.getresponse()
            answer.read()
            values = answer.headers.get_all("WWW-Authenticate") or []
        finally:
            connection.close()
        try:
            parsed = parse_challenges(values)
        except ChallengeSyntaxError as error:
            parsed = error
        self.c.check("gateway, bound token with two DPoP headers → 401 DPoP invalid_dpop_proof, not forwarded",
                     answer.status == 401 and len(self.upstream.received) == before and isinstance(parsed, list) and len(parsed) == 1
                     and self.dpop_challenge_ok(parsed[0][0], parsed[0][1], "invalid_dpop_proof"), [answer.status, values])

        # The library on the receiving end of the gateway's refusal: a DPoPToken whose key is not the bound one.
        # requests-oauth2client (1.8) reads any 401 with a DPoP challenge as a resource-server nonce request and raises
        # MissingDPoPNonce when no DPoP-Nonce comes with it; the gateway asks for no nonce, so it must send none.
        wrong = DPoPToken(access_token=token.access_token, _dpop_key=thief)
        before = len(self.upstream.received)
        try:
            refused = self.http.get(url + "?via=library", auth=wrong, timeout=TIMEOUT)
            raised = None
        except MissingDPoPNonce as error:
            refused, raised = error.response, "MissingDPoPNonce"
        parsed, values = self.challenges(refused)
        self.c.check("gateway refusal read by the library (DPoPToken with the thief's key): 401, one DPoP invalid_dpop_proof "
                     "challenge, no DPoP-Nonce (so the library does not retry), not forwarded",
                     refused.status_code == 401 and "DPoP-Nonce" not in refused.headers and len(self.upstream.received) == before
                     and isinstance(parsed, list) and len(parsed) == 1
                     and self.dpop_challenge_ok(parsed[0][0], parsed[0][1], "invalid_dpop_proof"),
                     [refused.status_code, values, dict(refused.headers)], note=f"library: {raised or 'returned the 401'}")

    def bad_tokens(self, bearer_token, dpop_token):
        admin = self.token(ADMIN, "api://portcullis-admin/.default")
        aud = jwt_parts(admin.access_token)[1].get("aud")
        response, record = self.send("GET", "/mail/inbox", auth=admin)
        self.expect_refusal(f"gateway, admin API token (aud {aud}), valid in every other way → 401 Bearer invalid_token",
                            response, record, "Bearer", "invalid_token")

        header, payload, signature = bearer_token.access_token.split(".")
        claims = json.loads(b64url_decode(payload))
        claims["roles"] = ["Mail.Admin"]
        tampered = ".".join([header, b64url(json.dumps(claims).encode()), signature])
        response, record = self.send("GET", "/mail/inbox", {"Authorization": f"Bearer {tampered}"})
        self.expect_refusal("gateway, tampered bearer token (roles changed, signature kept) → 401 Bearer invalid_token",
                            response, record, "Bearer", "invalid_token")

        flipped = signature[:-6] + ("A" if signature[-6] != "A" else "B") + signature[-5:]
        response, record = self.send("GET", "/mail/inbox", {"Authorization": f"Bearer {header}.{payload}.{flipped}"})
        self.expect_refusal("gateway, bearer token with a changed signature → 401 Bearer invalid_token", response, record,
                            "Bearer", "invalid_token")

        none_header = dict(json.loads(b64url_decode(header)), alg="none")
        unsigned = f"{b64url(json.dumps(none_header).encode())}.{payload}."
        response, record = self.send("GET", "/mail/inbox", {"Authorization": f"Bearer {unsigned}"})
        self.expect_refusal("gateway, the token re-headed alg none without a signature → 401 Bearer invalid_token", response,
                            record, "Bearer", "invalid_token")

        dheader, dpayload, dsignature = dpop_token.access_token.split(".")
        unbound = json.loads(b64url_decode(dpayload))
        unbound.pop("cnf", None)
        stripped = ".".join([dheader, b64url(json.dumps(unbound).encode()), dsignature])
        response, record = self.send("GET", "/mail/inbox", {"Authorization": f"Bearer {stripped}"})
        self.expect_refusal("gateway, a DPoP-bound token with cnf removed (signature kept), as Bearer → 401 Bearer invalid_token",
                            response, record, "Bearer", "invalid_token")

        response, record = self.send("GET", "/mail/inbox", {"Authorization": "Bearer not-a-jwt"})
        self.expect_refusal("gateway, Bearer not-a-jwt → 401 Bearer invalid_token", response, record, "Bearer", "invalid_token")

    def token_times(self, offset_file):
        """exp and nbf with the 60 s leeway, the gateway's wall clock moved by Tests/Interop/clockshift.c."""
        token = self.token(DAEMON, DAEMON_SCOPE)
        claims = self.run.verified_claims(token.access_token)
        cases = [("30 s after exp (inside the 60 s leeway)", claims["exp"] + 30, 200),
                 ("90 s after exp", claims["exp"] + 90, 401),
                 ("30 s before nbf (inside the leeway)", claims["nbf"] - 30, 200),
                 ("90 s before nbf", claims["nbf"] - 90, 401)]
        try:
            for what, instant, status in cases:
                with open(offset_file, "w") as f:
                    f.write("%.3f\n" % (instant - time.time()))
                time.sleep(0.3)  # the shim re-reads the file at most every 100 ms
                response, record = self.send("GET", "/mail/inbox", auth=token)
                if status == 200:
                    self.c.check(f"gateway clock {what}: the bearer token is still accepted (200)",
                                 response.status_code == 200 and record is not None, self.shown(response, record))
                else:
                    self.expect_refusal(f"gateway clock {what}: 401 Bearer invalid_token", response, record, "Bearer", "invalid_token")
        finally:
            with open(offset_file, "w") as f:
                f.write("0\n")
            time.sleep(0.3)

    def challenge_parser(self):
        """The parser used above, on RFC 9110 / RFC 9449 examples, so that a parser bug cannot pass a bad challenge."""
        cases = [
            (['DPoP error="invalid_token", error_description="Invalid DPoP key binding", algs="ES256"'],
             [("DPoP", {"error": "invalid_token", "error_description": "Invalid DPoP key binding", "algs": "ES256"}, None)]),
            (['Bearer realm="example", DPoP algs="ES256 PS256"'],
             [("Bearer", {"realm": "example"}, None), ("DPoP", {"algs": "ES256 PS256"}, None)]),
            (['Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"'],
             [("Newauth", {"realm": "apps", "type": "1", "title": 'Login to "apps"'}, None), ("Basic", {"realm": "simple"}, None)]),
            (["Negotiate abc123==, DPoP algs=ES256"], [("Negotiate", {}, "abc123=="), ("DPoP", {"algs": "ES256"}, None)]),
        ]
        bad = ['DPoP algs="ES256" error="x"', 'DPoP algs="ES256", algs="RS256"', 'DPoP algs="ES256', '="x"']
        results = [parse_challenges(values) == expected for values, expected in cases]
        refused = []
        for value in bad:
            try:
                parse_challenges([value])
                refused.append(False)
            except ChallengeSyntaxError:
                refused.append(True)
        self.c.check("WWW-Authenticate parser of this script: RFC 9110 §11.6.1 / RFC 9449 §7.1 examples parsed, malformed ones refused",
                     all(results) and all(refused), {"parsed": results, "refused": refused})


def run_gateway(binary, workdir, run, checks):
    """Starts the upstream and `portcullis gateway` (the mail API's appId and identifier URI as audiences), runs the
    resource-side groups, stops both. Returns the gateway (for its log) or None."""
    with open(os.path.join(REPO, "Config", "directory.json")) as f:
        directory = json.load(f)
    tenant = next(t for t in directory["tenants"] if t["domain"] == TENANT)
    resource = next(a for a in tenant["applications"] if "api://contoso-mail" in (a.get("identifierUris") or []))
    # The wall-clock shim (as scripts/msal-interop builds it), for exp/nbf; without a C compiler those checks fail.
    offset_file, env = os.path.join(workdir, "gateway-clock-offset"), None
    with open(offset_file, "w") as f:
        f.write("0\n")
    shim = os.path.join(workdir, "clockshift.so")
    built = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(REPO, "Tests/Interop/clockshift.c"), "-ldl"],
                           capture_output=True, text=True) if shutil.which("cc") else None
    if checks.check("clock shim built (cc Tests/Interop/clockshift.c), preloaded into the gateway", built is not None and built.returncode == 0,
                    built.stderr if built is not None else "no cc on PATH"):
        env = dict(os.environ, LD_PRELOAD=shim, PORTCULLIS_CLOCK_OFFSET_FILE=offset_file)
    upstream = Upstream()
    gateway = GatewayProcess(binary, workdir, free_port())
    try:
        # No Shared Signals stream here, so the gateway limits a token's age (PROTOCOL §14.3; cae_interop tests that): the
        # exp/nbf leeway checks move its clock past a token's hour, so the limit is set above it.
        took = gateway.start(["--upstream", upstream.base, "--authority", f"{run.base}/{TENANT}", "--audience", resource["appId"],
                              "--audience", "api://contoso-mail", "--public-url", "http://127.0.0.1:%d" % gateway.port,
                              "--max-token-age", "86400"], env=env)
        print(f"dpop_interop: gateway {gateway.base} → upstream {upstream.base} listening in {took:.1f} s "
              f"(audience {resource['appId']})", flush=True)
        resource_run = GatewayRun(run, gateway, upstream, resource["appId"])
        state = {}

        def bearer():
            state["bearer"] = resource_run.bearer()

        def dpop():
            state["dpop"] = resource_run.dpop_library()

        def refusals():
            if "dpop" not in state:
                raise Abort("no DPoP token")
            resource_run.dpop_refusals(*state["dpop"])

        def bad_tokens():
            if "bearer" not in state or "dpop" not in state:
                raise Abort("no bearer or DPoP token")
            resource_run.bad_tokens(state["bearer"], state["dpop"][0])

        def token_times():
            if env is None:
                raise Abort("no clock shim")
            resource_run.token_times(offset_file)

        for group in (resource_run.challenge_parser, resource_run.no_token, bearer, dpop, refusals, bad_tokens, token_times):
            try:
                group()
            except Abort as abort:
                print(f"     (gateway {group.__name__}: the rest of this group was not run after {abort})", flush=True)
            except Exception:  # noqa: BLE001
                checks.check(f"gateway {group.__name__} ran to the end", False, traceback.format_exc())
    except RuntimeError as error:
        checks.check("gateway start", False, str(error))
    finally:
        gateway.stop()
        upstream.stop()
    return gateway


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/debug/portcullis"), help="the portcullis binary")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (config, data, keys, server.log)")
    args = parser.parse_args()
    try:
        import requests  # noqa: F401
        import jwskate  # noqa: F401
        from importlib.metadata import version
        library = version("requests-oauth2client")
    except ImportError as error:
        print(f"dpop_interop: {error}; install with: python3 -m pip install requests-oauth2client", file=sys.stderr)
        return 2
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        print(f"dpop_interop: no executable at {binary} (build it, or pass --binary PATH)", file=sys.stderr)
        return 2

    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="portcullis-dpop.")
    server = Server(binary, workdir, free_port())
    checks = Checks()
    crashed = []
    gateway = None
    try:
        ready = server.start(prepare_config(workdir))
        print(f"dpop_interop: requests-oauth2client {library}; "
              f"server {server.base} ready in {ready:.1f} s ({binary})", flush=True)
        run = Run(server.base, checks)
        groups = [run.thumbprint_helper, run.discovery_metadata, run.client_credentials, run.password_and_refresh,
                  run.confidential_refresh, run.authorization_code, run.replay_and_htu, run.broken_proofs, run.required_dpop,
                  run.introspection]
        for group in groups:
            try:
                group()
            except Abort as abort:
                print(f"     ({group.__name__}: the rest of this group was not run after {abort})", flush=True)
            except Exception:  # the library raises for refused grants; say where
                crashed.append(group.__name__)
                checks.check(f"{group.__name__} ran to the end", False, traceback.format_exc())
        gateway = run_gateway(binary, workdir, run, checks)
    except RuntimeError as error:
        checks.check("server start", False, str(error))
    finally:
        server.stop()
    elapsed = time.monotonic() - started
    failed = bool(checks.failed)
    if failed:
        print("\n----- server log (tail) -----\n" + server.tail(), file=sys.stderr)
        if gateway is not None:
            print("\n----- gateway log (tail) -----\n" + gateway.tail(), file=sys.stderr)
    if args.keep:
        print(f"dpop_interop: kept {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\ndpop_interop: {len(checks.passed)} passed, {len(checks.failed)} failed in {elapsed:.1f} s")
    for name in checks.failed:
        print(f"  FAILED: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
