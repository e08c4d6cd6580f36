"""What tests ask of a ``Playback`` that the product does not: where the main agent's calls
are, on any branch (the scrubber's stops are those on the current path:
``core/inspector/call_numbers.py:CallNumbering.current_main``)."""

from __future__ import annotations

from core.agents import is_main_agent
from core.replay.playback import Playback


def main_positions(pb: Playback) -> list[int]:
    """Positions of the main agent's calls (``core/agents.py:is_main_agent``), in order."""
    return [c.position for c in pb.calls if is_main_agent(c)]
