"""Schemathesis hooks for scripts/schemathesis (loaded through SCHEMATHESIS_HOOKS): the media types the OpenAPI
description uses that schemathesis does not serialize by itself."""

import schemathesis

# A Shared Signals SET pushed to the receiver (RFC 8935, PROTOCOL §19) is a compact JWS: text, sent as generated.
schemathesis.serializer.alias("application/secevent+jwt", "text/plain")
