#!/usr/bin/env python3
"""Crash durability of Portcullis against the real binary (SIGKILL mid-load, restart on the same data).

    python3 Tests/Crash/crash_durability.py [--binary .build/debug/portcullis] [--load-seconds 2.5] [--seed N] [--keep]

What it does
  setup   a temporary copy of Config/ (the mail app's complianceCallbackUris pointed at a port where NOTHING
          listens yet, quick callback back-off), fresh data and keys directories, a fixed free port. Alice and
          Bob (Sales, targeted by the app protection policy) each get several refresh-token chains (password
          grant; half with `openid profile offline_access`, half with the mail API scope sent as
          `x-client-OS: linux`, which the demo CA policy excludes) and enrollments on distinct device IDs
          (remediation with callbackUri, then check-ins nopin -> jailbroken -> good: compliant).
  load    one thread per chain redeems its current refresh token again and again (never the same token twice)
          and records every 200's new refresh token as acknowledged; one thread per enrollment checks in with
          random reports (good / jailbroken / no PIN) and records every 200's complianceStatus. Every status
          change enqueues a callback SET, which fails (no receiver) and backs off in the durable outbox.
  kill    after ~2-3 s: the pending outbox is listed through the admin API, a stop flag is raised (threads issue
          no new request) and the server gets SIGKILL. A thread whose last request got no response was "in flight".
  verify  restart on the same data and keys, then
          (a) every chain's last acknowledged refresh token redeems once (200); for a chain whose last request
              was in flight, 400 invalid_grant is also accepted (the lost rotation may have committed) and is
              reported separately. After a 200 the rotated predecessor must be refused and the replay must
              revoke the family (checks that the rotations and their reuse detection survived).
          (b) each enrollment shows (GET /mam/v1/enrollments/{id}) the status of its last acknowledged check-in
              and (admin detail) the acknowledged policy version, with exactly as many check-in history lines
              as acknowledged check-ins (one more, and then the in-flight report's status, if the in-flight
              check-in committed).
          (c) every message pending before the kill is still pending after the restart; then a receiver starts
              and every one of them arrives (by jti), and per enrollment the delivered SETs' statuses
              (urn:portcullis:secevent:compliance-status) are exactly the acknowledged status changes (plus the
              in-flight one if it committed) -- so the final acknowledged status arrives. SETs are checked for
              typ, aud and their ES256 signature against the JWKS served after the restart.
Exit status 0 when everything holds, 1 otherwise (the server log tail is printed on failure).
"""

import argparse
import atexit
import base64
import collections
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TENANT = "contoso.example"
MAIL_CLIENT = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
ADMIN_CLIENT = "c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03"
ADMIN_SECRET = "admin-dev-secret-change-me"
USERS = {"alice": ("alice@contoso.example", "Alice-dev-pass1"), "bob": ("bob@contoso.example", "Bob-dev-pass1")}
STATUS_EVENT = "urn:portcullis:secevent:compliance-status"
TIMEOUT = (10, 30)
REPORTS = {  # check-in kinds -> body fields (appliedPolicyVersion is added)
    "good": {"jailbroken": False, "pinSet": True},
    "jailbroken": {"jailbroken": True, "pinSet": True},
    "nopin": {"jailbroken": False, "pinSet": False},
}

failures = []
notes = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, flush=True)


def log(message):
    print(message, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def status_key(status):
    status = status or {}
    return (status.get("status"), status.get("errorTitle"), status.get("errorMessage"))


def show(key):
    return key[0] if not key[1] else "%s (%s)" % (key[0], key[1])


# ---------------------------------------------------------------------------------------------------------------
# The server process


class Server:
    def __init__(self, binary, workdir, port):
        self.binary, self.workdir, self.port = binary, workdir, port
        self.base = "http://127.0.0.1:%d" % port
        self.log_path = os.path.join(workdir, "server.log")
        self.process = None
        self.starts = 0

    def start(self, timeout=60):
        self.starts += 1
        with open(self.log_path, "a") as f:
            f.write("\n===== crash_durability: start #%d =====\n" % self.starts)
            offset = f.tell()
        env = dict(os.environ, PORTCULLIS_BCRYPT_COST="4", PORTCULLIS_CALLBACKS_ALLOW_LOOPBACK="1")
        logfile = open(self.log_path, "a")
        started = time.monotonic()
        self.process = subprocess.Popen(
            [self.binary, "serve", "--config", os.path.join(self.workdir, "config"), "--data", os.path.join(self.workdir, "data"),
             "--keys", os.path.join(self.workdir, "keys"), "--port", str(self.port)],
            cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True)
        logfile.close()
        needle = "Portcullis is listening on http://127.0.0.1:%d" % self.port
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError("the server exited with status %s during start-up" % self.process.returncode)
            with open(self.log_path, "r", errors="replace") as f:
                f.seek(offset)
                if needle in f.read():
                    break
            time.sleep(0.1)
        else:
            raise RuntimeError("the server did not log %r within %d s" % (needle, timeout))
        while time.monotonic() - started < timeout:  # and is ready (store reachable, keys loaded)
            try:
                if requests.get(self.base + "/health/ready", timeout=5).status_code == 200:
                    return time.monotonic() - started
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError("the server did not become ready within %d s" % timeout)

    def kill9(self):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def tail(self, lines=60):
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"


# ---------------------------------------------------------------------------------------------------------------
# The callback receiver (started only after the restart)


class Receiver:
    def __init__(self, port):
        self.port = port
        self.lock = threading.Lock()
        self.received = []  # (arrival monotonic time, jti, header, payload, raw token, content type)
        self.httpd = None

    def start(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("ascii", "replace").strip()
                arrived = time.monotonic()
                try:
                    header_b64, payload_b64, _ = body.split(".")
                    header, payload = json.loads(b64url(header_b64)), json.loads(b64url(payload_b64))
                except ValueError:
                    self.send_response(400)
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.received.append((arrived, payload.get("jti"), header, payload, body, self.headers.get("Content-Type")))
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return time.monotonic()

    def snapshot(self):
        with self.lock:
            return list(self.received)

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()


# ---------------------------------------------------------------------------------------------------------------
# Client state


class Chain:
    def __init__(self, name, user, scope, headers):
        self.name, self.user, self.scope, self.headers = name, user, scope, headers
        self.tokens = []  # every refresh token acknowledged by a 200, in order
        self.rotations = 0
        self.inflight = False
        self.lost = None  # the exception of the request that got no response
        self.unexpected = None
        self.retried_503 = 0
        self.think = 0.0  # pause between requests (idle chains: mostly not in flight at the kill)


class Enrollment:
    def __init__(self, user, device):
        self.user, self.device = user, device
        self.id = self.version = self.access_token = None
        self.expected = []  # status keys of the SETs the acknowledged writes enqueued, in order
        self.last = None  # complianceStatus key of the last acknowledged write
        self.setup_checkins = 0
        self.load_checkins = 0
        self.inflight = None  # the report kind of the request that got no response
        self.lost = None
        self.unexpected = None
        self.retried_503 = 0
        self.think = 0.0
        self.kind_status = {}  # report kind -> status key (learned in setup)

    @property
    def headers(self):
        return {"Authorization": "Bearer " + self.access_token}


class Client:
    def __init__(self, base):
        self.base = base
        self.token_url = "%s/%s/oauth2/v2.0/token" % (base, TENANT)

    def password(self, session, user, scope, headers=None):
        upn, password = USERS[user]
        r = session.post(self.token_url, data={"grant_type": "password", "client_id": MAIL_CLIENT, "username": upn, "password": password,
                                               "scope": scope}, headers=headers, timeout=TIMEOUT)
        if r.status_code != 200:
            raise RuntimeError("password grant for %s (%s): %d %s" % (user, scope, r.status_code, r.text[:300]))
        return r.json()

    def refresh(self, session, token, headers=None):
        return session.post(self.token_url, data={"grant_type": "refresh_token", "client_id": MAIL_CLIENT, "refresh_token": token},
                            headers=headers, timeout=TIMEOUT)

    def admin_token(self):
        r = requests.post(self.token_url, data={"grant_type": "client_credentials", "client_id": ADMIN_CLIENT, "client_secret": ADMIN_SECRET,
                                                "scope": "api://portcullis-admin/.default"}, timeout=TIMEOUT)
        if r.status_code != 200:
            raise RuntimeError("admin token: %d %s" % (r.status_code, r.text[:300]))
        return r.json()["access_token"]

    def outbox(self, admin, state):
        r = requests.get(self.base + "/admin/v1/outbox", params={"state": state, "top": 1000},
                         headers={"Authorization": "Bearer " + admin}, timeout=TIMEOUT)
        if r.status_code != 200:
            raise RuntimeError("GET /admin/v1/outbox?state=%s: %d %s" % (state, r.status_code, r.text[:300]))
        return r.json()["value"]

    def checkin_body(self, enrollment, kind):
        return dict(REPORTS[kind], appliedPolicyVersion=enrollment.version, osVersion="17.4", appVersion="3.1")


# ---------------------------------------------------------------------------------------------------------------
# Load


def chain_worker(client, chain, stop):
    session = requests.Session()
    while True:
        if chain.think and stop.wait(chain.think):
            return
        chain.inflight = True  # raised before the stop check: a request that passes the check is accounted in flight
        if stop.is_set():
            chain.inflight = False
            return
        try:
            r = client.refresh(session, chain.tokens[-1], chain.headers)
        except requests.RequestException as error:
            chain.lost = "%s: %s" % (type(error).__name__, str(error)[:160])
            return  # in flight: outcome unknown
        if r.status_code == 200 and r.json().get("refresh_token"):
            chain.tokens.append(r.json()["refresh_token"])
            chain.rotations += 1
            chain.inflight = False
        elif r.status_code == 503:  # "temporarily_unavailable ... and changes nothing": same token again
            chain.retried_503 += 1
            chain.inflight = False
            time.sleep(0.2)
        else:
            chain.inflight = False
            chain.unexpected = "%d %s" % (r.status_code, r.text[:300])
            return


def enrollment_worker(client, enrollment, stop, rng):
    session = requests.Session()
    kinds, weights = ["good", "jailbroken", "nopin"], [0.4, 0.3, 0.3]
    while True:
        if enrollment.think and stop.wait(enrollment.think):
            return
        kind = rng.choices(kinds, weights)[0]
        enrollment.inflight = kind
        if stop.is_set():
            enrollment.inflight = None
            return
        try:
            r = session.post("%s/mam/v1/enrollments/%s/checkin" % (client.base, enrollment.id), json=client.checkin_body(enrollment, kind),
                             headers=enrollment.headers, timeout=TIMEOUT)
        except requests.RequestException as error:
            enrollment.lost = "%s: %s" % (type(error).__name__, str(error)[:160])
            return
        if r.status_code == 200:
            key = status_key(r.json().get("complianceStatus"))
            if key != enrollment.kind_status[kind]:
                enrollment.unexpected = "a %s check-in answered %s, expected %s" % (kind, show(key), show(enrollment.kind_status[kind]))
                enrollment.inflight = None
                return
            if key != enrollment.last:
                enrollment.expected.append(key)
            enrollment.last = key
            enrollment.load_checkins += 1
            enrollment.inflight = None
        elif r.status_code == 503:
            enrollment.retried_503 += 1
            enrollment.inflight = None
            time.sleep(0.2)
        else:
            enrollment.inflight = None
            enrollment.unexpected = "%d %s" % (r.status_code, r.text[:300])
            return


# ---------------------------------------------------------------------------------------------------------------
# SET signatures


def verify_signature(token, jwks):
    """ES256/RS256 against the JWKS; None when the `cryptography` package is missing."""
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    except ImportError:
        return None
    header_b64, payload_b64, signature_b64 = token.split(".")
    header = json.loads(b64url(header_b64))
    key = next((k for k in jwks.get("keys", []) if k.get("kid") == header.get("kid")), None)
    if key is None:
        return False
    signed, signature = (header_b64 + "." + payload_b64).encode(), b64url(signature_b64)
    as_int = lambda v: int.from_bytes(b64url(v), "big")
    try:
        if header.get("alg") == "ES256" and key.get("kty") == "EC":
            public = ec.EllipticCurvePublicNumbers(as_int(key["x"]), as_int(key["y"]), ec.SECP256R1()).public_key()
            public.verify(encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")), signed,
                          ec.ECDSA(hashes.SHA256()))
        elif header.get("alg") == "RS256" and key.get("kty") == "RSA":
            rsa.RSAPublicNumbers(as_int(key["e"]), as_int(key["n"])).public_key().verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
        else:
            return False
    except InvalidSignature:
        return False
    return True


# ---------------------------------------------------------------------------------------------------------------
# The test


def prepare(workdir, receiver_port):
    config = os.path.join(workdir, "config")
    shutil.copytree(os.path.join(REPO, "Config"), config)
    os.makedirs(os.path.join(workdir, "data"))
    os.makedirs(os.path.join(workdir, "keys"))
    callback = "http://127.0.0.1:%d/compliance" % receiver_port
    path = os.path.join(config, "directory.json")
    with open(path) as f:
        directory = json.load(f)
    for tenant in directory["tenants"]:
        for app in tenant.get("applications", []):
            if app.get("appId") == MAIL_CLIENT:
                app["complianceCallbackUris"] = [callback]
    with open(path, "w") as f:
        json.dump(directory, f, indent=2)
    path = os.path.join(config, "portcullis.json")
    with open(path) as f:
        settings = json.load(f)
    settings["callbacks"] = dict(settings.get("callbacks", {}), baseDelaySeconds=1, maxDelaySeconds=2, maxAttempts=100)
    settings["passwords"] = dict(settings.get("passwords", {}), bcryptCost=4)
    with open(path, "w") as f:
        json.dump(settings, f, indent=2)
    return callback


def setup(client, callback, chains_per_user, enrollments_per_user, run_id):
    session = requests.Session()
    chains, enrollments = [], []
    for user in USERS:
        for i in range(chains_per_user):
            if i % 2 == 0:
                chain = Chain("%s/%d" % (user, i), user, "openid profile offline_access", {})
            else:  # through conditional access: the app-protection policy excludes desktop platforms
                chain = Chain("%s/%d" % (user, i), user, "api://contoso-mail/Mail.Read offline_access", {"x-client-OS": "linux"})
            reply = client.password(session, user, chain.scope, chain.headers)
            if i >= chains_per_user // 2:
                chain.think = 0.15 + 0.25 * (i % 2)
            if not reply.get("refresh_token"):
                raise RuntimeError("no refresh token for %s: %s" % (chain.name, reply))
            chain.tokens.append(reply["refresh_token"])
            chains.append(chain)
        access = client.password(session, user, "api://portcullis-compliance/.default")["access_token"]
        for i in range(enrollments_per_user):
            enrollment = Enrollment(user, "crash-%s-%s-%d" % (run_id, user, i))
            enrollment.access_token = access
            if i >= enrollments_per_user // 2:
                enrollment.think = 0.2
            r = session.post(client.base + "/mam/v1/remediations", headers=enrollment.headers, timeout=TIMEOUT, json={
                "deviceId": enrollment.device, "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1", "silent": False, "callbackUri": callback})
            body = r.json() if r.headers.get("Content-Type", "").startswith("application/json") else {}
            if r.status_code != 200 or not body.get("enrollmentId") or not (body.get("policy") or {}).get("version"):
                raise RuntimeError("remediation for %s: %d %s" % (enrollment.device, r.status_code, r.text[:300]))
            enrollment.id, enrollment.version = body["enrollmentId"], body["policy"]["version"]
            enrollment.last = status_key(body.get("complianceStatus"))
            enrollment.expected.append(enrollment.last)  # the enrollment's creation announces its first status
            for kind in ("nopin", "jailbroken", "good"):  # learn each report's status; ends compliant
                r = session.post("%s/mam/v1/enrollments/%s/checkin" % (client.base, enrollment.id), json=client.checkin_body(enrollment, kind),
                                 headers=enrollment.headers, timeout=TIMEOUT)
                if r.status_code != 200:
                    raise RuntimeError("check-in (%s) of %s: %d %s" % (kind, enrollment.device, r.status_code, r.text[:300]))
                key = status_key(r.json().get("complianceStatus"))
                enrollment.kind_status[kind] = key
                if key != enrollment.last:
                    enrollment.expected.append(key)
                enrollment.last = key
                enrollment.setup_checkins += 1
            if enrollment.last[0] != "compliant":
                raise RuntimeError("enrollment %s did not become compliant: %s" % (enrollment.device, enrollment.last))
            if len(set(enrollment.kind_status.values())) != 3:
                raise RuntimeError("the three reports should give three distinct statuses: %s" % enrollment.kind_status)
            enrollments.append(enrollment)
    return chains, enrollments


def verify_chains(client, chains):
    """(a) Returns figures."""
    session = requests.Session()
    figures = collections.Counter()
    for chain in chains:
        last = chain.tokens[-1]
        r = client.refresh(session, last, chain.headers)
        error = r.json().get("error") if r.headers.get("Content-Type", "").startswith("application/json") else None
        if r.status_code == 200 and r.json().get("refresh_token"):
            figures["redeemed"] += 1
            figures["inflight_not_committed" if chain.inflight else "idle_redeemed"] += 1
            successor = r.json()["refresh_token"]
            # The acknowledged rotation before the last one consumed its token: presenting it again must be refused
            # (and revoke the family), which then also kills the successor just issued.
            if len(chain.tokens) >= 2:
                replay = client.refresh(session, chain.tokens[-2], chain.headers)
                after = client.refresh(session, successor, chain.headers)
                if replay.status_code == 400 and after.status_code == 400:
                    figures["replay_detected"] += 1
                else:
                    fail("chain %s: after the restart the rotated token answered %d (want 400) and then the family's newest token %d (want 400: "
                         "family revoked)" % (chain.name, replay.status_code, after.status_code))
        elif chain.inflight and r.status_code == 400 and error == "invalid_grant" and 70008 in (r.json().get("error_codes") or []):
            # Known and already used (70008, not 9002313 "not valid"): the lost response's rotation committed. Acceptable.
            figures["inflight_committed"] += 1
        else:
            fail("chain %s: the last acknowledged refresh token (after %d acknowledged rotations, %s at the kill) answered %d %s" % (
                chain.name, chain.rotations, "in flight" if chain.inflight else "idle", r.status_code, r.text[:300]))
    return figures


def verify_enrollments(client, enrollments, admin):
    """(b) Sets enrollment.committed (whether the in-flight check-in committed) and returns figures."""
    session = requests.Session()
    figures = collections.Counter()
    fresh = {}
    for enrollment in enrollments:
        enrollment.committed = None
        r = session.get("%s/mam/v1/enrollments/%s" % (client.base, enrollment.id), headers=enrollment.headers, timeout=TIMEOUT)
        if r.status_code == 401:
            fail("enrollment %s: an access token issued before the kill was refused after the restart (401)" % enrollment.device)
            if enrollment.user not in fresh:
                fresh[enrollment.user] = client.password(session, enrollment.user, "api://portcullis-compliance/.default")["access_token"]
            enrollment.access_token = fresh[enrollment.user]
            r = session.get("%s/mam/v1/enrollments/%s" % (client.base, enrollment.id), headers=enrollment.headers, timeout=TIMEOUT)
        if r.status_code != 200:
            fail("enrollment %s: GET /mam/v1/enrollments/{id} answered %d %s" % (enrollment.device, r.status_code, r.text[:300]))
            continue
        shown = status_key(r.json().get("complianceStatus"))
        d = session.get("%s/admin/v1/enrollments/%s" % (client.base, enrollment.id), headers={"Authorization": "Bearer " + admin}, timeout=TIMEOUT)
        if d.status_code != 200:
            fail("enrollment %s: GET /admin/v1/enrollments/{id} answered %d %s" % (enrollment.device, d.status_code, d.text[:300]))
            continue
        detail = d.json()
        stored = detail["enrollment"]
        checkins = sum(1 for h in detail.get("history", []) if h.get("event") == "checkIn")
        acknowledged = enrollment.setup_checkins + enrollment.load_checkins
        if stored.get("appliedPolicyVersion") != enrollment.version:
            fail("enrollment %s: acknowledged policy version %s, stored %s" % (enrollment.device, enrollment.version, stored.get("appliedPolicyVersion")))
        if (r.json().get("policy") or {}).get("version") not in (None, enrollment.version):
            fail("enrollment %s: policy version %s, acknowledged %s" % (enrollment.device, r.json()["policy"]["version"], enrollment.version))
        if checkins == acknowledged:
            enrollment.committed = False
            want = enrollment.last
        elif checkins == acknowledged + 1 and enrollment.inflight:
            enrollment.committed = True
            want = enrollment.kind_status[enrollment.inflight]
            figures["inflight_committed"] += 1
        else:
            fail("enrollment %s: %d check-ins acknowledged (%s at the kill), %d in the stored history" % (
                enrollment.device, acknowledged, "one more in flight" if enrollment.inflight else "none in flight", checkins))
            continue
        if enrollment.inflight and not enrollment.committed:
            figures["inflight_not_committed"] += 1
        if shown != want or status_key(stored.get("complianceStatus")) != want:
            fail("enrollment %s: last acknowledged status %s, after the restart GET shows %s (stored %s)" % (
                enrollment.device, show(want), show(shown), show(status_key(stored.get("complianceStatus")))))
        else:
            figures["verified"] += 1
            if want[0] == "compliant":
                figures["compliant"] += 1
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/debug/portcullis")
    parser.add_argument("--load-seconds", type=float, default=None, help="load before the kill (default: random in 2.0-3.0)")
    parser.add_argument("--chains-per-user", type=int, default=4)
    parser.add_argument("--enrollments-per-user", type=int, default=2)
    parser.add_argument("--callback-timeout", type=float, default=90)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    binary = args.binary
    if not os.path.isabs(binary) and not os.path.exists(binary):
        binary = os.path.join(REPO, binary)
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        print("no executable at %s" % binary, file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    rng = random.Random(seed)
    load_seconds = args.load_seconds if args.load_seconds is not None else rng.uniform(2.0, 3.0)
    began = time.monotonic()

    workdir = tempfile.mkdtemp(prefix="portcullis-crash-")
    port, receiver_port = free_port(), free_port()
    while receiver_port == port:
        receiver_port = free_port()
    server = Server(binary, workdir, port)
    receiver = Receiver(receiver_port)

    def cleanup():
        server.kill9()
        receiver.stop()

    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    log("binary %s\nworkdir %s, server port %d, callback receiver port %d (not listening until after the restart), seed %d, load %.2f s"
        % (binary, workdir, port, receiver_port, seed, load_seconds))

    try:
        callback = prepare(workdir, receiver_port)
        log("server started in %.1f s" % server.start())
        client = Client(server.base)
        chains, enrollments = setup(client, callback, args.chains_per_user, args.enrollments_per_user, "%x" % seed)
        admin = client.admin_token()
        log("setup: %d refresh-token chains, %d enrollments (all compliant), %d callbacks pending" % (
            len(chains), len(enrollments), len(client.outbox(admin, "pending"))))

        # ---- load, then SIGKILL
        stop = threading.Event()
        threads = [threading.Thread(target=chain_worker, args=(client, c, stop), daemon=True) for c in chains]
        threads += [threading.Thread(target=enrollment_worker, args=(client, e, stop, random.Random(rng.random())), daemon=True) for e in enrollments]
        for t in threads:
            t.start()
        time.sleep(max(0.0, load_seconds - 0.3))
        pending_before = client.outbox(admin, "pending")
        time.sleep(0.3)
        stop.set()
        server.kill9()
        killed_at = time.monotonic()
        for t in threads:
            t.join(timeout=60)
        if any(t.is_alive() for t in threads):
            raise RuntimeError("load threads did not finish after the kill")
        for c in chains:
            if c.unexpected:
                fail("chain %s during load: %s" % (c.name, c.unexpected))
        for e in enrollments:
            if e.unexpected:
                fail("enrollment %s during load: %s" % (e.device, e.unexpected))
        rotations = sum(c.rotations for c in chains)
        checkins = sum(e.load_checkins for e in enrollments)
        chains_inflight = sum(1 for c in chains if c.inflight)
        enrollments_inflight = sum(1 for e in enrollments if e.inflight)
        retried = sum(c.retried_503 for c in chains) + sum(e.retried_503 for e in enrollments)
        pending_jtis = {m["jti"] for m in pending_before}
        attempted = sum(1 for m in pending_before if m.get("attempts", 0) > 0)
        log("load: %.2f s, %d rotations acknowledged (%.0f/s), %d check-ins acknowledged (%.0f/s), %d status changes acknowledged%s" % (
            load_seconds, rotations, rotations / load_seconds, checkins, checkins / load_seconds,
            sum(len(e.expected) for e in enrollments), ", %d answers 503 (retried)" % retried if retried else ""))
        log("kill -9: in flight %d/%d chains, %d/%d enrollments; pending callbacks listed just before the kill: %d (%d already failed at least once)" % (
            chains_inflight, len(chains), enrollments_inflight, len(enrollments), len(pending_before), attempted))
        if len(pending_before) >= 1000:
            notes.append("the pending listing is capped at 1000: the pre-kill snapshot holds only the newest 1000")

        # ---- restart on the same data and keys
        log("restarted in %.1f s" % server.start())
        restarted_at = time.monotonic()
        admin = client.admin_token()
        pending_after = client.outbox(admin, "pending")
        missing = pending_jtis - {m["jti"] for m in pending_after}
        if missing and len(pending_after) < 1000:
            fail("%d callback messages pending before the kill are not pending after the restart (e.g. %s)" % (len(missing), sorted(missing)[:3]))
        log("after the restart: %d callbacks pending (%d before the kill)" % (len(pending_after), len(pending_before)))

        # (a) and (b) read and redeem; the receiver starts first so that delivery runs meanwhile.
        receiver_started = receiver.start()
        chain_figures = verify_chains(client, chains)
        enrollment_figures = verify_enrollments(client, enrollments, admin)
        log("(a) refresh chains: %d/%d last acknowledged tokens redeemed after the restart (%d idle at the kill, %d in flight whose rotation "
            "had not committed), %d in flight whose rotation had committed (400 invalid_grant 70008, accepted); rotated-token replay refused "
            "and family revoked on %d" % (chain_figures["redeemed"], len(chains), chain_figures["idle_redeemed"], chain_figures["inflight_not_committed"],
                                          chain_figures["inflight_committed"], chain_figures["replay_detected"]))
        log("(b) enrollments: %d/%d show their last acknowledged status and policy version (%d compliant); in-flight check-ins committed %d, "
            "not committed %d" % (enrollment_figures["verified"], len(enrollments), enrollment_figures["compliant"],
                                  enrollment_figures["inflight_committed"], enrollment_figures["inflight_not_committed"]))

        # (c) callbacks
        by_enrollment = {e.id: e for e in enrollments}

        def delivered():
            unique = {}
            for arrived, jti, header, payload, raw, ctype in receiver.snapshot():
                unique.setdefault(jti, (arrived, header, payload, raw, ctype))
            return unique

        def satisfied(unique):
            if not pending_jtis <= set(unique):
                return False
            got = collections.defaultdict(collections.Counter)
            for _, _, payload, _, _ in unique.values():
                event = payload.get("events", {}).get(STATUS_EVENT) or {}
                got[event.get("enrollmentId")][status_key(event)] += 1
            return all(not (collections.Counter(e.expected) - got[e.id]) for e in enrollments)

        deadline = receiver_started + args.callback_timeout
        complete_at = None
        pending_left = None
        while time.monotonic() < deadline:
            unique = delivered()
            if satisfied(unique):
                complete_at = complete_at or (max(v[0] for v in unique.values()) if unique else time.monotonic())
                pending_left = len(client.outbox(admin, "pending"))
                if pending_left == 0:
                    break
            time.sleep(0.5)
        unique = delivered()
        raw_count = len(receiver.snapshot())
        jwks = requests.get("%s/%s/discovery/v2.0/keys" % (server.base, TENANT), timeout=TIMEOUT).json()
        bad_signatures, unverified, bad_shape = 0, 0, 0
        got = collections.defaultdict(list)
        for jti, (arrived, header, payload, raw, ctype) in unique.items():
            ok = verify_signature(raw, jwks)
            if ok is None:
                unverified += 1
            elif not ok:
                bad_signatures += 1
            event = payload.get("events", {}).get(STATUS_EVENT)
            if header.get("typ") != "secevent+jwt" or payload.get("aud") != MAIL_CLIENT or not event or (ctype or "").split(";")[0] != "application/secevent+jwt":
                bad_shape += 1
                continue
            got[event.get("enrollmentId")].append((arrived, status_key(event)))
        if bad_signatures:
            fail("%d delivered SETs do not verify against the JWKS served after the restart" % bad_signatures)
        if bad_shape:
            fail("%d delivered SETs lack typ secevent+jwt, aud %s, the compliance-status event or the content type" % (bad_shape, MAIL_CLIENT))
        lost = pending_jtis - set(unique)
        if lost:
            fail("(c) %d of the %d callbacks pending before the kill never arrived within %.0f s" % (len(lost), len(pending_jtis), args.callback_timeout))
        for e in enrollments:
            received = collections.Counter(key for _, key in got.get(e.id, []))
            expected = collections.Counter(e.expected)
            short = expected - received
            extra = received - expected
            allowed = collections.Counter()
            if getattr(e, "committed", None) and e.kind_status[e.inflight] != e.last:
                allowed[e.kind_status[e.inflight]] = 1  # the committed in-flight check-in changed the status
            if short:
                fail("(c) enrollment %s: acknowledged status changes without a delivered SET: %s" % (
                    e.device, ", ".join("%dx %s" % (n, show(k)) for k, n in short.items())))
            if extra - allowed:
                fail("(c) enrollment %s: SETs for status changes that were never acknowledged: %s" % (
                    e.device, ", ".join("%dx %s" % (n, show(k)) for k, n in (extra - allowed).items())))
            if allowed and not extra:
                fail("(c) enrollment %s: the in-flight check-in committed (%s) but its SET did not arrive" % (e.device, show(e.kind_status[e.inflight])))
        for id_ in got:
            if id_ not in by_enrollment:
                fail("(c) a SET for an unknown enrollment %s arrived" % id_)
        dead = client.outbox(admin, "deadLetter")
        if dead:
            fail("(c) %d callback messages went to the dead letters" % len(dead))
        compliant_final = sum(1 for e in enrollments if (e.kind_status[e.inflight] if getattr(e, "committed", None) else e.last)[0] == "compliant")
        final_delivered = sum(1 for e in enrollments if (e.kind_status[e.inflight] if getattr(e, "committed", None) else e.last) in {k for _, k in got.get(e.id, [])})
        log("(c) callbacks: %d SETs expected from acknowledged writes, %d pending before the kill; %d delivered after the restart (%d deliveries, %d "
            "duplicates by jti), all pre-kill pending arrived: %s; final status delivered for %d/%d enrollments (%d final compliant); signatures %s"
            % (sum(len(e.expected) for e in enrollments), len(pending_jtis), len(unique), raw_count, raw_count - len(unique),
               "yes" if not lost else "NO (%d missing)" % len(lost), final_delivered, len(enrollments), compliant_final,
               "not checked (no cryptography package)" if unverified else "verified"))
        if complete_at:
            arrivals = sorted(v[0] - receiver_started for v in unique.values())
            log("    time to deliver: all expected %.1f s after the receiver started (%.1f s after the restart, %.1f s after the kill); "
                "first %.1f s, median %.1f s; outbox pending afterwards: %s" % (
                    complete_at - receiver_started, complete_at - restarted_at, complete_at - killed_at, max(0.0, arrivals[0]),
                    arrivals[len(arrivals) // 2], pending_left))
        else:
            log("    not all expected callbacks arrived within %.0f s" % args.callback_timeout)
    except Exception as error:  # setup or infrastructure trouble is a failure too
        fail("%s: %s" % (type(error).__name__, error))
    finally:
        server.kill9()
        receiver.stop()

    for note in notes:
        log("note: " + note)
    log("runtime %.1f s" % (time.monotonic() - began))
    if failures:
        log("\n--- server log tail (%s) ---\n%s--- end of the server log ---" % (server.log_path, server.tail()))
        log("kept %s" % workdir)
        log("\nFAILED (%d):\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    log("PASSED")
    if args.keep:
        log("kept %s" % workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
