"""The Traces pane in the real window: titles readable in the pane's width, newest first, an
Inspect eval's samples grouped under it (sortable and filterable by score), a sample opens
its timeline."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt

from core.importers.api import import_paths
from core.store import Store
from tests.conftest import TRACES
from tests.core.importers.zstd_eval import recompress
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.panes.trace_tree import GRADES, SUBTITLE_ROLE, TRACE_ID_ROLE
from ui.settings import AppSettings

EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*.eval"))), None)
CODEX = next(iter(sorted((TRACES / "codex").rglob("rollout-2025-09-24*.jsonl"))), None)
pytestmark = pytest.mark.skipif(EVAL is None or CODEX is None, reason="no shared traces")


@pytest.fixture
def eval_window(qtbot: Any, settings: AppSettings, tmp_path: Path) -> MainWindow:
    assert EVAL is not None and CODEX is not None
    db = tmp_path / "evals.db"
    with Store.open(db) as store:
        import_paths(store, [recompress(EVAL, tmp_path / "z.eval"), CODEX])
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    assert win.open_store(db)
    settle(qtbot, win)
    return win


def _children(view: Any, parent: QModelIndex) -> list[QModelIndex]:
    return [view.proxy.index(r, 0, parent) for r in range(view.proxy.rowCount(parent))]


def _group(view: Any) -> QModelIndex:
    return next(i for i in _children(view, QModelIndex()) if not i.data(TRACE_ID_ROLE))


def _samples(header: dict[str, Any]) -> dict[str, Any]:
    assert EVAL is not None
    with zipfile.ZipFile(EVAL) as z:
        return {
            str(s["id"]): s
            for s in (json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/"))
        }


def test_eval_grouped_titles_readable_newest_first(eval_window: MainWindow, qtbot: Any) -> None:
    assert EVAL is not None
    pane = eval_window.traces
    with zipfile.ZipFile(EVAL) as z:
        header = json.loads(z.read("header.json"))
    samples = _samples(header)
    top = _children(pane, QModelIndex())
    assert len(top) == 2, "the codex rollout and one row for the eval"
    codex, group = top  # the rollout (2025-09) is newer than the eval (2025-02)
    assert codex.data(TRACE_ID_ROLE) and not codex.data().startswith("# Context")
    assert group.data() == f"Eval {header['eval']['task']}"
    assert header["eval"]["model"] in group.data(SUBTITLE_ROLE)
    assert f"{len(samples)} samples" in group.data(SUBTITLE_ROLE)
    rows = _children(pane, group)
    assert len(rows) == len(samples)
    for index in rows:
        sid = index.data().split()[0].lstrip("#")
        score = next(iter(samples[sid]["scores"].values()))["value"]
        assert index.data().startswith(f"#{sid} epoch 1 [{score}] ")
        # the answer and the target lead the figures line (they were past the pane's edge)
        answer = next(iter(samples[sid]["scores"].values())).get("answer")
        line = index.data(SUBTITLE_ROLE)
        assert line.startswith(f"answer {answer} · target {samples[sid]['target']} · "), line
    title_width = pane.table.columnWidth(0)
    assert title_width >= pane.table.viewport().width() * 0.9, "the title has the pane's width"
    rect = pane.table.visualRect(rows[0])
    assert rect.height() >= 2 * pane.table.fontMetrics().height(), "figures on a second line"

    pane.sort.setCurrentText("Best score")
    group = _group(pane)
    ordered = [GRADES[i.data().split()[3].strip("[]")] for i in _children(pane, group)]
    assert ordered == sorted(ordered, reverse=True) and len(set(ordered)) > 1, "best first"
    grade = next(iter(next(iter(samples.values()))["scores"].values()))["value"]
    pane.score_filter.setCurrentText(grade)
    shown = _children(pane, _group(pane))
    want = sum(next(iter(s["scores"].values()))["value"] == grade for s in samples.values())
    assert len(shown) == want and len(_children(pane, QModelIndex())) == 1

    target = shown[0].data(TRACE_ID_ROLE)
    rect = pane.table.visualRect(shown[0])
    with qtbot.waitSignal(pane.trace_chosen) as sig:
        qtbot.mouseClick(pane.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert sig.args == [target]
    qtbot.waitUntil(lambda: eval_window.session.trace_id == target)
    settle(qtbot, eval_window)
    assert eval_window.timeline.model.length > 0, "the sample's timeline, as any trace"
