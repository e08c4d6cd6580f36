"""Token counts of imported messages, filled in after the import has committed.

Exact tiktoken counts (TOK-1) of an imported session cost about what parsing and storing it
does (tiktoken encodes ~30 MB/s a thread here with ``core/tokens/encodings.py``'s patterns;
``json.loads`` reads ~280 MB/s, the import ~90). So an
import writes its messages with a pending count (``PENDING_TOKENS``) and its trace is in the
store, whole and browsable, as soon as the import commits; ``fill_pending`` then counts them
and stores each count once (the one UPDATE the append-only triggers allow). Until then a
reader counts a pending message as it reads it, so nobody sees a missing figure.

Counting goes on ``WORKERS`` threads (each batch cut in shares of about equal text) while the
previous batch is written: tiktoken lets go of the GIL while it encodes, so both cores count
while a thread writes (in row order: a batch is stored once all its shares are counted).

``ctxlens import`` does better (``CountsAhead``): its messages are counted on the workers
while the importer still reads the file, and each row is written once its count is known,
so nothing is read back or updated after the commit (issue 20).
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from sqlalchemy import bindparam, func, select, update

from core.errors import ImportCancelled
from core.records import NewMessage
from core.store import Store
from core.store import schema as t
from core.store.triggers import PENDING_TOKENS
from core.tokens.counter import MessageTexts, TokenCounter, bounded_counter

#: Kinds stored with 0 tokens without encoding: records of what happened, never sent.
NOT_COUNTED = frozenset({"meta"})

#: Messages counted and stored per transaction (a reader waits for at most one batch).
BATCH = 500
#: Counting threads (tiktoken encodes without the GIL: one batch per core at a time).
WORKERS = 2

Progress = Callable[[int, int], None]
Pending = tuple[int, str, str, list[dict[str, str]] | None, str | None]
"""``(row id, role, content, tool_calls as stored, name)`` of a message to count."""


def pending(store: Store, trace_id: str) -> int:
    """How many messages of ``trace_id`` still wait for their token count."""
    m = t.messages.c
    with store.read() as r:
        return int(
            r.conn.execute(
                select(func.count()).where(m.trace_id == trace_id, m.token_count == PENDING_TOKENS)
            ).scalar_one()
        )


def count_rows(counter: TokenCounter, batch: Sequence[Pending]) -> list[int]:
    """``count_message``'s figure for each pending row, all texts in one tiktoken call."""
    return counter.count_messages(
        [(role, content, calls or (), name) for _, role, content, calls, name in batch]
    )


def fill_pending(
    store: Store,
    trace_ids: Sequence[str],
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Count and store every pending token count of ``trace_ids``; returns how many.

    One transaction per ``BATCH`` messages, so work done survives a stop and a reader is
    never kept waiting long; what is left stays pending and is counted on read. Safe to
    run twice at once: a count is only written where it is still pending.
    ``progress(done, total)`` after each batch; ``cancel`` stops between batches.
    """
    counter = bounded_counter(own_encoding=True)
    total = sum(pending(store, tid) for tid in trace_ids)
    done = 0
    jobs: deque[tuple[list[Pending], list[Future[list[int]]]]] = deque()

    def store_oldest() -> None:
        nonlocal done
        held, parts = jobs.popleft()
        done += _store(store, held, [n for job in parts for n in job.result()])
        if progress is not None:
            progress(done, total)

    pool = _COUNTING.get()
    try:
        for tid in trace_ids:
            for batch in _batches(store, tid):
                if cancel is not None and cancel.is_set():
                    raise ImportCancelled("token counting cancelled")
                parts = [pool.submit(count_rows, counter, p) for p in _shares(batch)]
                jobs.append((batch, parts))
                if len(jobs) > 1:  # store the older batch while this one is counted
                    store_oldest()
        while jobs:
            store_oldest()
    finally:
        for _batch, parts in jobs:  # a stop or a failure: what has not started is dropped
            for job in parts:
                job.cancel()
    return done


class CountsAhead:
    """Token counts of the messages an import is writing, counted on ``WORKERS`` threads
    while it goes on reading (tiktoken encodes without the GIL).

    ``take`` gives a message a ticket and queues its texts; every ``CHUNK`` characters the
    queue becomes one counting job (one tiktoken call per job: few GIL hand-overs). The
    first jobs are smaller (``FIRST_CHUNK``, doubling), so the workers start early instead
    of idling while the importer reads the first 64 K characters; a queue the importer
    must wait for goes out as two jobs, so both workers count the tail.
    ``ready`` says whether a ticket's count is known, ``count`` waits for it. The figures
    are ``count_message``'s, as ``fill_pending`` would store (the same ``count_messages``
    of the same texts). ``complete`` names the traces whose every row was written counted.
    """

    CHUNK = 1 << 16
    FIRST_CHUNK = 1 << 13
    SPLIT_CHARS = 1 << 11
    """A waited-for queue this long or longer is cut in two jobs."""
    HANDOVER = 1e-4
    """Seconds the importer sleeps after giving an idle worker a job: the woken worker needs
    the GIL to start, and the importer, running Python, would hold it until the switch
    interval (5 ms) forced it off; the first job started ~5 ms after it was sent (hcount3)."""

    def __init__(self) -> None:
        self._pool = _COUNTING.get()
        self._counter = bounded_counter(own_encoding=True)
        """Each of the pool's threads encodes with its own encoding (``thread_encoding``:
        tiktoken a third cheaper than on a shared one); the threads live for the process."""
        self._queued: list[MessageTexts] = []
        self._chars = 0
        self._chunk = min(self.FIRST_CHUNK, self.CHUNK)
        self._starts: list[int] = []
        """The first ticket of each job (ascending: jobs are cut in ticket order)."""
        self._jobs: dict[int, Future[list[int]]] = {}
        self._left: dict[int, int] = {}
        """Tickets of each job not yet asked for (a job is let go once all were)."""
        self._tickets = 0
        self.complete: set[str] = set()

    def take(self, nm: NewMessage) -> int:
        """Queue ``nm``'s texts; returns its ticket."""
        self._queued.append((nm.role, nm.content, nm.tool_calls, nm.name))
        self._chars += len(nm.content) + sum(len(c.arguments) for c in nm.tool_calls)
        self._tickets += 1
        if self._chars >= self._chunk:
            self._submit()
            self._chunk = min(self._chunk * 2, self.CHUNK)
        return self._tickets - 1

    @property
    def encoded_chars(self) -> int:
        """Characters tiktoken encoded so far (texts served from the memo excluded): what
        the counting costs, ~30 ns a character here (~60 with tiktoken's published patterns)."""
        return self._counter.encoded_chars

    def ready(self, ticket: int) -> bool:
        return not self._queues(ticket) and self._jobs[self._job(ticket)].done()

    def count(self, ticket: int) -> int:
        """The ticket's count, once (waits for its job; a queued ticket is sent first)."""
        if self._queues(ticket):
            self._submit(halves=True)
        n = self._job(ticket)
        job = self._jobs[n]
        if not job.done():  # the importer waits anyway: the queue goes to the workers now
            self._submit(halves=True)
        counts = job.result()
        self._left[n] -= 1
        if not self._left[n]:
            del self._jobs[n], self._left[n]
        return counts[ticket - self._starts[n]]

    def _queues(self, ticket: int) -> bool:
        return ticket >= self._tickets - len(self._queued)

    def _job(self, ticket: int) -> int:
        return bisect_right(self._starts, ticket) - 1

    def _submit(self, halves: bool = False) -> None:
        """The queue as one job, or as two of about equal text (``halves``)."""
        queued, chars = self._queued, self._chars
        if not queued:
            return
        self._queued, self._chars = [], 0
        cut = _half(queued, chars) if halves and chars >= self.SPLIT_CHARS else len(queued)
        start = self._tickets - len(queued)
        self._job_of(queued[:cut], start)
        if cut < len(queued):
            self._job_of(queued[cut:], start + cut)

    def _job_of(self, texts: list[MessageTexts], start: int) -> None:
        n = len(self._starts)
        idle = sum(not job.done() for job in self._jobs.values()) < WORKERS
        self._starts.append(start)
        self._jobs[n] = self._pool.submit(self._counter.count_messages, texts)
        self._left[n] = len(texts)
        if idle:
            self._hand_over()

    def _hand_over(self) -> None:
        """Let the woken worker take the GIL now, not after the switch interval."""
        time.sleep(self.HANDOVER)

    def __enter__(self) -> CountsAhead:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Jobs not started are dropped (an import that failed left them unread)."""
        for job in self._jobs.values():
            job.cancel()


class LazyPool:
    """A thread pool of the process, started on first use (a pool per import cost a small
    import ~3 % of its time in starting threads)."""

    def __init__(self, workers: int, name: str) -> None:
        self._workers, self._name = workers, name
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def get(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix=self._name)
            return self._pool


_COUNTING = LazyPool(WORKERS, "ctxlens-count")
"""The counting threads of ``CountsAhead`` and ``fill_pending``: they live for the process,
so each encodes with an encoding of its own once it has counted enough
(``core/tokens/encodings.py:thread_encoding``), and no call starts threads."""


def _half(queued: list[MessageTexts], chars: int) -> int:
    """Where to cut ``queued`` (of ``chars`` characters) into two runs of about equal text;
    ``len(queued)`` when one message holds most of it."""
    size = 0
    for i, (_role, content, calls, _name) in enumerate(queued[:-1]):
        size += len(content) + sum(len(c.arguments) for c in calls)
        if size * 2 >= chars:
            return i + 1
    return len(queued)


def _shares(batch: list[Pending]) -> list[list[Pending]]:
    """``batch`` cut into ``WORKERS`` runs of about the same text size (one per thread)."""
    total = sum(len(row[2]) for row in batch)
    out: list[list[Pending]] = []
    start = size = 0
    for i, row in enumerate(batch):
        size += len(row[2])
        if len(out) < WORKERS - 1 and size * WORKERS >= total * (len(out) + 1):
            out.append(batch[start : i + 1])
            start = i + 1
    out.append(batch[start:])
    return [share for share in out if share]


def _batches(store: Store, trace_id: str) -> Iterator[list[Pending]]:
    """The pending rows of a trace in batches of ``BATCH`` (row order, which is sequence
    order), each read in its own short transaction (memory holds one batch, not the
    trace)."""
    m = t.messages.c
    last = -1
    while True:
        with store.read() as r:
            rows = r.conn.execute(
                select(m.id, m.role, m.content, m.tool_calls, m.name)
                .where(
                    m.trace_id == trace_id,
                    m.token_count == PENDING_TOKENS,
                    m.id > last,
                )
                .order_by(m.id)
                .limit(BATCH)
            ).all()
        if not rows:
            return
        yield [(i, role, content or "", calls, name) for i, role, content, calls, name in rows]
        last = rows[-1][0]


def _store(store: Store, batch: Sequence[Pending], counts: Sequence[int]) -> int:
    m = t.messages.c
    stmt = (
        update(t.messages)
        .where(m.id == bindparam("row"), m.token_count == PENDING_TOKENS)
        .values(token_count=bindparam("tokens"))
    )
    with store.write() as w:
        w.conn.execute(
            stmt, [{"row": s[0], "tokens": n} for s, n in zip(batch, counts, strict=True)]
        )
    return len(batch)
