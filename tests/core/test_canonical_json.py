"""The request hash's canonical JSON: the fast path (orjson) writes exactly the bytes of the
reference (``json.dumps`` sorted, compact, unescaped), whatever the value holds."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.canonical import canonical_bytes, canonical_json, plain_canonical_bytes
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


PLAIN_TEXT = st.text(max_size=12)  # lone surrogates too: both ways refuse them alike
RENDERED = st.fixed_dictionaries(
    {"role": PLAIN_TEXT, "content": PLAIN_TEXT},
    optional={
        "tool_call_id": PLAIN_TEXT,
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {
                    "id": PLAIN_TEXT,
                    "type": st.just("function"),
                    "function": st.fixed_dictionaries(
                        {"name": PLAIN_TEXT, "arguments": PLAIN_TEXT}
                    ),
                }
            ),
            max_size=3,
        ),
    },
)


def _bytes_or_error(encode: Any, value: Any) -> bytes | str:
    try:
        return bytes(encode(value))
    except UnicodeEncodeError as exc:
        return type(exc).__name__


@given(RENDERED)
def test_plain_canonical_bytes_of_a_rendered_text_message(value: Any) -> None:
    """The request hash's fast path for a message whose fields are all text (what
    ``core/importers/calls.py:ContextHashes`` renders) writes the canonical bytes too."""
    assert _bytes_or_error(plain_canonical_bytes, value) == _bytes_or_error(
        lambda v: canonical_json(v).encode("utf-8"), value
    )
