#!/usr/bin/env python3
"""Continuous access evaluation (PROTOCOL §14) against a real Portcullis binary: an independent Shared Signals receiver
written here (http.server + PyJWT), and MSAL for Python through `portcullis gateway`.

    python3 Tests/Interop/cae_interop.py [--binary .build/debug/portcullis] [--keep]

What it does
  setup     Config/ copied with a receiver application (client credentials, SSF.Receiver on api://portcullis-ssf), a
            receiver without the role, and the mail API flagged continuousAccessEvaluation; `portcullis serve`.
  receiver  every SET is verified with PyJWT against the tenant's JWKS: header typ secevent+jwt, signature, iss = the
            metadata's issuer, aud = the receiver's appId, iat near now, jti never seen before, exactly one event of a
            known type, sub_id in an SSF subject format (complex: user iss_sub with the issuer, tenant opaque).
            - metadata at both paths (spec_version 1_0, both delivery methods, endpoints, default_subjects ALL);
            - no token 401, a token for another resource 401, an application without SSF.Receiver gets no token;
            - a push stream (authorization_header checked on every delivery) and a poll stream; read, list, PATCH,
              status; another receiver cannot see them (404);
            - verification: the state comes back by push and by poll;
            - for each admin action — disable, enable, password reset, revokeSignInSessions, confirmCompromised, a
              display-name change — the expected SETs arrive by push and by poll, with the latency from the admin
              call's answer to receipt (push) and to the poll's answer (poll, a long poll waiting when the call is made);
            - faults: a push receiver down (connection refused) then back gets every SET, in order; one answering 400
              with `err` gets the SET once (not retried) and the admin API shows it dead-lettered; a paused poll stream
              answers nothing, keeps its events and delivers them after resume; ack removes them.
  gateway   an upstream (http.server) behind `portcullis gateway --ssf-client-id … --ssf-client-secret …`; the token
            requests MSAL makes for a client with client_capabilities=["cp1"] (claims xms_cc, password grant as Erin; MSAL
            for Python itself needs an https authority): a token for the CAE-flagged mail API that lives ~24 h with xms_cc
            cp1 (without cp1: one hour); 200 through the gateway; five trials of: Erin disabled → the gateway answers 401
            Bearer error="insufficient_claims" with claims = base64 of the nbf claims request (latency measured); the
            refresh with that claims request is refused (invalid_grant: Erin is disabled); Erin enabled again → a new
            token with the claims request (iat ≥ nbf) passes the gateway. Revocation that holds (PROTOCOL §14.1): an nbf
            75 s ahead refused; for revokeSignInSessions, confirmCompromised and a password reset, the old token is
            challenged, the challenge answered with the OLD refresh token refused, and a fresh sign-in made right after
            the revocation (within its second) passes. Then a conditional-access policy that now blocks Erin at the mail
            API: session-revoked for Erin at the mail app (initiating_entity policy), the gateway answers 401
            insufficient_claims, the refresh with the claims is refused (the replay revoked her family at the app: 70008);
            the policy deleted, a new token passes. The gateway's health (200 connected). A second gateway with a wrong
            receiver secret: its set-ups back off (a few token requests), health 503 with the reason, and a cp1 token
            older than --max-token-age is challenged.
Exit status 0 when every check passes, 1 otherwise, 2 when a prerequisite is missing.
"""

import argparse
import base64
import http.server
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpop_interop import Checks, GatewayProcess, Server, free_port  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TENANT = "contoso.example"
TENANT_ID = "7e1b0c54-2f6a-4c1e-9d3b-5a8f0e2c4b71"
ADMIN = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
RECEIVER = ("c0ffee00-5555-4a2b-8c3d-4e5f6a7b8c05", "ssf-receiver-secret")
OUTSIDER = ("c0ffee00-6666-4a2b-8c3d-4e5f6a7b8c06", "ssf-outsider-secret")
GATEWAY_RECEIVER = ("c0ffee00-7777-4a2b-8c3d-4e5f6a7b8c07", "ssf-gateway-secret")
MAIL = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
MAIL_API = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"
ERIN = ("erin@contoso.example", "Erin-dev-pass1", "4a5c7e5d-9f1b-4c6e-8a0d-5b7f9e1c3d05")
CAEP = "https://schemas.openid.net/secevent/caep/event-type/"
RISC = "https://schemas.openid.net/secevent/risc/event-type/"
SSF = "https://schemas.openid.net/secevent/ssf/event-type/"
ALL_EVENTS = [CAEP + e for e in ["session-revoked", "credential-change", "assurance-level-change", "device-compliance-change",
                                 "token-claims-change"]] + [RISC + e for e in ["account-disabled", "account-enabled", "account-purged",
                                                                               "credential-compromise"]]
PUSH_AUTH = "Bearer push-receiver-secret"


def prepare_config(workdir):
    config = os.path.join(workdir, "config")
    shutil.copytree(os.path.join(REPO, "Config"), config)
    path = os.path.join(config, "directory.json")
    with open(path) as f:
        directory = json.load(f)
    tenant = next(t for t in directory["tenants"] if t["domain"] == TENANT)
    for app_id, secret, name in [RECEIVER + ("SSF receiver (cae_interop)",), OUTSIDER + ("no role (cae_interop)",),
                                 GATEWAY_RECEIVER + ("gateway receiver (cae_interop)",)]:
        tenant["applications"].append({
            "appId": app_id, "displayName": name, "publicClient": False, "secrets": [{"secret": secret}],
            "allowedGrantTypes": ["client_credentials"],
            "requiredResourceAccess": [{"resourceAppId": "api://portcullis-ssf", "appRoles": ["SSF.Receiver"]}],
        })
    for app_id in (RECEIVER[0], GATEWAY_RECEIVER[0]):
        tenant["appRoleAssignments"].append({"principalId": app_id, "resource": "api://portcullis-ssf", "role": "SSF.Receiver"})
    mail_api = next(a for a in tenant["applications"] if a["appId"] == MAIL_API)
    mail_api["continuousAccessEvaluation"] = True
    with open(path, "w") as f:
        json.dump(directory, f, indent=2)
    settings_path = os.path.join(config, "portcullis.json")
    with open(settings_path) as f:
        settings = json.load(f)
    settings.setdefault("callbacks", {}).update({"baseDelaySeconds": 1, "maxDelaySeconds": 2, "allowPrivateNetworks": True, "allowLoopback": True})
    # The fault checks verify a stream several times in a row to see the order of what it delivers.
    settings.setdefault("signals", {}).update({"minimumVerificationIntervalSeconds": 0})
    with open(settings_path, "w") as f:
        json.dump(settings, f, indent=2)
    return config


class PushReceiver:
    """An RFC 8935 push endpoint: records (arrival time, Authorization, SET); answers 202, or 400 with `err` (mode
    "reject"); `stop()` closes the socket (connection refused) and `start()` opens it again on the same port."""

    def __init__(self):
        self.port = free_port()
        self.received = []
        self.mode = "accept"
        self.lock = threading.Lock()
        self.server = None

    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                with receiver.lock:
                    receiver.received.append((time.monotonic(), self.headers.get("Authorization"), self.headers.get("Content-Type"), body))
                if receiver.mode == "reject":
                    payload = b'{"err":"invalid_request","description":"rejected by the test"}'
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                else:
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self):
        return "http://127.0.0.1:%d/events" % self.port

    def count(self):
        with self.lock:
            return len(self.received)

    def wait_for(self, count, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count() >= count:
                return True
            time.sleep(0.005)
        return False


class Run:
    def __init__(self, base, checks):
        import requests
        self.requests = requests
        self.base, self.checks = base, checks
        self.authority = "%s/%s" % (base, TENANT)
        self.issuer = "%s/%s/v2.0" % (base, TENANT_ID)
        self.jwks = None
        self.seen_jti = set()
        self.admin_token = self.client_token(ADMIN, "api://portcullis-admin/.default")

    def client_token(self, client, scope):
        response = self.requests.post(self.authority + "/oauth2/v2.0/token", data={
            "grant_type": "client_credentials", "client_id": client[0], "client_secret": client[1], "scope": scope}, timeout=30)
        response.raise_for_status()
        return response.json()["access_token"]

    def admin(self, method, path, **kwargs):
        headers = dict(kwargs.pop("headers", {}), Authorization="Bearer " + self.admin_token)
        return self.requests.request(method, self.base + "/admin/v1" + path, headers=headers, timeout=30, **kwargs)

    # ---- SET verification (PyJWT, independent of the server's code)

    def verify_set(self, token, audience):
        import jwt
        if self.jwks is None:
            self.jwks = jwt.PyJWKClient(self.requests.get(self.authority + "/.well-known/ssf-configuration", timeout=10).json()["jwks_uri"])
        header = jwt.get_unverified_header(token)
        assert header.get("typ") == "secevent+jwt", "typ %r" % header.get("typ")
        key = self.jwks.get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key.key, algorithms=["ES256", "RS256", "EdDSA"], audience=audience, issuer=self.issuer,
                            options={"require": ["iss", "aud", "iat", "jti"], "verify_exp": False})
        assert abs(claims["iat"] - time.time()) < 120, "iat %r" % claims["iat"]
        assert claims["jti"] not in self.seen_jti, "jti %s seen before" % claims["jti"]
        self.seen_jti.add(claims["jti"])
        events = claims["events"]
        assert len(events) == 1, "events %r" % events
        (event_type, members), = events.items()
        assert event_type in ALL_EVENTS + [SSF + "verification"], "event type %s" % event_type
        subject = claims["sub_id"]
        assert subject["format"] in ("complex", "opaque", "iss_sub", "email"), "sub_id %r" % subject
        if subject["format"] == "complex":
            assert subject["user"] == {"format": "iss_sub", "iss": self.issuer, "sub": subject["user"]["sub"]}, subject
            assert subject["tenant"] == {"format": "opaque", "id": TENANT_ID}, subject
        return claims, event_type, members

    # ---- the groups

    def metadata(self):
        c = self.checks
        for path in ("/%s/.well-known/ssf-configuration" % TENANT, "/.well-known/ssf-configuration/%s" % TENANT_ID):
            response = self.requests.get(self.base + path, timeout=10)
            body = response.json() if response.status_code == 200 else {}
            c.check("metadata at %s" % path, response.status_code == 200 and body.get("spec_version") == "1_0"
                    and body.get("issuer") == self.issuer
                    and set(body.get("delivery_methods_supported", [])) == {"urn:ietf:rfc:8935", "urn:ietf:rfc:8936"}
                    and body.get("default_subjects") == "ALL"
                    and all(body.get(k) for k in ("jwks_uri", "configuration_endpoint", "status_endpoint", "add_subject_endpoint",
                                                  "remove_subject_endpoint", "verification_endpoint")), body)
        self.endpoint = body["configuration_endpoint"]
        self.status_endpoint = body["status_endpoint"]
        self.verify_endpoint = body["verification_endpoint"]
        response = self.requests.get(self.endpoint, timeout=10)
        c.check("no token: 401", response.status_code == 401, response.status_code)
        response = self.requests.post(self.authority + "/oauth2/v2.0/token", data={
            "grant_type": "client_credentials", "client_id": OUTSIDER[0], "client_secret": OUTSIDER[1],
            "scope": "api://portcullis-ssf/.default"}, timeout=30)
        c.check("an application not assigned SSF.Receiver gets no token for the transmitter", response.status_code == 400, response.text)
        response = self.requests.get(self.endpoint, headers={"Authorization": "Bearer " + self.admin_token}, timeout=10)
        c.check("a token for another resource (the admin API): 401", response.status_code == 401, response.status_code)

    def streams(self, push):
        c = self.checks
        self.receiver_token = self.client_token(RECEIVER, "api://portcullis-ssf/.default")
        auth = {"Authorization": "Bearer " + self.receiver_token}
        response = self.requests.post(self.endpoint, headers=auth, json={
            "events_requested": ALL_EVENTS, "description": "push (cae_interop)",
            "delivery": {"method": "urn:ietf:rfc:8935", "endpoint_url": push.url, "authorization_header": PUSH_AUTH}}, timeout=10)
        self.push_stream = response.json() if response.status_code == 201 else {}
        c.check("create a push stream: 201 with events_delivered = requested, aud = the receiver",
                response.status_code == 201 and sorted(self.push_stream.get("events_delivered", [])) == sorted(ALL_EVENTS)
                and self.push_stream.get("aud") == RECEIVER[0] and self.push_stream.get("iss") == self.issuer, response.text)
        response = self.requests.post(self.endpoint, headers=auth, json={
            "events_requested": ALL_EVENTS, "delivery": {"method": "urn:ietf:rfc:8936"}, "description": "poll (cae_interop)"}, timeout=10)
        self.poll_stream = response.json() if response.status_code == 201 else {}
        self.poll_url = self.poll_stream.get("delivery", {}).get("endpoint_url")
        c.check("create a poll stream: 201 with the poll endpoint_url", response.status_code == 201 and bool(self.poll_url), response.text)
        response = self.requests.get(self.endpoint, headers=auth, timeout=10)
        ids = sorted(s["stream_id"] for s in response.json()) if response.status_code == 200 else []
        c.check("list: both streams", ids == sorted([self.push_stream.get("stream_id"), self.poll_stream.get("stream_id")]), response.text)
        response = self.requests.post(self.endpoint, headers=auth, json={"delivery": {"method": "urn:ietf:rfc:8935"}}, timeout=10)
        c.check("push without endpoint_url: 400 with a pointer", response.status_code == 400
                and "/delivery/endpoint_url" in response.text, response.text)
        response = self.requests.patch(self.endpoint, headers=auth, json={
            "stream_id": self.poll_stream["stream_id"], "description": "poll stream (cae_interop)"}, timeout=10)
        c.check("PATCH the description", response.status_code == 200 and response.json().get("description") == "poll stream (cae_interop)",
                response.text)
        gateway_token = self.client_token(GATEWAY_RECEIVER, "api://portcullis-ssf/.default")
        response = self.requests.get(self.endpoint, params={"stream_id": self.push_stream["stream_id"]},
                                     headers={"Authorization": "Bearer " + gateway_token}, timeout=10)
        c.check("another receiver cannot read the stream: 404", response.status_code == 404, response.status_code)
        response = self.requests.get(self.status_endpoint, params={"stream_id": self.poll_stream["stream_id"]}, headers=auth, timeout=10)
        c.check("status: enabled", response.status_code == 200 and response.json().get("status") == "enabled", response.text)

    def poll(self, body, timeout=40):
        response = self.requests.post(self.poll_url, headers={"Authorization": "Bearer " + self.receiver_token}, json=body, timeout=timeout)
        response.raise_for_status()
        return response.json()

    def drain_poll(self):
        """Polls until empty, acknowledging everything; returns the verified SETs."""
        found = []
        acks = []
        while True:
            answer = self.poll({"maxEvents": 100, "returnImmediately": True, "ack": acks})
            acks = list(answer["sets"].keys())
            for jti in acks:
                found.append(self.verify_set(answer["sets"][jti], RECEIVER[0]))
            if not acks:
                return found

    def verification(self, push):
        c = self.checks
        auth = {"Authorization": "Bearer " + self.receiver_token}
        before = push.count()
        for stream, state in ((self.push_stream, "push-state-1"), (self.poll_stream, "poll-state-1")):
            response = self.requests.post(self.verify_endpoint, headers=auth, json={"stream_id": stream["stream_id"], "state": state}, timeout=10)
            c.check("verify %s: 204" % state, response.status_code == 204, response.text)
        push.wait_for(before + 1)
        _, authorization, content_type, token = push.received[before]
        claims, event_type, members = self.verify_set(token, RECEIVER[0])
        c.check("push: the verification SET with its state, Authorization and content type as configured",
                event_type == SSF + "verification" and members.get("state") == "push-state-1" and authorization == PUSH_AUTH
                and content_type == "application/secevent+jwt"
                and claims["sub_id"] == {"format": "opaque", "id": self.push_stream["stream_id"]}, (claims, authorization, content_type))
        found = self.drain_poll()
        c.check("poll: the verification SET with its state", [(t, m.get("state")) for _, t, m in found] == [(SSF + "verification", "poll-state-1")],
                found)

    def user(self):
        response = self.admin("GET", "/users/" + ERIN[2])
        return response.json(), response.headers["ETag"]

    def replace_user(self, change):
        document, etag = self.user()
        document.update(change)
        response = self.admin("PUT", "/users/" + ERIN[2], json=document, headers={"If-Match": etag})
        response.raise_for_status()

    ACTIONS = [
        ("disable", lambda self: self.replace_user({"accountEnabled": False}), [RISC + "account-disabled", CAEP + "session-revoked"]),
        ("enable", lambda self: self.replace_user({"accountEnabled": True}), [RISC + "account-enabled"]),
        ("password reset", lambda self: self.replace_user({"password": "Erin-new-pass2"}), [CAEP + "credential-change", CAEP + "session-revoked"]),
        ("password back", lambda self: self.replace_user({"password": ERIN[1]}), [CAEP + "credential-change", CAEP + "session-revoked"]),
        ("revokeSignInSessions", lambda self: self.admin("POST", "/users/%s/revokeSignInSessions" % ERIN[2]).raise_for_status(),
         [CAEP + "session-revoked"]),
        ("confirmCompromised", lambda self: self.admin("POST", "/users/%s/confirmCompromised" % ERIN[2]).raise_for_status(),
         [RISC + "credential-compromise", CAEP + "session-revoked"]),
        ("display name", lambda self: self.replace_user({"displayName": "Erin (renamed)"}), [CAEP + "token-claims-change"]),
    ]

    def critical_events(self, push):
        c = self.checks
        push_latencies, poll_latencies = [], []
        for name, action, expected in self.ACTIONS:
            before = push.count()
            # A long poll waits while the admin call is made.
            result = {}

            def long_poll():
                answer = self.poll({"maxEvents": 100, "returnImmediately": False})
                result["at"] = time.monotonic()
                result["answer"] = answer

            poller = threading.Thread(target=long_poll)
            poller.start()
            time.sleep(0.2)
            action(self)
            answered = time.monotonic()
            arrived = push.wait_for(before + len(expected))
            pushed = [self.verify_set(token, RECEIVER[0]) for _, _, _, token in push.received[before:]]
            poller.join(45)
            got_push = [t for _, t, _ in pushed]
            c.check("%s: push delivered %s" % (name, [e.rsplit("/", 1)[1] for e in expected]), arrived and got_push == expected, got_push)
            if arrived:
                push_latencies.append(push.received[before + len(expected) - 1][0] - answered)
            members = [m for _, _, m in pushed]
            subjects = [cl["sub_id"]["user"]["sub"] for cl, _, _ in pushed if cl["sub_id"]["format"] == "complex"]
            c.check("%s: each SET names Erin, with event_timestamp and initiating_entity" % name,
                    subjects == [ERIN[2]] * len(pushed) and all("event_timestamp" in m and m.get("initiating_entity") == "admin" for m in members),
                    (subjects, members))
            answer = result.get("answer", {"sets": {}})
            polled = [self.verify_set(token, RECEIVER[0]) for token in answer["sets"].values()]
            polled += self.drain_poll() if len(polled) < len(expected) else []
            self.poll({"maxEvents": 0, "ack": list(answer["sets"].keys())})
            c.check("%s: poll delivered the same types" % name, sorted(t for _, t, _ in polled) == sorted(expected), [t for _, t, _ in polled])
            if "at" in result and answer["sets"]:
                poll_latencies.append(result["at"] - answered)
        return push_latencies, poll_latencies

    def faults(self, push):
        c = self.checks
        auth = {"Authorization": "Bearer " + self.receiver_token}
        # Down, then back: every SET, in order.
        push.stop()
        before = push.count()
        for name in ("down-1", "down-2", "down-3"):
            self.requests.post(self.verify_endpoint, headers=auth, json={"stream_id": self.push_stream["stream_id"], "state": name}, timeout=10)
        time.sleep(1.5)
        push.start()
        push.wait_for(before + 3, timeout=30)
        states = [self.verify_set(token, RECEIVER[0])[2].get("state") for _, _, _, token in push.received[before:]]
        c.check("a receiver down then back gets every SET, in order", states == ["down-1", "down-2", "down-3"], states)
        # 400 with err: not retried, dead-lettered.
        push.mode = "reject"
        before = push.count()
        self.requests.post(self.verify_endpoint, headers=auth, json={"stream_id": self.push_stream["stream_id"], "state": "rejected"}, timeout=10)
        push.wait_for(before + 1)
        time.sleep(4)  # longer than the retry back-off (1–2 s)
        c.check("a SET answered 400 err is sent once", push.count() == before + 1, push.count() - before)
        push.mode = "accept"
        detail = self.admin("GET", "/ssf-streams/" + self.push_stream["stream_id"]).json()
        last = detail.get("lastDeliveries", [{}])[0]
        c.check("the admin API shows it dead-lettered with the receiver's err", last.get("state") == "deadLetter"
                and "invalid_request" in last.get("lastError", ""), last)
        # A paused poll stream keeps its events and delivers them on resume.
        response = self.requests.post(self.status_endpoint, headers=auth, json={
            "stream_id": self.poll_stream["stream_id"], "status": "paused", "reason": "maintenance"}, timeout=10)
        c.check("pause the poll stream", response.status_code == 200 and response.json().get("status") == "paused", response.text)
        self.admin("POST", "/users/%s/revokeSignInSessions" % ERIN[2]).raise_for_status()
        answer = self.poll({"maxEvents": 10, "returnImmediately": True})
        c.check("a paused stream answers no SETs", answer["sets"] == {}, answer)
        self.requests.post(self.status_endpoint, headers=auth, json={"stream_id": self.poll_stream["stream_id"], "status": "enabled"}, timeout=10)
        found = self.drain_poll()
        c.check("after resume the kept event is delivered", [t for _, t, _ in found] == [CAEP + "session-revoked"], [t for _, t, _ in found])
        answer = self.poll({"maxEvents": 10, "returnImmediately": True})
        c.check("acknowledged SETs are not delivered again", answer["sets"] == {}, answer)


class Upstream:
    def __init__(self):
        self.port = free_port()

        self.paths = []
        paths = self.paths

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                paths.append(self.path)
                body = json.dumps({"subject": self.headers.get("X-Portcullis-Subject")}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def parse_claims_challenge(header):
    import re
    found = re.search(r'error="([^"]*)"', header or "")
    claims = re.search(r'claims="([^"]*)"', header or "")
    return (found.group(1) if found else None), (base64.b64decode(claims.group(1)).decode() if claims else None)


def gateway_run(binary, workdir, run, checks, push):
    """The gateway in front of an upstream, with the token requests MSAL makes for a cp1 client (MSAL for Python itself
    needs an https authority: its run through the gateway belongs in scripts/msal-interop's namespace)."""
    import jwt
    import requests
    upstream = Upstream()
    gateway = GatewayProcess(binary, workdir, free_port())
    gateway.start(["--upstream", "http://127.0.0.1:%d" % upstream.port, "--authority", run.authority, "--audience", MAIL_API,
                   "--ssf-client-id", GATEWAY_RECEIVER[0], "--ssf-client-secret", GATEWAY_RECEIVER[1]])
    scope = "api://contoso-mail/Mail.Read openid profile offline_access"
    capabilities = {"access_token": {"xms_cc": {"values": ["cp1"]}}}

    def token_request(data, claims):
        merged = json.loads(json.dumps(capabilities))
        if claims:
            merged["access_token"].update(json.loads(claims)["access_token"])
        return requests.post(run.authority + "/oauth2/v2.0/token", data=dict(data, client_id=MAIL, claims=json.dumps(merged)), timeout=30)

    def password(claims=None):
        return token_request({"grant_type": "password", "username": ERIN[0], "password": ERIN[1], "scope": scope}, claims)

    try:
        answer = password().json()
        token, refresh = answer.get("access_token"), answer.get("refresh_token")
        checks.check("a cp1 client gets a token for the CAE resource", bool(token), answer)
        if not token:
            return gateway, []
        claims = jwt.decode(token, options={"verify_signature": False})
        checks.check("the token lives ~24 h and carries xms_cc cp1", claims["exp"] - claims["iat"] >= 23 * 3600 and "cp1" in claims.get("xms_cc", []),
                     claims)
        plain = requests.post(run.authority + "/oauth2/v2.0/token", data={
            "grant_type": "password", "username": ERIN[0], "password": ERIN[1], "scope": scope, "client_id": MAIL}, timeout=30).json()
        plain_claims = jwt.decode(plain["access_token"], options={"verify_signature": False})
        checks.check("without cp1 the token lives the usual hour", plain_claims["exp"] - plain_claims["iat"] == 3600, plain_claims)
        url = gateway.base + "/inbox"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "portcullis gateway" not in json.dumps(run.admin("GET", "/ssf-streams").json()):
            time.sleep(0.1)
        response = requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=10)
        checks.check("200 through the gateway", response.status_code == 200 and response.json().get("subject") == ERIN[2], response.text)
        latencies = []
        for trial in range(5):
            run.replace_user({"accountEnabled": False})
            answered = time.monotonic()
            while time.monotonic() - answered < 10:
                response = requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=10)
                if response.status_code == 401:
                    break
            latencies.append(time.monotonic() - answered)
            error, requested = parse_claims_challenge(response.headers.get("WWW-Authenticate"))
            nbf = json.loads(requested)["access_token"]["nbf"] if requested else {}
            checks.check("trial %d: disabled → 401 insufficient_claims with the nbf claims request" % trial,
                         response.status_code == 401 and error == "insufficient_claims" and nbf.get("essential") is True
                         and int(nbf.get("value", 0)) <= time.time() + 2, (response.status_code, response.headers.get("WWW-Authenticate")))
            silent = token_request({"grant_type": "refresh_token", "refresh_token": refresh, "scope": scope}, requested)
            checks.check("trial %d: the refresh with the claims challenge is refused (Erin is disabled)" % trial,
                         silent.status_code == 400 and silent.json().get("error") == "invalid_grant", silent.text)
            run.replace_user({"accountEnabled": True})
            answer = password(requested).json()
            token, refresh = answer.get("access_token"), answer.get("refresh_token")
            fresh = jwt.decode(token, options={"verify_signature": False}) if token else {}
            response = requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=10) if token else None
            checks.check("trial %d: enabled again → a new token (iat ≥ the nbf asked for) passes the gateway" % trial,
                         token is not None and fresh.get("iat", 0) >= int(nbf.get("value", 0)) and response.status_code == 200,
                         (fresh, response.status_code if response is not None else None))
        revocations_hold(run, checks, url, token_request, password, latencies)
        answer = password().json()
        token, refresh = answer.get("access_token"), answer.get("refresh_token")
        policy_changed(run, checks, push, url, token, refresh, token_request, password, latencies)
        health = requests.get(gateway.base + "/.well-known/portcullis/health", timeout=10)
        checks.check("the gateway's health: 200 while its stream is connected, answered by the gateway itself",
                     health.status_code == 200 and health.json().get("status") == "connected" and upstream.paths.count("/.well-known/portcullis/health") == 0,
                     (health.status_code, health.text))
        without_stream(binary, workdir, run, checks, upstream, password)
        return gateway, latencies
    finally:
        upstream.server.shutdown()


def wait_for_401(url, token, timeout=10):
    """Asks the gateway with `token` until it answers 401 (the revocation reached it): the response and how long it took."""
    import requests
    started = time.monotonic()
    response = None
    while time.monotonic() - started < timeout:
        response = requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=10)
        if response.status_code == 401:
            break
        time.sleep(0.005)
    return response, time.monotonic() - started


def revocations_hold(run, checks, url, token_request, password, latencies):
    """PROTOCOL §14.1, at the gateway: for revokeSignInSessions, confirmCompromised and a password reset, Erin's token
    issued before is challenged, the challenge answered with her OLD refresh token is refused (the revocation voided the
    family, not only the token), and a fresh sign-in passes — also one within the revocation's second (xms_iat_ms and
    the SET's event_timestamp to the millisecond). A claims request's nbf far ahead is refused, never a token dated ahead."""
    import jwt
    import requests
    scope = "api://contoso-mail/Mail.Read openid profile offline_access"
    far = password(json.dumps({"access_token": {"nbf": {"essential": True, "value": str(int(time.time()) + 75)}}}))
    checks.check("an nbf 75 s ahead is refused (invalid_request), no token dated ahead", far.status_code == 400
                 and far.json().get("error") == "invalid_request", far.text)
    same_second = 0
    for action in ("revokeSignInSessions", "confirmCompromised", "password reset"):
        answer = password().json()
        token, refresh = answer.get("access_token"), answer.get("refresh_token")
        time.sleep(1.02 - (time.time() % 1))  # the start of a second: the revocation and the fresh sign-in share it
        revoked_at = time.time()
        if action == "password reset":
            run.replace_user({"password": "Erin-reset-pass3"})
        else:
            run.admin("POST", "/users/%s/%s" % (ERIN[2], action)).raise_for_status()
        # A fresh sign-in right after the revocation's answer: issued after it, most likely within its second.
        secret = "Erin-reset-pass3" if action == "password reset" else ERIN[1]
        fresh = token_request({"grant_type": "password", "username": ERIN[0], "password": secret, "scope": scope}, None).json()
        response, took = wait_for_401(url, token)
        latencies.append(took)
        error, requested = parse_claims_challenge(response.headers.get("WWW-Authenticate") if response is not None else None)
        checks.check("%s: the token issued before is challenged at the gateway (insufficient_claims)" % action,
                     response is not None and response.status_code == 401 and error == "insufficient_claims", response.headers if response else None)
        old = token_request({"grant_type": "refresh_token", "refresh_token": refresh, "scope": scope}, requested)
        checks.check("%s: the challenge answered with the old refresh token is refused" % action,
                     old.status_code == 400 and old.json().get("error") == "invalid_grant", old.text)
        fresh_token = fresh.get("access_token")
        claims = jwt.decode(fresh_token, options={"verify_signature": False}) if fresh_token else {}
        passed = requests.get(url, headers={"Authorization": "Bearer " + fresh_token}, timeout=10) if fresh_token else None
        if claims.get("iat") == int(revoked_at):
            same_second += 1
        checks.check("%s: a fresh sign-in passes the gateway (iat %s, revoked in second %d)" % (action, claims.get("iat"), int(revoked_at)),
                     passed is not None and passed.status_code == 200 and claims.get("xms_iat_ms", 0) // 1000 == claims.get("iat"),
                     (passed.status_code if passed is not None else None, fresh))
        if action == "password reset":
            run.replace_user({"password": ERIN[1]})
    checks.check("at least one fresh sign-in came within its revocation's second (%d of 3) and passed" % same_second, same_second >= 1)


def without_stream(binary, workdir, run, checks, upstream, password):
    """PROTOCOL §14.3: a gateway whose stream cannot be set up (a wrong receiver secret) fails closed on age — a token
    older than --max-token-age is challenged — says so on its health answer (503 with the reason), and backs off its
    set-up: a few token requests, not thousands a second."""
    import requests
    gateway = GatewayProcess(binary, os.path.join(workdir, "nostream"), free_port())
    os.makedirs(os.path.join(workdir, "nostream"), exist_ok=True)

    def refused_client_credentials():
        total = 0
        for line in requests.get(run.base + "/metrics", timeout=10).text.splitlines():
            if line.startswith("portcullis_token_refusals_total") and 'grant_type="client_credentials"' in line:
                total += int(float(line.rsplit(" ", 1)[1]))
        return total

    before = refused_client_credentials()
    gateway.start(["--upstream", "http://127.0.0.1:%d" % upstream.port, "--authority", run.authority, "--audience", MAIL_API,
                   "--ssf-client-id", GATEWAY_RECEIVER[0], "--ssf-client-secret", "not-the-secret", "--max-token-age", "3"])
    try:
        answer = password().json()
        token = answer.get("access_token")
        url = gateway.base + "/inbox"
        young = requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=10)
        checks.check("no stream: a token younger than --max-token-age passes", young.status_code == 200, young.text)
        time.sleep(4.5)
        old = requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=10)
        error, requested = parse_claims_challenge(old.headers.get("WWW-Authenticate"))
        checks.check("no stream: a cp1 token older than --max-token-age is challenged for a fresh one",
                     old.status_code == 401 and error == "insufficient_claims" and requested is not None, (old.status_code, old.headers))
        renewed = password(requested).json().get("access_token")
        again = requests.get(url, headers={"Authorization": "Bearer " + renewed}, timeout=10) if renewed else None
        checks.check("no stream: the token the challenge asks for passes", again is not None and again.status_code == 200, renewed)
        health = requests.get(gateway.base + "/.well-known/portcullis/health", timeout=10)
        body = health.json() if health.headers.get("Content-Type", "").startswith("application/json") else {}
        checks.check("no stream: health answers 503 with the reason and the token age in force",
                     health.status_code == 503 and body.get("status") == "disconnected" and "401" in body.get("reason", "")
                     and body.get("maximumTokenAge") == 3, health.text)
        attempts = refused_client_credentials() - before
        checks.check("no stream: set-ups back off (%d refused token requests in ~5 s; at most one a second)" % attempts, 1 <= attempts <= 7)
    finally:
        gateway.stop()


def policy_changed(run, checks, push, url, token, refresh, token_request, password, latencies):
    """A conditional-access change that now blocks Erin at the mail app (PROTOCOL §14.1): the receiver hears a
    session-revoked for Erin at the app (initiating_entity policy), the gateway refuses her day-long token with the
    claims challenge, the refresh with it is refused (the replay revoked her family at the app), and once the policy is
    gone her new token passes."""
    import requests
    time.sleep(1.1)
    before = push.count()
    policy = {"displayName": "Block Erin's mail (cae_interop)", "state": "enabled",
              "conditions": {"users": {"includeUsers": [ERIN[2]]}, "applications": {"includeApplications": [MAIL_API]}},
              "grantControls": {"operator": "OR", "builtInControls": ["block"]}}
    created = run.admin("POST", "/conditional-access/policies", json=policy)
    answered = time.monotonic()
    checks.check("a policy blocking Erin at the mail API is created", created.status_code == 201, created.text)
    policy_id = created.json().get("id") if created.status_code == 201 else None
    try:
        response = None
        while time.monotonic() - answered < 10:
            response = requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=10)
            if response.status_code == 401:
                break
        took = time.monotonic() - answered
        error, requested = parse_claims_challenge(response.headers.get("WWW-Authenticate"))
        checks.check("policy: the gateway refuses the token issued before it with insufficient_claims (%.0f ms)" % (took * 1000),
                     response.status_code == 401 and error == "insufficient_claims" and requested is not None,
                     (response.status_code, response.headers.get("WWW-Authenticate")))
        latencies.append(took)
        push.wait_for(before + 1)
        pushed = [run.verify_set(set_token, RECEIVER[0]) for _, _, _, set_token in push.received[before:]]
        revoked = [(claims["sub_id"], members) for claims, kind, members in pushed if kind == CAEP + "session-revoked"]
        checks.check("policy: the receiver gets session-revoked for Erin at the mail app, initiated by policy",
                     len(revoked) == 1 and revoked[0][0].get("user", {}).get("sub") == ERIN[2]
                     and revoked[0][0].get("application") == {"format": "opaque", "id": MAIL}
                     and revoked[0][1].get("initiating_entity") == "policy", pushed)
        silent = token_request({"grant_type": "refresh_token", "refresh_token": refresh, "scope": "api://contoso-mail/Mail.Read"}, requested)
        checks.check("policy: the refresh with the claims challenge is refused (the change revoked her family at the app: 70008)",
                     silent.status_code == 400 and 70008 in silent.json().get("error_codes", []), silent.text)
    finally:
        if policy_id:
            gone = run.admin("DELETE", "/conditional-access/policies/" + policy_id, headers={"If-Match": "*"})
            checks.check("the policy is deleted", gone.status_code == 204, gone.text)
    answer = password(requested).json()
    fresh = answer.get("access_token")
    response = requests.get(url, headers={"Authorization": "Bearer " + fresh}, timeout=10) if fresh else None
    checks.check("policy gone: Erin's new token passes the gateway", response is not None and response.status_code == 200, answer)


def summary(name, values):
    if not values:
        return "%s: none" % name
    ordered = sorted(values)
    return "%s: n=%d p50 %.0f ms, max %.0f ms" % (name, len(values), statistics.median(ordered) * 1000, ordered[-1] * 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/debug/portcullis"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    try:
        import jwt  # noqa: F401
        import requests  # noqa: F401
    except ImportError as error:
        print(f"cae_interop: {error}; install PyJWT and requests", file=sys.stderr)
        return 2
    binary = os.path.abspath(args.binary)
    workdir = tempfile.mkdtemp(prefix="portcullis-cae.")
    server = Server(binary, workdir, free_port())
    checks = Checks()
    push = PushReceiver()
    gateway = None
    started = time.monotonic()
    try:
        server.start(prepare_config(workdir))
        run = Run(server.base, checks)
        push.start()
        run.metadata()
        run.streams(push)
        run.verification(push)
        push_latencies, poll_latencies = run.critical_events(push)
        run.faults(push)
        gateway, gateway_latencies = gateway_run(binary, workdir, run, checks, push)
        print("cae_interop: " + summary("push latency (admin answer → receipt)", push_latencies))
        print("cae_interop: " + summary("poll latency (admin answer → long poll's answer)", poll_latencies))
        print("cae_interop: " + summary("gateway (admin answer → first 401)", gateway_latencies))
    except Exception:
        checks.check("the run completed", False, traceback.format_exc())
    finally:
        push.stop()
        if gateway is not None:
            gateway.stop()
        server.stop()
    if checks.failed:
        print("\n----- server log (tail) -----\n" + server.tail(), file=sys.stderr)
        if gateway is not None:
            print("\n----- gateway log (tail) -----\n" + gateway.tail(), file=sys.stderr)
    if args.keep:
        print(f"cae_interop: kept {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\ncae_interop: {len(checks.passed)} passed, {len(checks.failed)} failed in {time.monotonic() - started:.1f} s")
    for name in checks.failed:
        print(f"  FAILED: {name}")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
