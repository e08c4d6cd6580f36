"""Run metrics computed from a lossless export alone (so anyone can recompute them):
redone tool calls, prefix-cache reuse, cumulative input tokens, compactions by level.

- ``redone_tool_calls``: tool calls that repeat a completed call (same tool, same canonical
  arguments, the earlier one answered without error) after a compaction boundary — on the
  run as it stands (the main path and its subagents; a branch abandoned by a rewind and
  redone on purpose is not "redone work").
- ``prefix_cache_reuse``: over consecutive calls of the main agent, tokens of the longest
  shared message prefix / input tokens of the later call (what a provider prompt cache can
  reuse).

``compute(export)`` counts everything the trace recorded; ``compute(export,
current_path=True)`` counts the run as it stands (what a comparison shows): the calls,
tool calls and compactions on the main path from the head and on the side branches forked
from it, without the branches a rewind abandoned (``current_sequences``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from core.agents import is_main_agent
from core.context.view import render_item, tokens_of
from core.importers.ctxlens_json import message_from_json
from core.records import ContextItem, Message, MessageKind, canonical_call, decode_items

SYNTHETIC_KINDS: frozenset[MessageKind] = frozenset({"injected_context", "injected_skill"})


def compute(export: Mapping[str, Any], current_path: bool = False) -> dict[str, Any]:
    """The metrics of ``export``; ``current_path``: of the run as it stands only."""
    trace_id = export["trace"]["id"]
    messages = {m["sequence"]: message_from_json(trace_id, m) for m in export["messages"]}
    records: list[Mapping[str, Any]] = list(export["llm_calls"])
    compactions: list[Mapping[str, Any]] = list(export["compactions"])
    counted: Iterable[Message] = messages.values()
    if current_path:
        live = current_sequences(export, messages)
        records = [c for c in records if _anchor(c) is None or _anchor(c) in live]
        compactions = [
            c for c in compactions if c["at_sequence"] in live or c["at_sequence"] is None
        ]
        counted = [m for m in messages.values() if m.sequence in live]
    calls = [c for c in records if is_main_agent(c)]
    contexts = [list(decode_items(c["context"])) for c in calls]
    rendered = [[render_item(i, messages) for i in ctx] for ctx in contexts]
    sizes = [[_tokens(i, messages) for i in ctx] for ctx in contexts]
    inputs = [sum(s) for s in sizes]
    shared = 0
    later = 0
    for n in range(1, len(rendered)):
        prefix = 0
        for a, b, size in zip(rendered[n - 1], rendered[n], sizes[n], strict=False):
            if a != b:
                break
            prefix += size
        shared += prefix
        later += inputs[n]
    levels = Counter(str(c["level"]) for c in compactions)
    layers: Counter[str] = Counter()
    for c in compactions:
        for layer in (c.get("details") or {}).get("layers", []) or [c["level"]]:
            layers[str(layer)] += 1
    return {
        "llm_calls": len(records),
        "main_llm_calls": len(calls),
        "tool_calls": sum(
            len(m.tool_calls)
            for m in counted
            if m.role == "assistant" and m.kind not in SYNTHETIC_KINDS
        ),
        "compactions": dict(sorted(levels.items())),
        "compaction_layers": dict(sorted(layers.items())),
        "redone_tool_calls": redone_tool_calls(export, messages),
        "cumulative_input_tokens": sum(inputs),
        "prefix_cache_reuse": round(shared / later, 4) if later else 0.0,
    }


def _anchor(call: Mapping[str, Any]) -> int | None:
    """Where a recorded call stands: its reply, else (a failed call) the head it saw."""
    reply = call.get("response_sequence")
    return reply if reply is not None else call.get("head_sequence")


def live_sequences(export: Mapping[str, Any], messages: Mapping[int, Message]) -> set[int]:
    """The main path from the head, plus subagent branches forked from it (what the run
    did as it stands now; branches abandoned by a rewind are not part of it)."""
    links = {s: (m.parent_sequence, m.branch_type) for s, m in messages.items()}
    return _forked_from_path(export["trace"]["head"], links, lambda kind: kind == "subagent")


def current_sequences(
    export: Mapping[str, Any], messages: Mapping[int, Message] | None = None
) -> set[int]:
    """The main path from the head, plus every side branch forked from it (subagents,
    compaction summaries, reflections): the trace's current path as
    ``core/replay/calls.py:live_calls`` reads it from the store, without the branches a
    rewind abandoned. Without ``messages``, read from the export's message dicts."""
    if messages is None:
        links = {
            m["sequence"]: (m["parent_sequence"], m["branch_type"]) for m in export["messages"]
        }
    else:
        links = {s: (m.parent_sequence, m.branch_type) for s, m in messages.items()}
    return _forked_from_path(export["trace"]["head"], links, lambda kind: kind is not None)


def _forked_from_path(
    head: int | None,
    links: Mapping[int, tuple[int | None, str | None]],
    side: Callable[[str | None], bool],
) -> set[int]:
    """The path from ``head`` (parent links), plus the messages of the side branches
    (``side(branch_type)``) whose first message hangs off it."""
    path: set[int] = set()
    seq = head
    while seq is not None:
        path.add(seq)
        seq = links[seq][0]
    live = set(path)
    for sequence, (_, kind) in links.items():
        if not side(kind):
            continue
        up: int | None = sequence
        while up is not None and side(links[up][1]):
            up = links[up][0]
        if up in path:
            live.add(sequence)
    return live


def redone_tool_calls(export: Mapping[str, Any], messages: Mapping[int, Message]) -> int:
    live = live_sequences(export, messages)
    boundaries = sorted(
        c["at_sequence"]
        for c in export["compactions"]
        if c["at_sequence"] is not None and c["at_sequence"] in live
    )
    results = {m.tool_call_id: m for m in messages.values() if m.role == "tool"}
    done: set[tuple[str, str]] = set()
    redone = 0
    for seq in sorted(live):
        m = messages[seq]
        if m.role != "assistant" or not m.tool_calls or m.kind in SYNTHETIC_KINDS:
            continue
        compacted = bool(boundaries) and boundaries[0] < seq
        for call in m.tool_calls:
            key = (m.agent_name, canonical_call(call.name, call.arguments))
            if key in done and compacted:
                redone += 1
            result = results.get(call.id)
            if result is not None and not result.content.startswith(("Error", "Blocked")):
                done.add(key)
    return redone


def _tokens(item: ContextItem, messages: Mapping[int, Message]) -> int:
    return tokens_of(item, messages.get(item.sequence) if item.sequence is not None else None)
