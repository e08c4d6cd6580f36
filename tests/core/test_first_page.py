"""``core/store/first_page.py``: the first page read with ``sqlite3`` alone gives the rows,
order and records the ``Reader`` gives (the demo store, a long compacted trace, an imported
session, a rewound trace), and anything it cannot read the same way is left to the
``Store`` (an old schema, a server URL, a pending token count)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine

from app.default_store import build_default_store
from core.context.view import NOT_SENT as VIEW_NOT_SENT
from core.importers.api import import_paths
from core.importers.counting import fill_pending
from core.inspector.bands import bands
from core.inspector.branches import branches, fork_badges
from core.inspector.timeline import NOT_SENT, READ_CHARS, row_of
from core.records import NewMessage
from core.store import Store
from core.store.first_page import PENDING_TOKENS, NeedsStore, QuickStore
from core.store.migrate import upgrade
from core.store.triggers import PENDING_TOKENS as STORE_PENDING
from tests.conftest import TRACES
from tests.sample_trace import write_long_trace, write_sample

ROOT = Path(__file__).resolve().parents[2]
SESSION = next(iter(sorted((TRACES / "claude_code").rglob("0d3a8e6f-*.jsonl"))), None)


def _path_reads(reader: Any, trace_id: str, head: int | None) -> dict[str, Any]:
    """Everything the timeline's first load reads, through ``reader``."""
    segs = reader.segments(trace_id, head)
    main = reader.segments(trace_id)
    found = branches(reader, trace_id, main)
    forks = fork_badges(found)
    length = sum(len(s) for s in segs)
    previews = [
        p for off in range(0, length, 97) for p in reader.main_path_previews(
            trace_id, off, 97, segs, READ_CHARS)
    ]  # fmt: skip
    return {
        "segments": segs,
        "lines": reader.lines(trace_id),
        "forks": reader.fork_parents(trace_id),
        "compactions": reader.compactions(trace_id),
        "bands": bands(reader, trace_id, segs),
        "branches": found,
        "previews": previews,
        "rows": [row_of(p, forks.get(p.sequence, ())) for p in previews],
        "sequences": [m.sequence for m in reader.main_path_page(trace_id, 0, length, head)],
    }


def _same_through_both(path: Path, trace_id: str, head: int | None = None) -> dict[str, Any]:
    quick = QuickStore.open(path)
    assert quick is not None, "a store at the schema head reads without SQLAlchemy"
    with Store.open(path) as store, store.read() as r:
        expected = _path_reads(r, trace_id, head)
    with quick.read() as q:
        got = _path_reads(q, trace_id, head)
    assert got == expected
    assert expected["previews"], "the path has rows"
    return expected


def test_the_demo_store_reads_the_same(tmp_path: Path) -> None:
    path = Path(build_default_store(str(tmp_path / "demo.db")))
    with Store.open(path) as s:
        traces = s.traces()
    quick = QuickStore.open(path)
    assert quick is not None
    with quick.read() as q:
        assert q.chosen_trace(None) == (traces[-1].id, traces[-1].head)
        assert q.chosen_trace(traces[0].id[:6]) == (traces[0].id, traces[0].head)
        assert q.chosen_trace("no-such-trace") is None
    seen = [_same_through_both(path, t.id) for t in traces]
    assert any(r["bands"][0] for r in seen), "compaction bands were compared"
    assert any(r["branches"] for r in seen), "branches were compared"


def test_a_long_compacted_trace_and_a_rewound_one_read_the_same(tmp_path: Path) -> None:
    path = tmp_path / "long.db"
    with Store.open(path) as s:
        long = write_long_trace(s, 3_000, compact_every=500)
        sample = write_sample(s)
        s.rewind(sample.id, 5)
        with s.write() as w:
            w.append(sample.id, [NewMessage("user", "after the rewind")])
        head = s.trace(sample.id).head
    found = _same_through_both(path, long.id)
    assert len(found["previews"]) == 3_000 and len(found["bands"][0]) >= 5
    rewound = _same_through_both(path, sample.id)
    assert any(b.kind == "abandoned" for b in rewound["branches"])
    assert head is not None
    _same_through_both(path, sample.id, head - 1)  # a path to another head


@pytest.mark.skipif(SESSION is None, reason="the shared Claude Code session is not there")
def test_an_imported_session_reads_the_same(tmp_path: Path) -> None:
    assert SESSION is not None
    path = tmp_path / "imported.db"
    with Store.open(path) as s:
        (res,) = import_paths(s, [SESSION])
    quick = QuickStore.open(path)
    assert quick is not None
    with quick.read() as q:  # counts still pending: the Reader counts them, so it reads them
        segs = q.segments(res.trace_id)
        with pytest.raises(NeedsStore):
            q.main_path_previews(res.trace_id, 0, sum(len(x) for x in segs), segs, READ_CHARS)
    with Store.open(path) as s:
        assert fill_pending(s, [res.trace_id]) > 0  # as the import finishes
    found = _same_through_both(path, res.trace_id)
    assert any(p.tool_calls for p in found["previews"]), "tool calls were compared"


def test_what_it_cannot_read_is_left_to_the_store(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    upgrade(create_engine(f"sqlite:///{old}"), "0001_initial")
    assert QuickStore.open(old) is None, "an old store must migrate: the Store opens it"
    Store.open(old).close()
    assert QuickStore.open(old) is not None, "migrated, it is current"
    assert QuickStore.open(tmp_path / "missing.db") is None
    assert QuickStore.open("postgresql://u@127.0.0.1:1/x") is None
    (tmp_path / "junk.db").write_bytes(b"not a database, not at all" * 100)
    assert QuickStore.open(tmp_path / "junk.db") is None


def test_its_constants_are_the_stores() -> None:
    assert PENDING_TOKENS == STORE_PENDING
    assert NOT_SENT == VIEW_NOT_SENT


def test_it_loads_without_sqlalchemy(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store.open(path) as s:
        trace = write_sample(s)
    probe = (
        "import sys\nfrom core.store.first_page import QuickStore\n"
        "from core.inspector.bands import bands\nfrom core.inspector.branches import branches\n"
        "from core.inspector.timeline import row_of\n"
        f"q = QuickStore.open({str(path)!r})\n"
        "with q.read() as r:\n"
        f"    segs = r.segments({trace.id!r})\n"
        f"    bands(r, {trace.id!r}, segs); branches(r, {trace.id!r}, segs)\n"
        f"    rows = [row_of(p) for p in r.main_path_previews({trace.id!r}, 0, 20, segs, 9)]\n"
        "print(len(rows), 'sqlalchemy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["20", "False"]


def test_a_read_is_one_snapshot(tmp_path: Path) -> None:
    """A write landing between two reads of one ``read()`` is not seen by the second."""
    path = tmp_path / "s.db"
    with Store.open(path) as s:
        trace = write_sample(s)
    quick = QuickStore.open(path)
    assert quick is not None
    with quick.read() as q:
        before = q.segments(trace.id)
        with Store.open(path) as s, s.write() as w:
            w.append(trace.id, [NewMessage("user", "later")])
        assert q.segments(trace.id) == before
    with quick.read() as q:
        assert q.segments(trace.id) != before
