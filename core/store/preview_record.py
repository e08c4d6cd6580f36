"""``MessagePreview``: the fields of a message a list row shows (the record alone).

Kept apart from ``core/store/previews.py`` (its select list, SQLAlchemy) so the timeline's
row builder and the first page's ``sqlite3`` reader (``core/store/first_page.py``) use the
record without loading SQLAlchemy.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.records import ToolCall


@dataclass(frozen=True, slots=True)
class MessagePreview:
    sequence: int
    role: str
    kind: str
    goal_id: str | None
    token_count: int
    content: str
    """The first ``chars`` characters only."""
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str | None
    name: str | None
    branch_type: str | None
    agent_name: str
    is_error: bool | None
    """The tool result was an error (``metadata["is_error"]``)."""
