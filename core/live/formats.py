"""The importers' own state machines, fed line by line (no second parser).

A live session wraps an importer's per-file state (Claude Code ``_Session``, Codex
``_Rollout``): ``feed`` takes records as they are appended, ``settle`` writes what is
pending at the end of a batch, so a batch is visible as soon as it commits. Compactions,
subagents and tool results come out as in a full import; the one difference is that a
reply streamed over two batches becomes two messages (batches end when a file goes quiet,
``core/live/watch.py``).

Model calls come out as in a full import too: one per API response, with the usage of its
last record, its response the first message written of it. A response stays open across
batches (its later records are still the same call), so its call is recorded when it is
over: when the importer's own reading ends it (the next response or prompt in its lane,
Codex's ``token_count``), at Claude Code's end-of-turn records, or when the watch stops
(``end``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from core.importers import claude_code, codex
from core.importers.base import ImportContext
from core.importers.idmap import IdMap
from core.importers.reading import first_record
from core.live.builder import ResumableBuilder
from core.store.writer import Writer

Records = list[tuple[int, dict[str, Any]]]
LIVE_FORMATS = ("claude-code", "codex")


class LiveSession(Protocol):
    b: ResumableBuilder
    state: Any
    """The importer's own per-file state object."""

    def feed(self, path: Path, records: Records) -> None: ...

    def waits_for(self, path: Path, head: dict[str, Any]) -> bool:
        """Whether a side file not read yet (first record ``head``) should wait for more of
        the main file: what names it there has not been read."""

    def settle(self) -> None:
        """A batch ends: write what arrived, record the calls of the responses that ended."""

    def open_calls(self) -> int:
        """Responses written whose calls wait for their end."""

    def end(self) -> None:
        """The watch stops: record the calls of ``open_calls`` as they stand."""


class ClaudeCodeLive:
    """One Claude Code session: its main file plus subagent files, one trace."""

    def __init__(self, b: ResumableBuilder, ctx: ImportContext, main: Path) -> None:
        self.b = b
        self.main = main
        self.state = claude_code._Session(b, ctx)
        self.b.json_from_reader = True

    def feed(self, path: Path, records: Records) -> None:
        lane = None
        standalone = path == self.main and path.name.startswith("agent-")
        if path != self.main or standalone:
            key = f"file-{path}"
            lane = self.state.lanes.get(key)
            if lane is None:
                head = records[0][1] if records else {}
                lane = self.state.side_lane(str(head.get("agentId") or path.stem), head)
                self.state.lanes[key] = lane
        self.state.read_records(records, str(path), lane)

    def waits_for(self, path: Path, head: dict[str, Any]) -> bool:
        """A subagent file whose ``Task`` call is not read yet (its lane is named once, when
        it opens: the agent file's name where the import says ``claude-code-guide``)."""
        if path == self.main or f"file-{path}" in self.state.lanes:
            return False
        return not self.state.names_agent(str(head.get("agentId") or path.stem), head)

    def settle(self) -> None:
        self.state.write_pending()
        self.state.record_calls()
        self.state.note_limits()
        self.b.set_title(self.state.title())

    def open_calls(self) -> int:
        return self.state.open_replies()

    def end(self) -> None:
        self.state.note_open_replies()
        self.state.record_calls()


class CodexLive:
    """One Codex rollout file, one trace."""

    def __init__(self, b: ResumableBuilder, ctx: ImportContext, main: Path) -> None:
        self.b = b
        self.state = codex._Rollout(b, ctx, str(main))

    def feed(self, path: Path, records: Records) -> None:  # noqa: ARG002 (the Tailer protocol)
        for lineno, rec in records:
            self.state.record(lineno, rec)

    def waits_for(self, path: Path, head: dict[str, Any]) -> bool:  # noqa: ARG002
        return False  # a rollout is one file

    def settle(self) -> None:
        self.state.write_pending()
        self.state.record_calls()
        self.state.note_window()
        self.b.set_title(self.b.first_text() or self.b.title)

    def open_calls(self) -> int:
        return self.state.open_calls()

    def end(self) -> None:
        self.state.note_open_calls()
        self.state.record_calls()


def trace_header(fmt: str, main: Path) -> tuple[dict[str, Any], float | None]:
    """Metadata and start time of a new live trace, as the full import gives them."""
    if fmt == "claude-code":
        return claude_code._session_info(main)
    return codex.trace_info(first_record(main) or {})


def start_session(
    fmt: str, w: Writer, ctx: ImportContext, main: Path, trace_id: str | None = None
) -> LiveSession:
    """A session for a new trace, or (``trace_id``) one to be replayed and continued."""
    meta, created = trace_header(fmt, main)
    meta["files"] = [str(main)]
    meta["live"] = True
    b = ResumableBuilder(w, ctx, fmt, str(main), main.stem, meta, created, trace_id=trace_id)
    b.replaying = trace_id is not None
    if fmt == "claude-code":
        return ClaudeCodeLive(b, ctx, main)
    return CodexLive(b, ctx, main)


def bind(session: LiveSession, w: Writer) -> None:
    """Use this transaction's writer from now on (id maps included: see ``IdMap.rebind``)."""
    session.b.w = w
    for value in vars(session.state).values():
        if isinstance(value, IdMap):
            value.rebind(w.conn)
