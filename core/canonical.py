"""Canonical JSON and its SHA-256: the one text ctxlens hashes or measures for a value.

Sorted keys, no spaces, UTF-8 kept (not ``\\u`` escapes). A list's text is ``[`` + its
items' texts joined by ``,`` + ``]``, so a growing context can be hashed incrementally
(``core/run/context_cache.py``). The request hash recorded with every model call, the
delegation protocol's versions, the lossless export and the scripted model's request
identity all use these functions (``canonical_bytes`` is the fast path to the same bytes).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_sha256(value: Any) -> str:
    """Hex SHA-256 of ``canonical_json(value)`` as UTF-8."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def canonical_bytes(value: Any) -> bytes:
    """``canonical_json(value)`` as UTF-8, by orjson where it writes the same bytes: values
    of strings, 64-bit integers, booleans, nulls, lists and str-keyed objects (its escapes
    and sorted keys are ``json``'s; floats are written otherwise, so they go to ``json``)."""
    if _plain(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # an integer beyond 64 bits
            pass
    return canonical_json(value).encode("utf-8")


def plain_canonical_bytes(value: Any) -> bytes:
    """``canonical_bytes`` of a value its caller knows is plain (no float, no non-str key:
    a rendered message whose every field is text), without walking it to check."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # lone surrogates: json's error, as canonical_bytes
        return canonical_json(value).encode("utf-8")


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_plain(v) for v in value)
    return False


class CanonicalForm:
    """A record measured and versioned by the canonical JSON of its ``to_json`` (the
    delegation anchor, brief and ref snapshots: their limits count these characters)."""

    __slots__ = ()

    def to_json(self) -> Any:
        raise NotImplementedError

    @property
    def text(self) -> str:
        return canonical_json(self.to_json())

    @property
    def digest(self) -> str:
        return canonical_sha256(self.to_json())

    @property
    def chars(self) -> int:
        return len(self.text)
