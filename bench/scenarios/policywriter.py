#!/usr/bin/env python3
"""A stream of conditional-access policy writes into one tenant, at a target rate (the scale benchmark, issue 26).

    policywriter.py --base URL --tenant ID --client ID --secret S --api APP_ID [--rate 10] [--duration 10] [--closed]

Replaces one report-only policy again and again (each write a real change: a new displayName) for --duration seconds:
an open-loop stream at --rate per second (each write sent at its time, up to 8 in flight), or with --closed one write at
a time, the next sent when the last is answered, as an admin tool does (issue 42). Prints one JSON line: writes that
succeeded, failures by status, the achieved rate, their latency (p50/p99 ms), and — closed loop — the successes of
each second. How long until every node serves a write is propagation.py's measurement.
"""
import argparse, concurrent.futures, json, sys, threading, time, uuid
import requests


def token(base, tenant, client, secret):
    reply = requests.post(f"{base}/{tenant}/oauth2/v2.0/token", data={
        "grant_type": "client_credentials", "client_id": client, "client_secret": secret,
        "scope": "api://portcullis-admin/.default"}, timeout=30)
    reply.raise_for_status()
    return reply.json()["access_token"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--tenant", required=True)
    parser.add_argument("--client", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--api", required=True, help="the tenant's resource app ID the policy names")
    parser.add_argument("--rate", type=float, default=10)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--closed", action="store_true", help="one write at a time (a closed loop), as fast as answered")
    args = parser.parse_args()
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + token(args.base, args.tenant, args.client, args.secret)
    policy_id = str(uuid.uuid4())
    url = f"{args.base}/admin/v1/conditional-access/policies/{policy_id}"

    def body(n):
        return {"id": policy_id, "displayName": f"Written {n}", "state": "enabledForReportingButNotEnforced",
                "conditions": {"users": {"includeUsers": ["All"], "excludeUsers": [], "includeGroups": [], "excludeGroups": []},
                               "applications": {"includeApplications": [args.api], "excludeApplications": []},
                               "clientAppTypes": ["all"]},
                "grantControls": {"operator": "OR", "builtInControls": ["mfa"]}}

    # The first write creates the policy; the stream replaces it. An open-loop stream: write n is sent at its time
    # (start + n / rate) whether or not earlier writes have been answered (up to 8 in flight), so a slow answer
    # shows as latency, not as a lower rate.
    reply = session.put(url, json=body(0), headers={"If-None-Match": "*"}, timeout=60)
    if reply.status_code != 201:
        print(json.dumps({"error": f"create: {reply.status_code} {reply.text[:200]}"}))
        return 1
    latencies = []
    failures = 0
    statuses = {}
    lock = threading.Lock()
    local = threading.local()

    def summary(done, seconds, extra):
        latencies.sort()

        def pct(p):
            return round(latencies[min(len(latencies) - 1, int(len(latencies) * p))], 1) if latencies else None
        print(json.dumps(dict({"writes": done, "failures": failures, "statuses": statuses, "rate": round(done / seconds, 2),
                               "p50_ms": pct(0.5), "p99_ms": pct(0.99)}, **extra)))

    if args.closed:
        per_second = [0] * int(args.duration + 1)
        start = time.monotonic()
        n = 1
        while time.monotonic() - start < args.duration:
            sent = time.monotonic()
            try:
                answer = session.put(url, json=body(n), headers={"If-Match": "*"}, timeout=60)
                status = str(answer.status_code)
            except requests.RequestException as error:
                status = type(error).__name__
            latencies.append((time.monotonic() - sent) * 1000)
            statuses[status] = statuses.get(status, 0) + 1
            if status == "200":
                per_second[min(len(per_second) - 1, int(time.monotonic() - start))] += 1
            else:
                failures += 1
            n += 1
        summary(statuses.get("200", 0), args.duration, {"closed_loop": True, "per_second": per_second[:int(args.duration)]})
        return 0

    def write(n, due):
        if not hasattr(local, "session"):
            local.session = requests.Session()
            local.session.headers.update(session.headers)
        sent = time.monotonic()
        try:
            status = str(local.session.put(url, json=body(n), headers={"If-Match": "*"}, timeout=60).status_code)
        except requests.RequestException as error:
            status = type(error).__name__
        nonlocal failures
        with lock:
            latencies.append((time.monotonic() - sent) * 1000)
            statuses[status] = statuses.get(status, 0) + 1
            if status != "200":
                failures += 1

    start = time.monotonic()
    n = 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        while True:
            due = start + (n - 1) / args.rate
            if due - start >= args.duration:
                break
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            pool.submit(write, n, due)
            n += 1
    summary(len(latencies) - failures, args.duration, {})
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
