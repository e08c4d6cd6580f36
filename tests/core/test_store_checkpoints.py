"""STORE-5: immutable checkpoints; a stale generation is a conflict, never an overwrite."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select, update

from core.errors import CheckpointConflict, IntegrityError, InvalidInputError
from core.store import Store
from core.store.blobs import DatabaseBlobs
from core.store.objects import LocalObjectStore, validate_key
from core.store.schema import checkpoint_blobs

ROOT = Path(__file__).resolve().parents[2]


def test_generations_advance_and_blobs_verify(store: Store) -> None:
    tr = store.create_trace("t")
    with store.write() as w:
        first = w.write_checkpoint(tr.id, 0, "turn", b"one", token_count=10)
    with store.write() as w:
        second = w.write_checkpoint(tr.id, 1, "compaction", b"two")
    assert (first.generation, second.generation) == (1, 2)
    assert store.read_checkpoint(first) == b"one"
    with pytest.raises(CheckpointConflict, match="stale"), store.write() as w:
        w.write_checkpoint(tr.id, 1, "turn", b"late")
    with store.read() as r:
        assert [c.generation for c in r.checkpoints(tr.id)] == [1, 2]
    assert store.read_checkpoint(second) == b"two"


def _blob_keys(store: Store) -> set[str]:
    with store.read() as r:
        return set(r.conn.execute(select(checkpoint_blobs.c.key)).scalars())


def test_tampered_blob_is_detected(store: Store) -> None:
    tr = store.create_trace("t")
    with store.write() as w:
        cp = w.write_checkpoint(tr.id, 0, "turn", b"payload")
    assert isinstance(store.objects, DatabaseBlobs)  # inside the database by default
    assert _blob_keys(store) == {cp.object_key}
    with store.engine.begin() as conn:
        conn.execute(
            update(checkpoint_blobs)
            .where(checkpoint_blobs.c.key == cp.object_key)
            .values(data=b"tampered")
        )
    with pytest.raises(IntegrityError, match="sha256"):
        store.read_checkpoint(cp)


def test_tampered_blob_in_a_configured_folder_is_detected(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db", objects=tmp_path / "blobs") as store:
        tr = store.create_trace("t")
        with store.write() as w:
            cp = w.write_checkpoint(tr.id, 0, "turn", b"payload")
        assert isinstance(store.objects, LocalObjectStore)
        path = store.objects.root / cp.object_key
        path.chmod(0o644)
        path.write_bytes(b"tampered")
        with pytest.raises(IntegrityError, match="sha256"):
            store.read_checkpoint(cp)
        assert _blob_keys(store) == set(), "a configured folder replaces the table"


@pytest.mark.parametrize(
    "key", ["../escape", "a/../../b", "/abs", "a//b", ".hidden", "a/.x", "", "a\\b", "a b"]
)
def test_object_keys_cannot_escape(key: str) -> None:
    with pytest.raises(InvalidInputError):
        validate_key(key)


def test_object_store_is_write_once(tmp_path: Path) -> None:
    objs = LocalObjectStore(tmp_path)
    objs.put("k/1", b"a")
    objs.put("k/1", b"a")  # same content: idempotent
    from core.errors import ConflictError

    with pytest.raises(ConflictError):
        objs.put("k/1", b"b")
    assert objs.get("k/1") == b"a"


def test_two_processes_racing_one_wins(tmp_path: Path) -> None:
    db = tmp_path / "race.db"
    with Store.open(db) as store:
        trace_id = store.create_trace("race").id
    for round_ in range(5):
        ready = [tmp_path / f"ready-{round_}-{i}" for i in range(2)]
        go = tmp_path / f"go-{round_}"
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.helpers.checkpoint_racer",
                    str(db),
                    trace_id,
                    f"w{i}",
                    str(ready[i]),
                    str(go),
                ],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                text=True,
            )
            for i in range(2)
        ]
        deadline = time.monotonic() + 30
        while not all(r.exists() for r in ready):
            assert time.monotonic() < deadline, "racers did not start"
            time.sleep(0.01)
        go.touch()
        outs = [p.communicate(timeout=60)[0].strip() for p in procs]
        oks = [o for o in outs if o.startswith("ok")]
        conflicts = [o for o in outs if o.startswith("conflict")]
        assert len(oks) == 1 and len(conflicts) == 1, outs
        assert oks[0] == f"ok {round_ + 1}"
        assert "generation" in conflicts[0]
    with Store.open(db) as store:
        with store.read() as r:
            cps = r.checkpoints(trace_id)
        assert [c.generation for c in cps] == [1, 2, 3, 4, 5]
        for cp in cps:
            assert store.read_checkpoint(cp) in (b"w0" * 100, b"w1" * 100)
        # the losers' blobs were removed; only referenced blobs remain
        assert isinstance(store.objects, DatabaseBlobs)
        assert _blob_keys(store) == {c.object_key for c in cps}
