"""What a trace recorded, indexed for a replay: replies per agent, summaries, tool results.

Replies are grouped by *family*: the system prompt of the call's context. The model
server only sees what a provider sees (messages, tools), and the system prompt is what
tells the main agent from a subagent there; several subagents with one prompt share a
family and are answered in recorded order. A request whose system prompt matches no
family belongs to the main agent (the prompt changed with the settings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from core.agents import is_main_agent
from core.records import ContextItem, Message, ToolCall
from core.replay.calls import CallRef, live_calls, trace_calls
from core.replay.refmap import refs_in
from core.store.reader import Reader

SUMMARY_STAGES = ("compression", "reflection", "knowledge_eval")
_WORD = re.compile(r"[\w.:-]+")


@dataclass(frozen=True, slots=True)
class RecordedReply:
    """The k-th answered call of one family: the assistant turn that came back."""

    position: int
    call_index: int | None
    agent_name: str
    text: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    request_sha256: str | None
    context: tuple[ContextItem, ...] | None
    head: int | None


@dataclass
class Recording:
    trace_id: str
    families: dict[str, list[RecordedReply]] = field(default_factory=dict)
    main_family: str = ""
    summaries: dict[str, str] = field(default_factory=dict)
    """Summary ask (the side branch's question) → the recorded answer."""
    results: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """tool_call_id → (recorded result text, was an error)."""
    results_by_call: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """``name:canonical-arguments`` → the first recorded result of such a call."""
    tool_names: tuple[str, ...] = ()
    call_ids: frozenset[str] = frozenset()
    mentions: dict[int, frozenset[str]] = field(default_factory=dict)
    """Message sequence → ref ids and tool-call ids its text shows."""
    user_turns: tuple[Message, ...] = ()
    """User messages of the main path, in order (the first is the task)."""
    system_text: str | None = None

    # -- loading ------------------------------------------------------------------------
    @staticmethod
    def load(reader: Reader, trace_id: str, calls: list[CallRef] | None = None) -> Recording:
        calls = live_calls(
            reader, trace_id, calls if calls is not None else trace_calls(reader, trace_id)
        )
        rec = Recording(trace_id)
        every = list(reader.all_messages(trace_id))
        by_seq = {m.sequence: m for m in every}
        rec._index_messages(every)
        rec._index_calls(calls, by_seq)
        if rec.system_text is None:  # the source's own prompt, for a re-run of an import
            rec._path_system(by_seq)  # (was read only for calls without a context)
        path = reader.iter_main_path(trace_id)
        rec.user_turns = tuple(
            m for m in path if m.role == "user" and m.kind == "message" and is_main_agent(m)
        )
        return rec

    def _index_messages(self, every: Iterable[Message]) -> None:
        names: dict[str, None] = {}
        ids: set[str] = set()
        calls: dict[str, ToolCall] = {}
        asks: dict[str, str] = {}
        for m in every:
            for c in m.tool_calls:
                names.setdefault(c.name, None)
                ids.add(c.id)
                calls[c.id] = c
            if m.role == "tool" and m.tool_call_id:
                error = m.content.startswith(("Error", "Blocked"))
                self.results.setdefault(m.tool_call_id, (m.content, error))
                call = calls.get(m.tool_call_id)
                if call is not None:
                    self.results_by_call.setdefault(call_key(call), (m.content, error))
            if m.branch_type in SUMMARY_STAGES and m.branch_id:
                if m.role == "user":
                    asks[m.branch_id] = m.content
                elif m.role == "assistant" and m.branch_id in asks:
                    self.summaries.setdefault(asks[m.branch_id], m.content)
        self.tool_names = tuple(names)
        self.call_ids = frozenset(ids)
        for m in every:
            text = m.content + "".join(c.arguments + c.id for c in m.tool_calls)
            found = set(refs_in(text)) | self._call_ids_in(text)
            if m.tool_call_id:
                found.add(m.tool_call_id)
            if found:
                self.mentions[m.sequence] = frozenset(found)

    def _index_calls(self, calls: list[CallRef], by_seq: Mapping[int, Message]) -> None:
        for call in calls:
            seq = call.response_sequence
            if not call.answered or seq is None or seq not in by_seq:
                continue
            family = self._family_of(call, by_seq)
            if is_main_agent(call) and not self.families.get(self.main_family):
                self.main_family = family
            msg = by_seq[seq]
            params = call.params if isinstance(call.params, dict) else {}
            replies = self.families.setdefault(family, [])
            replies.append(
                RecordedReply(
                    len(replies),
                    call.call_index,
                    call.agent_name,
                    msg.content,
                    msg.tool_calls,
                    params.get("finish_reason"),
                    call.request_sha256,
                    call.context,
                    call.head,
                )
            )
        if self.main_family not in self.families:
            self.families[self.main_family] = []

    def _family_of(self, call: CallRef, by_seq: Mapping[int, Message]) -> str:
        first = call.context[0] if call.context else None
        if first is None:
            return self.system_text or self._path_system(by_seq)
        if first.sequence is None:
            return first.content or "" if first.role == "system" else ""
        msg = by_seq.get(first.sequence)
        if msg is None or msg.role != "system":
            return ""
        return first.content if first.content is not None else msg.content

    def _path_system(self, by_seq: Mapping[int, Message]) -> str:
        for seq in sorted(by_seq):
            m = by_seq[seq]
            if m.role == "system" and m.branch_type is None:
                self.system_text = m.content
                return m.content
        self.system_text = ""
        return ""

    def _call_ids_in(self, text: str) -> set[str]:
        if not self.call_ids:
            return set()
        return {w for w in _WORD.findall(text) if w in self.call_ids}

    # -- queries --------------------------------------------------------------------------
    def family(self, system_text: str) -> str:
        return system_text if system_text in self.families else self.main_family

    def agent_of(self, family: str) -> str:
        replies = self.families.get(family) or []
        return replies[0].agent_name if replies else "main"

    def positions_before(self, call_index: int) -> dict[str, int]:
        """Per family, how many replies were recorded before call ``call_index``."""
        return {
            fam: sum(1 for r in replies if r.call_index is not None and r.call_index < call_index)
            for fam, replies in self.families.items()
        }

    def visible(self, reply: RecordedReply) -> frozenset[str]:
        """Ref ids and call ids the recorded context of ``reply`` showed."""
        out: set[str] = set()
        for item in reply.context or ():
            if item.content is not None:
                out.update(refs_in(item.content))
                out.update(self._call_ids_in(item.content))
            elif item.sequence is not None:
                out.update(self.mentions.get(item.sequence, ()))
        return frozenset(out)

    def mentioned(self, reply: RecordedReply) -> list[str]:
        """Ref ids and earlier call ids that the reply's tool arguments name."""
        text = "".join(c.arguments for c in reply.tool_calls)
        own = {c.id for c in reply.tool_calls}
        found = [*refs_in(text), *sorted(self._call_ids_in(text) - own)]
        return list(dict.fromkeys(found))


def call_key(call: ToolCall) -> str:
    """Tool name plus canonical JSON arguments."""
    try:
        canon = json.dumps(
            json.loads(call.arguments or "{}"), sort_keys=True, separators=(",", ":")
        )
    except json.JSONDecodeError:
        canon = call.arguments.strip()
    return f"{call.name}:{canon}"
