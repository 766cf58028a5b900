#!/usr/bin/env python3
"""`portcullis gateway` against hostile clients (issue 44), with a WSGI upstream (wsgiref: CGI-style environ, where `-` and
`_` in field names fold alike) and raw sockets.

    python3 Tests/Interop/gateway_hostile.py [--binary .build/debug/portcullis]

  1. Claim fields spoofed through underscores: a client's `X-Portcullis_Roles`, `X_Portcullis_Acrs`, `X-Portcullis_User`,
     `X-Forwarded-For`, `X_Forwarded_Host`, `Forwarded` never reach the upstream; the token's roles and the gateway's own
     `X-Forwarded-For` (the client's address), `-Host` and `-Proto` do.
  4. Dot segments: with `--upstream http://…/api`, `/../secret`, `/%2e%2e/secret`, `/api/%2E%2E/x`, `/a%2f..` and
     `/a\\b` are refused (400) and the upstream sees nothing; `/a/b..c` passes. A 400 with a megabyte behind it reaches
     the client whole: the gateway closes its output and reads on (RFC 9112 §9.6) rather than resetting the connection.
  3. Slowloris: a head sent a byte a second is answered 408 and closed within --head-timeout (3 s here), long before the
     client timeout (60 s); 2,000 idle connections from 127.0.0.1 are capped (--max-connections-per-address 256: the
     rest closed on accept) while a request from 127.0.0.2 is answered 200 at once; the gateway's RSS before, during and
     after the flood is printed.
Exit status 0 when every check passes, 1 otherwise.
"""

import argparse
import json
import os
import resource
import shutil
import socket
import sys
import tempfile
import threading
import time
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from socketserver import ThreadingMixIn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpop_interop import Checks, GatewayProcess, Server, free_port  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TENANT = "contoso.example"
DAEMON = ("c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02", "daemon-dev-secret-change-me")
MAIL_API = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Upstream:
    """A WSGI application that records each request's environ (the HTTP_* keys, PATH_INFO) and answers 200."""

    def __init__(self):
        self.seen = []
        self.lock = threading.Lock()

        def app(environ, start_response):
            with self.lock:
                self.seen.append({k: v for k, v in environ.items() if k.startswith("HTTP_") or k in ("PATH_INFO", "QUERY_STRING")})
            start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
            return [b"ok"]

        self.server = make_server("127.0.0.1", 0, app, server_class=ThreadingWSGIServer, handler_class=Quiet)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def last(self):
        with self.lock:
            return self.seen[-1] if self.seen else None

    def count(self):
        with self.lock:
            return len(self.seen)


def exchange(port, data, source="127.0.0.1", timeout=10):
    """Sends raw bytes and reads until the server closes or a whole answer (by Content-Length) has come."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as s:
        s.sendall(data)
        received = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            received += chunk
            head, _, body = received.partition(b"\r\n\r\n")
            if _ and b"content-length:" in head.lower():
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                if len(body) >= length:
                    break
        return received


def status_of(answer):
    try:
        return int(answer.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/debug/portcullis"))
    args = parser.parse_args()
    import requests

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 8192:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, hard), hard))
    checks = Checks()
    work = tempfile.mkdtemp(prefix="portcullis-hostile.")
    config = os.path.join(work, "config")
    shutil.copytree(os.path.join(REPO, "Config"), config)
    server = Server(os.path.abspath(args.binary), work, free_port())
    upstream = Upstream()
    gateway = GatewayProcess(os.path.abspath(args.binary), work, free_port())
    try:
        server.start(config)
        authority = "%s/%s" % (server.base, TENANT)
        gateway.start(["--upstream", "http://127.0.0.1:%d/api" % upstream.port, "--authority", authority, "--audience", MAIL_API,
                       "--head-timeout", "3", "--max-connections-per-address", "256"])
        token = requests.post(authority + "/oauth2/v2.0/token", data={
            "grant_type": "client_credentials", "client_id": DAEMON[0], "client_secret": DAEMON[1],
            "scope": "api://contoso-mail/.default"}, timeout=30).json()["access_token"]
        auth = b"Authorization: Bearer " + token.encode() + b"\r\n"

        # 1. Names the gateway sets, spoofed in any spelling.
        spoof = (b"GET /inbox HTTP/1.1\r\nHost: mail.contoso.example\r\n" + auth
                 + b"X-Portcullis_Roles: News.All\r\nX_Portcullis_Acrs: c1\r\nX-Portcullis_User: erin@contoso.example\r\n"
                 + b"X-Forwarded-For: 6.6.6.6\r\nX_Forwarded_Host: evil.example\r\nForwarded: for=6.6.6.6\r\nConnection: close\r\n\r\n")
        answer = exchange(gateway.port, spoof)
        seen = upstream.last() or {}
        checks.check("1: the request is forwarded (200)", status_of(answer) == 200, answer[:300])
        checks.check("1: the upstream sees the token's roles, not the client's", seen.get("HTTP_X_PORTCULLIS_ROLES") == "Mail.ReadAll", seen)
        checks.check("1: no forged acrs or user reaches the upstream",
                     "HTTP_X_PORTCULLIS_ACRS" not in seen and "HTTP_X_PORTCULLIS_USER" not in seen, seen)
        checks.check("1: X-Forwarded-For is the client's address, X-Forwarded-Host its Host, X-Forwarded-Proto the gateway's scheme",
                     seen.get("HTTP_X_FORWARDED_FOR") == "127.0.0.1" and seen.get("HTTP_X_FORWARDED_HOST") == "mail.contoso.example"
                     and seen.get("HTTP_X_FORWARDED_PROTO") == "http" and "HTTP_FORWARDED" not in seen, seen)

        # 4. Dot segments and encoded separators, under an upstream base path.
        before = upstream.count()
        for target in [b"/../secret", b"/%2e%2e/secret", b"/api/%2E%2E/x", b"/a%2f..", b"/a/./b", b"/a\\b", b"/%2e%2E%2fsecret"]:
            answer = exchange(gateway.port, b"GET " + target + b" HTTP/1.1\r\nHost: g\r\n" + auth + b"Connection: close\r\n\r\n")
            checks.check("4: %s refused (400)" % target.decode(), status_of(answer) == 400, answer[:200])
        checks.check("4: the upstream saw none of them", upstream.count() == before, upstream.count() - before)
        answer = exchange(gateway.port, b"GET /a/b..c?x=../.. HTTP/1.1\r\nHost: g\r\n" + auth + b"Connection: close\r\n\r\n")
        seen = upstream.last() or {}
        checks.check("4: /a/b..c passes, under the base", status_of(answer) == 200 and seen.get("PATH_INFO") == "/api/a/b..c", (answer[:100], seen))

        # 4b. A refusal with more bytes behind it: the gateway answers, closes its output and reads on (RFC 9112 §9.6), so
        # the client reads the whole 400 instead of a reset that drops it.
        outcome = None
        try:
            with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as s:
                s.sendall(b"GET /../secret HTTP/1.1\r\nHost: g\r\n\r\n" + b"X" * (1 << 20))
                s.shutdown(socket.SHUT_WR)
                answer = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            outcome = answer[:60]
            whole = status_of(answer) == 400 and answer.endswith(b"\n")
        except OSError as error:
            outcome, whole = repr(error), False
        checks.check("4: a 400 with a megabyte behind it reaches the client whole, then the close", whole, outcome)

        # 3a. Slowloris: a byte a second.
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as s:
            s.sendall(b"GET /inbox HTTP/1.1\r\nHost: g\r\n")
            answer = b""
            for _ in range(30):
                try:
                    s.sendall(b"X")
                except OSError:
                    break
                s.settimeout(1.0)
                try:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
                except socket.timeout:
                    continue
            took = time.monotonic() - started
        checks.check("3: a head trickling in is answered 408 and closed within the head timeout (3 s), took %.1f s" % took,
                     status_of(answer) == 408 and took < 6, (answer[:120], took))

        # 3b. An idle flood from one address; another address is still served.
        pid = gateway.process.pid
        rss_before = rss_kb(pid)
        flood = []
        for _ in range(2000):
            try:
                flood.append(socket.create_connection(("127.0.0.1", gateway.port), timeout=5, source_address=("127.0.0.1", 0)))
            except OSError:
                break
        time.sleep(1.0)
        alive = 0
        for s in flood:
            s.setblocking(False)
            try:
                alive += 0 if s.recv(1) == b"" else 1
            except BlockingIOError:
                alive += 1
            except OSError:
                pass
        rss_during = rss_kb(pid)
        started = time.monotonic()
        answer = exchange(gateway.port, b"GET /inbox HTTP/1.1\r\nHost: g\r\n" + auth + b"Connection: close\r\n\r\n", source="127.0.0.2")
        served = time.monotonic() - started
        checks.check("3: 2,000 idle connections from 127.0.0.1: %d kept open (the cap is 256), the rest closed on accept" % alive,
                     alive <= 256 and len(flood) == 2000, (alive, len(flood)))
        checks.check("3: a request from 127.0.0.2 during the flood is answered 200 (%.0f ms)" % (served * 1000),
                     status_of(answer) == 200 and served < 2, (answer[:120], served))
        for s in flood:
            s.close()
        time.sleep(1.0)
        rss_after = rss_kb(pid)
        print("gateway RSS: %.1f MB before the flood, %.1f MB with 2,000 connections offered (%d kept), %.1f MB after" % (
            rss_before / 1024, rss_during / 1024, alive, rss_after / 1024))
        answer = exchange(gateway.port, b"GET /inbox HTTP/1.1\r\nHost: g\r\n" + auth + b"Connection: close\r\n\r\n")
        checks.check("3: after the flood 127.0.0.1 is served again", status_of(answer) == 200, answer[:120])
    except Exception as error:  # noqa: BLE001
        checks.check("the run finished", False, repr(error))
        print(gateway.tail(), file=sys.stderr)
    finally:
        gateway.stop()
        server.stop()
        upstream.server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print("gateway_hostile: %d passed, %d failed" % (len(checks.passed), len(checks.failed)))
    return 0 if not checks.failed else 1


if __name__ == "__main__":
    sys.exit(main())
