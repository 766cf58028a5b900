#!/usr/bin/env python3
"""The sign-in log under a busy tenant's traffic (issue 32): store growth per grant, and the token path's throughput.

    python3 bench/scenarios/soak.py --binary .build/release/portcullis --dataset DIR [--before-binary OLD] \
        [--seconds 120] [--rounds 1] [--connections 16] [--port 18400] [--smoke]

DIR is a `portcullis-bench dataset` (bench.example: users, apps, 50 CA policies, refresh tokens in refresh-success.txt).
Each run starts the server on a fresh copy of it (pinned to CPU 0) and drives, for `--seconds`, the two non-interactive
grants a busy tenant is made of, at once: refresh_token with rotation (wrk, bench/wrk/refresh.lua, `--connections`) and
client_credentials (wrk, the same number of connections), both on the other CPUs. Then the server stops (SIGTERM: its
sign-in buffer is written) and the database is measured with SQLite's dbstat: the sign-in log's tables and indexes, and
the whole file (after a WAL checkpoint), before and after the run.

With --before-binary (a build of an earlier commit) the same runs are made with it, interleaved (before, after, before,
…), so that the machine's noise falls on both: the table compares bytes per grant and throughput.

Prints a Markdown table; --smoke runs 3 s with 2 connections and checks that grants were answered and counted.
"""

import argparse
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOKEN_PATH = "/bench.example/oauth2/v2.0/token"
SIGN_IN_TABLES = ("sign_ins", "sign_in_policies", "sign_in_usage")


def taskset(cpus):
    return ["taskset", "-c", cpus] if shutil.which("taskset") and os.cpu_count() >= 2 else []


def measure(path):
    """(bytes of the sign-in log's tables and their indexes, bytes of the whole database, sign-in rows, sign-ins counted)."""
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        names = [row[0] for row in db.execute(
            "SELECT name FROM sqlite_master WHERE tbl_name IN (%s)" % ",".join("?" * len(SIGN_IN_TABLES)), SIGN_IN_TABLES)]
        log = sum(row[0] or 0 for row in db.execute(
            "SELECT SUM(pgsize) FROM dbstat WHERE name IN (%s)" % ",".join("?" * len(names)), names)) if names else 0
        pages = db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
        rows = db.execute("SELECT COUNT(*) FROM sign_ins").fetchone()[0]
        columns = [row[1] for row in db.execute("PRAGMA table_info(sign_ins)")]
        counted = db.execute("SELECT COALESCE(SUM(COALESCE(count, 1)), 0) FROM sign_ins").fetchone()[0] if "count" in columns else rows
        return log, pages, rows, counted
    finally:
        db.close()


def wrk(port, connections, seconds, script, arguments):
    command = taskset("1-%d" % (os.cpu_count() - 1)) + [
        "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", script, f"http://127.0.0.1:{port}{TOKEN_PATH}"]
    if arguments:
        command += ["--"] + arguments
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def answered(output):
    found = re.search(r"(\d+) requests in", output)
    if not found:
        sys.exit(f"soak: wrk said:\n{output}")
    requests = int(found.group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return requests, int(non2xx.group(1)) if non2xx else 0


def run(label, binary, dataset, work, port, seconds, connections, tokens):
    root = os.path.join(work, label)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(dataset, root)
    database = os.path.join(root, "data", "portcullis.sqlite")
    log_before, file_before, _, _ = measure(database)
    env = dict(os.environ, PORTCULLIS_LOG_LEVEL="warning")
    server_log = open(os.path.join(work, f"{label}-server.log"), "w")
    server = subprocess.Popen(
        taskset("0") + [binary, "serve", "--config", os.path.join(root, "Config"), "--data", os.path.join(root, "data"),
                        "--keys", os.path.join(root, "Keys"), "--port", str(port)],
        stdout=server_log, stderr=subprocess.STDOUT, env=env)
    try:
        for _ in range(300):
            try:
                import urllib.request
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        else:
            sys.exit(f"soak: {label} did not start: see {server_log.name}")
        pool = os.path.join(work, f"{label}-pool.txt")
        with open(pool, "w") as f:
            f.write("\n".join(tokens) + "\n")
        cpu_before = cpu_seconds(server.pid)
        refresh = wrk(port, connections, seconds, "bench/wrk/refresh.lua", [pool, "plain"])
        credentials = wrk(port, connections, seconds, "bench/wrk/client_credentials.lua", [])
        refresh_out, _ = refresh.communicate()
        credentials_out, _ = credentials.communicate()
        cpu = cpu_seconds(server.pid) - cpu_before
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
    (r_requests, r_errors), (c_requests, c_errors) = answered(refresh_out), answered(credentials_out)
    if r_errors or c_errors:
        sys.exit(f"soak: {label}: {r_errors} refresh and {c_errors} client-credentials errors\n{refresh_out}\n{credentials_out}")
    log_after, file_after, rows, counted = measure(database)
    grants = r_requests + c_requests
    return {"label": label, "grants": grants, "refresh": r_requests, "credentials": c_requests, "seconds": seconds,
            "log_bytes": log_after - log_before, "file_bytes": file_after - file_before, "rows": rows, "counted": counted,
            "cpu": cpu}


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--before-binary")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--port", type=int, default=18400)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    seconds, connections, rounds = (3, 2, 1) if args.smoke else (args.seconds, args.connections, args.rounds)
    tokens = [line.strip() for line in open(os.path.join(args.dataset, "refresh-success.txt")) if line.strip()]
    builds = ([("before", args.before_binary)] if args.before_binary else []) + [("after", args.binary)]
    work = tempfile.mkdtemp(prefix="portcullis-soak-")
    results = []
    used = 0
    try:
        for round_ in range(rounds):
            for label, binary in builds:
                # Every run starts from the same dataset copy, so the same tokens are fresh in each.
                pool = tokens[:connections + 1]
                if len(pool) < connections + 1:
                    sys.exit("soak: the dataset has too few refresh tokens")
                results.append(run(f"{label}-{round_}", binary, args.dataset, work, args.port, seconds, connections, pool))
                used += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.smoke:
        result = results[-1]
        if result["grants"] == 0 or result["counted"] < result["grants"] * 0.9:
            sys.exit(f"soak smoke: {result}")
        print(f"bench smoke: soak ok ({result['grants']} grants, {result['rows']} sign-in rows counting {result['counted']})")
        return
    print(f"| run | grants ({seconds} s) | grants/s | server CPU µs/grant | sign-in rows (counting) | sign-in log B/grant | whole store B/grant |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['label']} | {r['grants']:,} ({r['refresh']:,} refresh, {r['credentials']:,} client credentials) | "
              f"{r['grants'] / r['seconds']:,.0f} | {r['cpu'] * 1e6 / max(1, r['grants']):.0f} | {r['rows']:,} ({r['counted']:,}) | "
              f"{r['log_bytes'] / max(1, r['grants']):.1f} | {r['file_bytes'] / max(1, r['grants']):.1f} |")
    if args.before_binary:
        before = [r for r in results if r["label"].startswith("before")]
        after = [r for r in results if r["label"].startswith("after")]
        ratio = statistics.median(a["grants"] for a in after) / statistics.median(b["grants"] for b in before)
        cpu = statistics.median(a["cpu"] / a["grants"] for a in after) / statistics.median(b["cpu"] / b["grants"] for b in before)
        print(f"\nthroughput after/before (median): {ratio:.3f}; server CPU per grant after/before: {cpu:.3f}")


if __name__ == "__main__":
    main()
