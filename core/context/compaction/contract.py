"""The summary contract (SPEC CMP-5, seed C): what every compaction summary must carry.

The runtime writes the state parts from its records: task goal, completed steps, key
references, constraints, pending items, failures and retries, plus the detailed GoalTree.
The model's text is only the ``Narrative`` section; the resume instruction closes the
summary. ``contract_problems`` names every missing section or expected fact, so a summary is
checked before it is committed, and a test can check any text against the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.context.compaction.facts import Facts
from core.context.compaction.summary_state import Records
from core.goals.tree import GoalTree
from core.goals.views import detailed_view

RESUME = "Continue from where you stopped; do not redo completed steps."

#: Contract field → section heading.
SECTIONS = {
    "task_goal": "## Task goal",
    "completed_steps": "## Completed steps",
    "key_refs": "## Key references",
    "constraints": "## Constraints",
    "pending": "## Pending",
    "failures": "## Failures and retries",
}


@dataclass(frozen=True)
class ContractFacts:
    """The exact strings a summary promises to contain, per contract field."""

    task_goal: tuple[str, ...]
    completed_steps: tuple[str, ...]
    key_refs: tuple[str, ...]
    constraints: tuple[str, ...]
    pending: tuple[str, ...]
    failures: tuple[str, ...]

    def fields(self) -> dict[str, tuple[str, ...]]:
        return {name: getattr(self, name) for name in SECTIONS}


def contract_facts(records: Records, region: Facts, max_refs: int = 40) -> ContractFacts:
    """The facts a summary of ``region`` must carry. Key refs: the ref ledger first (its
    most recent ``max_refs``), then the most recent refs read in the region."""
    ledger = list(dict.fromkeys(records.ledger))[-max_refs:] if max_refs else []
    room = max_refs - len(ledger)
    in_ledger = set(ledger)
    seen = [r for r in dict.fromkeys(region.refs) if r not in in_ledger]
    refs = ledger + (seen[-room:] if room > 0 else [])
    failures = [f.text for f in records.failures]
    failures += [f.text for f in region.failures if f.text not in failures]
    goal = records.task_goal()
    return ContractFacts(
        task_goal=(goal,) if goal else (),
        completed_steps=records.completed_steps(),
        key_refs=tuple(refs),
        constraints=tuple(dict.fromkeys([*region.constraints, *records.constraints])),
        pending=records.pending_items(),
        failures=tuple(failures),
    )


_TREE: list[tuple[GoalTree, str]] = []


def goal_tree_text(tree: GoalTree) -> str:
    """``detailed_view(tree)``, remembered for the last tree (a summary writes it twice,
    and every summary of a run's step reads the same records again)."""
    if _TREE and _TREE[0][0] is tree:
        return _TREE[0][1]
    text = detailed_view(tree)
    _TREE[:] = [(tree, text)]
    return text


def assemble(body: str, narrative: str, span: tuple[int, int] | None) -> str:
    """A summary from its body (``summary_body``), the narrative and the span it covers."""
    return "".join(assembled_parts(body, narrative, span))


def assembled_parts(
    body: str, narrative: str, span: tuple[int, int] | None
) -> tuple[str, str, str]:
    """``assemble``'s text in three parts, each join after a newline: the head line, the
    body (the same across a run's steps) and the narrative with the resume line, so its
    tokens can be counted from the parts (``TokenCounter.count_joined``)."""
    head = "[Context summary"
    head += f": messages {span[0]}-{span[1]} were compacted]" if span else "]"
    return head + "\n", body + "\n", narrative.strip() + "\n\n" + RESUME


def summary_body(records: Records, facts: ContractFacts) -> str:
    """The part of a summary written from the records, from ``## Task goal`` to the
    ``## Narrative`` heading: the same for every summary of the same records and facts
    (a run's consecutive steps), so it can be written and checked once for them."""
    lines = [SECTIONS["task_goal"], *(facts.task_goal or ("(not stated)",))]
    lines += _section("completed_steps", facts.completed_steps)
    lines += _section("key_refs", facts.key_refs)
    lines += _section("constraints", facts.constraints)
    lines += _section("pending", facts.pending)
    failures = [f.line() for f in records.failures]
    failures += [t for t in facts.failures if not any(t in f for f in failures)]
    lines += _section("failures", tuple(failures))
    if records.latest_user and records.latest_user != records.task:
        lines += ["## Latest user request", records.latest_user[:600]]
    lines += ["## Goal tree", goal_tree_text(records.goals), "## Narrative"]
    return "\n".join(lines)


def contract_problems(text: str, expected: ContractFacts | None = None) -> list[str]:
    """Every contract field missing from ``text``: sections, facts, the resume line."""
    problems = [f"{field}: section {h!r} missing" for field, h in SECTIONS.items() if h not in text]
    if "## Narrative" not in text:
        problems.append("narrative: section '## Narrative' missing")
    if RESUME not in text:
        problems.append("resume: instruction missing")
    if expected is not None:
        for name, values in expected.fields().items():
            problems += [f"{name}: {v!r} missing" for v in values if v not in text]
    return problems


def _section(field: str, values: tuple[str, ...]) -> list[str]:
    return [SECTIONS[field], *([f"- {v}" for v in values] or ["- none"])]
