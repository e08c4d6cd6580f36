"""The few fields of a message that a list row shows, read without the rest.

A timeline page needs a message's place, role, kind, goal, token count, tool calls and the
start of its text; reading whole rows also decodes the parts, usage and metadata JSON and
carries content of any length, four times the work per page (measured on a 1M-message
store). That work runs on a worker thread but holds the GIL the UI thread needs to paint,
so it shows up in the scroll frames. ``MessagePreview`` (``core/store/preview_record.py``)
has the attribute names of ``core.records.Message`` for the fields it has, so
``core/inspector/timeline.py:row_of`` takes either.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, bindparam, func

from core.store import schema as t
from core.store.message_fields import CODECS
from core.store.preview_record import MessagePreview

__all__ = ["MessagePreview", "preview_columns", "preview_of_row"]

_m = t.messages.c


def preview_columns() -> tuple[Any, ...]:
    """The select list of ``MessagePreview`` (the content cut to the ``chars`` parameter's
    length in the database)."""
    content = func.substr(_m.content, 1, bindparam("chars", type_=Integer)).label("content")
    return (_m.sequence, _m.role, _m.kind, _m.goal_id, _m.token_count, content,
            _m.tool_calls, _m.tool_call_id, _m.name, _m.branch_type, _m.agent_name,
            _m.metadata["is_error"].as_boolean())  # fmt: skip


_decode_calls = CODECS["tool_calls"][1]


def preview_of_row(row: Any) -> MessagePreview:
    """A ``MessagePreview`` of a row selected with ``preview_columns``."""
    values = list(row)
    values[6] = _decode_calls(values[6])
    return MessagePreview(*values)
