"""Request hashes of reconstructed contexts (``core/importers/calls.py:ContextHashes``) and
the records' quick ``__init__`` (``core/records.py:_quick_init``) the importers build with."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from core.context.view import request_sha256, resolve
from core.importers.calls import ContextHashes
from core.records import ContextItem, LlmCall, Message, NewMessage, ToolCall
from core.store import Store


def test_a_message_shown_otherwise_is_not_taken_from_the_rendered_cache(tmp_path: Path) -> None:
    """A lane that starts over reuses the bytes of messages shown as stored; the same
    message shown with other content (a cleared tool result) or another role is rendered
    anew. Every digest equals the hash of the View the store resolves."""
    with Store.open(tmp_path / "s.db") as s:
        with s.write() as w:
            tid = w.create_trace("t").id
            w.append(
                tid,
                [
                    NewMessage("user", "read it"),
                    NewMessage("assistant", "", tool_calls=(ToolCall("c1", "read", '{"p":1}'),)),
                    NewMessage("tool", "long output", tool_call_id="c1", name="read"),
                    NewMessage("assistant", "done"),
                ],
                parent=None,
            )
        plain = tuple(ContextItem(n) for n in range(4))
        cleared = (plain[0], plain[1], ContextItem(2, content="[cleared]"), plain[3])
        as_user = (ContextItem(3, role="user"),)
        with s.read() as r:
            hashes = ContextHashes(r, tid)
            for lane, items in [("a", plain), ("b", cleared), ("c", as_user), ("a", cleared)]:
                expected = request_sha256(resolve(r, tid, items).openai())
                assert hashes.digest(lane, items) == expected, (lane, items)
            assert hashes.digest("d", plain) == request_sha256(resolve(r, tid, plain).openai())


@pytest.mark.parametrize("cls", [Message, NewMessage, ContextItem, LlmCall, ToolCall])
def test_quick_init_keeps_the_dataclass_signature_and_defaults(cls: type) -> None:
    """The generated ``__init__`` takes what the dataclass declares, with its defaults,
    and the object stays frozen."""
    required = [f for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
    values = {f.name: f"v-{f.name}" for f in required}
    obj = cls(**values)
    for f in dataclasses.fields(cls):
        want = values.get(f.name, f.default)
        assert getattr(obj, f.name) == want, f.name
    assert obj == cls(*values.values())
    assert dataclasses.replace(obj) == obj
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, required[0].name, "other")
    with pytest.raises(TypeError):
        cls()
    with pytest.raises(TypeError):
        cls(**values, not_a_field=1)


def test_the_rendered_cache_is_bounded_in_bytes_not_only_in_entries(tmp_path: Path) -> None:
    """Large messages (long tool outputs) fill the rendered-bytes cache long before its
    ``KEEP`` entries: it holds at most ``KEEP_BYTES`` (and what one call adds), as the
    fresh messages are bounded in characters (``FreshMessages.MAX_CHARS``)."""
    size, n = 1 << 16, 200  # 13 MB of content, far fewer than KEEP messages
    with Store.open(tmp_path / "s.db") as s:
        with s.write() as w:
            tid = w.create_trace("t").id
            w.append(
                tid,
                [NewMessage("tool", f"{i:06d}" + "x" * size, token_count=1) for i in range(n)],
                parent=None,
            )
        items = tuple(ContextItem(i) for i in range(n))
        with s.read() as r:
            hashes = ContextHashes(r, tid)
            held = 0
            for k in range(1, n + 1):
                hashes.digest("a", items[:k])
                held = max(held, sum(map(len, hashes._plain.values())))
            assert hashes.digest("b", items) == request_sha256(resolve(r, tid, items).openai())
    assert n < ContextHashes.KEEP
    assert held <= ContextHashes.KEEP_BYTES + 2 * size
