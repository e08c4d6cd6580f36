"""Every item model under Qt's model tester, and the timeline model on a 100k-message store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon

from core.goals import goal_tree_at
from core.goals.tree import STATUSES
from core.inspector.bands import Band, bands
from core.inspector.branches import branches, fork_badges
from core.inspector.compaction import request_for, run_preview
from core.inspector.context_report import current_report
from core.inspector.goals import goal_outline
from core.inspector.membership import context_membership
from core.inspector.panels import grant_rows, skill_rows
from core.inspector.timeline import TimelineRow
from core.inspector.trace_list import group_evals, summaries
from core.records import Trace
from core.store import Store
from tests.conftest import TRACES
from tests.sample_trace import write_long_trace
from ui.dialogs.compact import RETENTION_COLUMNS
from ui.dialogs.diff_model import DiffModel
from ui.icons import status_icon
from ui.panes.context import ROW_COLUMNS
from ui.panes.goals import GoalTreeModel, SummaryRole
from ui.panes.skills_grants import GRANT_COLUMNS, SKILL_COLUMNS
from ui.panes.table_model import RecordTableModel
from ui.panes.trace_tree import TraceFilter, TraceTreeModel
from ui.timeline.model import InContextRole, RowRole, TimelineModel

BIG = 100_000


@pytest.fixture(scope="session")
def big_store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.db"
    with Store.open(path) as s:
        write_long_trace(s, BIG, compact_every=5000)
    return path


def _timeline(store: Store, trace_id: str, page_size: int = 256) -> TimelineModel:
    model = TimelineModel(page_size=page_size)
    with store.read() as r:
        segs = r.segments(trace_id)
        placed, _ = bands(r, trace_id, segs)
        forks = fork_badges(branches(r, trace_id, segs))
        member = context_membership(r, trace_id)
    model.set_source(store, trace_id, None, segs, placed, forks)
    model.set_membership(member)
    return model


def test_timeline_model_passes_the_model_tester(
    qtmodeltester: Any, sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as store:
        model = _timeline(store, sample_trace.id, page_size=8)
        qtmodeltester.check(model)
        with store.read() as r:
            path = r.main_path_sequences(sample_trace.id)
        model.set_filter([0, 3, len(path) - 1])
        qtmodeltester.check(model)
        assert [model.row_record(i).sequence for i in range(3)] == [path[0], path[3], path[-1]]  # type: ignore[union-attr]


def test_timeline_rows_interleave_bands_after_their_anchor(
    sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as store:
        model = _timeline(store, sample_trace.id, page_size=5)
        with store.read() as r:
            path = r.main_path_sequences(sample_trace.id)
            events = r.compactions(sample_trace.id)
        records = [model.row_record(i) for i in range(model.rowCount())]
    assert model.rowCount() == len(path) + len(events)
    seqs = [rec.sequence for rec in records if isinstance(rec, TimelineRow)]
    assert seqs == path
    for ev in events:
        at = next(
            i for i, rec in enumerate(records) if isinstance(rec, Band) and rec.event_id == ev.id
        )
        before = records[at - 1]
        assert isinstance(before, TimelineRow) and before.sequence == ev.at_sequence


def test_timeline_dims_exactly_what_left_the_context(
    sample_path: Path, sample_trace: Trace
) -> None:
    from core.context.view import current_items

    with Store.open(sample_path) as store:
        model = _timeline(store, sample_trace.id)
        with store.read() as r:
            items, _ = current_items(r, sample_trace.id)
        live = {i.sequence for i in items if i.sequence is not None}
        shown = {}
        for row in range(model.rowCount()):
            rec = model.row_record(row)
            if isinstance(rec, TimelineRow):
                shown[rec.sequence] = model.data(model.index(row), InContextRole)
    assert {s for s, v in shown.items() if v} == live
    assert any(not v for v in shown.values())


def test_timeline_model_on_100k_messages_fetches_only_what_is_asked(
    qtmodeltester: Any, big_store_path: Path
) -> None:
    with Store.open(big_store_path) as store:
        trace = store.traces()[0]
        model = _timeline(store, trace.id)
        n_bands = len(model.bands)
        assert n_bands == BIG // 5000 - 1
        assert model.rowCount() == BIG + n_bands
        assert model.page_cache.fetched == 0, "opening fetches no rows"
        # the last rows: the last message is sequence BIG-1 (a straight line)
        last = model.row_record(model.rowCount() - 1)
        assert isinstance(last, TimelineRow) and last.sequence == BIG - 1
        for path_row in (0, 4_999, 5_000, 54_321, BIG - 1):
            view_row = model.view_row_of(path_row)
            assert view_row is not None
            rec = model.data(model.index(view_row), RowRole)
            assert isinstance(rec, TimelineRow) and rec.sequence == path_row
            assert model.locate(view_row) == ("row", path_row)
        # the row after message 4999 is its snip band
        band = model.row_record(model.view_row_of(4_999) + 1)  # type: ignore[operator]
        assert isinstance(band, Band) and band.at_sequence == 4_999
        # only the current context (after the last boundary) is live
        live = model.data(model.index(model.view_row_of(BIG - 1)), InContextRole)  # type: ignore[arg-type]
        dead = model.data(model.index(model.view_row_of(10)), InContextRole)  # type: ignore[arg-type]
        assert live is True and dead is False
        assert model.page_cache.fetched <= 8
        assert len(model.page_cache) <= model.max_pages
        # sweeping the whole model keeps the cache bounded
        for view_row in range(0, model.rowCount(), 997):
            model.row_record(view_row)
        assert len(model.page_cache) <= model.max_pages
        model.set_filter(list(range(0, BIG, 1000)))
        qtmodeltester.check(model)


def test_table_models_pass_the_model_tester(
    qtmodeltester: Any, sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as store, store.read() as r:
        tables: list[tuple[list[Any], list[Any]]] = [
            (SKILL_COLUMNS, skill_rows(r, sample_trace.id)),
            (GRANT_COLUMNS, grant_rows(r, sample_trace.id)),
            (ROW_COLUMNS, list(current_report(r, sample_trace.id).rows)),
        ]
    for columns, records in tables:
        model: RecordTableModel[Any] = RecordTableModel(columns)
        model.set_records(records)
        assert model.rowCount() == len(records) > 0
        qtmodeltester.check(model)
        model.set_records([])
        qtmodeltester.check(model)


def test_goal_tree_model_passes_the_model_tester(
    qtmodeltester: Any, qapp: Any, sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as store, store.read() as r:
        nodes = goal_outline(r, sample_trace.id)
        tree = goal_tree_at(r, sample_trace.id)
    model = GoalTreeModel()
    model.set_nodes(nodes)
    qtmodeltester.check(model)
    top = [model.node(model.index(i, 0)).id for i in range(model.rowCount())]  # type: ignore[union-attr]
    assert top == [g.id for g in tree.children(None)] == ["1", "2", "3", "4"]
    one = model.index(0, 0)
    kids = [model.node(model.index(i, 0, one)).id for i in range(model.rowCount(one))]  # type: ignore[union-attr]
    assert kids == ["1.1", "1.2"]
    assert model.parent(model.index(0, 0, one)) == one
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        node = model.node(index)
        assert node is not None
        goal = tree.get(node.id)
        assert goal is not None
        icon = model.data(index, Qt.ItemDataRole.DecorationRole)
        assert isinstance(icon, QIcon) and not icon.isNull()
        font = model.data(index, Qt.ItemDataRole.FontRole)
        assert (font is not None and font.bold()) == (goal.id == tree.focus)
        assert model.data(index, SummaryRole) == goal.summary
        tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
        assert goal.title in tip and (not goal.summary or goal.summary in tip)
        spoken = model.data(index, Qt.ItemDataRole.AccessibleTextRole)
        assert node.status_label in spoken
    # icons differ per status (shape, not only colour): four distinct images
    images = {status_icon(s).pixmap(16, 16).toImage().bits().tobytes() for s in STATUSES}
    assert len(images) == 4
    model.set_nodes([])
    qtmodeltester.check(model)


def test_diff_and_retention_models_pass_the_model_tester(
    qtmodeltester: Any, qapp: Any, sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as store:
        cp = run_preview(store, sample_trace.id, request_for(sample_trace.metadata, "goal"))
    diff = DiffModel()
    diff.set_rows(cp.rows)
    qtmodeltester.check(diff)
    removed = next(n for n, r in enumerate(cp.rows) if r.status == "removed")
    font = diff.data(diff.index(removed, 1), Qt.ItemDataRole.FontRole)
    assert font is not None and font.strikeOut()
    assert diff.data(diff.index(removed, 5)) is None, "nothing on the right of a removed row"
    replaced = next(n for n, r in enumerate(cp.rows) if r.status == "replaced")
    assert "details cleared" in diff.data(diff.index(replaced, 5))
    retention = RecordTableModel(RETENTION_COLUMNS)
    retention.set_records(cp.retention)
    qtmodeltester.check(retention)
    lost = next(n for n, r in enumerate(cp.retention) if not r.kept)
    assert retention.data(retention.index(lost, 0)) == "LOST"
    assert retention.data(retention.index(lost, 0), Qt.ItemDataRole.ForegroundRole) is not None


def test_trace_tree_passes_the_model_tester(qtmodeltester: Any, sample_path: Path) -> None:
    with Store.open(sample_path) as store, store.read() as r:
        rows = group_evals(summaries(r))
    model = TraceTreeModel()
    model.set_rows(rows)
    assert model.rowCount() == len(rows) > 0 and len(model.records) == len(rows)
    qtmodeltester.check(model)
    proxy = TraceFilter()
    proxy.setSourceModel(model)
    proxy.sort(2, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(proxy)


ONE_SAMPLE = TRACES / "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/log/test_eval_log"


@pytest.mark.skipif(not ONE_SAMPLE.is_dir(), reason="no shared traces")
def test_an_eval_of_one_sample_says_one_sample(tmp_path: Path) -> None:
    """The eval row of a log with one sample read "1 samples" (subtitle and tooltip)."""
    from core.importers.api import import_paths
    from core.inspector.trace_list import EvalGroup
    from ui.panes.trace_tree import subtitle

    with Store.open(tmp_path / "s.db") as store:
        import_paths(store, [ONE_SAMPLE / "log_tool_call_error.json"])
        with store.read() as r:
            (group,) = [g for g in group_evals(summaries(r)) if isinstance(g, EvalGroup)]
    assert len(group.samples) == 1
    assert subtitle(group).startswith("1 sample · ") and group.label.endswith(" · 1 sample")
