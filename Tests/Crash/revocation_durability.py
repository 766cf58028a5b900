#!/usr/bin/env python3
"""An acknowledged revocation never loses its effects (PROTOCOL §14.1), against the real binary killed with SIGKILL
right after the admin's 200.

    python3 Tests/Crash/revocation_durability.py [--binary .build/debug/portcullis] [--trials 5] [--keep]

What it does
  setup   Config/ with cae_interop's receiver applications; a push stream to a port where NOTHING listens yet (its SETs
          wait in the durable outbox) and a poll stream, both asking for every event.
  disable five times: Erin signs in (password grant: a refresh token), the admin disables her, and the server gets
          SIGKILL as soon as the 200 is read. After the restart her refresh token is refused and the poll stream holds
          account-disabled and session-revoked for her; she is enabled again for the next trial.
  policy  five times: Erin signs in (the sign-in log flushed), the admin writes a conditional-access policy that now
          blocks her at the mail API, SIGKILL right after the 201. After the restart the replay job enqueued with the
          policy runs: the poll stream gets session-revoked for Erin at the mail app (initiating_entity policy), and once
          the policy is deleted her refresh token is still refused as revoked (70008) — the family was revoked, not only
          refused by the policy.
  deliver a receiver starts on the push stream's port: every event of every trial arrives, each SET verified (typ,
          ES256 signature against the JWKS, aud, iss), in the counts the admin actions promise.
Exit status 0 when everything holds, 1 otherwise (the server log tail is printed on failure).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "Interop"))
from crash_durability import Receiver, Server, free_port  # noqa: E402
from cae_interop import ADMIN, ALL_EVENTS, CAEP, ERIN, MAIL, MAIL_API, RECEIVER, RISC, TENANT, prepare_config  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SCOPE = "api://contoso-mail/Mail.Read openid profile offline_access"
PUSH_AUTH = "Bearer durable-push-secret"

failures = []


def check(name, condition, detail=None):
    if condition:
        print("  ok    " + name)
    else:
        failures.append(name)
        print("  FAIL  " + name + ("" if detail is None else "\n        " + str(detail)[:600]))


class Client:
    def __init__(self, server):
        self.server = server

    @property
    def authority(self):
        return "%s/%s" % (self.server.base, TENANT)

    def token(self, client, scope):
        response = requests.post(self.authority + "/oauth2/v2.0/token", data={
            "grant_type": "client_credentials", "client_id": client[0], "client_secret": client[1], "scope": scope}, timeout=30)
        response.raise_for_status()
        return response.json()["access_token"]

    def admin(self, method, path, **kwargs):
        headers = dict(kwargs.pop("headers", {}), Authorization="Bearer " + self.token(ADMIN, "api://portcullis-admin/.default"))
        return requests.request(method, self.server.base + "/admin/v1" + path, headers=headers, timeout=30, **kwargs)

    def receiver(self, method, path, **kwargs):
        headers = {"Authorization": "Bearer " + self.token(RECEIVER, "api://portcullis-ssf/.default")}
        return requests.request(method, self.authority + "/ssf" + path, headers=headers, timeout=60, **kwargs)

    def sign_in(self):
        response = requests.post(self.authority + "/oauth2/v2.0/token", data={
            "grant_type": "password", "client_id": MAIL, "username": ERIN[0], "password": ERIN[1], "scope": SCOPE}, timeout=30)
        response.raise_for_status()
        return response.json()["refresh_token"]

    def refresh(self, token):
        return requests.post(self.authority + "/oauth2/v2.0/token", data={
            "grant_type": "refresh_token", "client_id": MAIL, "refresh_token": token, "scope": SCOPE}, timeout=30)

    def user(self, change):
        found = self.admin("GET", "/users/" + ERIN[2])
        document = found.json()
        document.update(change)
        return self.admin("PUT", "/users/" + ERIN[2], json=document, headers={"If-Match": found.headers["ETag"]})

    def poll(self, path):
        """Everything the poll stream holds now, acknowledged: [(event type, members, sub_id)]."""
        events = []
        while True:
            answer = self.receiver("POST", path, json={"maxEvents": 100, "returnImmediately": True}).json()
            sets = answer.get("sets", {})
            for set_token in sets.values():
                events.extend(decode(set_token))
            self.receiver("POST", path, json={"ack": list(sets), "returnImmediately": True, "maxEvents": 0})
            if not answer.get("moreAvailable"):
                return events


def decode(set_token):
    import jwt
    claims = jwt.decode(set_token, options={"verify_signature": False})
    return [(kind, members, claims.get("sub_id", {})) for kind, members in claims.get("events", {}).items()]


def restart(server, trial, what):
    server.kill9()
    took = server.start()
    print("  (%s %d: killed after the answer, restarted in %.1f s)" % (what, trial, took))


def erin_events(events):
    return [(kind, members, subject) for kind, members, subject in events if subject.get("user", {}).get("sub") == ERIN[2]]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/debug/portcullis"))
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    import jwt  # noqa: F401  (PyJWT, as cae_interop)
    workdir = tempfile.mkdtemp(prefix="portcullis-revocation-crash.")
    prepare_config(workdir)
    server = Server(os.path.abspath(args.binary), workdir, free_port())
    client = Client(server)
    push_port = free_port()
    started = time.monotonic()
    try:
        server.start()
        created = client.receiver("POST", "/stream", json={
            "events_requested": ALL_EVENTS, "description": "durability push",
            "delivery": {"method": "urn:ietf:rfc:8935", "endpoint_url": "http://127.0.0.1:%d/ssf" % push_port, "authorization_header": PUSH_AUTH}})
        check("a push stream to a port where nothing listens yet", created.status_code == 201, created.text)
        polled = client.receiver("POST", "/stream", json={"events_requested": ALL_EVENTS, "delivery": {"method": "urn:ietf:rfc:8936"}})
        check("a poll stream", polled.status_code == 201, polled.text)
        poll_path = polled.json()["delivery"]["endpoint_url"].split("/ssf", 1)[1]

        print("disable, SIGKILL right after the 200:")
        for trial in range(args.trials):
            refresh = client.sign_in()
            answer = client.user({"accountEnabled": False})
            restart(server, trial, "disable")
            check("disable %d: acknowledged" % trial, answer.status_code == 200, answer.text)
            refused = client.refresh(refresh)
            check("disable %d: after the restart the refresh token is refused" % trial, refused.status_code == 400, refused.text)
            kinds = sorted(kind for kind, _, _ in erin_events(client.poll(poll_path)))  # a poll answer's SETs are a JSON object
            check("disable %d: the poll stream holds account-disabled and session-revoked for Erin" % trial,
                  kinds == sorted([RISC + "account-disabled", CAEP + "session-revoked"]), kinds)
            enabled = client.user({"accountEnabled": True})
            check("disable %d: enabled again" % trial, enabled.status_code == 200, enabled.text)
            client.poll(poll_path)

        print("a policy that now blocks Erin, SIGKILL right after the 201:")
        for trial in range(args.trials):
            refresh = client.sign_in()
            client.admin("GET", "/sign-ins", params={"top": 1}).raise_for_status()  # the sign-in log flushed
            policy = {"displayName": "Block Erin's mail (durability %d)" % trial, "state": "enabled",
                      "conditions": {"users": {"includeUsers": [ERIN[2]]}, "applications": {"includeApplications": [MAIL_API]}},
                      "grantControls": {"operator": "OR", "builtInControls": ["block"]}}
            answer = client.admin("POST", "/conditional-access/policies", json=policy)
            restart(server, trial, "policy")
            check("policy %d: acknowledged" % trial, answer.status_code == 201, answer.text)
            found, deadline = [], time.monotonic() + 20
            while time.monotonic() < deadline and not found:
                found = [members for kind, members, subject in erin_events(client.poll(poll_path))
                         if kind == CAEP + "session-revoked" and subject.get("application", {}).get("id") == MAIL]
                if not found:
                    time.sleep(0.2)
            check("policy %d: the replay enqueued with the policy ran after the restart: session-revoked for Erin at the mail app" % trial,
                  len(found) == 1 and found[0].get("initiating_entity") == "policy", found)
            policy_id = answer.json().get("id") if answer.status_code == 201 else None
            if policy_id:
                gone = client.admin("DELETE", "/conditional-access/policies/" + policy_id, headers={"If-Match": "*"})
                check("policy %d: deleted" % trial, gone.status_code == 204, gone.text)
            refused = client.refresh(refresh)
            check("policy %d: her family stays revoked once the policy is gone (70008)" % trial,
                  refused.status_code == 400 and 70008 in refused.json().get("error_codes", []), refused.text)

        print("the push receiver starts:")
        receiver = Receiver(push_port)
        receiver.start()
        expected = {RISC + "account-disabled": args.trials, RISC + "account-enabled": args.trials, CAEP + "session-revoked": 2 * args.trials}
        jwks = jwt_keys(client)
        counts, deadline = {}, time.monotonic() + 60
        while time.monotonic() < deadline:
            counts = {}
            for body in [entry[4] for entry in receiver.snapshot()]:
                for kind, _, subject in verified(body, jwks, client):
                    if subject.get("user", {}).get("sub") == ERIN[2]:
                        counts[kind] = counts.get(kind, 0) + 1
            if all(counts.get(kind, 0) >= count for kind, count in expected.items()):
                break
            time.sleep(0.25)
        receiver.stop()
        check("every event of every killed trial reaches the push receiver, signed: %s" % counts,
              all(counts.get(kind, 0) == count for kind, count in expected.items()), expected)
    except Exception as error:  # noqa: BLE001
        import traceback
        check("the run completed", False, "%s\n%s" % (error, traceback.format_exc()))
    finally:
        server.kill9()
    if failures:
        print("\n----- server log (tail) -----\n" + server.tail(), file=sys.stderr)
    if args.keep:
        print("revocation_durability: kept " + workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    print("\nrevocation_durability: %s in %.1f s" % ("FAILED: " + ", ".join(failures) if failures else "all held", time.monotonic() - started))
    return 1 if failures else 0


def jwt_keys(client):
    import jwt
    metadata = requests.get(client.authority + "/.well-known/ssf-configuration", timeout=10).json()
    return metadata["issuer"], jwt.PyJWKClient(metadata["jwks_uri"])


def verified(body, jwks, client):
    import jwt
    issuer, keys = jwks
    if jwt.get_unverified_header(body).get("typ") != "secevent+jwt":
        raise AssertionError("typ")
    claims = jwt.decode(body, keys.get_signing_key_from_jwt(body).key, algorithms=["ES256"], audience=RECEIVER[0], issuer=issuer,
                        options={"verify_exp": False})
    return [(kind, members, claims.get("sub_id", {})) for kind, members in claims.get("events", {}).items()]


if __name__ == "__main__":
    sys.exit(main())
