"""``ctxlens watch``: session folders tailed into the store as the agents write them.

Polling (stdlib only; a short interval costs one ``stat`` per known file, and folders are
listed again once a second). A file's new lines are written as one batch when the file has
not grown for ``SETTLE`` seconds (a reply streamed as several records lands in one batch),
or at the latest ``MAX_HOLD`` seconds after it started growing. Each batch commits with its
``watch_batches`` row, so a restart continues exactly after the last committed batch, and
rebuilds the importer's state by replaying the batches (``core/live/builder.py``).

When the watch stops (``end``) the responses still open get their model calls; a row of
no bytes (``start == end``) marks that place among the batches, so a replay does the same.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.errors import CtxlensError, InvalidInputError
from core.importers.base import ImportContext
from core.importers.counting import fill_pending
from core.importers.detect import sniff
from core.importers.reading import as_record, first_record, parse_line
from core.live.batches import Batch, last_batch, record_batch, trace_batches
from core.live.formats import LIVE_FORMATS, LiveSession, Records, bind, start_session
from core.live.source import Listener, LiveChange, SourceStatus, Tally
from core.live.tail import Identity, Lines, identity, read_lines, size_of
from core.store.store import Store
from core.store.writer import Writer

INTERVAL = 0.1
#: The next look comes this soon after a file grew (is the writer done with the record?).
SETTLE = 0.02
RESCAN = 1.0
MAX_HOLD = 1.0
#: Longest a new subagent file waits for its session file's line that names it (its
#: ``Task`` call): Claude Code writes that line a few milliseconds before the agent's first.
AGENT_WAIT = 3.0


@dataclass
class _File:
    path: Path
    fmt: str
    main: Path
    offset: int = 0
    lineno: int = 0
    ident: Identity | None = None
    last_size: int = -1
    growing_since: float | None = None
    failed: bool = False
    waiting_since: float | None = None
    """When a subagent file began waiting for its session file (``_waits``)."""
    head: dict[str, Any] | None = None
    """A waiting subagent file's first record, read once (``_waits`` asks at every look)."""


@dataclass
class _Live:
    session: LiveSession
    ctx: ImportContext
    files: dict[Path, int] = field(default_factory=dict)
    """Line counts replayed per file (for line numbers after a restart)."""
    last: Batch | None = None
    """The session's newest ``watch_batches`` row."""


class Watcher:
    """Tails every session file under ``folders`` into ``store`` (a ``Source``)."""

    kind = "watch"

    def __init__(
        self,
        store: Store,
        folders: list[Path],
        listener: Listener | None = None,
        interval: float = INTERVAL,
    ) -> None:
        self.store = store
        self.folders = list(folders)
        self.listener = listener
        self.interval = interval
        self.tally = Tally()
        self.files: dict[Path, _File] = {}
        self.live: dict[Path, _Live] = {}
        self._scanned = 0.0
        self._settling = False
        self._broken: set[Path] = set()
        """Sessions whose in-memory state was dropped with a failed batch."""
        self._uncounted: set[str] = set()
        """Traces written since their token counts were last filled in (they are counted
        when a look finds nothing new, off the path from disk to screen), and traces an
        earlier run continues (it may have stopped before it filled them)."""
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._end_on_stop = True

    # -- Source -------------------------------------------------------------------------
    def status(self) -> SourceStatus:
        running = self._thread is not None and self._thread.is_alive()
        return SourceStatus(
            kind=self.kind,
            name="Watched folders",
            state="running" if running else "stopped",
            address=", ".join(str(f) for f in self.folders),
            traces_seen=self.tally.traces_seen,
            errors=self.tally.errors,
            last_error=self.tally.last_error,
        )

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._end_on_stop = True
        self._thread = threading.Thread(target=self.run, name="ctxlens-watch", daemon=True)
        self._thread.start()

    def stop(self, end: bool = True) -> None:
        """Stop the thread; ``end=False``: without ``end`` (another watcher goes on with
        the same sessions at once, replaying them: their open responses stay open)."""
        self._end_on_stop = end
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None

    def run(self, stop: threading.Event | None = None) -> None:
        """Poll until ``stop`` (default: this watcher's own stop event) is set, then
        ``end`` (unless ``stop(end=False)`` stopped it)."""
        stop = stop or self._stop
        while not stop.is_set():
            self.poll()
            stop.wait(self.next_wait())
        if self._end_on_stop:
            self.end()

    def end(self) -> None:
        """The watch stops: the responses whose calls wait for their end (the last one of
        a session, its lane having nothing after it yet) are recorded as they stand, each
        session in a transaction with its row of no bytes (``_replay`` reads it)."""
        for main, live in list(self.live.items()):
            if live.last is None or not live.session.open_calls():
                continue
            mark = replace(live.last, start=live.last.end)
            try:
                with self.store.write() as w:
                    bind(live.session, w)
                    live.session.end()
                    live.session.b.finish()
                    record_batch(w, mark)
            except Exception as exc:  # rolled back: the state is rebuilt from the store
                self.live.pop(main, None)
                self._broken.add(main)
                self.tally.failed(f"{main}: {exc}")
                continue
            live.last = mark

    def next_wait(self) -> float:
        """Seconds to the next poll: short while a file is still being written."""
        return min(SETTLE, self.interval) if self._settling else self.interval

    # -- polling ------------------------------------------------------------------------
    def poll(self, drain: bool = False) -> list[LiveChange]:
        """One look at every file; ``drain`` writes every complete line now (``--once``)."""
        now = time.monotonic()
        if drain or now - self._scanned >= RESCAN:
            self._scanned = now
            self._scan()
        changes: list[LiveChange] = []
        self._settling = False
        for f in sorted(self.files.values(), key=lambda f: (f.path != f.main, str(f.path))):
            change = self._check(f, now, drain)
            if change is not None:
                changes.append(change)
        self._uncounted.update(c.trace_id for c in changes)
        if self._uncounted and (drain or not changes):  # token counts once the files rest
            fill_pending(self.store, sorted(self._uncounted))
            self._uncounted.clear()
        return changes

    def _scan(self) -> None:
        for folder in self.folders:
            if folder.is_file():
                self._found(folder)
                continue
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*.jsonl")):
                self._found(path)

    def _found(self, path: Path) -> None:
        if path in self.files:
            return
        fmt = sniff(path)
        if fmt is None:
            return  # empty or not a complete first line yet: looked at again next scan
        if fmt not in LIVE_FORMATS:
            self.files[path] = _File(path, fmt, path, failed=True)
            return
        f = _File(path, fmt, self._owner(path, fmt))
        self.files[path] = f
        with self.store.read() as r:
            last = last_batch(r, str(path))
        if last is not None:
            self._resume(f, last)

    def _owner(self, path: Path, fmt: str) -> Path:
        """The session file a Claude Code subagent file belongs to (else the file itself)."""
        if fmt != "claude-code" or not path.name.startswith("agent-"):
            return path
        if path.parent.name == "subagents":
            main = path.parent.parent.with_suffix(".jsonl")
        else:
            main = path.with_name(f"{(first_record(path) or {}).get('sessionId')}.jsonl")
        return main if main.is_file() else path

    def _check(self, f: _File, now: float, drain: bool) -> LiveChange | None:
        if f.failed:
            return None
        size = size_of(f.path)
        if size is None:
            return None
        if size == f.last_size and size <= f.offset:
            return None  # nothing new (one stat per quiet file and poll)
        if size < f.offset or not self._same_file(f):
            self._restart(f)
            if f.failed:
                return None
        if size <= f.offset:
            f.last_size = size
            return None
        if f.growing_since is None:
            f.growing_since = now
        still_growing = size != f.last_size
        f.last_size = size
        if still_growing and not drain and now - f.growing_since < MAX_HOLD:
            self._settling = True
            return None
        if f.offset == 0 and f.main != f.path and not drain and self._waits(f, now):
            self._settling = True
            return None
        lines = read_lines(f.path, f.offset, f.lineno)
        if lines is None:
            return None  # only a partial line so far
        f.growing_since = None
        return self._write(f, lines)

    def _waits(self, f: _File, now: float) -> bool:
        """A subagent file not read yet waits (at most ``AGENT_WAIT``) while what its session
        file has given names nothing for it: its lane, and the name every message and call
        of it keeps, opens with its first batch (Claude Code writes the ``Task`` call a few
        milliseconds before the agent's first line, and a poll between the two, or one that
        held the session file's newest lines until they settled, read the agent first)."""
        if f.head is None:
            f.head = first_record(f.path)  # None while its first line is still partial
        live = self.live.get(f.main)
        if live is not None and not live.session.waits_for(f.path, f.head or {}):
            return False
        if f.waiting_since is None:
            f.waiting_since = now
        return now - f.waiting_since < AGENT_WAIT

    def _same_file(self, f: _File) -> bool:
        if f.ident is None or f.offset == 0:
            return True
        return identity(f.path, f.offset) == f.ident

    def _restart(self, f: _File) -> None:
        """The file was truncated, replaced or rotated: read it again as a new trace (a
        subagent file is not: its session's trace already holds what it said)."""
        if f.main != f.path:
            self._give_up(f, "subagent file was replaced or truncated; not read again")
            return
        f.offset, f.lineno, f.ident, f.growing_since = 0, 0, None, None
        self.live.pop(f.path, None)

    def _give_up(self, f: _File, why: str) -> None:
        f.failed = True
        self.tally.failed(f"{f.path}: {why}")

    # -- writing ------------------------------------------------------------------------
    def _write(self, f: _File, lines: Lines) -> LiveChange | None:
        live = self.live.get(f.main) or self._recover(f)
        try:
            with self.store.write() as w:
                new = live is None
                if live is None:
                    live = self._new_live(f, w)
                bind(live.session, w)
                b = live.session.b
                before = b.messages
                self._feed(live, f, lines)
                b.finish()
                ident = identity(f.path, lines.end)
                batch = self._batch(f, lines, b.trace_id, ident)
                record_batch(w, batch)
        except Exception as exc:  # the batch rolled back: state is rebuilt from the store
            if self.live.pop(f.main, None) is not None:
                self._broken.add(f.main)
            f.failed = not isinstance(exc, CtxlensError)
            self.tally.failed(f"{f.path}: {exc}")
            return None
        self.live[f.main] = live
        live.last = batch
        f.offset, f.lineno, f.ident = lines.end, f.lineno + len(lines.lines), ident
        self.tally.saw(b.trace_id)
        change = LiveChange(self.kind, b.trace_id, new, b.messages - before, str(f.path))
        if self.listener is not None:
            self.listener(change)
        return change

    def _recover(self, f: _File) -> _Live | None:
        """After a batch failed (the store was busy, say): the trace's state as committed."""
        if f.main not in self._broken:
            return None
        self._broken.discard(f.main)
        with self.store.read() as r:
            last = last_batch(r, str(f.main))
        return self._replay(f, last.trace_id) if last is not None else None

    def _new_live(self, f: _File, w: Writer) -> _Live:
        ctx = ImportContext()
        return _Live(start_session(f.fmt, w, ctx, f.main), ctx)

    def _batch(self, f: _File, lines: Lines, trace_id: str, ident: Identity | None) -> Batch:
        return Batch(
            str(f.path),
            trace_id,
            lines.start,
            lines.end,
            ident.head_sha256 if ident else "",
            ident.inode if ident else None,
            f.fmt,
        )

    def _feed(self, live: _Live, f: _File, lines: Lines) -> None:
        """Parse and feed the lines one record at a time; a bad line is reported and
        skipped (the same way again when the batch is replayed)."""
        name = str(f.path)
        for i, line in enumerate(lines.lines):
            lineno = lines.first_lineno + i
            if not line.strip():
                continue
            try:
                records: Records = [
                    (lineno, as_record(parse_line(line, live.ctx, name, lineno), name, lineno))
                ]
                live.session.feed(f.path, records)
            except InvalidInputError as exc:
                if not live.session.b.replaying:
                    self.tally.failed(str(exc))
        live.session.settle()

    # -- restart ------------------------------------------------------------------------
    def _resume(self, f: _File, last: Batch) -> None:
        """Continue after the last committed batch, if the file is the one that was read."""
        ident = identity(f.path, last.end)
        size = size_of(f.path) or 0
        replaced = ident is None or size < last.end or ident.head_sha256 != last.head_sha256
        rotated = ident is not None and last.inode is not None and ident.inode != last.inode
        if replaced or rotated:  # another file under this name: read it as a new trace
            if f.main != f.path:
                self._give_up(f, "subagent file was replaced since it was read; not read again")
            return
        live = self.live.get(f.main) or self._replay(f, last.trace_id)
        if live is None:
            return
        self.live[f.main] = live
        # counts an earlier run left pending (stopped before it filled them) are filled at
        # the next poll: they stayed pending for good, the trace's tokens read 0
        self._uncounted.add(last.trace_id)
        f.offset, f.ident, f.lineno = last.end, ident, live.files.get(f.path, 0)
        f.last_size = size

    def _replay(self, f: _File, trace_id: str) -> _Live | None:
        """The importer's state after the trace's batches, rebuilt without writing."""
        with self.store.read() as r:
            batches = trace_batches(r, trace_id)
        ctx = ImportContext()
        try:
            with self.store.write() as w:
                live = _Live(start_session(f.fmt, w, ctx, f.main, trace_id=trace_id), ctx)
                for bt in batches:
                    live.last = bt
                    if bt.start == bt.end:  # the watch stopped here (``end``)
                        live.session.end()
                        continue
                    path = Path(bt.path)
                    count = live.files.get(path, 0)
                    lines = read_lines(path, bt.start, count, bt.end - bt.start)
                    if lines is None or lines.end != bt.end:
                        return None
                    self._feed(live, _File(path, f.fmt, f.main), lines)
                    live.files[path] = count + len(lines.lines)
                if not live.session.b.matches_store():
                    self.tally.failed(f"{f.path}: cannot continue trace {trace_id}; read anew")
                    return None
                live.session.b.replaying = False
        except CtxlensError as exc:
            self.tally.failed(f"{f.path}: {exc}")
            return None
        self.tally.saw(trace_id)
        return live
