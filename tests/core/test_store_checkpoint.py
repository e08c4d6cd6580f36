"""WAL checkpoints run on the store's own thread, not in a writer's COMMIT
(``core/store/wal_checkpoint.py``)."""

from __future__ import annotations

import time
from pathlib import Path

from core.records import NewMessage
from core.store import Store


def _wait(cond: object, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_writes_are_checkpointed_off_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store.open(path) as store:
        with store.read() as r:
            assert r.conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 0
        size = path.stat().st_size
        with store.write() as w:
            tr = w.create_trace("big", "test", None)
            w.append(tr.id, [NewMessage("user", f"{i} " + "x" * 4000) for i in range(600)])
        assert store.checkpointer is not None
        assert _wait(lambda: store.checkpointer.checkpoints >= 1)
        # the commit only appended to the WAL; the thread copied it into the database file
        assert _wait(lambda: path.stat().st_size > size + 2_000_000)
        with store.read() as r:
            assert r.trace(tr.id).messages == 600
        thread = store.checkpointer._thread
        assert thread is not None and thread.is_alive()
    assert not thread.is_alive(), "closing the store stops the thread"


def test_a_store_that_never_writes_starts_no_thread(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        with store.read() as r:
            r.traces()
        assert store.checkpointer is not None and store.checkpointer._thread is None


def test_a_longer_interval_coalesces_the_writes_of_a_sparse_writer(tmp_path: Path) -> None:
    """The proxy's store (``app/commands/proxy.py:_sparse_checkpoints``): one checkpoint for
    a series of small writes, not one per write, and closing does not wait the interval out."""
    from app.commands.proxy import PROXY_CHECKPOINT_S, _sparse_checkpoints

    with Store.open(tmp_path / "s.db") as store:
        _sparse_checkpoints(store)
        assert store.checkpointer is not None
        assert store.checkpointer.interval == PROXY_CHECKPOINT_S
        tr = store.create_trace("sparse", "test")
        assert _wait(lambda: store.checkpointer.checkpoints == 1)
        for i in range(5):
            store.append(tr.id, [NewMessage("user", f"call {i}")])
            time.sleep(0.25)  # longer than the store's own 0.2 s between checkpoints
        assert store.checkpointer.checkpoints == 1
        started = time.monotonic()
    assert time.monotonic() - started < PROXY_CHECKPOINT_S / 2
