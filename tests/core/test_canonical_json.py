"""The request hash's canonical JSON: the fast path (orjson) writes exactly the bytes of the
reference (``json.dumps`` sorted, compact, unescaped), whatever the value holds."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.canonical import canonical_bytes, canonical_json
from core.context.view import request_sha256

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),  # beyond 64 bits too: orjson refuses those
    st.floats(allow_nan=True),  # json writes floats its own way (and NaN)
    TEXT,
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(TEXT, inner, max_size=4),
    ),
    max_leaves=20,
)


@given(VALUE)
def test_canonical_bytes_are_the_canonical_json(value: Any) -> None:
    assert canonical_bytes(value) == canonical_json(value).encode("utf-8")


def test_a_message_list_hashes_as_its_canonical_json() -> None:
    import hashlib

    msgs = [
        {"role": "user", "content": 'é \u2028 \x00 "q" \\'},
        {"role": "tool", "tool_call_id": "x"},
    ]
    text = json.dumps(msgs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert request_sha256(msgs) == hashlib.sha256(text.encode("utf-8")).hexdigest()
