#!/usr/bin/env python3
"""From an admin's write to a long-polling app's wake-up (the managed-configuration issue's measurement).

    python3 bench/scenarios/configuration.py --binary .build/release/portcullis [--rounds 30] [--smoke]

Starts the server on a copy of Config/ (SQLite), makes Alice's mail app instance compliant through the
compliance API, then, each round: the app waits in `GET /mam/v1/enrollments/{id}/configuration?wait=30`
with the version it has; the admin replaces the app configuration policy (`PUT`, a new value); the time
from the start of the PUT to the poll's answer is the wake-up latency. The baseline, in the same round, is
the PUT's own round trip: the ratio is what delivery adds on top of the write.

Then secrets (PROTOCOL §8.2): the instance registers a P-256 key, the admin writes the demo policy's password,
and each of the rounds fetches it sealed (`GET …/secrets/com.contoso.mail.smtp`: opened from its AES-GCM
at-rest sealing, sealed with HPKE to the key, the delivery audited) against a plain configuration fetch on
the same connection (the baseline); every answer is opened with pyhpke and must be the password.
"""

import argparse
import os
import statistics
import sys
import threading
import time

import requests

import benchserver
from benchserver import CLIENT, REPO

POLICY = "d4e5f6a7-0b1c-4d2e-8f3a-5b6c7d8e9f01"
ADMIN = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
TENANT = "contoso.example"


def b64url(data):
    import base64
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def token(base, **fields):
    reply = requests.post(f"{base}/{TENANT}/oauth2/v2.0/token", data=fields, timeout=30)
    reply.raise_for_status()
    return reply.json()["access_token"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/release/portcullis"))
    parser.add_argument("--port", type=int, default=18085)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    rounds = 3 if args.smoke else args.rounds
    with benchserver.running(args.binary, args.port, {}, "portcullis-bench-config-") as base:
        admin = token(base, grant_type="client_credentials", client_id=ADMIN[0], client_secret=ADMIN[1], scope="api://portcullis-admin/.default")
        app = token(base, grant_type="password", client_id=CLIENT, username="alice@contoso.example", password="Alice-dev-pass1",
                    scope="api://portcullis-compliance/.default")
        mam = {"Authorization": f"Bearer {app}"}
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        instance = ec.generate_private_key(ec.SECP256R1())
        numbers = instance.public_key().public_numbers()
        app_key = {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}
        device = {"deviceId": "bench-phone", "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1", "sdkVersion": "1.0", "silent": False,
                  "appKey": app_key}
        remediation = requests.post(f"{base}/mam/v1/remediations", json=device, headers=mam, timeout=30).json()
        enrollment = remediation["enrollmentId"]
        checkin = requests.post(f"{base}/mam/v1/enrollments/{enrollment}/checkin", headers=mam, timeout=30, json={
            "appliedPolicyVersion": remediation["policy"]["version"], "osVersion": "17.4", "appVersion": "3.1", "jailbroken": False, "pinSet": True})
        if checkin.json()["complianceStatus"]["status"] != "compliant":
            sys.exit(f"the instance did not become compliant: {checkin.text}")
        url = f"{base}/mam/v1/enrollments/{enrollment}/configuration"
        policy = requests.get(f"{base}/admin/v1/app-configuration/policies/{POLICY}", headers={"Authorization": f"Bearer {admin}"}, timeout=30).json()
        current = requests.get(url, headers=mam, timeout=30).json()
        if current.get("configuration", {}).get("serverUrl") is None:
            sys.exit(f"no configuration delivered: {current}")
        version = current["version"]
        wakes, writes = [], []
        for round_ in range(rounds):
            answer = {}

            def poll():
                reply = requests.get(f"{url}?wait=30", headers={**mam, "If-None-Match": f'"{version}"'}, timeout=60)
                answer["at"] = time.perf_counter()
                answer["reply"] = reply

            waiter = threading.Thread(target=poll)
            waiter.start()
            time.sleep(0.2)  # the poll is waiting on the server
            policy["configuration"]["syncDays"] = 31 + round_
            started = time.perf_counter()
            written = requests.put(f"{base}/admin/v1/app-configuration/policies/{POLICY}", json=policy, timeout=30,
                                   headers={"Authorization": f"Bearer {admin}", "If-Match": "*"})
            wrote = time.perf_counter()
            written.raise_for_status()
            waiter.join(timeout=60)
            reply = answer.get("reply")
            if reply is None or reply.status_code != 200 or reply.json()["configuration"]["syncDays"] != 31 + round_:
                sys.exit(f"round {round_}: the poll did not deliver the change: {reply and reply.status_code} {reply and reply.text}")
            version = reply.json()["version"]
            wakes.append((answer["at"] - started) * 1000)
            writes.append((wrote - started) * 1000)
        secrets, plain = secret_rounds(base, admin, mam, enrollment, instance, serialization, rounds * 3)
        if args.smoke:
            print(f"configuration smoke: {rounds} changes delivered to a long poll; {len(secrets)} secrets delivered sealed and opened with pyhpke")
            return
        p50, w50 = statistics.median(wakes), statistics.median(writes)
        print(f"admin write → long-poll wake-up over loopback, {rounds} rounds: p50 {p50:.1f} ms (min {min(wakes):.1f}, max {max(wakes):.1f})")
        print(f"the write itself (PUT round trip), same rounds: p50 {w50:.1f} ms → ratio {p50 / w50:.2f}")
        s50, c50 = statistics.median(secrets), statistics.median(plain)
        print(f"a sealed secret (GET …/secrets/{{id}}: at-rest open, HPKE seal, audit), {len(secrets)} fetches: p50 {s50:.2f} ms "
              f"(min {min(secrets):.2f}, max {max(secrets):.2f}); a configuration fetch, same rounds: p50 {c50:.2f} ms → ratio {s50 / c50:.2f}")


def secret_rounds(base, admin, mam, enrollment, instance, serialization, count):
    from pyhpke import AEADId, CipherSuite, KDFId, KEMId, KEMKey
    password = "bench-smtp-password"
    written = requests.put(f"{base}/admin/v1/app-configuration/policies/{POLICY}/secrets/com.contoso.mail.smtp", json={"password": password},
                           headers={"Authorization": f"Bearer {admin}"}, timeout=30)
    written.raise_for_status()
    suite = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES256_GCM)
    key = KEMKey.from_pem(instance.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    session = requests.Session()
    secret_url = f"{base}/mam/v1/enrollments/{enrollment}/secrets/com.contoso.mail.smtp"
    configuration_url = f"{base}/mam/v1/enrollments/{enrollment}/configuration"
    secrets, plain = [], []
    for _ in range(count):
        started = time.perf_counter()
        reply = session.get(secret_url, headers=mam, timeout=30)
        secrets.append((time.perf_counter() - started) * 1000)
        if reply.status_code != 200:
            sys.exit(f"the secret was not delivered: {reply.status_code} {reply.text}")
        sealed = reply.json()
        info = f"portcullis-secret-v1:{enrollment}:{sealed['identifier']}:{sealed['version']}".encode()
        opened = suite.create_recipient_context(unb64url(sealed["sealed"]["enc"]), key, info=info).open(unb64url(sealed["sealed"]["ciphertext"]), aad=b"")
        if opened != f'{{"password":"{password}"}}'.encode():
            sys.exit(f"the secret did not open to the password: {opened!r}")
        started = time.perf_counter()
        session.get(configuration_url, headers=mam, timeout=30).raise_for_status()
        plain.append((time.perf_counter() - started) * 1000)
    return secrets, plain


if __name__ == "__main__":
    main()
