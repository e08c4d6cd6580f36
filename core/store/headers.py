"""What of an HTTP request's headers may be stored: no credentials, no hop-by-hop noise.

Low in core so the proxy (which records requests) and the trace importer (which reads
exported ones back) apply the same rule without importing each other.
"""

from __future__ import annotations

import re

#: Connection-scoped headers: never forwarded in either direction (RFC 9110 §7.6.1).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "expect",  # answered here (``100 Continue``), not forwarded
    }
)

#: Header names that may carry a credential: forwarded, never stored or logged.
_SECRET = re.compile(r"auth|key|token|secret|cookie|session|signature|credential", re.I)


def is_secret_header(name: str) -> bool:
    return bool(_SECRET.search(name))


def storable_headers(headers: list[tuple[str, str]]) -> dict[str, str]:
    """The request headers worth keeping: no credentials, no hop-by-hop noise."""
    return {
        k.lower(): v for k, v in headers if not is_secret_header(k) and k.lower() not in HOP_BY_HOP
    }
