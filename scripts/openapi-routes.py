#!/usr/bin/env python3
"""Prints the (METHOD, path) pairs the OpenAPI document describes, one per line, sorted:

    GET /{tenant}/discovery/v2.0/keys

The document is read from the Swift source that embeds it
(Sources/PortcullisServer/Operations/OpenAPIDocument.swift) unless a path is given: a `.swift` file, a JSON
file (e.g. a saved `GET /openapi.json`), or `-` for JSON on standard input. Tests compare this list with
the routes the router registers (Hummingbird's `:name` is `{name}` here).
"""
import json
import re
import sys
from pathlib import Path

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DEFAULT_SOURCE = Path(__file__).resolve().parent.parent / "Sources/PortcullisServer/Operations/OpenAPIDocument.swift"


def json_from_swift(source: str) -> str:
    """The text of the raw string literal `static let json = #\"\"\"...\"\"\"#`, with the closing
    delimiter's indentation stripped from every line, as Swift does."""
    match = re.search(r'static let json = #"""\n(.*?)\n([ \t]*)"""#', source, re.S)
    if not match:
        sys.exit("openapi-routes: no `static let json = #\"\"\"…\"\"\"#` literal found")
    body, indent = match.group(1), match.group(2)
    lines = []
    for number, line in enumerate(body.split("\n"), start=1):
        if line.strip() and not line.startswith(indent):
            sys.exit(f"openapi-routes: line {number} of the literal is indented less than its closing delimiter")
        lines.append(line[len(indent):])
    return "\n".join(lines)


def load(argument: str | None) -> dict:
    if argument == "-":
        return json.load(sys.stdin)
    path = Path(argument) if argument else DEFAULT_SOURCE
    text = path.read_text(encoding="utf-8")
    return json.loads(json_from_swift(text) if path.suffix == ".swift" else text)


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
