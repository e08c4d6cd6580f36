"""What the context engine asks a summarizer (SPEC CMP-4): the request of one stage of the
compression side branch, and the ``Summarizer`` protocol that answers it.

Declared in the context engine's package, which builds the requests
(``core/context/compaction/``), and imported by the adapters of ``core/llm/summarizer.py``
that answer them (``core.llm`` sits above ``core.context`` in the layers), so each side
uses the one type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

STAGE_INSTRUCTIONS = {
    "reflection": (
        "Extract the durable knowledge from this part of the run: facts learned about the "
        "environment, approaches that worked or failed, and why. Plain bullet points."
    ),
    "knowledge_eval": (
        "Evaluate the knowledge notes below against the conversation: keep what is "
        "supported, drop what is not. Plain bullet points."
    ),
    "compression": (
        "Write a short narrative of this part of the run: what was done, what was found, "
        "and where the work stands. The runtime adds the task goal, completed steps, "
        "references, constraints, pending items and failures itself; do not list them."
    ),
}


@dataclass(frozen=True)
class SummaryRequest:
    stage: str
    """``reflection`` | ``knowledge_eval`` | ``compression``."""
    messages: Sequence[Mapping[str, Any]]
    """The part of the context being compacted, in OpenAI chat shape (immutable, read as
    a tuple; the summary hands over its rendered list without copying it)."""
    goal_tree: str
    """The detailed GoalTree view (with summaries of completed goals)."""
    max_tokens: int
    """The narrative's budget; a longer answer is rejected."""
    notes: tuple[str, ...] = ()
    """Answers of the earlier stages of the queue."""

    @property
    def instructions(self) -> str:
        return STAGE_INSTRUCTIONS.get(self.stage, STAGE_INSTRUCTIONS["compression"])

    def ask(self) -> str:
        """The closing user message of the side branch."""
        parts = [
            self.instructions,
            f"Stay under {self.max_tokens} tokens.",
            "Goals:",
            self.goal_tree,
        ]
        if self.notes:
            parts += ["Notes from earlier stages:", *self.notes]
        return "\n".join(parts)

    def prompt_messages(self) -> list[dict[str, Any]]:
        """What an LLM summarizer sends: a system line, the messages, then the ask."""
        head = {"role": "system", "content": "You summarize an agent's work for its own later use."}
        return [head, *(dict(m) for m in self.messages), {"role": "user", "content": self.ask()}]


@runtime_checkable
class Summarizer(Protocol):
    async def summarize(self, request: SummaryRequest) -> str: ...
