#!/usr/bin/env python3
"""Store-fault chaos suite for Portcullis against the real binary (PROTOCOL §2.4).

    python3 Tests/Chaos/chaos.py [--binary .build/debug/portcullis] [--json FILE] [--keep] [FAULT ...]

FAULT is any of postgres, kill-node, disk-full, sigterm (default: all four, in that order).

The contract checked (PROTOCOL §2.4): when the store cannot answer, every endpoint answers at once 503 with the
JSON error "temporarily_unavailable" and a Retry-After header, changing nothing; no request waits on the store
past a deadline (2 s; this suite allows 2 s + 1.5 s margin = 3.5 s per request); after the database returns the
nodes recover on their own (this suite: every client served 200 by every node within 3 s); a rotation whose
commit failed changes nothing (the client's refresh token still works).

Faults
  postgres   a throwaway PostgreSQL cluster (own port and socket directory, fsync=off) and TWO nodes on it sharing
             one keys directory. 6 client threads, each with its own refresh-token chain (password grant, then
             refresh_token grants), alternating nodes request by request; a 200 moves the chain to the new token,
             a 503 keeps it and retries after Retry-After (0.2 s when missing: a violation). A probe thread per
             node polls /health/ready every 0.25 s (reported on its own line, same asserts).
             Phases: warm-up 3 s; `pg_ctl restart -m fast` + 5 s; `pg_ctl stop -m fast` + 5 s with the database
             down; `pg_ctl start` and recovery (until every client got 200 from both nodes again, at most 35 s);
             5 s more; then each chain's current refresh token is redeemed once (must be 200).
  kill-node  the same two nodes and load; after 3 s node A gets SIGKILL; a client whose request to A fails moves
             to B for good (a refused or reset connection to A is expected). A chain whose request was in flight
             on A at the kill may find its token already rotated: 400 invalid_grant is accepted for those chains
             only (they are reported, then start a new chain with a password grant). 5 s on B alone, then every
             chain's token is verified on B.
  disk-full  ONE node on SQLite whose data directory is a 32 MB tmpfs mounted in a private mount namespace
             (`unshare -m`; the fill and its removal run in that namespace through `nsenter -m`). Load: 4 rotation
             chains and 2 compliance check-in writers (POST /mam/v1/enrollments/{id}/checkin). Warm-up 3 s; `dd`
             fills the tmpfs until ENOSPC; 3 s of load on the full disk; the fill file is deleted; recovery (every
             client 200 again; ≤ 3 s asserted); 2 s more; every chain's token must still work; the process must
             still be running.
  sigterm    ONE node on SQLite; 8 threads alternating a refresh-token rotation and GET /health/ready, on a raw
             socket each (a new connection per request, `Connection: close`) so the moment its bytes were sent
             is known. After 3 s the node gets SIGTERM. Every request whose bytes were all sent before the signal
             must get an HTTP answer (200, or 503 with Retry-After), not a reset or EOF; the process must exit
             within 15 s (time reported).

Every fault prints a table per phase -- requests, answers by status (200 / 503 / other), transport errors,
never answered (30 s client timeout), 503s without Retry-After, longest request, p99 -- plus recovery time and
chains verified, and a PASS/FAIL line with the reasons; server (and PostgreSQL) log tails on failure.
Exit status 0 when every fault passed, 1 otherwise. Needs root (runuser, unshare, mount, nsenter) and Debian's
PostgreSQL under /usr/lib/postgresql/*/bin.
"""

import argparse
import atexit
import collections
import glob
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import requests

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TENANT = "contoso.example"
MAIL_CLIENT = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
SCOPE = "openid profile offline_access"
COMPLIANCE_SCOPE = "api://portcullis-compliance/.default"
USERS = [("alice@contoso.example", "Alice-dev-pass1"), ("bob@contoso.example", "Bob-dev-pass1")]
TOKEN_PATH = "/%s/oauth2/v2.0/token" % TENANT
ADMIN_CLIENT = "c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03"
ADMIN_SECRET = "admin-dev-secret-change-me"

DEADLINE = 2.0
MARGIN = 1.5
LIMIT = DEADLINE + MARGIN          # longest acceptable request
CLIENT_TIMEOUT = 30.0              # a request without an answer by then is "never answered"
RECOVERY_LIMIT = 3.0               # every client served 200 again this long after the store came back
RECOVERY_WAIT = 35.0               # how long the suite waits for recovery at most
START_TIMEOUT = 60.0
DISK_WARMUP = 1.0                  # disk-full: load before the fill
EXIT_LIMIT = 15.0                  # SIGTERM -> process gone
RETRY_AFTER_CAP = 5.0              # a client honours Retry-After up to this many seconds
MISSING_RETRY_AFTER_PAUSE = 0.2

T0 = time.monotonic()


def now():
    return time.monotonic()


def log(message=""):
    print(message, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------------------------
# Clean-up: every server, cluster and temporary directory registers its undo here; run at the end of each fault,
# at exit, and on SIGINT/SIGTERM.

_cleanups = []
_cleanup_lock = threading.Lock()
KEEP = False


def on_cleanup(function, *args):
    with _cleanup_lock:
        _cleanups.append((function, args))


def run_cleanups():
    while True:
        with _cleanup_lock:
            if not _cleanups:
                return
            function, args = _cleanups.pop()
        try:
            function(*args)
        except Exception as error:  # noqa: BLE001 -- clean-up goes on whatever happens
            log("  (clean-up %s failed: %s)" % (getattr(function, "__name__", function), error))


def remove_tree(path):
    if KEEP:
        log("  kept %s" % path)
        return
    shutil.rmtree(path, ignore_errors=True)


atexit.register(run_cleanups)


def _terminate(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


signal.signal(signal.SIGTERM, _terminate)


# ---------------------------------------------------------------------------------------------------------------
# PostgreSQL: a throwaway cluster like scripts/test's (runuser -u postgres initdb / pg_ctl), on its own port and
# socket directory.


class Postgres:
    PASSWORD = "chaos-postgres-password"

    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: [int(x) for x in p.split("/")[-2].split(".") if x.isdigit()])
        if not bins:
            raise RuntimeError("no PostgreSQL under /usr/lib/postgresql/*/bin")
        self.bin = bins[-1]
        self.dir = tempfile.mkdtemp(prefix="portcullis-chaos-pg.")
        on_cleanup(remove_tree, self.dir)
        shutil.chown(self.dir, "postgres")
        self.data = os.path.join(self.dir, "data")
        self.log_path = os.path.join(self.dir, "server.log")
        pwfile = os.path.join(self.dir, "pwfile")
        with open(pwfile, "w") as f:
            f.write(self.PASSWORD + "\n")
        shutil.chown(pwfile, "postgres")
        subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres",
                        "--pwfile=" + pwfile, "--auth-host=scram-sha-256", "--auth-local=trust"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = free_port()
        self.options = "-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" % (self.port, self.dir)
        self.url = "postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable" % (self.PASSWORD, self.port)
        on_cleanup(self.destroy)

    def ctl(self, *args, check=True):
        """Runs pg_ctl; returns its duration in seconds."""
        started = now()
        result = subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log_path,
                                 *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        if check and result.returncode != 0:
            raise RuntimeError("pg_ctl %s failed (%d): %s" % (" ".join(args), result.returncode, result.stdout.strip()[-500:]))
        return now() - started

    def start(self):
        return self.ctl("-w", "-t", "60", "-o", self.options, "start")

    def restart(self):
        return self.ctl("-w", "-t", "60", "-m", "fast", "-o", self.options, "restart")

    def stop(self):
        return self.ctl("-w", "-t", "60", "-m", "fast", "stop")

    def destroy(self):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.ctl("-w", "-t", "30", "-m", "immediate", "stop", check=False)

    def tail(self, lines=25):
        return tail_file(self.log_path, lines)


def tail_file(path, lines, skip=None):
    """The last `lines` lines; with `skip` (a predicate), lines it matches are left out and counted."""
    try:
        with open(path, "r", errors="replace") as f:
            if skip is None:
                return "".join(collections.deque(f, maxlen=lines))
            kept, skipped = collections.deque(maxlen=lines), 0
            for line in f:
                if skip(line):
                    skipped += 1
                else:
                    kept.append(line)
            return "(%d routine request lines left out)\n" % skipped + "".join(kept)
    except OSError:
        return "(no log)\n"


def routine_request_line(line):
    """A per-request access line of a 2xx/3xx/4xx answer (the tails on failure keep everything else)."""
    return " info portcullis: " in line and "[PortcullisServer] " in line and line.rstrip()[-3:-2] in ("2", "3", "4")


# ---------------------------------------------------------------------------------------------------------------
# A server node


class Node:
    def __init__(self, name, binary, config, data, keys, port, log_path, env=None, wrapper=None):
        self.name, self.binary, self.config, self.data, self.keys, self.port = name, binary, config, data, keys, port
        self.base = "http://127.0.0.1:%d" % port
        self.log_path = log_path
        self.env = env or {}
        self.wrapper = wrapper
        self.process = None
        self.exit_status = None
        on_cleanup(self.stop)

    def start(self, timeout=START_TIMEOUT):
        with open(self.log_path, "a") as f:
            f.write("\n===== chaos: start of node %s =====\n" % self.name)
            offset = f.tell()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
        env.update(PORTCULLIS_BCRYPT_COST="4")
        env.update(self.env)
        command = [self.binary, "serve", "--config", self.config, "--data", self.data, "--keys", self.keys, "--port", str(self.port)]
        if self.wrapper:
            command = self.wrapper(command)
        started = now()
        with open(self.log_path, "a") as logfile:
            self.process = subprocess.Popen(command, cwd=os.path.dirname(self.config), env=env, stdin=subprocess.DEVNULL, stdout=logfile,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        needle = "Portcullis is listening on http://127.0.0.1:%d" % self.port
        while now() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError("node %s exited with status %s during start-up:\n%s" % (self.name, self.process.returncode, self.tail()))
            with open(self.log_path, "r", errors="replace") as f:
                f.seek(offset)
                if needle in f.read():
                    break
            time.sleep(0.1)
        else:
            raise RuntimeError("node %s did not log %r within %d s:\n%s" % (self.name, needle, timeout, self.tail()))
        while now() - started < timeout:
            try:
                if requests.get(self.base + "/health/ready", timeout=5).status_code == 200:
                    return now() - started
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError("node %s did not become ready within %d s:\n%s" % (self.name, timeout, self.tail()))

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def signal(self, signum):
        if self.alive():
            os.kill(self.process.pid, signum)

    def wait(self, timeout):
        try:
            self.exit_status = self.process.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def stop(self, grace=5.0):
        """SIGTERM, then SIGKILL after `grace` seconds; returns the seconds until exit, or None when it had to be killed."""
        if not self.alive():
            return 0.0
        started = now()
        self.signal(signal.SIGTERM)
        if self.wait(grace):
            return now() - started
        log("  node %s did not exit within %.0f s of SIGTERM: SIGKILL" % (self.name, grace))
        self.signal(signal.SIGKILL)
        self.wait(10)
        return None

    def tail(self, lines=30):
        return tail_file(self.log_path, lines, routine_request_line)


# ---------------------------------------------------------------------------------------------------------------
# Requests and their record


class Rec:
    __slots__ = ("phase", "client", "node", "what", "t0", "t1", "t_sent", "kind", "status", "retry_after", "error", "detail", "expected",
                 "violation")

    def __init__(self, phase, client, node, what):
        self.phase, self.client, self.node, self.what = phase, client, node, what
        self.t0 = now()
        self.t1 = self.t_sent = None
        self.kind = None           # http | timeout | refused | reset | error
        self.status = None
        self.retry_after = None
        self.error = None          # the JSON error code of a non-200 answer
        self.detail = ""
        self.expected = False      # a transport error or status the fault explicitly accepts
        self.violation = None

    @property
    def duration(self):
        return (self.t1 if self.t1 is not None else now()) - self.t0


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.records = []
        self.phase = "setup"
        self.marks = [("setup", now())]  # (phase, start)

    def set_phase(self, name):
        with self.lock:
            self.phase = name
            self.marks.append((name, now()))
        log("  [%6.1f s] phase %s" % (now() - T0, name))

    def begin(self, client, node, what):
        with self.lock:
            return Rec(self.phase, client, node, what)

    def add(self, rec):
        with self.lock:
            self.records.append(rec)

    def snapshot(self):
        with self.lock:
            return list(self.records)

    def phase_duration(self, name, end):
        for i, (phase, start) in enumerate(self.marks):
            if phase == name:
                return (self.marks[i + 1][1] if i + 1 < len(self.marks) else end) - start
        return 0.0


def error_code(response):
    try:
        body = response.json()
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):  # /admin/v1, /mam/v1 shape
        return error.get("code")
    return error


def http(recorder, client, node, what, method, path, **kwargs):
    """One request with a new connection; returns (Rec, Response or None). Never raises for transport errors."""
    rec = recorder.begin(client, node.name, what)
    headers = dict(kwargs.pop("headers", {}) or {}, Connection="close")
    response = None
    try:
        response = requests.request(method, node.base + path, headers=headers, timeout=CLIENT_TIMEOUT, **kwargs)
        rec.kind, rec.status = "http", response.status_code
        rec.retry_after = response.headers.get("Retry-After")
        if response.status_code != 200:
            rec.error = error_code(response)
            rec.detail = response.text[:200]
    except requests.Timeout as error:
        rec.kind, rec.detail = "timeout", str(error)[:200]
    except requests.ConnectionError as error:
        text = str(error)
        rec.kind = "refused" if ("refused" in text or "Errno 111" in text) else "reset"
        rec.detail = text[:200]
    except requests.RequestException as error:
        rec.kind, rec.detail = "error", "%s: %s" % (type(error).__name__, str(error)[:200])
    rec.t1 = now()
    recorder.add(rec)
    return rec, response


def retry_after_seconds(rec):
    try:
        return min(max(float(rec.retry_after), 0.0), RETRY_AFTER_CAP)
    except (TypeError, ValueError):
        return MISSING_RETRY_AFTER_PAUSE


# ---------------------------------------------------------------------------------------------------------------
# Judging records


def judge(records, check_body=True):
    """Sets rec.violation on every record that breaks the contract (unless rec.expected)."""
    for rec in records:
        problems = []
        if rec.expected:
            rec.violation = None
            continue
        if rec.kind == "timeout":
            problems.append("never answered (client timeout %.0f s)" % CLIENT_TIMEOUT)
        elif rec.kind != "http":
            problems.append("%s: %s" % (rec.kind, rec.detail[:120]))
        elif rec.status == 503:
            if rec.retry_after is None:
                problems.append("503 without Retry-After")
            elif not rec.retry_after.strip().isdigit():
                problems.append("503 with Retry-After %r (not delta-seconds)" % rec.retry_after)
            if check_body and rec.what != "ready" and rec.error != "temporarily_unavailable":
                problems.append("503 with error %r, not temporarily_unavailable" % rec.error)
        elif rec.status != 200:
            problems.append("status %d (%s)" % (rec.status, rec.detail[:120].replace("\n", " ")))
        if rec.kind != "timeout" and rec.duration > LIMIT:
            problems.append("took %.2f s (> %.1f s)" % (rec.duration, LIMIT))
        rec.violation = "; ".join(problems) or None


def pct(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def summarize(records, duration=None):
    answers = collections.Counter()
    for rec in records:
        if rec.kind == "http":
            answers["200" if rec.status == 200 else "503" if rec.status == 503 else "other"] += 1
        elif rec.kind == "timeout":
            answers["timeouts"] += 1
        else:
            answers["expected errors" if rec.expected else "errors"] += 1
    durations = [r.duration for r in records]
    return {
        "seconds": round(duration, 1) if duration is not None else None,
        "requests": len(records),
        "200": answers["200"], "503": answers["503"], "other": answers["other"], "errors": answers["errors"],
        "expected_errors": answers["expected errors"], "timeouts": answers["timeouts"],
        "503_without_retry_after": sum(1 for r in records if r.kind == "http" and r.status == 503 and r.retry_after is None),
        "longest": round(max(durations), 3) if durations else 0.0,
        "p99": round(pct(durations, 0.99), 3),
        "over_limit": sum(1 for r in records if r.kind == "timeout" or r.duration > LIMIT),
        "violations": sum(1 for r in records if r.violation),
    }


COLUMNS = [("seconds", "secs", "%5s"), ("requests", "reqs", "%5d"), ("200", "200", "%5d"), ("503", "503", "%5d"), ("other", "other", "%5d"),
           ("errors", "errs", "%5d"), ("expected_errors", "x-err", "%5d"), ("timeouts", "never", "%5d"),
           ("503_without_retry_after", "503noRA", "%7d"), ("over_limit", ">3.5s", "%5d"), ("longest", "longest", "%7.2f"),
           ("p99", "p99", "%6.2f"), ("violations", "viol", "%5d")]


def print_table(rows):
    """rows: [(label, summary)]"""
    width = max([len("phase")] + [len(label) for label, _ in rows])
    header = "  %-*s " % (width, "phase") + " ".join("%*s" % (len(fmt % 0) if "d" in fmt else len(fmt % 0.0), title)
                                                      for _, title, fmt in COLUMNS)
    log(header)
    for label, summary in rows:
        cells = []
        for key, title, fmt in COLUMNS:
            value = summary.get(key)
            size = len(fmt % 0) if "d" in fmt else len(fmt % 0.0)
            cells.append("%*s" % (size, "-" if value is None else (fmt % value).strip()))
        log("  %-*s " % (width, label) + " ".join(cells))


def phase_rows(recorder, records, end):
    rows, seen = [], []
    for name, _ in recorder.marks:
        if name not in seen:
            seen.append(name)
    for name in seen:
        subset = [r for r in records if r.phase == name]
        if subset:
            rows.append((name, summarize(subset, recorder.phase_duration(name, end))))
    rows.append(("TOTAL", summarize(records)))
    return rows


def violation_digest(records, limit=8):
    counter = collections.Counter()
    example = {}
    for rec in records:
        if rec.violation:
            key = (rec.phase, rec.node, rec.what, re.sub(r"\d+(\.\d+)?", "#", rec.violation)[:70])
            counter[key] += 1
            example.setdefault(key, rec)
    lines = []
    for key, count in counter.most_common(limit):
        rec = example[key]
        lines.append("%4d x phase=%s node=%s %s: %s (e.g. started at %.2f s, %.2f s long)" % (
            count, key[0], key[1], key[2], rec.violation[:160], rec.t0 - T0, rec.duration))
    if len(counter) > limit:
        lines.append("     ... and %d more kinds" % (len(counter) - limit))
    return lines


def recovery_time(records, since, pairs):
    """Seconds from `since` until every (client, node) pair got a 200 for a request started after `since` and after
    its last failure; None when some pair has not."""
    by_pair = collections.defaultdict(list)
    for rec in records:
        if rec.t0 >= since and (rec.client, rec.node) in pairs:
            by_pair[(rec.client, rec.node)].append(rec)
    worst = 0.0
    for pair in pairs:
        recs = sorted(by_pair.get(pair, []), key=lambda r: r.t1)
        last_bad = max([i for i, r in enumerate(recs) if not (r.kind == "http" and r.status == 200)], default=-1)
        ok = next((r for r in recs[last_bad + 1:] if r.kind == "http" and r.status == 200), None)
        if ok is None:
            return None
        worst = max(worst, ok.t1 - since)
    return worst


def late_pair(records, since, pairs):
    """The (client, node) pair whose recovery came last, with when its first request after `since` started."""
    worst, detail = -1.0, None
    for pair in pairs:
        one = recovery_time(records, since, {pair})
        if one is not None and one > worst:
            first = min((r.t0 for r in records if r.t0 >= since and (r.client, r.node) == pair), default=since)
            worst, detail = one, "%s on node %s (its first request after that was sent %.2f s later)" % (pair[0], pair[1], first - since)
    return detail


def node_recovery(records, since, nodes, clients):
    """Per node: seconds from `since` until the first 200 after the node's last failed answer, counting only requests
    sent after `since` (so a client that was stuck in an older request does not count); None when not recovered."""
    result = {}
    for node in nodes:
        recs = sorted([r for r in records if r.t0 >= since and r.node == node and r.client in clients], key=lambda r: r.t1)
        last_bad = max([i for i, r in enumerate(recs) if not (r.kind == "http" and r.status == 200)], default=-1)
        ok = next((r for r in recs[last_bad + 1:] if r.kind == "http" and r.status == 200), None)
        result[node] = None if ok is None else round(ok.t1 - since, 2)
    return result


def stop_nodes(nodes, grace=5.0):
    """SIGTERM to all at once; {name: seconds until exit, or None when SIGKILL was needed}."""
    result = {}
    threads = [threading.Thread(target=lambda n=n: result.__setitem__(n.name, n.stop(grace))) for n in nodes if n.alive()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return result


def fmt_exits(exits, grace=5.0):
    return ", ".join("%s %s" % (name, "%.2f s" % value if value is not None else "did not exit within %.0f s (SIGKILL)" % grace)
                     for name, value in sorted(exits.items())) or "-"


# ---------------------------------------------------------------------------------------------------------------
# Clients


class Chain:
    def __init__(self, index, user):
        self.index, self.user = index, user
        self.name = "chain%d" % index
        self.token = None
        self.rotations = 0
        self.reseeds = 0
        self.uncertain = False       # the last request with the current token got no answer: it may have rotated it
        self.inflight_at_kill = False
        self.accepted_invalid_grant = 0
        self.unexpected_invalid_grant = 0
        self.avoid = set()           # nodes this client gave up on (kill-node)
        self.verified = None
        self.recent = collections.deque(maxlen=4)   # its last requests, for evidence
        self.incidents = []          # evidence of each unexpected invalid_grant


class Context:
    def __init__(self, recorder, nodes):
        self.recorder = recorder
        self.nodes = nodes
        self.stop = threading.Event()
        self.failover = False        # kill-node: a client moves away from a node whose connection failed
        self.killed = None           # (node name, kill time)


def password_grant(ctx, client, node, user, scope, deadline):
    """Password grant, retried on 503 until `deadline`; returns the JSON body or raises."""
    upn, password = user
    last = None
    while now() < deadline:
        rec, r = http(ctx.recorder, client, node, "password", "POST", TOKEN_PATH,
                      data={"grant_type": "password", "client_id": MAIL_CLIENT, "username": upn, "password": password, "scope": scope})
        if rec.kind == "http" and rec.status == 200:
            return r.json()
        last = "%s %s %s" % (rec.kind, rec.status, rec.detail[:200])
        time.sleep(retry_after_seconds(rec) if rec.status == 503 else 0.3)
    raise RuntimeError("password grant for %s on %s: %s" % (upn, node.name, last))


def pick_node(ctx, chain, k):
    candidates = [n for n in ctx.nodes if n.name not in chain.avoid] or ctx.nodes
    return candidates[(chain.index + k) % len(candidates)]


def rotate_once(ctx, chain, node):
    rec, r = http(ctx.recorder, chain.name, node, "refresh", "POST", TOKEN_PATH,
                  data={"grant_type": "refresh_token", "refresh_token": chain.token, "client_id": MAIL_CLIENT})
    return rec, r


def chain_worker(ctx, chain):
    k = 0
    while not ctx.stop.is_set():
        node = pick_node(ctx, chain, k)
        k += 1
        rec, r = rotate_once(ctx, chain, node)
        chain.recent.append(rec)
        if rec.kind == "http" and rec.status == 200:
            try:
                chain.token = r.json()["refresh_token"]
                chain.rotations += 1
                chain.uncertain = False
            except (ValueError, KeyError):
                rec.detail = "200 without refresh_token: " + r.text[:150]
                rec.status = 299  # judged as "other"
        elif rec.kind == "http" and rec.status == 503:
            ctx.stop.wait(retry_after_seconds(rec))
        elif rec.kind == "http" and rec.status == 400 and rec.error == "invalid_grant":
            if chain.inflight_at_kill:
                rec.expected = True
                chain.accepted_invalid_grant += 1
            else:
                chain.unexpected_invalid_grant += 1
                chain.incidents.append(" -> ".join(describe(r) for r in chain.recent))
            reseed(ctx, chain, node)
        elif rec.kind == "http":
            ctx.stop.wait(0.2)
        else:  # no answer: the rotation may or may not have happened
            chain.uncertain = True
            if ctx.failover and ctx.killed and node.name == ctx.killed[0]:
                if rec.t0 < ctx.killed[1] and rec.kind != "refused":
                    chain.inflight_at_kill = True   # the request was on the node when it died
                if rec.t1 >= ctx.killed[1]:
                    rec.expected = True
                    chain.avoid.add(node.name)
            if not rec.expected:
                ctx.stop.wait(0.1)


def describe(rec):
    """One request, briefly: when (s since start), node, outcome, duration."""
    outcome = ("%d%s" % (rec.status, " " + rec.error if rec.error else "")) if rec.kind == "http" else rec.kind
    return "[%.2f s %s %s %.2f s]" % (rec.t0 - T0, rec.node, outcome, rec.duration)


def reseed(ctx, chain, node):
    """A chain whose token is gone starts again with a password grant (so the load goes on)."""
    chain.reseeds += 1
    try:
        reply = password_grant(ctx, chain.name, node, chain.user, SCOPE, now() + 20)
        chain.token = reply["refresh_token"]
        chain.uncertain = False
    except RuntimeError as error:
        log("  %s: could not start a new chain: %s" % (chain.name, error))
        ctx.stop.wait(0.5)


def probe_worker(ctx, node):
    while not ctx.stop.is_set():
        rec, _ = http(ctx.recorder, "probe-" + node.name, node, "ready", "GET", "/health/ready")
        if ctx.failover and ctx.killed and node.name == ctx.killed[0] and rec.kind != "http" and rec.t1 >= ctx.killed[1]:
            rec.expected = True
            return
        ctx.stop.wait(0.25)


class Enrollment:
    def __init__(self, index, user):
        self.index, self.user = index, user
        self.name = "checkin%d" % index
        self.id = self.version = self.access = None
        self.checkins = 0


def enroll(ctx, node, enrollment, run_id):
    reply = password_grant(ctx, enrollment.name, node, enrollment.user, COMPLIANCE_SCOPE, now() + 30)
    enrollment.access = reply["access_token"]
    rec, r = http(ctx.recorder, enrollment.name, node, "remediate", "POST", "/mam/v1/remediations",
                  headers={"Authorization": "Bearer " + enrollment.access},
                  json={"deviceId": "chaos-%s-%d" % (run_id, enrollment.index), "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1",
                        "silent": False})
    if rec.status != 200:
        raise RuntimeError("remediation for %s: %s %s %s" % (enrollment.name, rec.kind, rec.status, rec.detail))
    body = r.json()
    enrollment.id, enrollment.version = body["enrollmentId"], (body.get("policy") or {}).get("version")


def checkin_worker(ctx, enrollment, node):
    rng = random.Random(enrollment.index)
    while not ctx.stop.is_set():
        report = rng.choice([{"jailbroken": False, "pinSet": True}, {"jailbroken": False, "pinSet": False}])
        rec, _ = http(ctx.recorder, enrollment.name, node, "checkin", "POST", "/mam/v1/enrollments/%s/checkin" % enrollment.id,
                      headers={"Authorization": "Bearer " + enrollment.access},
                      json=dict(report, appliedPolicyVersion=enrollment.version, osVersion="17.4", appVersion="3.1"))
        if rec.kind == "http" and rec.status == 200:
            enrollment.checkins += 1
        elif rec.kind == "http" and rec.status == 503:
            ctx.stop.wait(retry_after_seconds(rec))
        else:
            ctx.stop.wait(0.1)


def sweep_targets(admin_token, enrollment):
    """Other endpoints, read-mostly: each must answer 200, or 503 + Retry-After, within the limit, store or no store."""
    admin = {"Authorization": "Bearer " + admin_token}
    mam = {"Authorization": "Bearer " + enrollment.access}
    return [
        ("discovery", "GET", "/%s/v2.0/.well-known/openid-configuration" % TENANT, {}),
        ("jwks", "GET", "/%s/discovery/v2.0/keys" % TENANT, {}),
        ("userrealm", "GET", "/common/userrealm/alice@contoso.example?api-version=1.0", {}),
        ("live", "GET", "/health/live", {}),
        ("metrics", "GET", "/metrics", {}),
        ("revoke", "POST", "/%s/oauth2/v2.0/revoke" % TENANT, {"data": {"token": "not-a-token", "client_id": MAIL_CLIENT}}),
        ("mam enrollment", "GET", "/mam/v1/enrollments/%s" % enrollment.id, {"headers": mam}),
        ("admin policies", "GET", "/admin/v1/conditional-access/policies", {"headers": admin}),
        ("admin sign-ins", "GET", "/admin/v1/sign-ins", {"headers": admin}),
        ("admin enrollments", "GET", "/admin/v1/enrollments", {"headers": admin}),
    ]


def sweep_outcomes(records):
    """{endpoint: "status xN (longest s)"} for the report."""
    by = collections.defaultdict(list)
    for r in records:
        by[r.what[len("sweep "):]].append(r)
    return "; ".join("%s: %s (max %.2f s)" % (label, ", ".join("%s x%d" % kv for kv in sorted(collections.Counter(
        (str(r.status) + ("" if r.status != 503 or r.retry_after else " noRA")) if r.kind == "http" else r.kind for r in rs).items())),
        max(r.duration for r in rs)) for label, rs in sorted(by.items())) or "-"


def admin_token(ctx, node):
    rec, r = http(ctx.recorder, "setup", node, "password", "POST", TOKEN_PATH,
                  data={"grant_type": "client_credentials", "client_id": ADMIN_CLIENT, "client_secret": ADMIN_SECRET,
                        "scope": "api://portcullis-admin/.default"})
    if rec.status != 200:
        raise RuntimeError("admin token: %s %s %s" % (rec.kind, rec.status, rec.detail))
    return r.json()["access_token"]


def sweep_worker(ctx, targets):
    """One client going round the other endpoints on every node, a request every 0.1 s. `targets`: {node name: list}
    (bearer tokens are per node: each node issues them for its own base URL)."""
    k = 0
    while not ctx.stop.is_set():
        node = ctx.nodes[(k // len(targets[ctx.nodes[0].name])) % len(ctx.nodes)]
        label, method, path, kwargs = targets[node.name][k % len(targets[node.name])]
        k += 1
        http(ctx.recorder, "sweep", node, "sweep " + label, method, path, **kwargs)
        ctx.stop.wait(0.1)


def start_threads(targets):
    threads = []
    for target, args in targets:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        threads.append(thread)
    return threads


def stop_threads(ctx, threads, wait=CLIENT_TIMEOUT + 10):
    ctx.stop.set()
    deadline = now() + wait
    for thread in threads:
        thread.join(max(0.1, deadline - now()))
    return sum(1 for t in threads if t.is_alive())


def verify_chains(ctx, chains, nodes):
    """One redemption of each chain's current token (must be 200)."""
    ok, problems = 0, []
    for i, chain in enumerate(chains):
        node = nodes[i % len(nodes)]
        rec, r = http(ctx.recorder, chain.name, node, "verify", "POST", TOKEN_PATH,
                      data={"grant_type": "refresh_token", "refresh_token": chain.token, "client_id": MAIL_CLIENT})
        if rec.kind == "http" and rec.status == 200:
            ok += 1
            chain.verified = True
            chain.token = r.json().get("refresh_token", chain.token)
        else:
            chain.verified = False
            why = "uncertain (its last request got no answer)" if chain.uncertain else "idle"
            problems.append("%s (%d rotations, %s): its current refresh token answered %s %s %s on %s" % (
                chain.name, chain.rotations, why, rec.kind, rec.status, (rec.detail or "")[:160].replace("\n", " "), node.name))
    return ok, problems


# ---------------------------------------------------------------------------------------------------------------
# Fault plumbing


class Fault:
    def __init__(self, name, binary, workroot):
        self.name, self.binary = name, binary
        self.dir = tempfile.mkdtemp(prefix="chaos-%s." % name, dir=workroot)
        self.recorder = Recorder()
        self.reasons = []
        self.figures = {}
        self.logs = []   # (title, tail function)
        self.config = os.path.join(self.dir, "config")
        shutil.copytree(os.path.join(REPO, "Config"), self.config)
        self.keys = os.path.join(self.dir, "keys")
        os.makedirs(self.keys)

    def node(self, name, data=None, env=None, wrapper=None, port=None):
        data = data or os.path.join(self.dir, "data-" + name)
        os.makedirs(data, exist_ok=True)
        node = Node(name, self.binary, self.config, data, self.keys, port or free_port(), os.path.join(self.dir, "node-%s.log" % name), env,
                    wrapper)
        self.logs.append(("node %s (%s)" % (name, node.log_path), node.tail))
        return node

    def fail(self, reason):
        self.reasons.append(reason)

    def check_records(self, records, what="requests"):
        judge(records)
        bad = [r for r in records if r.violation]
        if bad:
            kinds = collections.Counter()
            for r in bad:
                if r.kind == "timeout":
                    kinds["never answered"] += 1
                elif r.kind != "http":
                    kinds["transport error (%s)" % r.kind] += 1
                else:
                    if r.status == 503 and r.retry_after is None:
                        kinds["503 without Retry-After"] += 1
                    if r.status == 503 and r.what != "ready" and r.error != "temporarily_unavailable":
                        kinds["503 with another error code"] += 1
                    if r.status not in (200, 503):
                        kinds["status %d" % r.status] += 1
                    if r.duration > LIMIT:
                        kinds["over %.1f s" % LIMIT] += 1
            self.fail("%d of %d %s broke the contract: %s" % (len(bad), len(records), what, ", ".join("%s %d" % kv for kv in kinds.most_common())))

    def report(self, rows, extra):
        log("")
        log("== %s: figures" % self.name)
        print_table(rows)
        for key, value in extra:
            log("  %s: %s" % (key, value))
        records = self.recorder.snapshot()
        digest = violation_digest(records)
        if digest:
            log("  violations (by kind):")
            for line in digest:
                log("    " + line)
        if self.reasons:
            log("%s: FAIL" % self.name)
            for reason in self.reasons:
                log("  - " + reason)
            for title, tail in self.logs:
                log("  ---- tail of %s ----" % title)
                for line in tail().rstrip("\n").splitlines():
                    log("  | " + line[:300])
        else:
            log("%s: PASS" % self.name)
        self.figures.update(phases={label: summary for label, summary in rows}, extra={k: v for k, v in extra})
        return not self.reasons


def fmt_s(value):
    return "not reached within %.0f s" % RECOVERY_WAIT if value is None else "%.2f s" % value


def wait_recovery(ctx, since, pairs, limit=RECOVERY_WAIT):
    deadline = since + limit
    while now() < deadline:
        if recovery_time(ctx.recorder.snapshot(), since, pairs) is not None:
            return True
        time.sleep(0.05)
    return False


def split_rows(fault, records, end):
    load = [r for r in records if r.what not in ("ready", "verify", "remediate") and not r.what.startswith("sweep")]
    probes = [r for r in records if r.what == "ready"]
    verify = [r for r in records if r.what == "verify"]
    sweep = [r for r in records if r.what.startswith("sweep")]
    rows = phase_rows(fault.recorder, load, end)
    if probes:
        rows.append(("probe /health/ready", summarize(probes)))
    if sweep:
        rows.append(("sweep other endpoints", summarize(sweep)))
        down = [r for r in sweep if r.phase == "db-down"]
        if down:
            rows.append(("  of which db-down", summarize(down)))
    if verify:
        rows.append(("verify", summarize(verify)))
    return rows


# ---------------------------------------------------------------------------------------------------------------
# Fault 1: PostgreSQL restart and outage


def start_two_nodes(fault, pg):
    """A throwaway PostgreSQL cluster and two nodes on it, started one after the other."""
    pg.start()
    env = {"PORTCULLIS_POSTGRES_URL": pg.url}
    a, b = fault.node("A", env=env), fault.node("B", env=env)
    log("  PostgreSQL on 127.0.0.1:%d; node A started in %.1f s" % (pg.port, a.start()))
    log("  node B started in %.1f s" % b.start())
    return a, b, Context(fault.recorder, [a, b])


def signed_in_chains(ctx):
    """Six refresh-token chains, alternating users and nodes."""
    chains = [Chain(i, USERS[i % 2]) for i in range(6)]
    for chain in chains:
        chain.token = password_grant(ctx, chain.name, ctx.nodes[chain.index % 2], chain.user, SCOPE, now() + 30)["refresh_token"]
    return chains


def fault_postgres(binary, workroot):
    fault = Fault("postgres", binary, workroot)
    pg = Postgres()
    fault.logs.append(("PostgreSQL (%s)" % pg.log_path, pg.tail))
    extra = []
    try:
        a, b, ctx = start_two_nodes(fault, pg)
        chains = signed_in_chains(ctx)
        targets, run_id = {}, "%x" % random.getrandbits(32)
        for node in ctx.nodes:
            enrollment = Enrollment(ctx.nodes.index(node), USERS[0])
            enroll(ctx, node, enrollment, run_id)
            targets[node.name] = sweep_targets(admin_token(ctx, node), enrollment)
        rec = fault.recorder
        rec.set_phase("warm-up")
        threads = start_threads([(chain_worker, (ctx, c)) for c in chains] + [(probe_worker, (ctx, n)) for n in ctx.nodes] +
                                [(sweep_worker, (ctx, targets))])
        time.sleep(3)
        rec.set_phase("pg-restart")
        restart_took = pg.restart()
        log("    pg_ctl restart -m fast took %.2f s" % restart_took)
        time.sleep(5)
        rec.set_phase("db-down")
        stop_took = pg.stop()
        log("    pg_ctl stop -m fast took %.2f s" % stop_took)
        time.sleep(5)
        rec.set_phase("recovery")
        start_took = pg.start()
        back = now()
        log("    pg_ctl start took %.2f s" % start_took)
        pairs = {(c.name, n.name) for c in chains for n in ctx.nodes}
        wait_recovery(ctx, back, pairs)
        rec.set_phase("after")
        time.sleep(5)
        rec.set_phase("stopping")
        stuck = stop_threads(ctx, threads)
        end = now()
        for node in ctx.nodes:
            if not node.alive():
                fault.fail("node %s exited (status %s)" % (node.name, node.process.returncode))
        rec.set_phase("verify")
        verified, problems = verify_chains(ctx, chains, ctx.nodes)
        records = fault.recorder.snapshot()
        load = [r for r in records if r.what in ("refresh", "password")]
        probes = [r for r in records if r.what == "ready"]
        recovery = recovery_time(records, back, pairs)
        by_node = node_recovery(records, back, [n.name for n in ctx.nodes], {c.name for c in chains})
        ready_pairs = {("probe-" + n.name, n.name) for n in ctx.nodes}
        ready_recovery = recovery_time(records, back, ready_pairs)
        exits = stop_nodes(ctx.nodes)
        fault.check_records(load, "load requests")
        fault.check_records(probes, "/health/ready probes")
        sweep = [r for r in records if r.what.startswith("sweep")]
        fault.check_records(sweep, "requests to other endpoints (sweep)")
        if recovery is None or recovery > RECOVERY_LIMIT:
            fault.fail("recovery after the database's return: %s (limit %.1f s)" % (fmt_s(recovery), RECOVERY_LIMIT))
        for p in problems:
            fault.fail(p)
        for chain in chains:
            if chain.unexpected_invalid_grant:
                fault.fail("%s: %d rotation(s) answered 400 invalid_grant during the run (a token the client held was gone); its "
                           "last requests then: %s" % (chain.name, chain.unexpected_invalid_grant, " | ".join(chain.incidents)))
        if stuck:
            fault.fail("%d client thread(s) still waiting for an answer when the suite gave up" % stuck)
        extra = [("pg_ctl", "restart %.2f s, stop %.2f s, start %.2f s" % (restart_took, stop_took, start_took)),
                 ("recovery (every client 200 from both nodes, from pg_ctl start returning)", fmt_s(recovery)),
                 ("  last to recover", late_pair(records, back, pairs) or "-"),
                 ("  per node, counting only requests sent after the return", by_node),
                 ("readiness recovery (/health/ready 200 on both nodes)", fmt_s(ready_recovery)),
                 ("exit after SIGTERM at the end (not asserted)", fmt_exits(exits)),
                 ("rotations per chain", " ".join("%s=%d" % (c.name, c.rotations) for c in chains)),
                 ("chains restarted after an unexpected invalid_grant", sum(c.reseeds for c in chains)),
                 ("Retry-After values seen", dict(collections.Counter(r.retry_after for r in records if r.status == 503))),
                 ("requests that waited out the deadline (>= %.1f s) before their answer" % (DEADLINE - 0.1),
                  dict(collections.Counter(r.phase for r in load + probes + sweep if r.duration >= DEADLINE - 0.1))),
                 ("sweep answers while the database was down", sweep_outcomes([r for r in sweep if r.phase == "db-down"])),
                 ("chains verified", "%d/%d" % (verified, len(chains)))]
        return fault.report(split_rows(fault, records, end), extra), fault
    except Exception as error:  # noqa: BLE001
        fault.fail("the fault could not run: %s: %s" % (type(error).__name__, error))
        return fault.report([], extra), fault
    finally:
        run_cleanups()


# ---------------------------------------------------------------------------------------------------------------
# Fault 2: SIGKILL one of two nodes


def fault_kill_node(binary, workroot):
    fault = Fault("kill-node", binary, workroot)
    pg = Postgres()
    fault.logs.append(("PostgreSQL (%s)" % pg.log_path, pg.tail))
    extra = []
    try:
        a, b, ctx = start_two_nodes(fault, pg)
        ctx.failover = True
        chains = signed_in_chains(ctx)
        rec = fault.recorder
        rec.set_phase("warm-up")
        threads = start_threads([(chain_worker, (ctx, c)) for c in chains] + [(probe_worker, (ctx, b))])
        time.sleep(3)
        rec.set_phase("A-killed")
        killed_at = now()
        ctx.killed = ("A", killed_at)
        a.signal(signal.SIGKILL)
        a.wait(10)
        time.sleep(5)
        rec.set_phase("stopping")
        stuck = stop_threads(ctx, threads)
        end = now()
        rec.set_phase("verify")
        verified, problems = verify_chains(ctx, chains, [b])
        records = fault.recorder.snapshot()
        # Requests to A that failed at or after the kill are expected (also those of the verification: none go to A).
        for r in records:
            if r.node == "A" and r.kind in ("refused", "reset", "error") and r.t1 >= killed_at:
                r.expected = True
        load = [r for r in records if r.what in ("refresh", "password")]
        on_b = [r for r in load if r.node == "B" and r.t0 >= killed_at]
        fault.check_records(load, "load requests")
        fault.check_records([r for r in records if r.what == "ready"], "/health/ready probes of B")
        if not any(r.status == 200 for r in on_b):
            fault.fail("node B answered no 200 after the kill")
        for p in problems:
            fault.fail(p)
        for chain in chains:
            if chain.unexpected_invalid_grant:
                fault.fail("%s: %d rotation(s) answered 400 invalid_grant although no request of it was in flight on A at the kill; "
                           "its last requests then: %s" % (chain.name, chain.unexpected_invalid_grant, " | ".join(chain.incidents)))
        if stuck:
            fault.fail("%d client thread(s) still waiting for an answer when the suite gave up" % stuck)
        if not b.alive():
            fault.fail("node B exited (status %s)" % b.process.returncode)
        inflight = [c.name for c in chains if c.inflight_at_kill]
        exits = stop_nodes([b])
        rows = split_rows(fault, records, end)
        rows.append(("on B after the kill", summarize(on_b)))
        extra = [("chains in flight on A at the kill", ", ".join(inflight) or "none"),
                 ("of those, found their token already rotated (400 invalid_grant, accepted)",
                  ", ".join(c.name for c in chains if c.accepted_invalid_grant) or "none"),
                 ("expected connection failures to A after the kill", sum(1 for r in records if r.expected and r.node == "A")),
                 ("rotations per chain", " ".join("%s=%d" % (c.name, c.rotations) for c in chains)),
                 ("chains verified on B", "%d/%d" % (verified, len(chains))),
                 ("exit of B after SIGTERM at the end (not asserted)", fmt_exits(exits))]
        return fault.report(rows, extra), fault
    except Exception as error:  # noqa: BLE001
        fault.fail("the fault could not run: %s: %s" % (type(error).__name__, error))
        return fault.report([], extra), fault
    finally:
        run_cleanups()


# ---------------------------------------------------------------------------------------------------------------
# Fault 3: disk full under SQLite (tmpfs in a private mount namespace)


def in_namespace(node, *command):
    return subprocess.run(["nsenter", "-t", str(node.pid), "-m", "--", *command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          stdin=subprocess.DEVNULL)


def fault_disk_full(binary, workroot, size="32m"):
    fault = Fault("disk-full", binary, workroot)
    extra = []
    try:
        mount = os.path.join(fault.dir, "tmpfs")
        os.makedirs(mount)

        def wrapper(command):
            script = 'mount -t tmpfs -o size=%s,mode=0700 tmpfs "$0" && exec "$@"' % size
            return ["unshare", "-m", "--propagation", "private", "bash", "-c", script, mount] + command

        node = fault.node("sqlite", data=mount, wrapper=wrapper)
        log("  node (SQLite on a %s tmpfs) started in %.1f s" % (size, node.start()))
        df = in_namespace(node, "df", "-k", mount).stdout.strip().splitlines()[-1]
        log("    tmpfs: %s" % df)
        ctx = Context(fault.recorder, [node])
        chains = [Chain(i, USERS[i % 2]) for i in range(4)]
        for chain in chains:
            chain.token = password_grant(ctx, chain.name, node, chain.user, SCOPE, now() + 30)["refresh_token"]
        enrollments = [Enrollment(i, USERS[i % 2]) for i in range(2)]
        run_id = "%x" % random.getrandbits(32)
        for enrollment in enrollments:
            enroll(ctx, node, enrollment, run_id)
        rec = fault.recorder
        rec.set_phase("warm-up")
        threads = start_threads([(chain_worker, (ctx, c)) for c in chains] + [(checkin_worker, (ctx, e, node)) for e in enrollments])
        time.sleep(DISK_WARMUP)  # short: the fill must come while SQLite's WAL is still growing, or writes reuse it
        listing = in_namespace(node, "ls", "-l", mount).stdout.strip().splitlines()[1:]
        log("    files before the fill: %s" % "; ".join(" ".join(l.split()[4:5] + l.split()[8:]) for l in listing))
        rec.set_phase("disk-full")
        filled = in_namespace(node, "dd", "if=/dev/zero", "of=" + os.path.join(mount, "fill"), "bs=64k")
        df_full = in_namespace(node, "df", "-k", mount).stdout.strip().splitlines()[-1]
        log("    dd exited %d (%s); tmpfs now: %s" % (filled.returncode, filled.stdout.strip().splitlines()[0][:80] if filled.stdout else "",
                                                    df_full))
        time.sleep(3)
        rec.set_phase("freed")
        removed = in_namespace(node, "rm", "-f", os.path.join(mount, "fill"))
        freed = now()
        df_freed = in_namespace(node, "df", "-k", mount).stdout.strip().splitlines()[-1]
        listing = in_namespace(node, "ls", "-l", mount).stdout.strip().splitlines()[1:]
        log("    fill deleted; tmpfs now: %s; files: %s" % (df_freed, "; ".join(" ".join(l.split()[4:5] + l.split()[8:]) for l in listing)))
        if removed.returncode != 0:
            fault.fail("could not delete the fill file: %s" % removed.stdout)
        pairs = {(c.name, node.name) for c in chains} | {(e.name, node.name) for e in enrollments}
        wait_recovery(ctx, freed, pairs)
        rec.set_phase("after")
        time.sleep(2)
        rec.set_phase("stopping")
        stuck = stop_threads(ctx, threads)
        end = now()
        rec.set_phase("verify")
        verified, problems = verify_chains(ctx, chains, [node])
        records = fault.recorder.snapshot()
        load = [r for r in records if r.what in ("refresh", "password", "checkin")]
        full = [r for r in load if r.phase == "disk-full"]
        recovery = recovery_time(records, freed, pairs)
        alive = node.alive()
        exits = stop_nodes([node])
        fault.check_records(load, "load requests")
        if not any(r.status == 503 for r in full):
            fault.fail("no write was refused while the disk was full (the fault did not bite: %d requests, %d answered 200)" % (
                len(full), sum(1 for r in full if r.status == 200)))
        if recovery is None or recovery > RECOVERY_LIMIT:
            fault.fail("recovery after the disk was freed: %s (limit %.1f s)" % (fmt_s(recovery), RECOVERY_LIMIT))
        for p in problems:
            fault.fail(p)
        for chain in chains:
            if chain.unexpected_invalid_grant:
                fault.fail("%s: %d rotation(s) answered 400 invalid_grant during the run (a token the client held was gone); its "
                           "last requests then: %s" % (chain.name, chain.unexpected_invalid_grant, " | ".join(chain.incidents)))
        if stuck:
            fault.fail("%d client thread(s) still waiting for an answer when the suite gave up" % stuck)
        if not alive:
            fault.fail("the node exited (status %s)" % node.process.returncode)
        extra = [("dd", "exit %d; tmpfs full: %s" % (filled.returncode, df_full)),
                 ("writes answered 200 while the disk was full", sum(1 for r in full if r.status == 200)),
                 ("recovery (every client 200 again, from the fill's deletion)", fmt_s(recovery)),
                 ("rotations per chain", " ".join("%s=%d" % (c.name, c.rotations) for c in chains)),
                 ("check-ins acknowledged", " ".join("%s=%d" % (e.name, e.checkins) for e in enrollments)),
                 ("Retry-After values seen", dict(collections.Counter(r.retry_after for r in records if r.status == 503))),
                 ("  last to recover", late_pair(records, freed, pairs) or "-"),
                 ("process still running after the fault", alive),
                 ("exit after SIGTERM at the end (not asserted)", fmt_exits(exits)),
                 ("chains verified", "%d/%d" % (verified, len(chains)))]
        return fault.report(split_rows(fault, records, end), extra), fault
    except Exception as error:  # noqa: BLE001
        fault.fail("the fault could not run: %s: %s" % (type(error).__name__, error))
        return fault.report([], extra), fault
    finally:
        run_cleanups()


# ---------------------------------------------------------------------------------------------------------------
# Fault 4: SIGTERM under load (raw sockets: the moment the request's bytes were sent is known)


def raw_request(recorder, client, node_name, port, what, method, path, body=None):
    rec = recorder.begin(client, node_name, what)
    data = b""
    sock = None
    try:
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\nAccept: application/json\r\n" % (method, path, port)
        payload = b""
        if body is not None:
            payload = urllib.parse.urlencode(body).encode()
            head += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n" % len(payload)
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT)
        except ConnectionRefusedError as error:
            rec.kind, rec.detail = "refused", str(error)
            return rec, None
        sock.sendall(head.encode() + b"\r\n" + payload)
        rec.t_sent = now()
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                header, _, rest = data.partition(b"\r\n\r\n")
                length = None
                for line in header.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is not None and len(rest) >= length:
                    break
    except socket.timeout:
        rec.kind, rec.detail = "timeout", "no answer within %.0f s" % CLIENT_TIMEOUT
    except ConnectionResetError as error:
        rec.kind, rec.detail = "reset", "%s after %d bytes of answer" % (error, len(data))
    except OSError as error:
        rec.kind, rec.detail = "error", "%s: %s" % (type(error).__name__, error)
    finally:
        if sock:
            sock.close()
        rec.t1 = now()
        recorder.add(rec)
    if rec.kind is None:
        if not data.startswith(b"HTTP/1."):
            rec.kind, rec.detail = "reset", "connection closed after %d bytes of answer" % len(data)
            return rec, None
        header, _, rest = data.partition(b"\r\n\r\n")
        lines = header.decode("latin-1").split("\r\n")
        rec.kind, rec.status = "http", int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        rec.retry_after = headers.get("retry-after")
        if rec.status != 200:
            rec.detail = rest[:200].decode("utf-8", "replace")
            try:
                parsed = json.loads(rest.decode("utf-8", "replace"))
                rec.error = parsed.get("error") if not isinstance(parsed.get("error"), dict) else parsed["error"].get("code")
            except (ValueError, AttributeError):
                pass
        return rec, rest
    return rec, None


def fault_sigterm(binary, workroot):
    fault = Fault("sigterm", binary, workroot)
    extra = []
    try:
        node = fault.node("sqlite")
        log("  node (SQLite) started in %.1f s" % node.start())
        ctx = Context(fault.recorder, [node])
        chains = [Chain(i, USERS[i % 2]) for i in range(8)]
        for chain in chains:
            chain.token = password_grant(ctx, chain.name, node, chain.user, SCOPE, now() + 30)["refresh_token"]
        signalled = [None]
        gone = threading.Event()

        def worker(chain):
            k = 0
            while not ctx.stop.is_set() and not gone.is_set():
                if k % 2 == 0:
                    rec, body = raw_request(ctx.recorder, chain.name, node.name, node.port, "refresh", "POST", TOKEN_PATH,
                                            {"grant_type": "refresh_token", "refresh_token": chain.token, "client_id": MAIL_CLIENT})
                    if rec.status == 200:
                        try:
                            chain.token = json.loads(body)["refresh_token"]
                            chain.rotations += 1
                        except (ValueError, KeyError):
                            rec.status = 299
                else:
                    rec, _ = raw_request(ctx.recorder, chain.name, node.name, node.port, "ready", "GET", "/health/ready")
                k += 1
                if rec.kind == "refused":
                    time.sleep(0.05)
                elif rec.status == 503:
                    time.sleep(min(retry_after_seconds(rec), 0.5))

        rec = fault.recorder
        rec.set_phase("warm-up")
        threads = start_threads([(worker, (c,)) for c in chains])
        time.sleep(3)
        rec.set_phase("after-SIGTERM")
        signalled[0] = now()
        node.signal(signal.SIGTERM)
        exited = node.wait(EXIT_LIMIT + 15)
        exit_time = now() - signalled[0]
        if not exited:
            exit_time = None
            node.signal(signal.SIGKILL)
            node.wait(10)
        time.sleep(0.3)
        gone.set()
        rec.set_phase("stopping")
        stuck = stop_threads(ctx, threads)
        end = now()
        t_sig = signalled[0]
        records = fault.recorder.snapshot()
        load = [r for r in records if r.what in ("refresh", "ready")]
        before = [r for r in load if r.t_sent is not None and r.t_sent < t_sig]
        after_sent = [r for r in load if not (r.t_sent is not None and r.t_sent < t_sig)]
        for r in after_sent:
            r.expected = True   # sent after the signal (or never connected): any outcome is acceptable
        judge(load, check_body=False)
        unanswered = [r for r in before if r.kind != "http"]
        answered_after = [r for r in before if r.kind == "http" and r.t1 >= t_sig]
        bad = [r for r in before if r.violation]
        if unanswered:
            closest = min(t_sig - r.t_sent for r in unanswered)
            fault.fail("%d request(s) sent before SIGTERM got no HTTP answer (%s); the latest was sent %.1f ms before the signal" % (
                len(unanswered), ", ".join("%s %d" % kv for kv in collections.Counter(r.kind for r in unanswered).most_common()), closest * 1000))
        others = [r for r in bad if r.kind == "http"]
        if others:
            fault.fail("%d answered request(s) sent before SIGTERM broke the contract: %s" % (
                len(others), ", ".join("%s %d" % kv for kv in collections.Counter(r.violation for r in others).most_common(4))))
        if exit_time is None or exit_time > EXIT_LIMIT:
            fault.fail("the process took %s to exit after SIGTERM (limit %.0f s)" % (
                "more than %.0f s" % (EXIT_LIMIT + 15) if exit_time is None else "%.2f s" % exit_time, EXIT_LIMIT))
        if stuck:
            fault.fail("%d client thread(s) still waiting for an answer when the suite gave up" % stuck)
        rows = phase_rows(fault.recorder, load, end)
        rows.append(("sent before SIGTERM", summarize(before)))
        rows.append(("  of which in flight at it", summarize([r for r in before if r.t1 >= t_sig])))
        rows.append(("sent after / not connected", summarize(after_sent)))
        after_kinds = collections.Counter(r.kind if r.kind != "http" else str(r.status) for r in after_sent)
        extra = [("exit after SIGTERM", "%s (status %s)" % ("%.2f s" % exit_time if exit_time is not None else "not within %.0f s" % (EXIT_LIMIT + 15),
                                                         node.exit_status)),
                 ("requests in flight at the signal and answered", "%d (statuses %s)" % (
                     len(answered_after), dict(collections.Counter(r.status for r in answered_after)))),
                 ("requests in flight at the signal and NOT answered", len(unanswered)),
                 ("outcomes of requests sent after the signal", dict(after_kinds)),
                 ("last HTTP answer after the signal", "%.3f s" % max([r.t1 - t_sig for r in load if r.kind == "http" and r.t1 >= t_sig], default=0.0)),
                 ("rotations", sum(c.rotations for c in chains))]
        if unanswered:
            extra.append(("unanswered, e.g.", "; ".join("%s sent %.1f ms before the signal: %s" % (r.what, (t_sig - r.t_sent) * 1000, r.detail[:80])
                                                       for r in unanswered[:3])))
        return fault.report(rows, extra), fault
    except Exception as error:  # noqa: BLE001
        fault.fail("the fault could not run: %s: %s" % (type(error).__name__, error))
        return fault.report([], extra), fault
    finally:
        run_cleanups()


# ---------------------------------------------------------------------------------------------------------------

FAULTS = collections.OrderedDict([("postgres", fault_postgres), ("kill-node", fault_kill_node), ("disk-full", fault_disk_full),
                                  ("sigterm", fault_sigterm)])


def main():
    global KEEP
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("faults", nargs="*", choices=list(FAULTS) + ["all"], default=["all"], metavar="FAULT",
                        help="postgres, kill-node, disk-full, sigterm or all (default)")
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/debug/portcullis"))
    parser.add_argument("--json", help="write every fault's figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories (logs, data)")
    args = parser.parse_args()
    KEEP = args.keep
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        log("no executable binary at %s" % binary)
        return 2
    if os.geteuid() != 0:
        log("this suite needs root (runuser, unshare, mount, nsenter)")
        return 2
    names = list(FAULTS) if "all" in args.faults or not args.faults else args.faults
    workroot = tempfile.mkdtemp(prefix="portcullis-chaos.")
    atexit.register(remove_tree, workroot)  # not in the per-fault clean-up list: it outlives each fault
    stat = os.stat(binary)
    log("chaos: %s (modified %s, %d bytes); deadline %.1f s + margin %.1f s; faults: %s" % (
        binary, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stat.st_mtime)), stat.st_size, DEADLINE, MARGIN, ", ".join(names)))
    results, started = [], now()
    try:
        for name in names:
            log("")
            log("== %s" % name)
            fault_started = now()
            passed, fault = FAULTS[name](binary, workroot)
            results.append((name, passed, fault, now() - fault_started))
    except KeyboardInterrupt:
        log("interrupted: cleaning up")
        run_cleanups()
        return 130
    log("")
    log("== summary (%.0f s)" % (now() - started))
    log("  %-10s %5s %5s %5s %5s %5s %5s %7s %7s %-24s %s" % ("fault", "reqs", "200", "503", "other", "errs", "never", "503noRA", "longest",
                                                             "recovery", "verdict"))
    report = {}
    for name, passed, fault, took in results:
        total = fault.figures.get("phases", {}).get("TOTAL", {})
        extra = fault.figures.get("extra", {})
        recovery = next((v for k, v in extra.items() if k.startswith("recovery")), extra.get("exit after SIGTERM", "-"))
        log("  %-10s %5s %5s %5s %5s %5s %5s %7s %7s %-24s %s" % (
            name, total.get("requests", "-"), total.get("200", "-"), total.get("503", "-"), total.get("other", "-"), total.get("errors", "-"),
            total.get("timeouts", "-"), total.get("503_without_retry_after", "-"), total.get("longest", "-"), str(recovery)[:24],
            "PASS" if passed else "FAIL (%d)" % len(fault.reasons)))
        report[name] = {"passed": passed, "seconds": round(took, 1), "reasons": fault.reasons, **fault.figures}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"binary": binary, "binary_mtime": stat.st_mtime, "faults": report}, f, indent=2, default=str)
    failed = [name for name, passed, _, _ in results if not passed]
    log("chaos: %s" % ("PASS" if not failed else "FAIL (%s)" % ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
