"""What the proxy recorded for a call, read back: the exact body and how the call ended."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select

from core.records import LlmCall
from core.store import schema as t
from core.store.reader import Reader


def proxied_request(reader: Reader, trace_id: str, call_index: int) -> dict[str, Any] | None:
    """The recorded request of a proxied call (``None`` for a call the proxy did not see).

    ``body`` is the request body as sent (UTF-8 text; ``body_base64`` if it is not text),
    ``computed_sha256`` the hash of the stored bytes now, ``sha256_ok`` whether it is the
    SHA-256 recorded with the call."""
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
    computed = hashlib.sha256(body).hexdigest()
    out: dict[str, Any] = {
        "api": row["api"],
        "path": row["path"],
        "state": row["state"],
        "status": row["status"],
        "error": row["error"],
        "bytes": len(body),
        "body_sha256": row["body_sha256"],
        "computed_sha256": computed,
        "sha256_ok": computed == row["body_sha256"],
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


def proxied_digest(reader: Reader, call: LlmCall) -> str | None:
    """For a proxied call, the SHA-256 of its stored body (what its recorded hash is of);
    ``None`` for any other call, whose hash is of its canonical message list."""
    if not (isinstance(call.params, dict) and "proxy" in call.params):
        return None
    found = proxied_request(reader, call.trace_id, call.call_index)
    return None if found is None else str(found["computed_sha256"])
