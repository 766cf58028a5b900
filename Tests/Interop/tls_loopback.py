"""HTTPS servers on loopback for the interop tests: a CA and a certificate for 127.0.0.1 made here (the server under test
trusts the CA through PORTCULLIS_CALLBACKS_CA_FILE), and an OpenID Connect issuer that publishes its keys there and signs
tokens for federated identity credentials (PROTOCOL §21) — a stand-in for a Kubernetes cluster or a CI system."""

import base64
import datetime
import http.server
import json
import os
import ssl
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpop_interop import free_port  # noqa: E402,F401


def make_certificates(workdir, label):
    """A CA and a leaf for 127.0.0.1 and localhost signed by it, written to `workdir`: (ca_path, cert_path, key_path)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{label} CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
                           critical=False).sign(ca_key, hashes.SHA256()))
    paths = tuple(os.path.join(workdir, f"{label}-{name}") for name in ("ca.pem", "cert.pem", "key.pem"))
    with open(paths[0], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], "wb") as f:
        f.write(leaf.public_bytes(serialization.Encoding.PEM))
    with open(paths[2], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


def serve_tls(handler, port, cert_path, key_path):
    """A threading HTTPS server on 127.0.0.1:`port` with `handler`, serving in a daemon thread."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Certificate:
    """A key (RSA 2048 or P-256) and a self-signed certificate for it, valid from `start` for `days`: what an application
    registers as a certificate credential (PROTOCOL §21)."""

    def __init__(self, kind="rsa", start=None, days=30, name=None):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        from cryptography.x509.oid import NameOID
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if kind == "rsa" else ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        start = start or now - datetime.timedelta(hours=1)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name or f"reports-daemon-{kind}")])
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


class JSONHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class OIDCIssuer:
    """An OpenID Connect issuer over TLS on loopback: its discovery document and keys (RS256, a `kid` each), and tokens it
    signs as a workload's identity. `rotate()` publishes a new key in place of the old; `jwks_fetches` records when its
    keys were read."""

    def __init__(self, workdir=None, cert_path=None, key_path=None, host="127.0.0.1"):
        from cryptography.hazmat.primitives.asymmetric import rsa
        if cert_path is None:
            self.ca_path, cert_path, key_path = make_certificates(workdir, "oidc-issuer")
        else:
            self.ca_path = cert_path
        self.port = free_port()
        self.issuer = f"https://{host}:{self.port}"
        self.keys = {"issuer-key-1": rsa.generate_private_key(public_exponent=65537, key_size=2048)}
        self.kid = "issuer-key-1"
        self.jwks_fetches = []
        issuer = self

        class Handler(JSONHandler):
            def do_GET(self):
                if self.path == "/.well-known/openid-configuration":
                    self.answer(200, {"issuer": issuer.issuer, "jwks_uri": issuer.issuer + "/openid/v1/jwks",
                                      "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
                                      "id_token_signing_alg_values_supported": ["RS256"]})
                elif self.path == "/openid/v1/jwks":
                    issuer.jwks_fetches.append(time.time())
                    self.answer(200, issuer.jwks())
                else:
                    self.answer(404, {})

        self.server = serve_tls(Handler, self.port, cert_path, key_path)

    def jwks(self):
        import jwt
        keys = []
        for kid, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            jwk.update({"kid": kid, "use": "sig", "alg": "RS256"})
            keys.append(jwk)
        return {"keys": keys}

    def rotate(self):
        """A new key under a new kid replaces the published one."""
        from cryptography.hazmat.primitives.asymmetric import rsa
        self.kid = f"issuer-key-{uuid.uuid4().hex[:8]}"
        self.keys = {self.kid: rsa.generate_private_key(public_exponent=65537, key_size=2048)}

    def token(self, subject, audience="api://AzureADTokenExchange", lifetime=3600, key=None, kid=None, issuer=None, **claims):
        """A token as a Kubernetes service account's projected token (RS256, `kid`)."""
        import jwt
        now = int(time.time())
        payload = {"iss": issuer or self.issuer, "sub": subject, "aud": [audience], "iat": now, "nbf": now, "exp": now + lifetime,
                   "jti": str(uuid.uuid4())}
        payload.update(claims)
        return jwt.encode(payload, key or self.keys[self.kid], algorithm="RS256", headers={"kid": kid or self.kid})

    def stop(self):
        self.server.shutdown()
