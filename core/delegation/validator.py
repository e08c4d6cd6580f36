"""The validator packet (DEL-4), assembled by the runtime, never by the agent under review.

Fixed parts first (anchor, brief, report, validation plan, resolved artifacts, the root's
candidate answer), then main-path messages and real tool results, newest first, while the
packet stays within ``validator_chars``. When the fixed parts alone exceed it the verdict is
``unknown``: criteria are never cut and artifacts never truncated to make it fit. Side-branch
messages never enter, persisted reasoning is removed, and refs are not expanded (what the
agent really read with ``read_context_ref`` is already a tool result in its history).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.delegation.config import DEFAULT_LIMITS, DelegationLimits
from core.delegation.snapshots import RefGrant, active
from core.records import Message, MessageKind

Verdict = Literal["pass", "fail", "unknown"]
VALIDATOR_MATCH = "You are the validator of a delegated task"
VALIDATOR_PROMPT = (
    f"{VALIDATOR_MATCH}. Judge only from this packet whether the report meets every "
    "completion criterion under every constraint. Answer with a line 'Verdict: pass', "
    "'Verdict: fail' or 'Verdict: unknown', then your reasons."
)
_VERDICT_RE = re.compile(r"verdict:\s*(pass|fail|unknown)\b", re.I)
_SKIP_KINDS: frozenset[MessageKind] = frozenset({"injected_context", "system_prompt", "task_state"})
_REASONING_PARTS = frozenset({"reasoning", "thinking", "redacted_thinking"})


@dataclass(frozen=True, slots=True)
class PacketPart:
    label: str
    text: str
    sequence: int | None = None

    @property
    def chars(self) -> int:
        return len(self.text)


@dataclass(frozen=True, slots=True)
class LeftOut:
    """Something that did not enter the packet, and why."""

    label: str
    chars: int
    reason: str
    sequence: int | None = None


@dataclass(frozen=True, slots=True)
class FixedParts:
    anchor: str
    brief: str
    report: str
    validation_plan: str
    artifacts: tuple[tuple[str, str], ...] = ()
    """``(label, whole content)`` per artifact the report names (``artifacts.py``)."""
    root_candidate: str = ""
    root_candidate_sequence: int | None = None
    """The root message the candidate answer is (``candidate.py``)."""

    def parts(self) -> tuple[PacketPart, ...]:
        out = [
            PacketPart("anchor", self.anchor),
            PacketPart("brief", self.brief),
            PacketPart("report", self.report),
            PacketPart("validation plan", self.validation_plan),
            *(PacketPart(f"artifact {name}", text) for name, text in self.artifacts),
        ]
        if self.root_candidate:
            out.append(
                PacketPart(
                    "root candidate answer", self.root_candidate, self.root_candidate_sequence
                )
            )
        return tuple(out)


@dataclass(frozen=True, slots=True)
class ValidatorPacket:
    fixed: tuple[PacketPart, ...]
    history: tuple[PacketPart, ...]
    """Chronological (chosen newest first)."""
    left_out: tuple[LeftOut, ...]
    limit: int

    @property
    def fixed_chars(self) -> int:
        return sum(p.chars for p in self.fixed)

    @property
    def chars(self) -> int:
        return self.fixed_chars + sum(p.chars for p in self.history)

    @property
    def over_limit(self) -> bool:
        """The fixed parts alone exceed the limit: the verdict is ``unknown``."""
        return self.fixed_chars > self.limit

    def text(self) -> str:
        return "\n\n".join(f"## {p.label}\n{p.text}" for p in (*self.fixed, *self.history))

    def messages(self) -> list[dict[str, Any]]:
        """The validator call's messages."""
        return [
            {"role": "system", "content": VALIDATOR_PROMPT},
            {"role": "user", "content": self.text()},
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "chars": self.chars,
            "limit": self.limit,
            "fixed_chars": self.fixed_chars,
            "parts": [
                {"label": p.label, "chars": p.chars, "sequence": p.sequence, "fixed": fixed}
                for fixed, group in ((True, self.fixed), (False, self.history))
                for p in group
            ],
            "left_out": [
                {"label": x.label, "chars": x.chars, "reason": x.reason, "sequence": x.sequence}
                for x in self.left_out
            ],
        }


def history_parts(
    messages: Iterable[Message],
) -> tuple[tuple[PacketPart, ...], tuple[LeftOut, ...]]:
    """Main-path messages and real tool results as packet parts (chronological), and what
    was excluded by rule: side branches, synthetic injections, empty reasoning-only turns."""
    parts: list[PacketPart] = []
    out: list[LeftOut] = []
    for m in messages:
        text = _visible_text(m)
        label = f"{m.role} #{m.sequence}" + (f" ({m.name})" if m.name else "")
        if m.branch_type is not None:
            out.append(LeftOut(label, len(m.content), f"{m.branch_type} side branch", m.sequence))
        elif m.kind in _SKIP_KINDS or m.role == "system":
            out.append(LeftOut(label, len(m.content), f"synthetic ({m.kind})", m.sequence))
        elif text:
            parts.append(PacketPart(label, text, m.sequence))
    return tuple(parts), tuple(out)


def unread_refs(grants: Iterable[RefGrant]) -> tuple[LeftOut, ...]:
    """Held refs the agent never read: listed as left out, never expanded into the packet
    (what it did read is a ``read_context_ref`` result in its history)."""
    return tuple(
        LeftOut(f"ref {g.ref_id}@{g.version[:12]}", g.chars, "not read: refs are not expanded")
        for g in active(grants)
        if not g.read
    )


def _visible_text(m: Message) -> str:
    """The message without persisted reasoning; tool calls as ``name(arguments)``."""
    if m.parts:
        text = "".join(
            str(p.get("text", ""))
            for p in m.parts
            if isinstance(p, dict) and p.get("type") not in _REASONING_PARTS
        )
    else:
        text = m.content
    calls = "\n".join(f"call {c.name}({c.arguments})" for c in m.tool_calls)
    return "\n".join(x for x in (text.strip(), calls) if x)


def assemble_packet(
    fixed: FixedParts,
    history: Sequence[PacketPart],
    excluded: Sequence[LeftOut] = (),
    limits: DelegationLimits = DEFAULT_LIMITS,
) -> ValidatorPacket:
    """Fixed parts, then ``history`` newest first while within the limit; everything older
    than the first part that does not fit is left out (the history stays contiguous)."""
    fixed_parts = fixed.parts()
    used = sum(p.chars for p in fixed_parts)
    chosen: list[PacketPart] = []
    left = list(excluded)
    full = used > limits.validator_chars
    for part in reversed(history):
        if not full and used + part.chars <= limits.validator_chars:
            chosen.append(part)
            used += part.chars
            continue
        full = True
        left.append(LeftOut(part.label, part.chars, "over the character budget", part.sequence))
    return ValidatorPacket(
        fixed_parts, tuple(reversed(chosen)), tuple(left), limits.validator_chars
    )


def parse_verdict(text: str) -> Verdict:
    """The verdict line of a validator reply; anything else is ``unknown``."""
    found = _VERDICT_RE.search(text or "")
    return found.group(1).lower() if found else "unknown"  # type: ignore[return-value]
