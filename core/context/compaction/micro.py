"""Micro-compaction (SPEC CMP-2, seed B L1/L3): old tool results become placeholders.

``[Previous: used <tool>]`` replaces the content of every tool result older than the
``keep_recent`` most recent ones; the refs and the failure line of the original follow the
placeholder, so they stay visible. Only contents change, never the item list, so calls and
results stay paired. The boundary moves in steps of ``step`` results (prefix stability), a
result already shown with other content is left alone (idempotent), and a placeholder is
used only when it is shorter than what it replaces. Aggressive micro is the same transform
with ``keep_recent=2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache, partial

from core.context.compaction.config import MicroParams
from core.context.compaction.facts import find_refs, first_line, is_failure
from core.context.compaction.result import LayerResult, unchanged
from core.context.compaction.scan import ContextState, Scan, scan_of
from core.context.shared_tuples import ChunkedList, ChunkedTuple, ListPrefix
from core.context.view import View
from core.records import ContextItem, Message


def placeholder(tool: str, msg: Message) -> str:
    return _placeholder(tool, msg.content, is_failure(msg))


@lru_cache(maxsize=1 << 14)
def _shown_as(sequence: int, text: str, role: str | None, kind: str | None) -> ContextItem:
    """The item showing a message with a placeholder (immutable, so one object serves
    every call that replaces the same result again: each step of a long run does)."""
    return ContextItem(sequence, text, role, kind)  # type: ignore[arg-type]


@lru_cache(maxsize=1 << 14)
def _placeholder(tool: str, content: str, failed: bool) -> str:
    lines = [f"[Previous: used {tool}]"]
    refs = find_refs(content)
    if refs:
        lines.append("Refs: " + ", ".join(refs))
    if failed:
        lines.append(f"Failed: {tool}: {first_line(content)}")
    return "\n".join(lines)


def _least(tool: str, content: str, failed: bool) -> int:
    """The length of ``_placeholder``'s text without its refs line: a lower bound, so a
    result no longer than it keeps its content whatever its refs are."""
    head = len(tool) + 17  # "[Previous: used <tool>]"
    return head + len(tool) + 11 + len(first_line(content)) if failed else head


def micro(
    view: View, params: MicroParams, level: str = "micro", state: ContextState | None = None
) -> LayerResult:
    items = view.items
    fold = scan_of(view, state).fold(("micro", params), lambda: _MicroFold(params.exempt_tools))
    if fold.stale:  # a call id renamed after a result took its name: start over
        return micro(view, params, level)
    excess = len(fold.positions) - params.keep_recent
    step = max(1, params.step)
    cut = (excess // step) * step if excess > 0 else 0
    if cut <= 0:
        return unchanged(level, items, "no tool result beyond the recent ones")
    fold.replace_upto(cut)
    if not fold.replaced:
        return unchanged(level, items, "older tool results are already compacted")
    out = fold.last = fold.out.snapshot()
    if state is not None:  # the compactor counts the output next: offer it the scan
        state.offer(out, view.messages, partial(fold.output_scan, view.messages, out))
    return LayerResult(level, out, replaced=fold.replaced_so_far())


class _MicroFold:
    """micro so far: call names, the results it may replace (``positions``), and the
    output with the first ``upto`` of them replaced. The boundary only moves forward as
    the context grows, so each result is looked at once. The output is a snapshot of a
    ``ChunkedList``: a call copies the chunks it changed, not the whole context."""

    def __init__(self, exempt: tuple[str, ...]) -> None:
        self.done = 0
        self.exempt = frozenset(exempt)
        self.names: dict[str, str] = {}
        self.positions: list[int] = []
        self.out: ChunkedList[ContextItem] = ChunkedList()
        self.msgs: list[Message | None] = []
        self.replaced: list[int] = []
        self._replaced: ListPrefix[int] = ListPrefix(self.replaced)
        self.upto = 0
        self.used: dict[str, str] = {}
        """Call id → the tool name a replaced result was given from ``names``."""
        self.stale = False
        self.scan: Scan | None = None
        """The scan of the output, brought up to date from the first item that changed
        since (``changed``) when it is asked for, so a grown context's output is not
        resolved again from scratch: newly replaced results lie just before the recent
        ones, near the end."""
        self.changed = 0
        self.last: ChunkedTuple[ContextItem] | None = None
        """The latest output (``scan`` follows only that one)."""

    def extend(self, scan: Scan) -> None:
        names, used, exempt = self.names, self.used, self.exempt
        positions, msgs = self.positions, scan.msgs
        for i in range(self.done, len(scan.items)):
            msg = msgs[i]
            if msg is None:
                continue
            for call in msg.tool_calls:
                if used and used.get(call.id, call.name) != call.name:
                    self.stale = True
                names[call.id] = call.name
            if msg.role == "tool" and _tool(msg, names) not in exempt:
                positions.append(i)
        self.out.extend(scan.items[self.done :])
        self.msgs = msgs

    def replace_upto(self, cut: int) -> None:
        out, names, msgs = self.out, self.names, self.msgs
        for i in self.positions[self.upto : cut]:
            item = out[i]
            if item.content is not None:
                continue
            msg = msgs[i]
            assert msg is not None
            tool = _tool(msg, names)
            if msg.name is None:
                self.used[msg.tool_call_id or ""] = tool
            content, failed = msg.content, is_failure(msg)
            if len(content) <= _least(tool, content, failed):
                continue  # no placeholder is shorter: its refs need not be read
            text = _placeholder(tool, content, failed)
            if len(text) < len(content):
                out[i] = _shown_as(msg.sequence, text, item.role, item.kind)
                self.replaced.append(msg.sequence)
                self.changed = min(self.changed, i)
        self.upto = max(self.upto, cut)

    def output_scan(self, messages: Mapping[int, Message], out: Sequence[ContextItem]) -> Scan:
        """The scan of ``out``: the latest output's is kept and brought up to date from
        the first item changed since; an older output gets a scan of its own."""
        if out is not self.last:
            alone = Scan(messages)
            alone.extend(out)
            return alone
        if self.scan is None:
            self.scan = Scan(messages)
            self.scan.extend(out)
        elif self.scan.items is not out:
            self.scan.refresh_from(min(self.changed, len(self.scan.items)), out)
        self.changed = len(out)
        return self.scan

    def replaced_so_far(self) -> ListPrefix[int]:
        """``replaced`` as an immutable sequence without copying it (the list is only
        appended to; a new prefix only when it grew)."""
        if len(self._replaced) != len(self.replaced):
            self._replaced = ListPrefix(self.replaced)
        return self._replaced


def _tool(msg: Message, names: dict[str, str]) -> str:
    return msg.name or names.get(msg.tool_call_id or "", "tool")
