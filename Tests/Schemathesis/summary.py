#!/usr/bin/env python3
"""Prints the figures of a schemathesis run from its NDJSON report (scripts/schemathesis writes one):

    schemathesis 4.32.5, seed 42: 40 operations tested, 1234 cases generated, 0 failing cases
      not_a_server_error: 1234 passed, 0 failed          (one line per check: cases)
      FAILED POST /mam/v1/enrollments [not_a_server_error]: Server error   (one line per failing pair)
    schemathesis: 200 passed, 0 failed

The closing line counts (operation, check) pairs: a pair fails when at least one case of that
operation failed that check. Exit status 1 when any did.

    summary.py REPORT.ndjson
"""
import collections
import json
import sys


def main(path: str) -> int:
    cases: set[str] = set()
    operations: set[str] = set()
    per_check: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failing_cases: set[str] = set()
    pairs: dict[tuple[str, str], bool] = {}
    failures: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    seed = version = None
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            event = json.loads(line)
            kind, payload = next(iter(event.items()))
            if kind == "Initialize":
                seed, version = payload.get("seed"), payload.get("schemathesis_version")
            if kind != "ScenarioFinished":
                continue
            recorder = payload.get("recorder") or {}
            label = recorder.get("label") or "?"
            if not label.startswith("Stateful"):
                operations.add(label)
            cases.update(recorder.get("cases", {}).keys())
            for case_id, checks in (recorder.get("checks") or {}).items():
                case = recorder.get("cases", {}).get(case_id, {}).get("value", {})
                case_label = f"{case.get('method', '?')} {case.get('path', label)}" if case else label
                for check in checks:
                    name, status = check["name"], check["status"]
                    per_check[name][status] += 1
                    key = (case_label, name)
                    if status == "failure":
                        failing_cases.add(case_id)
                        pairs[key] = True
                        info = (check.get("failure_info") or {}).get("failure") or {}
                        title = info.get("title") or ""
                        if title and title not in failures[key]:
                            failures[key].append(title)
                    else:
                        pairs.setdefault(key, False)
    print(f"schemathesis {version}, seed {seed}: {len(operations)} operations tested, {len(cases)} cases generated, "
          f"{len(failing_cases)} failing cases")
    for name in sorted(per_check):
        counts = per_check[name]
        print(f"  {name}: {counts['success']} passed, {counts['failure']} failed")
    for (label, name), titles in sorted(failures.items()):
        print(f"  FAILED {label} [{name}]: {'; '.join(titles)}")
    failed = sum(1 for value in pairs.values() if value)
    print(f"schemathesis: {len(pairs) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
