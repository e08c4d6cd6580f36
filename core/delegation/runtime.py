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
from core.delegation.config import DEFAULT_LIMITS, DelegationLimits
from core.delegation.snapshots import brief_snapshot
from core.delegation.store import Node, add_snapshot, register_root
from core.store import Store

Approver = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""Given the brief an ``agent()`` call proposes, the brief that is approved (a person or a
policy may change it; the call then has to match it exactly)."""

CHILD_PROMPT = (
    "You are delegated agent {name}. Work only from your task brief, the root task anchor "
    "and the context refs granted to you; read a ref with read_context_ref. Finish with a "
    "report that meets every completion criterion under every constraint."
)


@dataclass(frozen=True)
class DelegationSettings:
    limits: DelegationLimits = DEFAULT_LIMITS
    approver: Approver | None = None
    child_max_steps: int = 40
    child_prompt: str = CHILD_PROMPT


def start_root(
    store: Store,
    trace_id: str,
    anchor: Mapping[str, Any] | None,
    tools: Iterable[str] = (),
    limits: DelegationLimits = DEFAULT_LIMITS,
) -> tuple[Node, RootTaskAnchor]:
    """Make a trace a recursive root. No anchor, no root: refused with a clear error."""
    normalized = normalize_anchor(anchor, limits)
    with store.write() as w:
        node = register_root(w, trace_id, normalized, tools)
        add_snapshot(w, brief_snapshot(trace_id, node.name, root_brief(normalized)))
    return node, normalized
