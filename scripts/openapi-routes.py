#!/usr/bin/env python3
"""Prints the (METHOD, path) pairs the OpenAPI document describes, one per line, sorted:

    GET /{tenant}/discovery/v2.0/keys

The document is read from the file the server compiles in (Sources/PortcullisServer/Operations/openapi.json)
unless a path is given: another JSON file (e.g. a saved `GET /openapi.json`), or `-` for JSON on standard
input. Tests compare this list with the routes the router registers (Hummingbird's `:name` is `{name}` here).
"""
import json
import sys
from pathlib import Path

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DEFAULT_SOURCE = Path(__file__).resolve().parent.parent / "Sources/PortcullisServer/Operations/openapi.json"


def load(argument: str | None) -> dict:
    if argument == "-":
        return json.load(sys.stdin)
    path = Path(argument) if argument else DEFAULT_SOURCE
    return json.loads(path.read_text(encoding="utf-8"))


def routes(document: dict) -> list[tuple[str, str]]:
    pairs = set()
    for path, item in document.get("paths", {}).items():
        for method in item:
            if method.lower() in METHODS:
                pairs.add((method.upper(), path))
    return sorted(pairs)


def main() -> None:
    document = load(sys.argv[1] if len(sys.argv) > 1 else None)
    for method, path in routes(document):
        print(f"{method} {path}")


if __name__ == "__main__":
    main()
