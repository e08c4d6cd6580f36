"""The initial context of a turn (SPEC INJ-4, seed B 1.1).

At the start of each turn: load the agent's history (only messages of that agent: the
main agent never sees a subagent's messages), put the system prompt first if the history
has none, append the user message, and restore the persisted task list as a
"current task state" block. Everything is appended to the log; nothing is rewritten.

A system prompt is built at most once per trace (INJ-1): when the history already holds
one, the builder is not even called. A history without one (an imported trace resumed
here) gets the prompt as a new root message plus a boundary (``CompactionEvent`` of level
``system_prompt``) whose context is ``[system, *history]`` — the only way to put something
*before* existing messages in an append-only log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.agents import RUNTIME_MAIN, made_by
from core.context.system_prompt import SystemPrompt
from core.context.view import current_items, resolve, token_breakdown
from core.records import CompactionEvent, ContextItem, Message, NewMessage
from core.store.reader import Reader
from core.store.writer import Writer

ALL_AGENTS = "*"
TASK_STATE_TITLE = "[Current task state]"

_MARKS = {"completed": "x", "in_progress": "~", "cancelled": "-", "abandoned": "-"}


@dataclass(frozen=True, slots=True)
class InitialContext:
    """What ``build_initial_context`` found and appended."""

    system: Message | None
    """The stored system prompt (``None`` when the history's prompt is a synthetic item)."""
    system_inserted: bool
    history: tuple[ContextItem, ...]
    """The agent's history as it was before this turn."""
    user: Message
    task_state: Message | None
    boundary: CompactionEvent | None = None
    """Set when the prompt had to be put in front of an existing history."""


def load_history(
    reader: Reader, trace_id: str, agent_name: str = "main", head: int | None = None
) -> tuple[ContextItem, ...]:
    """The current context up to ``head``, only messages of ``agent_name`` (``*``: all)."""
    if head is None and reader.trace(trace_id).head is None:
        return ()
    items, boundary = current_items(reader, trace_id, head)
    if agent_name == ALL_AGENTS:
        return items
    msgs = resolve(reader, trace_id, items).messages
    # The main runner holds every message of the main agent's line, whatever name wrote it
    # (``core/agents.py:made_by``): a new turn after a replay's copied prefix of an import
    # (pydantic-ai's ``joke_agent``) lost them all when only "main" was its own.
    # Synthetic items (an identity block, a restore) belong to the agent whose boundary
    # made them: a subagent forked from a compacted main path must not inherit them.
    own = agent_name == RUNTIME_MAIN or (
        boundary is not None
        and boundary.at_sequence is not None
        and reader.message(trace_id, boundary.at_sequence).agent_name == agent_name
    )
    return tuple(
        i
        for i in items
        if (i.sequence is None and own)
        or (i.sequence is not None and made_by(msgs[i.sequence], agent_name))
    )


def find_system(reader: Reader, trace_id: str, items: Sequence[ContextItem]) -> Message | None:
    """The stored system message among ``items``, if any."""
    msgs = resolve(reader, trace_id, items).messages
    for item in items:
        msg = msgs.get(item.sequence) if item.sequence is not None else None
        if msg is not None and (msg.role == "system" or msg.kind == "system_prompt"):
            return msg
    return None


def _synthetic_system(item: ContextItem) -> bool:
    return item.sequence is None and (item.role == "system" or item.kind == "system_prompt")


def build_initial_context(
    w: Writer,
    trace_id: str,
    user: str | NewMessage,
    system_prompt: SystemPrompt | Callable[[], SystemPrompt],
    *,
    agent_name: str = "main",
    parent: int | None = None,
    branch_type: str | None = None,
    branch_id: str | None = None,
    restore_tasks: bool = True,
) -> InitialContext:
    """Start a turn. ``parent`` defaults to the head; branch fields place a subagent's turn."""
    w.flush()  # path queries read the line index, which the writer keeps in memory
    head = parent if parent is not None else w.head(trace_id)
    tasks = latest_tasks(w.read, trace_id, head) if restore_tasks and head is not None else []
    history = load_history(w.read, trace_id, agent_name, head) if head is not None else ()
    system = find_system(w.read, trace_id, history)
    inserted, boundary = False, None
    if system is None and not any(_synthetic_system(i) for i in history):
        prompt = system_prompt() if callable(system_prompt) else system_prompt
        system, boundary, head = _insert_system(
            w, trace_id, prompt, history, head, agent_name, branch_type, branch_id
        )
        inserted = True
    nm = user if isinstance(user, NewMessage) else NewMessage("user", user)
    nm = replace(nm, agent_name=agent_name, branch_type=branch_type, branch_id=branch_id)
    (user_msg,) = w.append(trace_id, [nm], parent=head)
    state = _restore_tasks(w, trace_id, tasks, user_msg, history, agent_name) if tasks else None
    return InitialContext(system, inserted, history, user_msg, state, boundary)


def _insert_system(
    w: Writer,
    trace_id: str,
    prompt: SystemPrompt,
    history: tuple[ContextItem, ...],
    head: int | None,
    agent_name: str,
    branch_type: str | None,
    branch_id: str | None,
) -> tuple[Message, CompactionEvent | None, int]:
    nm = replace(prompt.to_message(agent_name), branch_type=branch_type, branch_id=branch_id)
    if not history or branch_type is not None:
        (msg,) = w.append(trace_id, [nm], parent=head)
        return msg, None, msg.sequence
    assert head is not None
    (msg,) = w.append(trace_id, [nm], parent=None, move_head=False)
    before = token_breakdown(resolve(w.read, trace_id, history))[0]
    event = w.record_compaction(
        CompactionEvent.between(
            trace_id,
            "system_prompt",
            head,
            history,
            (ContextItem(msg.sequence), *history),
            (before, before + msg.token_count),
            removed=(),
            trigger="initial",
            details={"reason": "history had no system prompt", "source": prompt.source},
        )
    )
    return msg, event, head


def latest_tasks(reader: Reader, trace_id: str, head: int) -> list[dict[str, Any]]:
    """The newest task-list snapshot on the path to ``head`` (rewind-aware)."""
    snaps = reader.task_snapshots(trace_id)
    if not snaps:
        return []
    on_path = set(reader.main_path_sequences(trace_id, head))
    found = [s for s in snaps if s in on_path]
    return snaps[max(found)] if found else []


def task_state_text(tasks: Sequence[Mapping[str, Any]]) -> str:
    """The "current task state" block the model sees."""
    lines = [TASK_STATE_TITLE]
    for t in tasks:
        status = str(t.get("status") or "pending")
        extra = [status]
        if t.get("blocked_by"):
            extra.append("blocked by " + ", ".join(str(b) for b in t["blocked_by"]))
        if t.get("owner"):
            extra.append(f"owner {t['owner']}")
        mark = _MARKS.get(status, " ")
        lines.append(f"- [{mark}] {t.get('id')}. {t.get('content', '')} ({'; '.join(extra)})")
    return "\n".join(lines)


def _restore_tasks(
    w: Writer,
    trace_id: str,
    tasks: Sequence[Mapping[str, Any]],
    user_msg: Message,
    history: tuple[ContextItem, ...],
    agent_name: str,
) -> Message | None:
    text = task_state_text(tasks)
    visible = resolve(w.read, trace_id, [i for i in history if i.content is None]).messages
    if any(m.kind == "task_state" and m.content == text for m in visible.values()):
        return None  # the same block is still in view: repeating it only costs tokens
    nm = NewMessage(
        "user",
        text,
        kind="task_state",
        agent_name=agent_name,
        branch_type=user_msg.branch_type,
        branch_id=user_msg.branch_id,
    )
    (msg,) = w.append(trace_id, [nm], parent=user_msg.sequence)
    return msg
