#!/usr/bin/env python3
"""Password guessing against a legitimate sign-in (the hardening issue's measurement).

    python3 bench/scenarios/guessing.py --binary .build/release/portcullis [--guesses 600] [--cost 10]

Starts the server on a copy of Config/ with bcrypt at the production cost (10) and trustedProxies set to
loopback, so that X-Forwarded-For stands for the client address. Measures a legitimate password grant
(Carol, from 203.0.113.5) alone, then while N concurrent guesses at unknown user names arrive from 60
other addresses (each address stays under the per-address limit, so every guess reaches bcrypt unless
the bounded queue refuses it). Prints the legitimate sign-in's latency (p50, max) and answers, and the
guesses' answers by status.
"""

import argparse
import concurrent.futures
import os
import statistics
import threading
import time

import requests

import benchserver
from benchserver import CLIENT, REPO


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/release/portcullis"))
    parser.add_argument("--guesses", type=int, default=600)
    parser.add_argument("--cost", type=int, default=10)
    parser.add_argument("--port", type=int, default=18190)
    args = parser.parse_args()

    settings = {"trustedProxies": ["127.0.0.1/32"], "passwords": {"bcryptCost": args.cost}, "logLevel": "warning"}
    with benchserver.running(args.binary, args.port, settings, "portcullis-guessing-") as base:
        token = f"{base}/contoso.example/oauth2/v2.0/token"

        def sign_in(user, password, address):
            started = time.monotonic()
            reply = requests.post(token, data={"grant_type": "password", "client_id": CLIENT, "username": user, "password": password,
                                               "scope": "openid profile"}, headers={"X-Forwarded-For": address}, timeout=120)
            return time.monotonic() - started, reply.status_code

        legit = lambda: sign_in("carol@contoso.example", "Carol-dev-pass1", "203.0.113.5")
        alone = [legit() for _ in range(5)]
        print(f"legitimate sign-in alone: p50 {statistics.median(t for t, _ in alone) * 1000:.0f} ms, answers {[s for _, s in alone]}")

        during = []
        stop = threading.Event()

        def measure():
            while not stop.is_set():
                during.append(legit())
                time.sleep(0.2)

        guesses = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.guesses + 1) as pool:
            watcher = pool.submit(measure)
            futures = [pool.submit(sign_in, f"nobody{i}@contoso.example", "guess", f"198.51.100.{i % 60 + 1}") for i in range(args.guesses)]
            for future in futures:
                guesses.append(future.result())
            stop.set()
            watcher.result()
        by_status = {}
        for _, status in guesses:
            by_status[status] = by_status.get(status, 0) + 1
        times = [t for t, _ in during]
        print(f"{args.guesses} concurrent guesses: answers {dict(sorted(by_status.items()))}, slowest {max(t for t, _ in guesses):.2f} s")
        print(f"legitimate sign-in during the guesses: {len(during)} attempts, p50 {statistics.median(times) * 1000:.0f} ms, "
              f"max {max(times) * 1000:.0f} ms, answers {dict((s, [x for _, x in during].count(s)) for s in set(x for _, x in during))}")


if __name__ == "__main__":
    main()
