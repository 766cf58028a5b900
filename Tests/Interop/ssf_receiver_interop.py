#!/usr/bin/env python3
"""Shared Signals received (PROTOCOL §19) by a real Portcullis binary from a transmitter written here: its SETs signed
with its own ES256 key (PyJWT), its configuration, keys, streams and poll endpoint served over TLS on loopback by a
certificate of a CA made here (trusted by the server through `PORTCULLIS_SIGNALS_RECEIVER_CA_FILE`, the older name of
`PORTCULLIS_CALLBACKS_CA_FILE`, which `client_assertion_interop.py` uses).

    python3 Tests/Interop/ssf_receiver_interop.py [--binary .build/debug/portcullis] [--keep]

What it does
  register  the admin API: a push transmitter with `jwksUri` and the `Authorization` a push must carry (shown only as
            set); bad registrations refused at their pointers; a policy blocking users at high risk (Entra's template).
  push      RFC 8935 to /{tenant}/ssf/receiver/{id}: RISC `credential-compromise` for Erin → 202, her risk high
            (`leakedCredentials`), her next refresh refused by the policy (53003); dismissed → allowed again. CAEP
            `session-revoked` → 202 and her refresh token ends. Refused with RFC 8935's codes, and with no effect (the
            refresh token issued before them still works): the same SET again, signed by another key under the
            transmitter's kid, an unknown kid, `alg: none`, another `aud`, another `iss`, 25 hours old, 10 minutes
            ahead, `typ: JWT`, without or with a wrong Authorization, the wrong Content-Type, a transmitter not
            registered. RISC `account-disabled` for Dave → he cannot sign in. CAEP `risk-level-change` MEDIUM for Carol
            → her risk medium; `device-compliance-change` for a device → not compliant. The audit log names the
            transmitter.
  poll      a transmitter registered with its `configurationUrl`, poll delivery and the Authorization Portcullis must
            send it: Portcullis creates a stream there (events requested, its bearer), polls it (RFC 8936); a
            `session-revoked` SET queued there ends Erin's refresh token and is acknowledged; a forged one comes back in
            `setErrs` (authentication_failed) and does nothing.
  pushed    a transmitter registered with its `configurationUrl` and push delivery: the stream Portcullis creates names
            its receiver URL and an Authorization value; the transmitter pushes `credential-change` there with it → 202,
            Erin's refresh token ends; the same push without it → access_denied.
Exit status 0 when every check passes, 1 otherwise, 2 when a prerequisite is missing.
"""

import json
import os
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpop_interop import interop_main, short  # noqa: E402
from tls_loopback import JSONHandler, free_port, make_certificates, serve_tls  # noqa: E402
from device_interop import MAIL, TENANT, AdminCaller, prepare_config  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ERIN = ("erin@contoso.example", "Erin-dev-pass1", "4a5c7e5d-9f1b-4c6e-8a0d-5b7f9e1c3d05")
CAROL = ("carol@contoso.example", "Carol-dev-pass1", "2e7a5c3b-7d9f-4a4c-8e8b-3f5d7c9a1b03")
DAVE = ("dave@contoso.example", "Dave-dev-pass1", "3f6b6d4c-8e0a-4b5d-9f9c-4a6e8d0b2c04")
AUDIENCE = "https://portcullis.test/ssf-receiver"
PUSH_AUTHORIZATION = "Bearer push-" + uuid.uuid4().hex
TRANSMITTER_AUTHORIZATION = "Bearer transmitter-" + uuid.uuid4().hex
CAEP = "https://schemas.openid.net/secevent/caep/event-type/"
RISC = "https://schemas.openid.net/secevent/risc/event-type/"


class Transmitter:
    """A Shared Signals transmitter over TLS on loopback: configuration, keys, streams, a poll endpoint; SETs signed ES256."""

    def __init__(self, workdir):
        from cryptography.hazmat.primitives.asymmetric import ec
        self.ca_path, cert_path, key_path = make_certificates(workdir, "transmitter")
        self.signing_key = ec.generate_private_key(ec.SECP256R1())
        self.other_key = ec.generate_private_key(ec.SECP256R1())
        self.kid = "transmitter-key-1"
        self.port = free_port()
        self.base = f"https://127.0.0.1:{self.port}"
        self.issuer = self.base + "/"
        self.streams = {}  # stream_id -> {"request": body, "authorization": header, "queue": {jti: set}, "acks": [], "errs": {}}
        self.lock = threading.Lock()
        transmitter = self

        class Handler(JSONHandler):
            def do_GET(self):
                if self.path == "/.well-known/ssf-configuration":
                    self.answer(200, {"spec_version": "1_0", "issuer": transmitter.issuer, "jwks_uri": transmitter.base + "/jwks",
                                      "configuration_endpoint": transmitter.base + "/streams",
                                      "delivery_methods_supported": ["urn:ietf:rfc:8935", "urn:ietf:rfc:8936"]})
                elif self.path == "/jwks":
                    self.answer(200, transmitter.jwks())
                else:
                    self.answer(404, {})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                authorization = self.headers.get("Authorization")
                if authorization != TRANSMITTER_AUTHORIZATION:
                    return self.answer(401, {"error": "unauthorized"})
                if self.path == "/streams":
                    stream_id = str(uuid.uuid4())
                    delivery = dict(body.get("delivery", {}))
                    if delivery.get("method") == "urn:ietf:rfc:8936":
                        delivery["endpoint_url"] = f"{transmitter.base}/poll/{stream_id}"
                    with transmitter.lock:
                        transmitter.streams[stream_id] = {"request": body, "authorization": authorization, "queue": {}, "acks": [],
                                                          "errs": {}}
                    return self.answer(201, {"stream_id": stream_id, "iss": transmitter.issuer, "aud": AUDIENCE, "delivery": delivery,
                                             "events_requested": body.get("events_requested", []),
                                             "events_delivered": body.get("events_requested", [])})
                if self.path.startswith("/poll/"):
                    stream = transmitter.streams.get(self.path[len("/poll/"):])
                    if stream is None:
                        return self.answer(404, {})
                    with transmitter.lock:
                        for jti in body.get("ack", []):
                            stream["acks"].append(jti)
                            stream["queue"].pop(jti, None)
                        for jti, error in (body.get("setErrs") or {}).items():
                            stream["errs"][jti] = error
                            stream["queue"].pop(jti, None)
                        sets = dict(list(stream["queue"].items())[: int(body.get("maxEvents", 10))])
                    return self.answer(200, {"sets": sets, "moreAvailable": False})
                self.answer(404, {})

        self.server = serve_tls(Handler, self.port, cert_path, key_path)

    def jwks(self):
        import jwt
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.signing_key.public_key()))
        jwk.update({"kid": self.kid, "use": "sig", "alg": "ES256"})
        return {"keys": [jwk]}

    def set(self, event, subject, members=None, key=None, kid=..., alg="ES256", typ="secevent+jwt", aud=AUDIENCE, iss=None,
            iat=None, jti=None):
        import jwt
        payload = {"iss": iss or self.issuer, "aud": aud, "iat": int(iat if iat is not None else time.time()),
                   "jti": jti or str(uuid.uuid4()), "sub_id": subject,
                   "events": {event: {"event_timestamp": int(time.time()), **(members or {})}}}
        headers = {"typ": typ}
        if kid is not None:
            headers["kid"] = self.kid if kid is ... else kid
        if alg == "none":
            import base64
            def enc(value):
                return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
            return enc({**headers, "alg": "none"}) + "." + enc(payload) + "."
        return jwt.encode(payload, key or self.signing_key, algorithm=alg, headers=headers)

    def stop(self):
        self.server.shutdown()


def email(user):
    return {"format": "email", "email": user[0]}


class Run(AdminCaller):
    def __init__(self, base, checks, transmitter):
        import requests
        self.base, self.checks, self.transmitter = base, checks, transmitter
        self.session = requests.Session()
        self.session.trust_env = False
        self.token_url = f"{base}/{TENANT}/oauth2/v2.0/token"
        self.admin_token = None
        self.push_id = None

    def sign_in(self, user):
        return self.session.post(self.token_url, data={
            "grant_type": "password", "client_id": MAIL, "username": user[0], "password": user[1],
            "scope": "api://contoso-mail/Mail.Read openid offline_access"}, timeout=30)

    def refresh_token(self, user=ERIN):
        reply = self.sign_in(user)
        token = reply.json().get("refresh_token")
        self.checks.require(f"{user[0]} signs in (password grant) and holds a refresh token", token, reply.text)
        return token

    def refresh(self, token):
        return self.session.post(self.token_url, data={
            "grant_type": "refresh_token", "client_id": MAIL, "refresh_token": token,
            "scope": "api://contoso-mail/Mail.Read openid offline_access"}, timeout=30)

    def push(self, token, transmitter_id=None, authorization=PUSH_AUTHORIZATION, content_type="application/secevent+jwt", tenant=TENANT):
        headers = {"Content-Type": content_type}
        if authorization:
            headers["Authorization"] = authorization
        return self.session.post(f"{self.base}/{tenant}/ssf/receiver/{transmitter_id or self.push_id}", data=token, headers=headers,
                                 timeout=30)

    def expect_err(self, name, reply, err):
        body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
        self.checks.check(name, reply.status_code == 400 and body.get("err") == err and body.get("description"),
                          f"{reply.status_code} {short(reply.text, 300)}")

    def risky(self, user):
        return self.admin("GET", f"/identityProtection/riskyUsers/{user[2]}").json()

    # ------------------------------------------------------------------------------------------------------------

    def register(self):
        bad = self.admin("POST", "/ssf-transmitters", {
            "displayName": "bad", "issuer": "x", "audience": AUDIENCE, "jwksUri": "http://127.0.0.1/keys",
            "configurationUrl": "https://127.0.0.1/x", "actions": {"session-revoked": "disableAccount", "nope": "ignore"},
            "subjectFormats": {"phone_number": "id"}})
        pointers = [p.get("pointer") for p in bad.json().get("error", {}).get("details", [])] if bad.status_code == 400 else []
        self.checks.check("a bad registration is refused at its pointers (an http jwksUri, both key sources, an action not allowed, "
                          "an unknown event and subject format)",
                          bad.status_code == 400 and {"/jwksUri", "", "/actions/session-revoked", "/actions/nope",
                                                      "/subjectFormats/phone_number"} <= set(pointers), f"{bad.status_code} {bad.text}")
        reply = self.admin("POST", "/ssf-transmitters", {
            "displayName": "Threat intel (push)", "issuer": self.transmitter.issuer, "audience": AUDIENCE,
            "jwksUri": self.transmitter.base + "/jwks", "authorizationHeader": PUSH_AUTHORIZATION})
        body = reply.json()
        self.checks.require("a push transmitter is registered (201)", reply.status_code == 201 and body.get("id"), reply.text)
        self.push_id = body["id"]
        shown = self.admin("GET", f"/ssf-transmitters/{self.push_id}").json()
        self.checks.check("its Authorization is shown only as set, never its value or hash",
                          shown.get("authorizationHeaderSet") is True and PUSH_AUTHORIZATION not in json.dumps(shown)
                          and "authorizationHeaderHash" not in shown, shown)
        policy = self.admin("POST", "/conditional-access/policies?force=true", {
            "displayName": "Block users at high risk (ssf_receiver_interop)", "state": "enabled",
            "conditions": {"users": {"includeUsers": [ERIN[2]]}, "applications": {"includeApplications": ["All"]},
                           "userRiskLevels": ["high"], "clientAppTypes": ["all"]},
            "grantControls": {"operator": "OR", "builtInControls": ["block"]}})
        self.checks.require("a policy blocks Erin at high user risk", policy.status_code == 201, policy.text)

    def push_group(self):
        t = self.transmitter
        token = self.refresh_token()
        leaked = t.set(RISC + "credential-compromise", email(ERIN), {"credential_type": "password"})
        reply = self.push(leaked)
        self.checks.check("credential-compromise pushed: 202", reply.status_code == 202, f"{reply.status_code} {reply.text}")
        risky = self.risky(ERIN)
        self.checks.check("Erin's risk is high, leakedCredentials, reported by the transmitter",
                          risky.get("riskLevel") == "high" and risky.get("riskState") == "atRisk", risky)
        detections = self.admin("GET", "/identityProtection/riskDetections").json().get("value", [])
        self.checks.check("the detection is leakedCredentials", any(
            d.get("riskEventType") == "leakedCredentials" and d.get("userId") == ERIN[2] for d in detections), detections)
        refused = self.refresh(token)
        self.checks.check("her next refresh is refused by the policy (53003)", refused.status_code == 400 and
                          53003 in refused.json().get("error_codes", []), f"{refused.status_code} {short(refused.text, 400)}")
        dismissed = self.admin("POST", "/identityProtection/riskyUsers/dismiss", {"userIds": [ERIN[2]]})
        again = self.refresh(token)
        self.checks.check("dismissed, the same refresh token works again (the risk refused it, nothing revoked it)",
                          dismissed.status_code in (200, 204) and again.status_code == 200, f"{dismissed.status_code} {short(again.text, 300)}")
        token = again.json().get("refresh_token", token)

        # Refusals, each with no effect: a session-revoked SET that would end the token.
        def revoke(**changes):
            return t.set(CAEP + "session-revoked", email(ERIN), **changes)

        accepted = revoke()
        cases = [
            ("signed by another key under the transmitter's kid", self.push(revoke(key=t.other_key)), "authentication_failed"),
            ("an unknown kid", self.push(revoke(kid="not-published")), "invalid_key"),
            ("alg none", self.push(revoke(alg="none")), "invalid_key"),
            ("another audience", self.push(revoke(aud="https://elsewhere.test")), "invalid_audience"),
            ("another issuer", self.push(revoke(iss="https://impostor.test/")), "invalid_issuer"),
            ("25 hours old", self.push(revoke(iat=time.time() - 25 * 3600)), "invalid_request"),
            ("10 minutes ahead", self.push(revoke(iat=time.time() + 600)), "invalid_request"),
            ("typ JWT", self.push(revoke(typ="JWT")), "invalid_request"),
            ("without the Authorization", self.push(accepted, authorization=None), "access_denied"),
            ("with another Authorization", self.push(accepted, authorization="Bearer guess"), "access_denied"),
            ("as application/json", self.push(accepted, content_type="application/json"), "invalid_request"),
            ("to a transmitter not registered", self.push(accepted, transmitter_id=str(uuid.uuid4())), "access_denied"),
            ("at another tenant's receiver URL (the transmitter is Contoso's)", self.push(accepted, tenant="fabrikam.example"),
             "access_denied"),
        ]
        for name, reply, err in cases:
            self.expect_err(f"a SET {name} is refused: 400 {err}", reply, err)
        still = self.refresh(token)
        self.checks.check("after every refused SET, Erin's refresh token still works", still.status_code == 200, short(still.text, 300))
        token = still.json().get("refresh_token", token)
        reply = self.push(accepted)
        self.checks.check("session-revoked pushed: 202", reply.status_code == 202, f"{reply.status_code} {reply.text}")
        ended = self.refresh(token)
        self.checks.check("her refresh token has ended (invalid_grant)", ended.status_code == 400 and
                          ended.json().get("error") == "invalid_grant", short(ended.text, 300))
        token = self.refresh_token()
        self.expect_err("the same SET again is refused: 400 invalid_request (its jti was received)", self.push(accepted), "invalid_request")
        self.checks.check("and did nothing: the refresh token made since still works", self.refresh(token).status_code == 200)

        reply = self.push(t.set(RISC + "account-disabled", {"format": "iss_sub", "iss": t.issuer, "sub": DAVE[2]}))
        self.checks.check("account-disabled for Dave (iss_sub → object ID): 202", reply.status_code == 202, reply.text)
        dave = self.admin("GET", f"/users/{DAVE[2]}").json()
        signed = self.sign_in(DAVE)
        self.checks.check("Dave is disabled and cannot sign in", dave.get("accountEnabled") is False and signed.status_code == 400,
                          f"{dave.get('accountEnabled')} {short(signed.text, 300)}")
        reply = self.push(t.set(CAEP + "risk-level-change", {"format": "complex", "user": email(CAROL)},
                                {"current_level": "MEDIUM", "principal": "USER", "risk_reason": "impossible travel"}))
        carol = self.risky(CAROL)
        self.checks.check("risk-level-change MEDIUM for Carol (a complex subject): 202, her risk medium", reply.status_code == 202 and
                          carol.get("riskLevel") == "medium" and carol.get("riskState") == "atRisk", f"{reply.status_code} {carol}")
        device = self.admin("POST", "/devices", {"displayName": "Carol's laptop", "trustType": "AzureAd", "isCompliant": True,
                                                 "registeredOwners": [CAROL[2]]})
        self.checks.require("a compliant device is provisioned", device.status_code == 201, device.text)
        device = device.json()
        reply = self.push(t.set(CAEP + "device-compliance-change", {"format": "complex", "device": {"format": "opaque", "id": device["deviceId"]}},
                                {"current_status": "not-compliant", "previous_status": "compliant"}))
        now = self.admin("GET", f"/devices/{device['id']}").json()
        self.checks.check("device-compliance-change not-compliant (its device ID): 202, the device is not compliant",
                          reply.status_code == 202 and now.get("isCompliant") is False, f"{reply.status_code} {now}")
        audit = self.admin("GET", "/audit").json().get("value", [])
        self.checks.check("the audit log names the transmitter as the actor", any(
            "Threat intel (push)" in (entry.get("actor") or "") for entry in audit), [e.get("actor") for e in audit[:10]])

    def wait_for(self, what, condition, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.25)
        return None

    def poll_group(self):
        t = self.transmitter
        reply = self.admin("POST", "/ssf-transmitters", {
            "displayName": "Partner IdP (poll)", "issuer": t.issuer, "audience": AUDIENCE,
            "configurationUrl": t.base + "/.well-known/ssf-configuration", "delivery": "poll",
            "transmitterAuthorization": TRANSMITTER_AUTHORIZATION,
            "actions": {"account-disabled": "ignore"}})
        self.checks.require("a poll transmitter with a configuration URL is registered", reply.status_code == 201, reply.text)
        poll_id = reply.json()["id"]
        shown = self.wait_for("the stream", lambda: (self.admin("GET", f"/ssf-transmitters/{poll_id}").json().get("stream") or None))
        made = [s for s in t.streams.values() if s["request"].get("delivery", {}).get("method") == "urn:ietf:rfc:8936"]
        self.checks.require("Portcullis made a poll stream at the transmitter, with the Authorization it was given",
                            shown and made and made[0]["authorization"] == TRANSMITTER_AUTHORIZATION, f"{shown} {t.streams}")
        requested = made[0]["request"].get("events_requested", [])
        self.checks.check("the stream asks for the events that do something (not account-disabled, set to ignore)",
                          CAEP + "session-revoked" in requested and RISC + "credential-compromise" in requested
                          and RISC + "account-disabled" not in requested, requested)
        stream = made[0]
        token = self.refresh_token()
        good_jti, forged_jti = "poll-good-" + uuid.uuid4().hex, "poll-forged-" + uuid.uuid4().hex
        with t.lock:
            stream["queue"][forged_jti] = t.set(CAEP + "session-revoked", email(ERIN), key=t.other_key, jti=forged_jti)
        errs = self.wait_for("setErrs", lambda: stream["errs"].get(forged_jti))
        self.checks.check("a forged SET polled comes back in setErrs: authentication_failed",
                          errs and errs.get("err") == "authentication_failed", stream["errs"])
        self.checks.check("and did nothing: Erin's refresh token still works", self.refresh(token).status_code == 200)
        token = self.refresh_token()
        with t.lock:
            stream["queue"][good_jti] = t.set(CAEP + "session-revoked", email(ERIN), jti=good_jti)
        acked = self.wait_for("ack", lambda: good_jti in stream["acks"])
        self.checks.check("a session-revoked SET polled is acknowledged", acked, stream)
        ended = self.refresh(token)
        self.checks.check("and Erin's refresh token has ended", ended.status_code == 400 and ended.json().get("error") == "invalid_grant",
                          short(ended.text, 300))

    def pushed_group(self):
        t = self.transmitter
        reply = self.admin("POST", "/ssf-transmitters", {
            "displayName": "Partner IdP (push stream)", "issuer": t.issuer, "audience": AUDIENCE,
            "configurationUrl": t.base + "/.well-known/ssf-configuration", "delivery": "push",
            "transmitterAuthorization": TRANSMITTER_AUTHORIZATION})
        self.checks.require("a push transmitter with a configuration URL is registered", reply.status_code == 201, reply.text)
        pushed_id = reply.json()["id"]
        self.wait_for("the stream", lambda: self.admin("GET", f"/ssf-transmitters/{pushed_id}").json().get("stream"))
        made = [s for s in t.streams.values() if s["request"].get("delivery", {}).get("method") == "urn:ietf:rfc:8935"]
        delivery = made[0]["request"]["delivery"] if made else {}
        self.checks.require("Portcullis made a push stream there: its receiver URL and an Authorization value",
                            delivery.get("endpoint_url", "").endswith(f"/ssf/receiver/{pushed_id}") and
                            delivery.get("authorization_header", "").startswith("Bearer "), delivery)
        token = self.refresh_token()
        change = t.set(CAEP + "credential-change", email(ERIN), {"credential_type": "password", "change_type": "update"})
        refused = self.session.post(delivery["endpoint_url"], data=change, headers={"Content-Type": "application/secevent+jwt"}, timeout=30)
        self.expect_err("pushed to that URL without the stream's Authorization: access_denied", refused, "access_denied")
        self.checks.check("and did nothing", self.refresh(token).status_code == 200)
        token = self.refresh_token()
        reply = self.session.post(delivery["endpoint_url"], data=change, timeout=30, headers={
            "Content-Type": "application/secevent+jwt", "Authorization": delivery["authorization_header"]})
        self.checks.check("credential-change pushed with it: 202", reply.status_code == 202, f"{reply.status_code} {reply.text}")
        ended = self.refresh(token)
        self.checks.check("Erin's refresh token has ended", ended.status_code == 400 and ended.json().get("error") == "invalid_grant",
                          short(ended.text, 300))


def main():
    def start_transmitter(workdir):
        transmitter = Transmitter(workdir)
        os.environ.update({"PORTCULLIS_CALLBACKS_ALLOW_LOOPBACK": "1", "PORTCULLIS_SIGNALS_RECEIVER_CA_FILE": transmitter.ca_path,
                           "PORTCULLIS_SIGNALS_RECEIVER_POLL_SECONDS": "1"})
        return transmitter

    def groups(server, checks, binary, workdir, transmitter):
        run = Run(server.base, checks, transmitter)
        return [run.register, run.push_group, run.poll_group, run.pushed_group]

    return interop_main(
        "ssf_receiver_interop", __doc__, ["requests", "cryptography", "jwt"], "requests cryptography pyjwt", prepare_config, groups,
        before_start=start_transmitter, after_stop=lambda transmitter: transmitter.stop())


if __name__ == "__main__":
    sys.exit(main())
