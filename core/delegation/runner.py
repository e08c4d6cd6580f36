"""``DelegatingRunner``: the step machine of one trace of a delegation tree.

Additive over ``core/run/runner.py:Runner``: it adds the ``agent()`` and
``read_context_ref`` tools, puts the anchor (and brief, lineage, ref metadata) in the
trace's initial task context and adds one Delegation section to every
``get_current_context``. (Every rewind ends the grants made after its point:
``core/store/writer.py:Writer.rewind``.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.context.periodic import ContextSources
from core.delegation.anchor import RootTaskAnchor
from core.delegation.brief import TaskBrief
from core.delegation.context import SECTION, current_section, task_context
from core.delegation.normal import DelegationError
from core.delegation.runtime import DelegationSettings
from core.delegation.snapshots import RefGrant, RefSnapshot
from core.delegation.store import Node, current_brief, grants_held, load_anchor, node, snapshots
from core.records import Message, NewMessage
from core.run.runner import Runner
from core.run.tools import ToolRegistry


class DelegatingRunner(Runner):
    def __init__(self, *args: Any, delegation: DelegationSettings | None = None, **kw: Any):
        super().__init__(*args, **kw)
        from core.delegation.tools import delegation_tools

        self.delegation = delegation or DelegationSettings()
        own = {n: t for n, t in self.tools.tools.items()}
        self.tools = ToolRegistry(own).extend(delegation_tools())

    def _state(self) -> _Protocol | None:
        """This trace's protocol state as stored (``None``: not in a delegation tree)."""
        with self.store.read() as r:
            here = node(r, self.trace_id)
            if here is None:
                return None
            brief = current_brief(r, self.trace_id)
            return _Protocol(
                here,
                load_anchor(r, here.root_trace_id),
                brief.brief if brief and here.depth else None,
                brief.index if brief else 0,
                tuple(grants_held(r, self.trace_id)),
                tuple(snapshots(r, self.trace_id)),
            )

    def protocol_text(self, task: str = "", first: bool = True) -> str:
        """The task context of this trace (``first``) or of a revision turn (no anchor: it
        is already in the initial context, exactly once)."""
        p = self._state()
        if p is None:
            raise DelegationError(
                f"trace {self.trace_id} has no RootTaskAnchor: start a recursive root with "
                "an anchor (objective, completion_criteria, constraints); no silent upgrade"
            )
        limits = self.delegation.limits
        return task_context(
            p.anchor, p.node, p.brief, p.index, p.grants, limits, p.own, task, with_anchor=first
        )

    async def start_turn(
        self, user: str | NewMessage, messages: Sequence[Mapping[str, Any]] = ()
    ) -> Message:
        with self.store.read() as r:
            first = r.trace(self.trace_id).head is None
        if isinstance(user, str):
            user = self.protocol_text(user, first)
        return await super().start_turn(user, messages)

    def periodic_sources(self) -> ContextSources:
        sources = super().periodic_sources()
        sources.hooks.register(SECTION, self._section)
        return sources

    def _section(self) -> str | None:
        p = self._state()
        if p is None:
            return None
        return current_section(p.anchor, p.brief, p.index, p.grants, self.delegation.limits, p.own)


@dataclass(frozen=True, slots=True)
class _Protocol:
    node: Node
    anchor: RootTaskAnchor
    brief: TaskBrief | None
    """The current brief (the root's own is the anchor, not shown twice)."""
    index: int
    grants: tuple[RefGrant, ...]
    own: tuple[RefSnapshot, ...]
