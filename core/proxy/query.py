"""What the proxy recorded for a call, read back: the exact body and how the call ended."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select

from core.store import schema as t
from core.store.reader import Reader


def proxied_request(reader: Reader, trace_id: str, call_index: int) -> dict[str, Any] | None:
    """The recorded request of a proxied call (``None`` for a call the proxy did not see).

    ``body`` is the request body as sent (UTF-8 text; ``body_base64`` if it is not text),
    ``sha256_ok`` whether its bytes still hash to the SHA-256 recorded with the call."""
    c = t.proxy_requests.c
    row = (
        reader.conn.execute(
            select(t.proxy_requests).where(c.trace_id == trace_id, c.call_index == call_index)
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    body = bytes(row["body"])
    out: dict[str, Any] = {
        "api": row["api"],
        "path": row["path"],
        "state": row["state"],
        "status": row["status"],
        "error": row["error"],
        "bytes": len(body),
        "body_sha256": row["body_sha256"],
        "sha256_ok": hashlib.sha256(body).hexdigest() == row["body_sha256"],
        "headers": row["headers"],
        "chunks": row["chunks"],
        "first_byte_ms": row["first_byte_ms"],
    }
    try:
        out["body"] = body.decode("utf-8")
    except UnicodeDecodeError:
        import base64

        out["body_base64"] = base64.b64encode(body).decode("ascii")
    return out
