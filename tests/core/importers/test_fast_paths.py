"""The import fast paths give what the plain ones give: ``reading.loads`` is ``json.loads``
(values and errors), JSON columns written without the NaN check hold what was read, and
the counts filled in after an import are the exact ``count_message`` figures of every
stored message (TOK-1)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.importers.api import import_paths
from core.importers.counting import fill_pending
from core.importers.reading import describe_json_error, loads
from core.store import Store
from core.tokens import TokenCounter
from tests.conftest import TRACES

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_JSON = st.recursive(
    _SCALARS,
    lambda kids: (
        st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_JSON, st.booleans())
def test_loads_is_json_loads(value: Any, ascii_only: bool) -> None:
    line = (json.dumps(value, ensure_ascii=ascii_only) + "\n").encode()
    got = loads(line)
    assert got == json.loads(line)
    assert json.dumps(got) == json.dumps(json.loads(line)), "same types (int stays int)"


@pytest.mark.parametrize(
    "line",
    [
        b'{"a": NaN, "b": Infinity, "c": -Infinity}',
        b'{"big": 1e400, "n": 123456789012345678901234567890}',
        b'{"id": 18446744073709551616, "neg": -9223372036854775809}',
        b'{"s": "\\ud800 lone", "dup": 1, "dup": 2}',
        b'\xef\xbb\xbf{"bom": true}',
        '{"utf16": "é"}'.encode("utf-16"),
        b'{"n": 1234567890123456789.5, "t": "19 digits 1234567890123456789"}',
    ],
)
def test_loads_agrees_on_what_orjson_reads_otherwise(line: bytes) -> None:
    a, b = loads(line), json.loads(line)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    for x, y in zip(_floats(a), _floats(b), strict=True):
        assert x == y or (math.isnan(x) and math.isnan(y))


@pytest.mark.parametrize(
    "line", [b"{not json", b'{"a": 1,}', b'{"a": "\x01"}', b'{"a": 1} x', b"\xff\xfe\xfa", b'{"a']
)
def test_loads_fails_like_json_loads(line: bytes) -> None:
    with pytest.raises(ValueError) as ours:
        loads(line)
    with pytest.raises(ValueError) as theirs:
        json.loads(line)
    assert describe_json_error(ours.value) == describe_json_error(theirs.value)


def _floats(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in _floats(v)]
    return []


def _real(sub: str) -> Path:
    files = [p for p in (TRACES / sub).rglob("*.jsonl") if "subagents" not in p.parts]
    if not files:
        pytest.skip(f"no {sub} traces in shared/traces")
    return max(files, key=lambda p: p.stat().st_size)


@pytest.mark.parametrize("sub", ["claude_code", "codex"])
def test_imported_token_counts_are_exact(store: Store, sub: str) -> None:
    """Every stored count equals ``count_message`` of the stored message, computed here
    one message at a time with a fresh counter (meta records: 0)."""
    (res,) = import_paths(store, [_real(sub)])
    with store.read() as r:
        msgs = list(r.all_messages(res.trace_id))
    assert len(msgs) == res.messages > 100
    counter = TokenCounter()
    for m in msgs:
        expected = (
            0
            if m.kind == "meta"
            else counter.count_message(m.role, m.content, m.tool_calls, m.name).tokens
        )
        assert m.token_count == expected, (m.sequence, m.kind)
    fill_pending(store, [res.trace_id])
    with store.read() as r:
        r.count_pending = False  # the stored figures themselves
        stored = {m.sequence: m.token_count for m in r.all_messages(res.trace_id)}
    assert stored == {m.sequence: m.token_count for m in msgs}


def test_nan_read_by_json_is_kept_in_json_columns(store: Store, tmp_path: Path) -> None:
    """Lines orjson reads are written without the NaN check; once a line needed ``json``
    (NaN, Infinity), values are checked, so NaN is stored as NaN, not as ``null``."""
    src = Path(__file__).parents[2] / "fixtures" / "claude_code" / "session.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines()
    odd = (
        '{"sessionId": "sess-1", "type": "progress", "uuid": "p-nan", "parentUuid": "u1", '
        '"timestamp": "2025-01-01T00:00:03Z", "data": {"type": "hook_progress", '
        '"x": NaN, "y": -Infinity, "z": null}}'
    )
    path = tmp_path / "nan.jsonl"
    path.write_text("\n".join([*lines[:2], odd, *lines[2:]]) + "\n", encoding="utf-8")
    (res,) = import_paths(store, [path])
    with store.read() as r:
        metas = [m.metadata for m in r.all_messages(res.trace_id) if m.kind == "meta"]
    records = [x for md in metas for x in (md.get("records") or [md])]
    (data,) = [x["data"] for x in records if x.get("uuid") == "p-nan"]
    assert math.isnan(data["x"]) and data["y"] == -math.inf and data["z"] is None
