#!/usr/bin/env python3
"""The cost of one write: from an admin's policy write to the moment every node serves it (issue 26).

    python3 bench/scenarios/propagation.py --binary .build/release/portcullis [--rounds 40] [--postgres URL] [--smoke]

Starts the demo configuration (a copy of Config/) on SQLite — one node — and, with --postgres, on a fresh
database of that server with two nodes sharing the keys directory. Each round the admin flips a policy that
blocks the mail sync daemon (a workload-identity policy) between enabled and disabled with a PUT to node A;
the probe asks the *other* node (node A itself on SQLite) for a daemon token in a tight loop until the answer
matches the policy's new state (53003 when enabled, a token when disabled). Reported per store: the write's own
round trip, and the time from sending the write until every node serves it (p50 / p90 / max over the rounds).
On SQLite it also reports the idle RSS of the demo configuration (5 s after readiness).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid

import requests

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TENANT = "contoso.example"
ADMIN = ("c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03", "admin-dev-secret-change-me")
DAEMON = ("c0ffee00-2222-4a2b-8c3d-4e5f6a7b8c02", "daemon-dev-secret-change-me")
POLICY = "9a000000-0000-4000-8000-00000000b10c"


def start(binary, work, port, env):
    log = open(os.path.join(work, f"node-{port}.log"), "w")
    process = subprocess.Popen(
        [binary, "serve", "--config", os.path.join(work, "Config"), "--data", os.path.join(work, f"data-{port}"),
         "--keys", os.path.join(work, "keys"), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, "PORTCULLIS_LOG_LEVEL": "warning", **env})
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if process.poll() is not None:
            sys.exit(f"node {port} exited: see {log.name}")
        try:
            if requests.get(f"{base}/health/ready", timeout=1).status_code == 200:
                return process, base
        except requests.RequestException:
            pass
        time.sleep(0.1)
    sys.exit(f"node {port} did not start")


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def fresh_database(url):
    u = urllib.parse.urlparse(url)
    name = f"portcullis_propagation_{os.getpid()}"
    subprocess.run(["psql", "-h", u.hostname, "-p", str(u.port or 5432), "-U", u.username, "-d", u.path.lstrip("/") or "postgres", "-q",
                    "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", "-c", f"CREATE DATABASE {name}"],
                   env={**os.environ, "PGPASSWORD": urllib.parse.unquote(u.password or ""), "PGOPTIONS": "-c client_min_messages=warning"}, check=True)
    return u._replace(path="/" + name).geturl()


def daemon_blocked(probe, base):
    reply = probe.post(f"{base}/{TENANT}/oauth2/v2.0/token", data={
        "grant_type": "client_credentials", "client_id": DAEMON[0], "client_secret": DAEMON[1], "scope": "api://contoso-mail/.default"}, timeout=30)
    if reply.status_code == 200:
        return False
    body = reply.json()
    if body.get("error_codes") == [53003]:
        return True
    sys.exit(f"unexpected probe answer {reply.status_code}: {reply.text}")


def policy(state):
    return {"id": POLICY, "displayName": "Propagation probe: block the daemon", "state": state,
            "conditions": {"applications": {"includeApplications": ["All"], "excludeApplications": []},
                           "clientApplications": {"includeServicePrincipals": [DAEMON[0]], "excludeServicePrincipals": []}},
            "grantControls": {"operator": "OR", "builtInControls": ["block"]}}


def measure(writer_base, probe_base, rounds):
    admin = requests.post(f"{writer_base}/{TENANT}/oauth2/v2.0/token", data={
        "grant_type": "client_credentials", "client_id": ADMIN[0], "client_secret": ADMIN[1], "scope": "api://portcullis-admin/.default"},
        timeout=30).json()["access_token"]
    writer = requests.Session()
    writer.headers["Authorization"] = f"Bearer {admin}"
    probe = requests.Session()
    url = f"{writer_base}/admin/v1/conditional-access/policies/{POLICY}"
    reply = writer.put(url, json=policy("disabled"), headers={"If-None-Match": "*"}, timeout=30)
    if reply.status_code != 201:
        sys.exit(f"could not create the probe policy: {reply.status_code} {reply.text}")
    deadline = time.monotonic() + 30
    while daemon_blocked(probe, probe_base):
        if time.monotonic() > deadline:
            sys.exit("the disabled policy still blocks after 30 s")
    writes, served = [], []
    for n in range(rounds):
        enabled = n % 2 == 0
        sent = time.monotonic()
        reply = writer.put(url, json=policy("enabled" if enabled else "disabled"), headers={"If-Match": "*"}, timeout=30)
        answered = time.monotonic()
        if reply.status_code != 200:
            sys.exit(f"write {n}: {reply.status_code} {reply.text}")
        while daemon_blocked(probe, probe_base) != enabled:
            if time.monotonic() - sent > 30:
                sys.exit(f"write {n} not served by {probe_base} after 30 s")
        served.append((time.monotonic() - sent) * 1000)
        writes.append((answered - sent) * 1000)
        time.sleep(0.05)
    return writes, served


def summary(values):
    ordered = sorted(values)
    return (statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))], ordered[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/release/portcullis"))
    parser.add_argument("--port", type=int, default=18090)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--postgres", default=os.environ.get("POSTGRES_URL"))
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    rounds = 4 if args.smoke else args.rounds
    rows = []
    work = tempfile.mkdtemp(prefix="portcullis-propagation-")
    processes = []
    try:
        shutil.copytree(os.path.join(REPO, "Config"), os.path.join(work, "Config"))
        node, base = start(args.binary, work, args.port, {})
        processes.append(node)
        time.sleep(5)
        idle = rss_mb(node.pid)
        writes, served = measure(base, base, rounds)
        rows.append(("SQLite, one node", writes, served))
        node.terminate(); node.wait(timeout=30); processes.clear()
        if args.postgres:
            shutil.rmtree(os.path.join(work, "keys"), ignore_errors=True)
            env = {"PORTCULLIS_POSTGRES_URL": fresh_database(args.postgres)}
            a, base_a = start(args.binary, work, args.port + 1, env)
            processes.append(a)
            b, base_b = start(args.binary, work, args.port + 2, env)
            processes.append(b)
            writes, served = measure(base_a, base_b, rounds)
            rows.append(("PostgreSQL, write to A, probe B", writes, served))
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    print(f"| store ({rounds} writes) | write answered p50 / p90 / max ms | served by every node p50 / p90 / max ms |")
    print("|---|---:|---:|")
    for name, writes, served in rows:
        print(f"| {name} | {' / '.join(f'{v:.1f}' for v in summary(writes))} | {' / '.join(f'{v:.1f}' for v in summary(served))} |")
    print()
    print(f"idle RSS of the demo configuration (SQLite, 5 s after ready): {idle:.1f} MB")
    if args.smoke:
        print("propagation smoke: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
