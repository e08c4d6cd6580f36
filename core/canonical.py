"""Canonical JSON and its SHA-256: the one text ctxlens hashes or measures for a value.

Sorted keys, no spaces, UTF-8 kept (not ``\\u`` escapes). A list's text is ``[`` + its
items' texts joined by ``,`` + ``]``, so a growing context can be hashed incrementally
(``core/run/context_cache.py``). The request hash recorded with every model call, the
delegation protocol's versions, the lossless export and the scripted model's request
identity all use these two functions.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_sha256(value: Any) -> str:
    """Hex SHA-256 of ``canonical_json(value)`` as UTF-8."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
