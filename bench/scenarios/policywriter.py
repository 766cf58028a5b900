#!/usr/bin/env python3
"""A stream of conditional-access policy writes into one tenant, at a target rate (the scale benchmark, issue 26).

    policywriter.py --base URL --tenant ID --client ID --secret S [--rate 10] [--duration 10] [--probe-base URL]

Replaces one report-only policy again and again (each write a real change: a new displayName), paced to --rate
per second, for --duration seconds. Prints one JSON line: writes done, the achieved rate, and their latency
(p50/p99 ms). How long until every node serves a write is propagation.py's measurement.
"""
import argparse, json, sys, time, uuid
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
    args = parser.parse_args()
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + token(args.base, args.tenant, args.client, args.secret)
    policy_id = str(uuid.uuid4())
    url = f"{args.base}/admin/v1/conditional-access/policies/{policy_id}"
    latencies = []
    failures = 0
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < args.duration:
        due = start + n / args.rate
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        body = {"id": policy_id, "displayName": f"Written {n}", "state": "enabledForReportingButNotEnforced",
                "conditions": {"users": {"includeUsers": ["All"], "excludeUsers": [], "includeGroups": [], "excludeGroups": []},
                               "applications": {"includeApplications": [args.api], "excludeApplications": []},
                               "clientAppTypes": ["all"]},
                "grantControls": {"operator": "OR", "builtInControls": ["mfa"]}}
        headers = {"If-None-Match": "*"} if n == 0 else {"If-Match": "*"}
        sent = time.monotonic()
        reply = session.put(url, json=body, headers=headers, timeout=60)
        latencies.append((time.monotonic() - sent) * 1000)
        if reply.status_code not in (200, 201):
            failures += 1
        n += 1
    elapsed = time.monotonic() - start
    latencies.sort()
    def pct(p):
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * p))], 1) if latencies else None
    print(json.dumps({"writes": n - failures, "failures": failures, "rate": round((n - failures) / elapsed, 2),
                      "p50_ms": pct(0.5), "p99_ms": pct(0.99)}))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
