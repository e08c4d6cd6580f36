"""The context budget beyond tokens (SPEC REF-4, seed C "Context budget 不只管 token").

Four limits per turn (one model request): tokens in the context, tool calls, bytes of tool
output entering the context, and image blocks (TOK-3: images are counted as blocks, not
text tokens). ``check_grant`` decides a grant against them:

- **refuse** when the grant could never fit (it alone exceeds a limit): the reason says
  what to do instead (read a slice);
- **defer** when it does not fit *now* (the context or this turn is already too full): it
  is retried at the start of the next turn;
- **grant** otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from core.context.view import View, token_breakdown
from core.fields_json import FieldsJson
from core.refs.images import image_blocks_in

Outcome = Literal["grant", "defer", "refuse"]


@dataclass(frozen=True, slots=True)
class ContextBudget(FieldsJson):
    """Limits per turn; defaults from seed C's example budget."""

    max_tokens: int = 128_000
    max_tool_calls: int = 20
    max_output_bytes: int = 131_072
    max_image_blocks: int = 8


@dataclass(frozen=True, slots=True)
class GrantCost(FieldsJson):
    """What a grant adds to the context."""

    tokens: int = 0
    bytes: int = 0
    image_blocks: int = 0


@dataclass(frozen=True, slots=True)
class ContextLoad:
    """The context as the next request would send it."""

    tokens: int
    image_blocks: int

    @staticmethod
    def of_view(view: View) -> ContextLoad:
        return ContextLoad(token_breakdown(view)[0], image_blocks_in(view))


@dataclass
class TurnUsage:
    """Per-turn counters (reset by ``GrantLedger.start_turn``)."""

    tool_calls: int = 0
    output_bytes: int = 0


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    outcome: Outcome
    reason: str
    cost: GrantCost

    @property
    def granted(self) -> bool:
        return self.outcome == "grant"

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "reason": self.reason, "cost": self.cost.to_json()}


def check_grant(
    budget: ContextBudget,
    load: ContextLoad,
    usage: TurnUsage,
    cost: GrantCost,
    via_tool: bool = False,
) -> BudgetDecision:
    """Grant, defer or refuse ``cost`` given the context ``load`` and this turn's ``usage``."""
    refusal = _never_fits(budget, cost)
    if refusal:
        return BudgetDecision("refuse", refusal, cost)
    deferral = _not_now(budget, load, usage, cost, via_tool)
    if deferral:
        return BudgetDecision("defer", deferral, cost)
    return BudgetDecision("grant", "within budget", cost)


def _never_fits(b: ContextBudget, c: GrantCost) -> str:
    if c.tokens > b.max_tokens:
        return (
            f"{c.tokens:,} tokens exceed the whole context budget ({b.max_tokens:,}); "
            "read a slice with offset/length"
        )
    if c.bytes > b.max_output_bytes:
        return (
            f"{c.bytes:,} bytes exceed the per-turn output budget ({b.max_output_bytes:,}); "
            "read a slice with offset/length"
        )
    if c.image_blocks > b.max_image_blocks:
        return f"{c.image_blocks} image blocks exceed the limit of {b.max_image_blocks} per turn"
    return ""


def _not_now(
    b: ContextBudget, load: ContextLoad, u: TurnUsage, c: GrantCost, via_tool: bool
) -> str:
    if load.tokens + c.tokens > b.max_tokens:
        return (
            f"the context holds {load.tokens:,} of {b.max_tokens:,} tokens and this grant "
            f"needs {c.tokens:,}; retried next turn (after compaction or revocations)"
        )
    if via_tool and u.tool_calls > b.max_tool_calls:
        return f"this turn already made {u.tool_calls} tool calls (max {b.max_tool_calls})"
    if u.output_bytes + c.bytes > b.max_output_bytes:
        return (
            f"this turn already put {u.output_bytes:,} of {b.max_output_bytes:,} output "
            f"bytes into the context and this grant needs {c.bytes:,}"
        )
    if load.image_blocks + c.image_blocks > b.max_image_blocks:
        return (
            f"the context holds {load.image_blocks} of {b.max_image_blocks} image blocks; "
            "older images are replaced by their reference text first"
        )
    return ""
