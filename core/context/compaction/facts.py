"""Facts that must outlive a compaction, read from text: refs, constraints and failures.

- **Refs**: URLs, file paths (absolute, ``./``, ``~/``, or relative with an extension; a
  closing tag such as ``</skill>`` is markup, not the path ``/skill``) and ids shaped like
  ``win-1001`` / ``entity-9182`` / ``ref:3f2a`` (letters, a separator, then at least three
  letters or digits including a digit).
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, filterfalse

from core.context.compaction.items import calls_parts, visible_text
from core.context.view import kind_of, role_of
from core.records import ContextItem, Message, canonical_call

_URL = r"https?://[^\s<>\"'`\]\[(){},]+"
#: A path from the root, home or a relative dot, not preceded by a path or word character,
#: and not a closing tag: ``</skill>``, ``</tool_result>``, ``</ns:tag>`` (escaped too:
#: ``&lt;/skill&gt;``) name markup, not files (a path after ``<`` has more segments:
#: ``</etc/hosts>`` is a path).
_ABS_PATH = (
    r"(?<![\w/.:~-])(?!(?:(?<=<)|(?<=&lt;))/[\w.:-]+(?:>|&gt;))"
    r"(?:~|\.{1,2})?/(?:[\w.-]+/)*[\w-][\w.-]*"
)
_REL_PATH = r"(?<![\w/.:~-])[\w-]+(?:/[\w.-]+)*/[\w-][\w.-]*\.[A-Za-z0-9]{1,8}\b"
_ID = r"(?<![\w/.-])[A-Za-z]{2,}[-_:](?=[A-Za-z0-9]*\d)[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]+)*\b"
REF_RE = re.compile(f"{_URL}|{_ABS_PATH}|{_REL_PATH}|{_ID}")
_TRAILING = ".,;:!?'\")]}"
#: A whitespace-delimited chunk with a ref character (possessive: linear time). Kept as the
#: definition; ``_candidates`` finds the same chunks faster.
_CANDIDATE = re.compile(r"(?<!\S)(?=\S{3})[^\s/:_-]*+[/:_-]\S*")
_REF_CHAR = re.compile(r"[/:_-]")
#: Texts ``refs_in`` reads one by one (below this, its passes cost more than they skip).
_FEW = 8

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
        self.add_spans(items, messages, ((lo, len(items) if hi is None else hi),), resolved)

    def add_spans(
        self,
        items: Sequence[ContextItem],
        messages: Mapping[int, Message],
        spans: Iterable[tuple[int, int]],
        resolved: Sequence[Message | None] | None = None,
    ) -> None:
        """``add`` of each ``items[lo:hi]`` in turn. Constraints, failures and completed
        calls are read per item; the texts are only collected, in item order, and their
        refs read at the end in one pass (``refs_in``): the fold keeps the union in
        first-seen order, never one item's refs, so a text, line or chunk seen before adds
        nothing and is not read again."""
        constraints, failures, done = self.constraints, self.failures, self.done
        names, keys, keyed = self.names, self.keys, self.done_calls
        get = messages.get
        texts: list[str] = []
        push = texts.append
        for n in chain.from_iterable(range(lo, hi) for lo, hi in spans):
            item = items[n]
            if resolved is not None:
                msg = resolved[n]
            else:
                seq = item.sequence
                msg = get(seq) if seq is not None else None
            if msg is None:
                push(self._add_text(item, None, messages))
                continue
            calls = msg.tool_calls
            if calls:
                key = keyed and msg.kind not in SYNTHETIC_CALLS
                for call in calls:
                    names[call.id] = call.name
                    if key:
                        keys[call.id] = call_key(call.name, call.arguments)
            if item.content is not None or item.role is not None or msg.kind in CARRIERS:
                if msg.role == "tool" and msg.tool_call_id in keys and not is_failure(msg):
                    done[keys[msg.tool_call_id]] = None
                push(self._add_text(item, msg, messages))
                continue
            role = msg.role
            if role == "tool":
                if is_failure(msg):  # the fact is the first line of the error
                    tool = msg.name or names.get(msg.tool_call_id or "", "tool")
                    failures[Failure(tool, first_line(msg.content))] = None
                elif msg.tool_call_id is not None and msg.tool_call_id in keys:
                    done[keys[msg.tool_call_id]] = None
            elif role == "user":
                said = message_constraints(msg)
                if said:
                    constraints.update(dict.fromkeys(said))
            if calls:  # its lines, joined by refs_in as calls_text would join them
                texts += calls_parts(msg.content, calls)
            else:
                push(msg.content)
        self.refs.update(refs_in(texts))

    def _add_text(
        self, item: ContextItem, msg: Message | None, messages: Mapping[int, Message]
    ) -> str:
        """An item shown with other content, a synthetic item, or a carrier: its facts
        but refs, and the text to read refs from."""
        text = visible_text(item, messages)
        kind, role = kind_of(item, msg), role_of(item, msg)
        if kind in CARRIERS or role == "user":
            self.constraints.update(dict.fromkeys(constraints_in(text)))
        if (kind in CARRIERS or role == "tool") and "Failed: " in text:
            self.failures.update(
                dict.fromkeys(Failure(t, x) for t, x in FAILED_LINE_RE.findall(text))
            )
        if kind in CARRIERS and "Done: " in text:
            self.done.update(dict.fromkeys(DONE_LINE_RE.findall(text)))
        return text


def refs_in(texts: Sequence[str]) -> dict[str, None]:
    """The refs of ``texts`` in order of first appearance: ``find_refs`` of each text,
    merged, in one pass over all of them. A ref first appears in the first occurrence of
    a text or a chunk holding it, so each is read once, in order (``dict.fromkeys`` keeps
    it): repeated texts are skipped, the rest joined by newlines (whitespace, so the chunks
    are each text's own) and split once, and only the distinct chunks are tested for a ref
    character. A few texts (a run's appended unit) are read one by one through ``_refs``'
    memo instead: the passes pay off only where texts and chunks repeat."""
    if len(texts) <= _FEW:  # a grown context's new items: through the per-text memo
        few: dict[str, None] = {}
        for text in texts:
            few.update(dict.fromkeys(_refs(text)))
        return few
    keep = [t for t in dict.fromkeys(texts) if "/" in t or "-" in t or "_" in t or ":" in t]
    chunks = dict.fromkeys("\n".join(keep).split())
    out: dict[str, None] = {}
    for chunk in filter(_REF_CHAR.search, filterfalse(str.isalnum, chunks)):
        if len(chunk) > 2:
            for ref in _chunk_refs(chunk):
                out[ref] = None
    return out


def render(facts: Facts, max_refs: int = 200, done: bool = True, group: int = 0) -> list[str]:
    """Fact lines for a placeholder (read back by ``extract``); the most recent
    ``max_refs`` refs are kept. Callers join them with newlines; lines of one kind come
    as one newline-joined string (one C-level join, not a string per fact), or with
    ``group``, as strings of at most ``group`` lines counted from the kind's first: the
    kinds only grow at their end as a region grows, so all groups but the last stay the
    same strings, whose token counts are memo hits (``snip.py:_placeholder_parts``)."""
    lines: list[str] = []
    if facts.refs:
        lines.append("Refs: " + ", ".join(facts.refs[-max_refs:]))
    lines += _prefixed("Constraint: ", facts.constraints, group)
    lines += _prefixed("Failed: ", [f"{f.tool}: {f.text}" for f in facts.failures], group)
    if done:
        lines += _prefixed("Done: ", facts.done, group)
    return lines


def _prefixed(prefix: str, texts: Sequence[str], group: int = 0) -> list[str]:
    step = group or len(texts) or 1
    glue = "\n" + prefix
    return [prefix + glue.join(texts[k : k + step]) for k in range(0, len(texts), step)]


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
