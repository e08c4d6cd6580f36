"""SWE-agent trajectories (``*.traj``) and mini-swe-agent message logs.

A SWE-agent ``.traj`` holds ``history`` (every message, demonstrations included),
``trajectory`` (one entry per step: action, observation, thought, and from 1.x the
``messages`` the history processors produced after that step) and ``info`` (exit status,
model stats: this instance's ``tokens_sent``, ``tokens_received``, ``instance_cost`` and
``api_calls``, kept as the trace's ``recorded_totals``). History becomes the trace; each
step's ``messages`` is what the next model call received, recorded as that call's
context, with elided observations ("Old environment output: (7 lines omitted)") as
content overrides. Whenever the set of elided
messages changes, a boundary of level ``elided`` records the new context: no message left,
the observations SWE-agent's history processor elided are shortened (the band says so:
``core/inspector/bands.py:band_text``).

mini-swe-agent writes a bare chat message list (or ``{"info", "messages"}``); it is read
as OpenAI messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import InvalidInputError
from core.importers.base import ImportContext, ImportResult, ImportUnit, TraceBuilder
from core.importers.content import as_dict, as_list, json_or_text, scrub, text_of
from core.importers.jsonstream import JsonDocument
from core.importers.openai_chat import ChatWriter
from core.importers.reading import CountingReader
from core.importers.usage import RECORDED_TOTALS, model_stats_totals
from core.records import ContextItem
from core.store.writer import Writer

FORMAT = "swe-agent"
HISTORY_META = ("agent", "message_type", "thought", "action", "is_demo")


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    path = unit.main
    name = path.name.removesuffix(".json").removesuffix(".traj")
    b = TraceBuilder(w, ctx, FORMAT, str(unit.path), name)
    chat = ChatWriter(b)
    history = _History()
    info: dict[str, Any] = {}
    steps = 0
    lists = 0  # the lists a trajectory is made of, found in the file
    with path.open("rb") as raw:
        doc = JsonDocument(CountingReader(raw, ctx), str(path))
        top = doc.begin()
        if top == "[":
            lists += 1
            _history(doc, chat, path, history, "messages")
        else:
            for key in doc.members():
                ctx.where = f"{path}: {key}"
                if key in ("history", "messages") and doc.enter_array():
                    lists += 1
                    _history(doc, chat, path, history, key)
                elif key == "trajectory" and doc.enter_array():
                    lists += 1
                    steps = sum(1 for _ in doc.items())
                else:
                    info[key] = doc.value()
        doc.end()
    if not lists:  # another tool's file forced with --format swe-agent
        raise InvalidInputError(
            f"{path}: not a SWE-agent trajectory: no 'history', 'messages' or 'trajectory' list"
        )
    if not history.seqs:
        ctx.warn(f"{path}: no history messages")
    meta: dict[str, Any] = {
        k: info[k] for k in ("info", "environment", "trajectory_format") if k in info
    }
    replay = as_dict(info.get("replay_config"))
    if replay:
        meta["replay_config"] = replay
    meta["steps"] = steps
    stats = as_dict(as_dict(info.get("info")).get("model_stats"))
    totals = model_stats_totals(stats)  # the run's usage, as recorded: not any call's
    if totals is not None:
        meta[RECORDED_TOTALS] = totals  # read by core/importers/usage.py:recorded_totals
    # this instance's cost: ``total_cost`` runs on over a batch (SWE-agent 0.x resets all
    # but it per instance; 1.x records only ``instance_cost``)
    usd = stats.get("instance_cost", stats.get("total_cost"))
    if isinstance(usd, (int, float)) and not isinstance(usd, bool) and stats.get("api_calls"):
        cost = {"usd": usd, "calls": stats["api_calls"], "source": "SWE-agent"}
        meta["recorded_cost"] = cost  # read by core/cost/compute.py:recorded_cost_text
    b.metadata = scrub(meta)
    b.w.update_trace_metadata(b.trace_id, b.metadata)
    if steps and history.seqs:
        _steps(b, ctx, path, history, _model(info), _processors(info))
    if not b.llm_calls and history.seqs:
        _reply_calls(b, ctx, path, history, _model(info), info)
    return [b.finish()]


def _reply_calls(
    b: TraceBuilder, ctx: ImportContext, path: Path, history: _History, model: str, info: Any
) -> None:
    """A trajectory without per-step contexts (SWE-agent before 1.0): one call per reply
    of the history, its context the history before it (reconstructed). ``model_stats``
    records only totals, so the calls carry no usage; a count that disagrees is said."""
    heads = [(history.seqs[j - 1], history.seqs[j])
             for j, role in enumerate(history.roles) if role == "assistant" and j]  # fmt: skip
    for head, reply in heads:
        b.reply_call(head, reply, usage=None, model=model)
    stats = as_dict(as_dict(info.get("info")).get("model_stats"))
    api_calls = stats.get("api_calls")
    if isinstance(api_calls, int) and api_calls != len(heads):
        ctx.warn(f"{path}: model_stats records {api_calls} calls, the history {len(heads)} replies")


@dataclass
class _History:
    """Sequence, role and text of every history message (to match step contexts)."""

    seqs: list[int] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)


def _history(doc: JsonDocument, chat: ChatWriter, path: Path, history: _History, key: str) -> None:
    for i, m in enumerate(doc.items()):
        where = f"{path}: {key}[{i}]"
        md = {k: m[k] for k in HISTORY_META if isinstance(m, dict) and k in m}
        agent = str(md.get("agent") or "main")
        extra: dict[str, Any] = {"metadata": md or None}
        if agent not in ("main", "primary"):
            extra["agent_name"] = agent
        nm_seq = chat.add(m, where, **extra)
        history.seqs.append(nm_seq)
        history.roles.append(str(m.get("role")) if isinstance(m, dict) else "")
        history.contents.append(text_of(m.get("content")) if isinstance(m, dict) else "")


def _model(info: dict[str, Any]) -> str:
    agent = as_dict(as_dict(info.get("replay_config")).get("agent"))
    name = as_dict(agent.get("model")).get("name")
    return str(name or "")


def _processors(info: dict[str, Any]) -> list[str]:
    """The history processors the run was configured with (``replay_config.agent.
    history_processors[].type``, e.g. ``last_n_observations``), as recorded."""
    agent = as_dict(as_dict(json_or_text(info.get("replay_config"))).get("agent"))
    found = [as_dict(p).get("type") for p in as_list(agent.get("history_processors"))]
    return [str(t) for t in found if t]


def _steps(
    b: TraceBuilder,
    ctx: ImportContext,
    path: Path,
    history: _History,
    model: str,
    processors: list[str],
) -> None:
    """Second pass over ``trajectory``: per-step contexts become calls and boundaries.

    ``trajectory[k].messages`` is the processed history after step k, i.e. exactly what
    the model received for step k+1; step 0 received the history up to its first reply.
    A step whose elided set changed is a boundary of level ``elided``: every message stays,
    the newly elided observations are shortened to SWE-agent's marker ("Old environment
    output: (N lines omitted)"), so the next call's context is what SWE-agent sent.
    """
    first_reply = next((j for j, r in enumerate(history.roles) if r == "assistant"), 0)
    started = False
    elided: frozenset[int] = frozenset()
    with path.open("rb") as raw:
        doc = JsonDocument(raw, str(path))  # bytes were counted by the first pass
        doc.begin()
        for key in doc.members():
            if key != "trajectory" or not doc.enter_array():
                doc.value()
                continue
            for k, step in enumerate(doc.items()):
                where = f"{path}: trajectory[{k}]"
                ctx.where = where
                ctx.check()
                messages = as_dict(step).get("messages")
                if not isinstance(messages, list) or not messages:
                    continue
                items, now = _items(messages, history, where)
                if not started and first_reply:
                    _call(
                        b,
                        history,
                        tuple(ContextItem(q) for q in history.seqs[:first_reply]),
                        model,
                        0,
                    )
                started = True
                if now != elided:
                    b.compaction(
                        items[-1].sequence,
                        items,
                        trigger="history_processor",
                        level="elided",
                        details={
                            "step": k,
                            "elided_messages": len(now),
                            "newly_elided": len(now - elided),
                            "restored": len(elided - now),
                            "by": "SWE-agent history processor",
                            "processors": processors,
                            "source": "swe-agent",
                        },
                    )
                    elided = now
                _call(b, history, items, model, k + 1)


def _items(
    messages: list[Any], history: _History, where: str
) -> tuple[tuple[ContextItem, ...], frozenset[int]]:
    if len(messages) > len(history.seqs):
        raise InvalidInputError(f"{where}: step has more messages than the history")
    out: list[ContextItem] = []
    elided: set[int] = set()
    for j, m in enumerate(messages):
        text = text_of(as_dict(m).get("content"))
        if text == history.contents[j]:
            out.append(ContextItem(history.seqs[j]))
        else:
            out.append(ContextItem(history.seqs[j], content=text))
            elided.add(j)
    return tuple(out), frozenset(elided)


def _call(
    b: TraceBuilder, history: _History, context: tuple[ContextItem, ...], model: str, step: int
) -> None:
    """The model call of ``step``: its context and, if the history has it, its reply."""
    n = len(context)
    if n >= len(history.seqs) or history.roles[n] != "assistant":
        return
    b.llm_call(
        context,
        model=model,
        head_sequence=context[-1].sequence,
        response_sequence=history.seqs[n],
        params={"step": step},
    )
