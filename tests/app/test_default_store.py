"""The embedded default store is created from a demo run, once."""

from __future__ import annotations

from pathlib import Path

from app.default_store import ensure_default_store
from core.store import Store


def test_missing_default_store_gets_the_demo_run(tmp_path: Path) -> None:
    target = tmp_path / "data" / "ctxlens.db"
    ensure_default_store(str(target))
    with Store.open(target) as s:
        traces = s.traces()
        assert [t.source for t in traces] == ["ctxlens-demo"]
        with s.read() as r:
            tid = traces[0].id
            assert r.compactions(tid) and r.llm_calls(tid) and r.grants(tid)
            assert r.skill_injections(tid) and r.goal_events(tid) and r.checkpoints(tid)
        with s.read() as r:  # the checkpoint blobs are inside the file
            cps = r.checkpoints(tid)
            assert all(s.read_checkpoint(cp) for cp in cps)
        assert not (target.parent / "ctxlens.db.objects").exists()
    before = target.stat().st_mtime_ns
    ensure_default_store(str(target))
    assert target.stat().st_mtime_ns == before, "an existing store is left alone"
    assert not list(tmp_path.glob("data/*.creating*"))


def test_gui_command_is_registered() -> None:
    from app.cli import COMMANDS, build_parser

    assert "app.commands.gui" in COMMANDS
    args = build_parser().parse_args(["gui", "--db", "x.db", "--trace", "t", "--select", "3"])
    assert (args.db, args.trace, args.select) == ("x.db", "t", 3)
    args = build_parser().parse_args(["--db", "y.db", "gui"])
    assert args.db == "y.db", "the global --db still works"
