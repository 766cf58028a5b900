#!/usr/bin/env python3
"""Client assertions for `bench/run assertions` (PROTOCOL §21): a P-256 certificate registered on the bench daemon in the
dataset's directory.json, and assertions signed with its key as MSAL signs them (ES256, x5t, aud the token endpoint, exp
ten minutes ahead, a fresh jti each): one file of distinct assertions (each used once: the signature and the jti's store
round trips every time), and the first of them alone (the same assertion again and again, as MSAL reuses one).

    python3 bench/scenarios/assertions.py DATASET TOKEN_URL COUNT OUT_DIR
"""

import base64
import datetime
import json
import os
import sys
import time
import uuid

DAEMON = "c0000000-0000-4000-8000-000000000001"


def main():
    dataset, token_url, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    import jwt
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bench daemon")])
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    path = os.path.join(dataset, "Config", "directory.json")
    with open(path) as f:
        directory = json.load(f)
    for tenant in directory["tenants"]:
        for application in tenant["applications"]:
            if application["appId"] == DAEMON:
                application["keyCredentials"] = [{"key": certificate.public_bytes(serialization.Encoding.PEM).decode()}]
    with open(path, "w") as f:
        json.dump(directory, f)
    x5t = base64.urlsafe_b64encode(certificate.fingerprint(hashes.SHA1())).rstrip(b"=").decode()
    issued = time.time()
    with open(os.path.join(out, "assertions.txt"), "w") as fresh, open(os.path.join(out, "assertion.txt"), "w") as reused:
        for index in range(count):
            assertion = jwt.encode({"iss": DAEMON, "sub": DAEMON, "aud": token_url, "exp": int(issued) + 600, "nbf": issued, "iat": issued,
                                    "jti": str(uuid.uuid4())}, key, algorithm="ES256", headers={"x5t": x5t})
            fresh.write(assertion + "\n")
            if index == 0:
                reused.write(assertion + "\n")


if __name__ == "__main__":
    main()
