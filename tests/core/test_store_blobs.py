"""Issue 18, one-file store: checkpoint blobs live inside the database, so a copied store
file carries its checkpoints; a store whose blobs an older ctxlens kept in ``FILE.objects``
still reads them and moves them in; a lost blob does not stop an export."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import delete, select

from core.records import Checkpoint
from core.store import Store
from core.store.blobs import DatabaseBlobs
from core.store.schema import checkpoint_blobs
from tests.helpers.demo_trace import build

Cli = Callable[..., tuple[int, str]]


def _checkpoints(store: Store, trace_id: str) -> list[Checkpoint]:
    with store.read() as r:
        return r.checkpoints(trace_id)


def _blob_keys(store: Store) -> set[str]:
    with store.read() as r:
        return set(r.conn.execute(select(checkpoint_blobs.c.key)).scalars())


def _drop_blob(store: Store, key: str) -> None:
    with store.engine.begin() as conn:
        conn.execute(delete(checkpoint_blobs).where(checkpoint_blobs.c.key == key))


def test_a_copied_store_file_alone_has_its_checkpoints(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with Store.open(tmp_path / "a" / "s.db") as s:
        tid = build(s)
        blobs = [s.read_checkpoint(cp) for cp in _checkpoints(s, tid)]
    assert len(blobs) == 2 and not list((tmp_path / "a").glob("*.objects"))
    (tmp_path / "b").mkdir()
    shutil.copy(tmp_path / "a" / "s.db", tmp_path / "b" / "s.db")  # the file, nothing else
    with Store.open(tmp_path / "b" / "s.db") as copy:
        assert [copy.read_checkpoint(cp) for cp in _checkpoints(copy, tid)] == blobs


def test_blobs_are_in_the_database_on_every_backend(store: Store) -> None:
    """SQLite and PostgreSQL alike: no bucket or folder is needed for checkpoints."""
    tid = build(store)
    cps = _checkpoints(store, tid)
    assert isinstance(store.objects, DatabaseBlobs)
    assert _blob_keys(store) == {cp.object_key for cp in cps}
    assert store.read_checkpoint(cps[0]) == b"\x00\x01 first checkpoint"


def test_a_store_with_the_old_folder_reads_it_and_moves_the_blobs_in(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store.open(db, objects=tmp_path / "old.db.objects") as old:  # the pre-issue-18 layout
        tid = build(old)
        blobs = [old.read_checkpoint(cp) for cp in _checkpoints(old, tid)]
        assert _blob_keys(old) == set()
    with Store.open(db) as s:  # opened as ctxlens opens it now
        assert isinstance(s.objects, DatabaseBlobs) and s.objects.legacy is not None
        cps = _checkpoints(s, tid)
        assert _blob_keys(s) == {cp.object_key for cp in cps}, "moved in on open"
        _drop_blob(s, cps[0].object_key)  # what the move could not take is read through
        assert [s.read_checkpoint(cp) for cp in cps] == blobs
    assert (tmp_path / "old.db.objects").is_dir(), "the old folder is left as it was"
    Store.open(db).close()  # the next open moves in what was still missing
    shutil.copy(db, tmp_path / "moved.db")
    with Store.open(tmp_path / "moved.db") as moved:
        assert [moved.read_checkpoint(cp) for cp in _checkpoints(moved, tid)] == blobs


def test_export_with_a_lost_blob_still_works_and_says_what_is_missing(
    tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    with Store.open(db) as s:
        tid = build(s)
        lost = _checkpoints(s, tid)[0]
        _drop_blob(s, lost.object_key)
    out = tmp_path / "t.json"
    code, _ = cli("--db", str(db), "export", tid, "-o", str(out))
    assert code == 0
    warning = capsys.readouterr().err
    assert f"checkpoint 1 (turn) of trace {tid}: blob {lost.object_key} is missing" in warning
    cps = json.loads(out.read_text())["checkpoints"]
    first = cps[0]
    assert (first["object_key"], first["blob_b64"], first["blob_missing"]) == (
        lost.object_key,
        None,
        True,
    )
    assert cps[1]["blob_b64"] and "blob_missing" not in cps[1]
    code, _ = cli("--db", str(tmp_path / "again.db"), "import", str(out))
    assert code == 0
    with Store.open(tmp_path / "again.db") as again:
        assert len(_checkpoints(again, tid)) == 2
