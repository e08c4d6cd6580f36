"""The validator's "resolved artifacts": what a child's report names as produced, with the
real content found in the child's own trace (DEL-4's fixed parts).

A report names an artifact on a line ``Artifact: NAME`` (or ``Artifacts: A, B``). NAME is
looked up in the child's trace only, newest first on its main path, never elsewhere:

1. a ref of the trace (``ContextRef.id``): the ref's full content;
2. a tool call id: that call's result, or the full output ref when the result was slimmed;
3. a file path: the ``content`` argument of the newest call that wrote it (a ``path`` /
   ``file`` argument with ``content``), else the result of the newest call that read it.

The content is never shortened: an artifact that does not fit the validator's budget makes
the fixed parts exceed it and the verdict ``unknown`` (``validator.py``). A name that
nothing in the trace produced stays an artifact part that says so, so the validator sees
that the report claims an output the trace does not show.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.records import ContextRef, Message

_LINE_RE = re.compile(r"^\s*[-*]?\s*artifacts?\s*:\s*(.+?)\s*$", re.I | re.M)
_PATH_KEYS = ("path", "file", "filename")
_CONTENT_KEYS = ("content", "text")
UNRESOLVED = "(not found in this trace: no ref, tool call or file of the child produced it)"


@dataclass(frozen=True, slots=True)
class Artifact:
    name: str
    text: str
    """The real content, whole (``UNRESOLVED`` when nothing produced it)."""
    source: str
    """Where it was found: ``ref ID``, ``tool result #N``, ``file written #N``,
    ``file read #N``; empty when unresolved."""

    @property
    def resolved(self) -> bool:
        return bool(self.source)


def named_artifacts(report: str) -> tuple[str, ...]:
    """The artifact names of a report, in order, each once."""
    names: list[str] = []
    for line in _LINE_RE.findall(report or ""):
        for name in line.split(","):
            name = name.strip().strip("`'\"")
            if name and name not in names:
                names.append(name)
    return tuple(names)


def resolve_artifacts(
    names: Iterable[str], messages: Sequence[Message], refs: Iterable[ContextRef]
) -> tuple[Artifact, ...]:
    """Each name with its content from ``messages`` (the child's main path, chronological)
    and ``refs`` (the child's refs)."""
    by_id = {r.id: r for r in refs}
    results = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    return tuple(_resolve(n, messages, by_id, results) for n in names)


def _resolve(
    name: str,
    messages: Sequence[Message],
    refs: dict[str, ContextRef],
    results: dict[str, Message],
) -> Artifact:
    ref = refs.get(name)
    if ref is not None and ref.content is not None:
        return Artifact(name, ref.content, f"ref {name}")
    if name in results:
        result = results[name]
        return Artifact(name, _full_result(result, refs), f"tool result #{result.sequence}")
    for m in reversed(messages):
        for call in reversed(m.tool_calls):
            args = _arguments(call.arguments)
            if not any(args.get(k) == name for k in _PATH_KEYS):
                continue
            written = next((v for k in _CONTENT_KEYS if isinstance(v := args.get(k), str)), None)
            if written is not None:
                return Artifact(name, written, f"file written #{m.sequence}")
            read = results.get(call.id)
            if read is not None and not read.content.startswith(("Error:", "Blocked:")):
                return Artifact(name, _full_result(read, refs), f"file read #{read.sequence}")
    return Artifact(name, UNRESOLVED, "")


def _full_result(result: Message, refs: dict[str, ContextRef]) -> str:
    """A tool result's whole output: the full-output ref of a slimmed result."""
    meta = result.metadata if isinstance(result.metadata, dict) else {}
    if meta.get("slimmed"):
        for ref_id in meta.get("refs") or ():
            ref = refs.get(ref_id)
            if ref is not None and ref.kind == "tool_output" and ref.content is not None:
                return ref.content
    return result.content


def _arguments(text: str) -> dict[str, object]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
