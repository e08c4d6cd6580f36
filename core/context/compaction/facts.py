"""Facts that must outlive a compaction, read from text: refs, constraints and failures.

- **Refs**: URLs, file paths (absolute, ``./``, ``~/``, or relative with an extension) and
  ids shaped like ``win-1001`` / ``entity-9182`` / ``ref:3f2a`` (letters, a separator, then
  at least three letters or digits including a digit).
- **Constraints** (the convention ctxlens records them by): a user message's
  ``metadata["constraints"]`` list, or lines of a user message starting ``Constraint:``.
- **Completed calls**: a tool call answered by a result that is not a failure, as
  ``Done: <tool> <canonical JSON arguments>`` (synthetic injections excluded). A context that
  lost a call and its result still says the work was done, so it is not redone (seed C).
- **Failures**: a tool result whose ``metadata`` has ``error`` (truthy) or ``status`` of
  ``error``/``failed``, or whose text starts with ``Error``, ``Exception``, ``Traceback``,
  ``Failed``, ``Fatal`` or ``SomethingError:``. The fact is the first line of the text.

Placeholders render the facts of what they hide as ``Refs:``, ``Constraint:``,
``Done:`` and ``Failed:`` lines, which this module reads back, so a placeholder that is itself
compacted
later passes its facts on (deterministically: first-seen order, no clock, no counters).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import filterfalse

from core.context.compaction.items import calls_text, visible_text
from core.context.view import kind_of, role_of
from core.records import ContextItem, Message, canonical_call

_URL = r"https?://[^\s<>\"'`\]\[(){},]+"
_ABS_PATH = r"(?<![\w/.:~-])(?:~|\.{1,2})?/(?:[\w.-]+/)*[\w-][\w.-]*"
_REL_PATH = r"(?<![\w/.:~-])[\w-]+(?:/[\w.-]+)*/[\w-][\w.-]*\.[A-Za-z0-9]{1,8}\b"
_ID = r"(?<![\w/.-])[A-Za-z]{2,}[-_:](?=[A-Za-z0-9]*\d)[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]+)*\b"
REF_RE = re.compile(f"{_URL}|{_ABS_PATH}|{_REL_PATH}|{_ID}")
_TRAILING = ".,;:!?'\")]}"
#: A whitespace-delimited chunk with a ref character (possessive: linear time). Kept as the
#: definition; ``_candidates`` finds the same chunks faster.
_CANDIDATE = re.compile(r"(?<!\S)(?=\S{3})[^\s/:_-]*+[/:_-]\S*")
_REF_CHAR = re.compile(r"[/:_-]")

CONSTRAINT_RE = re.compile(r"^\s*(?:[-*]\s*)?constraint:\s*(.+?)\s*$", re.IGNORECASE | re.M)
FAILURE_RE = re.compile(
    r"^\s*(?:(?:error|exception|traceback|failed|failure|fatal)\b|[A-Z]\w*(?:Error|Exception):)",
    re.IGNORECASE,
)
FAILED_LINE_RE = re.compile(r"^Failed: ([^:\n]+): (.+)$", re.M)
DONE_LINE_RE = re.compile(r"^Done: (\S+ .*)$", re.M)
#: Kinds of synthetic calls whose completion is not work the model did.
SYNTHETIC_CALLS = frozenset({"injected_context", "injected_skill"})
#: Kinds whose text is ctxlens' own rendering of earlier facts (read back when compacted).
CARRIERS = frozenset({"placeholder", "summary"})


@dataclass(frozen=True, slots=True)
class Failure:
    tool: str
    text: str
    """First line of the error, at most 200 characters: the exact string that must survive."""


@dataclass(frozen=True, slots=True)
class Facts:
    refs: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()
    done: tuple[str, ...] = ()
    """Completed calls as ``<tool> <canonical JSON arguments>``."""

    def __bool__(self) -> bool:
        return bool(self.refs or self.constraints or self.failures or self.done)


@lru_cache(maxsize=1 << 16)
def call_key(name: str, arguments: str) -> str:
    """``<tool> <arguments as canonical JSON>`` (key order and spacing do not matter).
    Memoized: every compaction of a long run reads the same calls again."""
    return canonical_call(name, arguments)


def find_refs(text: str) -> list[str]:
    """Refs in order of first appearance."""
    return list(_refs(text))


@lru_cache(maxsize=1 << 16)
def _refs(text: str) -> tuple[str, ...]:
    """Memoized per text (stored messages never change, and every preview and every step
    reads the same ones again). Only whitespace-delimited chunks holding one of
    ``/ : _ -`` can contain a ref, so the full pattern runs on those chunks alone, and a
    text holding none of them (found by ``in``, a C-speed scan) is not split at all."""
    if "/" not in text and "-" not in text and "_" not in text and ":" not in text:
        return ()
    out: dict[str, None] = {}
    for chunk in _candidates(text):
        for ref in _chunk_refs(chunk):
            out[ref] = None
    return tuple(out)


def _candidates(text: str) -> list[str]:
    """``_CANDIDATE.findall(text)``: chunks of at least three characters holding one of
    ``/ : _ -`` (``str.split`` and ``\\s`` agree on what whitespace is); the search runs
    per chunk in C instead of the pattern trying every position of the text, and only on
    chunks that are not plain words or numbers (``str.isalnum``: cheaper than a search)."""
    chunks = filterfalse(str.isalnum, text.split())
    return [c for c in filter(_REF_CHAR.search, chunks) if len(c) > 2]


@lru_cache(maxsize=1 << 16)
def _chunk_refs(chunk: str) -> tuple[str, ...]:
    """Refs in one chunk. Memoized too: a run's outputs repeat the same paths, ids and
    tokens many times over, so most chunks of a new text were seen before."""
    out: list[str] = []
    for m in REF_RE.finditer(chunk):
        ref = m.group(0).rstrip(_TRAILING)
        if len(ref) > 2:
            out.append(ref)
    return tuple(out)


def constraints_in(text: str) -> list[str]:
    return [m.group(1) for m in CONSTRAINT_RE.finditer(text)]


def message_constraints(msg: Message) -> list[str]:
    """Constraints a user message states (metadata list first, then ``Constraint:`` lines)."""
    out: list[str] = []
    meta = msg.metadata if isinstance(msg.metadata, dict) else {}
    listed = meta.get("constraints")
    if isinstance(listed, (list, tuple)):
        out.extend(str(c).strip() for c in listed if str(c).strip())
    elif isinstance(listed, str) and listed.strip():
        out.append(listed.strip())
    out.extend(c for c in constraints_in(msg.content) if c not in out)
    return out


def is_failure(msg: Message) -> bool:
    if msg.role != "tool":
        return False
    meta = msg.metadata
    if isinstance(meta, dict) and meta and _flagged(meta):
        return True
    return FAILURE_RE.match(msg.content) is not None


def _flagged(meta: dict[str, object]) -> bool:
    return bool(meta.get("error")) or str(meta.get("status", "")).lower() in ("error", "failed")


def first_line(text: str, limit: int = 200) -> str:
    """The first non-blank line, stripped, at most ``limit`` characters."""
    text = text.lstrip()
    end = text.find("\n")
    return (text if end < 0 else text[:end]).strip()[:limit]


def extract(
    items: Sequence[ContextItem], messages: Mapping[int, Message], done_calls: bool = True
) -> Facts:
    """The facts visible in (or carried by) a run of context items (``done_calls=False``:
    without the completed calls, for callers that do not show them)."""
    fold = FactFold(done_calls)
    fold.add(items, messages)
    return fold.facts()


class FactFold:
    """``extract`` as a left fold: the facts of a run of items, extended item by item, so a
    run that grows at the end (a context between compactions) costs only its new items.
    Facts keep first-seen order; calls seen earlier attribute later results."""

    __slots__ = ("constraints", "done", "done_calls", "failures", "keys", "names", "refs")

    def __init__(self, done_calls: bool = True) -> None:
        self.done_calls = done_calls
        self.refs: dict[str, None] = {}
        self.constraints: dict[str, None] = {}
        self.failures: dict[Failure, None] = {}
        self.done: dict[str, None] = {}
        self.names: dict[str, str] = {}
        self.keys: dict[str, str] = {}

    def facts(self) -> Facts:
        return Facts(
            tuple(self.refs), tuple(self.constraints), tuple(self.failures), tuple(self.done)
        )

    def add(
        self,
        items: Sequence[ContextItem],
        messages: Mapping[int, Message],
        lo: int = 0,
        hi: int | None = None,
        resolved: Sequence[Message | None] | None = None,
    ) -> None:
        """Fold ``items[lo:hi]`` in. ``resolved``: the message of each item, already looked
        up (``Scan.msgs``), so the fold does not look every one up again."""
        refs, constraints, failures, done = self.refs, self.constraints, self.failures, self.done
        names, keys, keyed = self.names, self.keys, self.done_calls
        get = messages.get
        memo = _MEMO
        for n in range(lo, len(items) if hi is None else hi):
            item = items[n]
            if resolved is not None:
                msg = resolved[n]
            else:
                seq = item.sequence
                msg = get(seq) if seq is not None else None
            if msg is None:
                self._add_text(item, None, messages)
                continue
            if msg.tool_calls:
                key = keyed and msg.kind not in SYNTHETIC_CALLS
                for call in msg.tool_calls:
                    names[call.id] = call.name
                    if key:
                        keys[call.id] = call_key(call.name, call.arguments)
            if item.content is not None or item.role is not None or msg.kind in CARRIERS:
                if msg.role == "tool" and msg.tool_call_id in keys and not is_failure(msg):
                    done[keys[msg.tool_call_id]] = None
                self._add_text(item, msg, messages)
                continue
            at = (msg.trace_id, msg.sequence)
            hit = memo.get(at)
            found, said, failed = (
                hit[1]
                if hit is not None and (hit[0] is msg or _same(hit[0], msg))
                else _read_facts(at, msg)
            )
            if failed is not None:  # only a tool result fails
                failures[Failure(msg.name or names.get(msg.tool_call_id or "", "tool"), failed)] = (
                    None
                )
            elif msg.tool_call_id is not None and msg.role == "tool" and msg.tool_call_id in keys:
                done[keys[msg.tool_call_id]] = None
            if found:
                refs.update(dict.fromkeys(found))
            if said:
                constraints.update(dict.fromkeys(said))

    def _add_text(
        self, item: ContextItem, msg: Message | None, messages: Mapping[int, Message]
    ) -> None:
        """An item shown with other content, a synthetic item, or a carrier: its text."""
        text = visible_text(item, messages)
        self.refs.update(dict.fromkeys(_refs(text)))
        kind, role = kind_of(item, msg), role_of(item, msg)
        if kind in CARRIERS or role == "user":
            self.constraints.update(dict.fromkeys(constraints_in(text)))
        if (kind in CARRIERS or role == "tool") and "Failed: " in text:
            self.failures.update(
                dict.fromkeys(Failure(t, x) for t, x in FAILED_LINE_RE.findall(text))
            )
        if kind in CARRIERS and "Done: " in text:
            self.done.update(dict.fromkeys(DONE_LINE_RE.findall(text)))


_MessageFacts = tuple[tuple[str, ...], tuple[str, ...], "str | None"]
_MEMO: dict[tuple[str, int], tuple[Message, _MessageFacts]] = {}
_MEMO_MAX = 200_000


def message_facts(msg: Message) -> _MessageFacts:
    """Refs, constraints and failure line of a stored message shown as it is.

    Memoized per ``(trace, sequence)`` and checked against the message's content, calls,
    role, kind and metadata, so a different message under the same key is recomputed.
    """
    key = (msg.trace_id, msg.sequence)
    hit = _MEMO.get(key)
    if hit is not None and (hit[0] is msg or _same(hit[0], msg)):
        return hit[1]
    return _read_facts(key, msg)


def _read_facts(key: tuple[str, int], msg: Message) -> _MessageFacts:
    """``message_facts`` past the memo: read the message and remember its facts."""
    role = msg.role
    text = calls_text(msg.content, msg.tool_calls) if msg.tool_calls else msg.content
    said = tuple(message_constraints(msg)) if role == "user" else ()
    failed = first_line(msg.content) if role == "tool" and is_failure(msg) else None
    facts: _MessageFacts = (_refs(text), said, failed)
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = (msg, facts)
    return facts


def _same(a: Message, b: Message) -> bool:
    return a is b or (
        a.content == b.content
        and a.tool_calls == b.tool_calls
        and a.role == b.role
        and a.kind == b.kind
        and a.metadata == b.metadata
    )


def render(facts: Facts, max_refs: int = 200, done: bool = True) -> list[str]:
    """Fact lines for a placeholder (read back by ``extract``); the most recent
    ``max_refs`` refs are kept. Callers join them with newlines; lines of one kind come
    as one newline-joined string (one C-level join, not a string per fact)."""
    lines: list[str] = []
    if facts.refs:
        lines.append("Refs: " + ", ".join(facts.refs[-max_refs:]))
    lines += _prefixed("Constraint: ", facts.constraints)
    lines += _prefixed("Failed: ", [f"{f.tool}: {f.text}" for f in facts.failures])
    if done:
        lines += _prefixed("Done: ", facts.done)
    return lines


def _prefixed(prefix: str, texts: Sequence[str]) -> list[str]:
    return [prefix + ("\n" + prefix).join(texts)] if texts else []


def merge(*all_facts: Facts) -> Facts:
    refs: dict[str, None] = {}
    constraints: dict[str, None] = {}
    failures: dict[Failure, None] = {}
    done: dict[str, None] = {}
    for f in all_facts:
        refs.update(dict.fromkeys(f.refs))
        constraints.update(dict.fromkeys(f.constraints))
        failures.update(dict.fromkeys(f.failures))
        done.update(dict.fromkeys(f.done))
    return Facts(tuple(refs), tuple(constraints), tuple(failures), tuple(done))


__all__ = ["FactFold", "Facts", "Failure", "call_key", "extract", "find_refs", "merge", "render"]
