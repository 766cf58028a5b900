#!/usr/bin/env python3
"""Prints the OpenAPI document embedded in Sources/PortcullisServer/Operations/OpenAPIDocument.swift as JSON,
for testing an edited document before the binary is rebuilt:

    python3 Tests/Schemathesis/extract.py > /tmp/openapi.json
    SCHEMATHESIS_SCHEMA=/tmp/openapi.json scripts/schemathesis
"""
import importlib.util
from pathlib import Path

root = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("openapi_routes", root / "scripts/openapi-routes.py")
routes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(routes)
print(routes.json_from_swift((root / "Sources/PortcullisServer/Operations/OpenAPIDocument.swift").read_text(encoding="utf-8")))
