"""Grants: a ref's content put into the context, charged to the budget (SPEC REF-3/4).

A grant is requested by the model (``read_ref``), the caller, or a policy. The ledger
prices it (``GrantCost``), checks it against the per-turn budget and either

- **grants** it: the content enters the context as a message of kind ``grant`` and a
  ``grants`` row records who, why, the cost and the message holding the content;
- **defers** it: a ``grant_deferred`` run event records why; the request is retried at the
  start of the next turn (``start_turn`` hands it back);
- **refuses** it: a ``grant_refused`` run event records why.

A grant ends when it is revoked (``revoke``) or its message leaves the context
(``revoke_missing`` after a compaction, ``replace_images`` for old images): the row gets
the sequence and the reason, so the UI shows when and why.

Two phases, because the run loop owns appending: ``plan`` decides and builds the
message(s); after appending them, ``commit`` writes the grant row (or ``record_denial``
the event). ``grant_now`` does both for caller and policy grants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from core.context.view import View, token_breakdown
from core.errors import NotFoundError
from core.fields_json import fields_json
from core.records import CompactionEvent, ContextItem, ContextRef, Grant, MessageKind, NewMessage
from core.refs.budget import (
    BudgetDecision,
    ContextBudget,
    ContextLoad,
    GrantCost,
    TurnUsage,
    check_grant,
)
from core.refs.images import replace_old_images
from core.store.reader import Reader
from core.store.writer import HEAD, Writer
from core.tokens import count_text

GrantedBy = Literal["model", "caller", "policy"]


@dataclass(frozen=True, slots=True)
class GrantRequest:
    """Who wants which ref (or which slice of a text ref), and why."""

    ref_id: str
    by: GrantedBy
    reason: str = ""
    offset: int = 0
    length: int | None = None
    tool_call_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return fields_json(self)


@dataclass(frozen=True, slots=True)
class GrantPlan:
    """A decided request and the message(s) that carry it into the context."""

    request: GrantRequest
    decision: BudgetDecision
    ref: ContextRef | None
    text: str = ""
    """The granted text (with a one-line header), or the image's description."""
    image_url: str | None = None

    @property
    def granted(self) -> bool:
        return self.decision.granted

    def tool_result(self, call_id: str, agent_name: str = "main") -> NewMessage:
        """The ``read_ref`` tool result. A granted text ref *is* the grant message."""
        meta = {"ref": self.request.ref_id, "grant": self.decision.to_json()}
        if self.granted and self.image_url is None:
            return _tool(call_id, self.text, "grant", agent_name, meta)
        if self.granted:
            note = f"Image {self.request.ref_id} granted; it is shown in the next message."
            return _tool(call_id, note, "message", agent_name, meta)
        verb = "refused" if self.decision.outcome == "refuse" else "deferred"
        target = f" {self.request.ref_id}" if self.request.ref_id else ""
        note = f"read_ref{target} {verb}: {self.decision.reason}"
        return _tool(call_id, note, "message", agent_name, meta)

    def content_message(self, agent_name: str = "main") -> NewMessage | None:
        """The user message of kind ``grant`` carrying an image (or a caller/policy text).

        The ref id goes in ``metadata`` only: parts are sent to the provider as they are.
        """
        if not self.granted or self.ref is None:
            return None
        meta = {"ref": self.ref.id, "grant": self.decision.to_json(), "by": self.request.by}
        if self.image_url is None:
            return NewMessage("user", self.text, kind="grant", agent_name=agent_name, metadata=meta)
        header = f"[granted image {self.ref.id}: {self.ref.description}]"
        parts = (
            {"type": "text", "text": header},
            {"type": "image_url", "image_url": {"url": self.image_url}},
        )
        return NewMessage(
            "user", header, parts=parts, kind="grant", agent_name=agent_name, metadata=meta
        )


def _tool(call_id: str, text: str, kind: MessageKind, agent: str, meta: Any) -> NewMessage:
    return NewMessage(
        "tool",
        text,
        tool_call_id=call_id,
        name="read_ref",
        kind=kind,
        agent_name=agent,
        metadata=meta,
    )


def grant_text(ref: ContextRef, content: str, offset: int, total: int) -> str:
    """The granted text with a header naming the ref and the slice."""
    end = offset + len(content)
    span = "" if offset == 0 and end >= total else f", chars {offset}–{end} of {total}"
    return f"[ref {ref.id}: {ref.description}{span}]\n{content}"


@dataclass
class GrantLedger:
    """Per-agent grant bookkeeping for one run; ``to_state``/``from_state`` persist it."""

    budget: ContextBudget = field(default_factory=ContextBudget)
    usage: TurnUsage = field(default_factory=TurnUsage)
    deferred: list[GrantRequest] = field(default_factory=list)

    # -- per-turn counters ---------------------------------------------------------------
    def start_turn(self) -> list[GrantRequest]:
        """Reset per-turn counters; returns (and forgets) the deferred requests to retry."""
        self.usage = TurnUsage()
        retry, self.deferred = self.deferred, []
        return retry

    def note_tool_call(self) -> None:
        """Call before executing any tool (the tool-call limit counts every call)."""
        self.usage.tool_calls += 1

    def note_output(self, nbytes: int) -> None:
        """Call with the bytes of each tool result that entered the context (after slimming)."""
        self.usage.output_bytes += nbytes

    # -- deciding --------------------------------------------------------------------------
    def plan(
        self, reader: Reader, trace_id: str, request: GrantRequest, load: ContextLoad
    ) -> GrantPlan:
        ref = _find_ref(reader, trace_id, request.ref_id)
        if ref is None:
            reason = f"unknown ref {request.ref_id!r} in this trace"
            return GrantPlan(request, BudgetDecision("refuse", reason, GrantCost()), None)
        if ref.content is None:
            reason = f"ref {ref.id} has no stored content to grant"
            return GrantPlan(request, BudgetDecision("refuse", reason, GrantCost()), ref)
        if ref.image_blocks:
            cost = GrantCost(image_blocks=ref.image_blocks)
            decision = check_grant(self.budget, load, self.usage, cost, _via_tool(request))
            return GrantPlan(request, decision, ref, ref.description, ref.content)
        total = len(ref.content)
        offset = max(0, min(request.offset, total))
        end = total if request.length is None else min(total, offset + max(0, request.length))
        text = grant_text(ref, ref.content[offset:end], offset, total)
        cost = GrantCost(tokens=count_text(text), bytes=len(text.encode("utf-8")))
        decision = check_grant(self.budget, load, self.usage, cost, _via_tool(request))
        return GrantPlan(request, decision, ref, text)

    # -- recording ---------------------------------------------------------------------------
    def commit(self, w: Writer, trace_id: str, plan: GrantPlan, message_sequence: int) -> Grant:
        """Record a granted plan whose content message is stored at ``message_sequence``."""
        assert plan.granted and plan.ref is not None
        cost = plan.decision.cost
        self.usage.output_bytes += cost.bytes
        record = Grant(
            id=None,
            trace_id=trace_id,
            ref_id=plan.ref.id,
            granted_by=plan.request.by,
            reason=plan.request.reason,
            cost={**cost.to_json(), "offset": plan.request.offset, "length": plan.request.length},
            granted_at_sequence=w.head(trace_id),
            message_sequence=message_sequence,
        )
        return w.add_grant(record)

    def record_denial(self, w: Writer, trace_id: str, plan: GrantPlan) -> None:
        """Record a refused or deferred plan (run event); deferred requests are queued."""
        assert not plan.granted
        outcome = plan.decision.outcome
        if outcome == "defer":
            self.deferred.append(plan.request)
        payload = {"request": plan.request.to_json(), **plan.decision.to_json()}
        event = "grant_deferred" if outcome == "defer" else "grant_refused"
        w.add_run_event(trace_id, event, w.head(trace_id), payload)

    def grant_now(
        self,
        w: Writer,
        trace_id: str,
        request: GrantRequest,
        load: ContextLoad,
        *,
        parent: Any = HEAD,
        agent_name: str = "main",
        retried: bool = False,
    ) -> tuple[GrantPlan, Grant | None]:
        """Plan, append the grant message and record it (caller and policy grants). A
        ``retried`` request is deferred once only: deferred again, it is refused with the
        reason, so it is not re-logged every round."""
        w.flush()
        plan = self.plan(w.read, trace_id, request, load)
        if retried and plan.decision.outcome == "defer":
            why = f"still over budget after one deferral: {plan.decision.reason}"
            plan = replace(plan, decision=BudgetDecision("refuse", why, plan.decision.cost))
        if not plan.granted:
            self.record_denial(w, trace_id, plan)
            return plan, None
        message = plan.content_message(agent_name)
        assert message is not None
        (stored,) = w.append(trace_id, [message], parent=parent)
        return plan, self.commit(w, trace_id, plan, stored.sequence)

    # -- ending grants ---------------------------------------------------------------------
    def revoke(self, w: Writer, grant: Grant, reason: str) -> None:
        assert grant.id is not None
        w.revoke_grant(grant.id, w.head(grant.trace_id), reason)

    def revoke_missing(
        self,
        w: Writer,
        trace_id: str,
        items: Sequence[ContextItem],
        reason: str = "compacted away",
    ) -> list[Grant]:
        """Revoke active grants whose content message is no longer visible in ``items``."""
        visible = {i.sequence for i in items if i.sequence is not None and i.content is None}
        gone = [g for g in active_grants(w.read, trace_id) if g.message_sequence not in visible]
        for g in gone:
            self.revoke(w, g, reason)
        return gone

    def replace_images(
        self, w: Writer, trace_id: str, view: View, keep: int | None = None
    ) -> CompactionEvent | None:
        """Over the image limit: old images become reference text (a boundary records the
        new context) and their grants are revoked. ``None`` when nothing changed."""
        result = replace_old_images(view, self.budget.max_image_blocks if keep is None else keep)
        if not result.changed:
            return None
        head = w.head(trace_id)
        after = View(result.items, view.messages)
        event = w.record_compaction(
            CompactionEvent.between(
                trace_id,
                "images",
                head,
                view.items,
                result.items,
                (token_breakdown(view)[0], token_breakdown(after)[0]),
                removed=(),
                trigger="policy",
                details={"replaced": list(result.replaced), "keep": keep},
            )
        )
        replaced = set(result.replaced)
        for g in active_grants(w.read, trace_id):
            if g.message_sequence in replaced:
                self.revoke(w, g, "old image replaced by its reference text")
        return event

    # -- persistence ---------------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        return {
            "budget": self.budget.to_json(),
            "usage": asdict(self.usage),
            "deferred": [r.to_json() for r in self.deferred],
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> GrantLedger:
        return cls(
            ContextBudget(**state.get("budget", {})),
            TurnUsage(**state.get("usage", {})),
            [GrantRequest(**r) for r in state.get("deferred", [])],
        )


def active_grants(reader: Reader, trace_id: str) -> list[Grant]:
    return [g for g in reader.grants(trace_id) if g.revoked_reason is None]


def _find_ref(reader: Reader, trace_id: str, ref_id: str) -> ContextRef | None:
    try:
        return reader.ref(ref_id, trace_id)
    except NotFoundError:
        return None


def _via_tool(request: GrantRequest) -> bool:
    return request.tool_call_id is not None
