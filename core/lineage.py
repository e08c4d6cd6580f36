"""How a trace made from another one is titled: a replay, a fork with an edit, and the
agents that a replayed or forked delegation root calls.

A replay is "Replay of SOURCE from call N", a fork "Fork of SOURCE at #N (edited ROLE
message)" (``core/replay/rerun.py``, ``core/replay/fork.py``). A delegation root's children
are titled by their path and objective (``root/scout: List the candidates``), so the
children of a fork of that root read exactly like the source's own (review 11: the trace
list showed each ``root/…`` title twice). ``child_title`` puts the root's lineage in front
("Fork at #1 · root/scout: …"): it stays visible in a narrow trace list and sorts beside
the fork's root. The words come from the root's ``metadata["replay_of"]``, which the replay
writes (``edited_sequence`` for a fork).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OBJECTIVE_CHARS = 60
"""Characters of a child's objective in its title."""


def replay_title(source_title: str, from_call: int, settings: tuple[str, ...] = ()) -> str:
    shown = f" ({', '.join(settings)})" if settings else ""
    return f"Replay of {source_title} from call {from_call}{shown}"


def fork_title(source_title: str, sequence: int, role: str) -> str:
    return f"Fork of {source_title} at #{sequence} (edited {role} message)"


def lineage_tag(metadata: Any) -> str | None:
    """``Fork at #N`` or ``Replay from call N`` for a trace a fork or a replay made (its
    ``metadata["replay_of"]``), ``None`` for any other."""
    made = metadata.get("replay_of") if isinstance(metadata, Mapping) else None
    if not isinstance(made, Mapping):
        return None
    edited = made.get("edited_sequence")
    if isinstance(edited, int):
        return f"Fork at #{edited}"
    start = made.get("from_call")
    return f"Replay from call {start}" if isinstance(start, int) else "Replay"


def child_title(path: str, objective: str, root_metadata: Any) -> str:
    """A delegated agent's trace title: ``root/scout: objective``, after its root's
    ``lineage_tag`` when the root is a fork or a replay."""
    own = f"{path}: {objective[:OBJECTIVE_CHARS]}"
    tag = lineage_tag(root_metadata)
    return f"{tag} · {own}" if tag else own
