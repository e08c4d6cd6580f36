"""Delegation in a real run: starting a recursive root, the settings, rewinds.

``core/delegation/runner.py:DelegatingRunner`` is the Runner that speaks the protocol;
``core/delegation/tools.py`` holds its ``agent()`` and ``read_context_ref`` tools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.delegation.anchor import RootTaskAnchor, normalize_anchor
from core.delegation.brief import root_brief
from core.delegation.config import DEFAULT_LIMITS, METADATA_KEY, DelegationLimits
from core.delegation.normal import DelegationError
from core.delegation.snapshots import brief_snapshot
from core.delegation.store import Node, add_snapshot, node, register_root
from core.store import Store

Approver = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""Given the brief an ``agent()`` call proposes, the brief that is approved (a person or a
policy may change it; the call then has to match it exactly)."""

CHILD_PROMPT = (
    "You are delegated agent {name}. Work only from your task brief, the root task anchor "
    "and the context refs granted to you; read a ref with read_context_ref. Finish with a "
    "report that meets every completion criterion under every constraint, naming each file "
    "or output you produced on a line 'Artifact: NAME' (a file path, ref id or tool call id)."
)


@dataclass(frozen=True)
class DelegationSettings:
    limits: DelegationLimits = DEFAULT_LIMITS
    approver: Approver | None = None
    child_max_steps: int = 40
    child_prompt: str = CHILD_PROMPT

    def to_json(self) -> dict[str, Any]:
        """What the root records so a later process runs the tree the same way (the
        approver is code, not data: a re-run gets none unless it passes one)."""
        return {
            "limits": self.limits.to_json(),
            "child_max_steps": self.child_max_steps,
            "child_prompt": self.child_prompt,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any] | None) -> DelegationSettings:
        data = data if isinstance(data, Mapping) else {}
        limits = data.get("limits")
        return DelegationSettings(
            limits=DEFAULT_LIMITS.with_settings(dict(limits))
            if isinstance(limits, Mapping)
            else DEFAULT_LIMITS,
            child_max_steps=int(data.get("child_max_steps") or 40),
            child_prompt=str(data.get("child_prompt") or CHILD_PROMPT),
        )


def start_root(
    store: Store,
    trace_id: str,
    anchor: Mapping[str, Any] | None,
    tools: Iterable[str] = (),
    limits: DelegationLimits = DEFAULT_LIMITS,
    settings: DelegationSettings | None = None,
    copied_prefix: bool = False,
) -> tuple[Node, RootTaskAnchor]:
    """Make a trace a recursive root. No anchor, no root: refused with a clear error. A
    trace that already has messages is refused too (its initial task context, where the
    anchor must appear once, is already written; no silent upgrade) unless they are a
    root's copied prefix (``copied_prefix``: a replay of a root from call N, whose first
    message carries the anchor).

    The root's metadata records ``delegation: {root, settings}`` (``settings`` wins over
    ``limits``), which marks every tree member for a re-run: the ``DelegatingRunner``
    registered in ``core/run/rerunners.py`` (``core/delegation/rerun.py``)."""
    settings = settings or DelegationSettings(limits=limits)
    normalized = normalize_anchor(anchor, settings.limits)
    if not copied_prefix and store.trace(trace_id).head is not None:
        raise DelegationError(
            f"trace {trace_id} already has messages: a recursive root starts with its "
            "anchor in its first task context, so it cannot become one now (no silent "
            "upgrade); start a new trace with the anchor"
        )
    with store.write() as w:
        node = register_root(w, trace_id, normalized, tools)
        add_snapshot(w, brief_snapshot(trace_id, node.name, root_brief(normalized)))
        meta = dict(w.read.trace(trace_id).metadata or {})
        meta[METADATA_KEY] = {"root": trace_id, "settings": settings.to_json()}
        w.update_trace_metadata(trace_id, meta)
    return node, normalized


def settings_of(reader: Any, trace_id: str) -> DelegationSettings:
    """The settings the tree of ``trace_id`` was started with (its root's record)."""
    here = node(reader, trace_id)
    if here is None:
        return DelegationSettings()
    meta = reader.trace(here.root_trace_id).metadata or {}
    record = meta.get(METADATA_KEY) if isinstance(meta, Mapping) else None
    return DelegationSettings.from_json(
        record.get("settings") if isinstance(record, Mapping) else None
    )
