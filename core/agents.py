"""Whose a message or a model call is: the main agent's, or a side branch's (h13d).

The main agent is the one whose line the trace's main path is: what it writes and the calls
it makes carry no ``branch_type``. A subagent, a compaction's summarizer, a knowledge check
or a reflection writes on a side branch of its own type. That is the rule, and the only
one: never the agent's name. ctxlens's runtime names its main agent ``main``, but an import
keeps the name the tool gave (any-agent's ``any_agent``, a pydantic-ai agent's own name)
and a Claude Code summarizer is named ``compact``; a test of ``agent_name == "main"`` found
no main calls in an any-agent trace (nothing to compare, replay or fork). Stored names stay
as they were recorded; every reader asks this module.

Importing it loads nothing (the trace list's first page reads it before the store).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_main_agent(record: Any) -> bool:
    """Whether ``record`` — a message, a model call (``LlmCall``, ``CallRef``), an exported
    row (a mapping), or a branch type itself (``str | None``) — is the main agent's: made
    on the agent's own line (``branch_type is None``), not on a side branch."""
    if record is None or isinstance(record, str):
        return record is None
    if isinstance(record, Mapping):
        return record.get("branch_type") is None
    return record.branch_type is None


RUNTIME_MAIN = "main"
"""The name ctxlens's runtime gives its main agent's runner (and writes on what it records).
A name, not the rule: a runner asks ``made_by`` which records are its agent's."""


def made_by(record: Any, agent_name: str) -> bool:
    """Whether ``record`` (a message or a call) is the work of the agent a runner named
    ``agent_name`` runs as: the runtime's main runner (``RUNTIME_MAIN``) owns every record
    of the main agent (``is_main_agent``), whatever name wrote it — a replay or a fork of
    an import copies the tool's messages under the tool's name (pydantic-ai's
    ``joke_agent``); a subagent's runner owns the records of its own name."""
    if agent_name == RUNTIME_MAIN:
        return is_main_agent(record)
    return bool(record.agent_name == agent_name)
