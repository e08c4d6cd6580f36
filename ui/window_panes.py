"""The main window's panes and controllers but the timeline, built after its rows are
painted (issues 17, 20).

Importing this module loads what the panes read with (the inspector's reports, the
runtime, the live sources, Pygments): most of a cold start, which the trace's rows no
longer wait for (``ui/window_timeline.py`` builds the timeline first). The docks they go
into exist already (``ui/window_layout.py:DOCKS``, shown as "Loading…").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui import live as live_ui
from ui.dialogs.imports import Importer
from ui.export import TraceExporter
from ui.panes.budget import BudgetPane
from ui.panes.context import ContextPane
from ui.panes.delegation import DelegationPane
from ui.panes.detail import MessageDetailPane
from ui.panes.goals import GoalPane
from ui.panes.skills_grants import GrantsPane, RecordsLoader, SkillsPane
from ui.panes.traces import TraceBrowser
from ui.replay.install import install as install_replay
from ui.run_controller import RunController
from ui.search import install as search_ui

if TYPE_CHECKING:
    from ui.main_window import MainWindow


def build(w: MainWindow) -> None:
    """Make the panes (the timeline exists), put each into its dock, then install what
    builds on them."""
    s, r = w.session, w.runner
    w.traces = TraceBrowser(s, w.settings, r)
    w.goals = GoalPane(s, r)
    w.detail = MessageDetailPane(s, r)
    w.context = ContextPane(s, r)
    w.skills = SkillsPane()
    w.grants = GrantsPane()
    w.budget = BudgetPane()
    w.delegation = DelegationPane(s, r)
    w.records = RecordsLoader(s, r, w.skills, w.grants)
    for name in ("traces", "goals", "detail", "context", "skills", "grants", "budget",
                 "delegation"):  # fmt: skip
        w.docks[name].setWidget(getattr(w, name))
    w.live = RunController(s, w)
    w.importer = Importer(s, r, w)
    w.exporter = TraceExporter(w, s, r)
    w.replay = install_replay(w)  # playback scrubber, Re-run with…, Compare (#9)
    w.search_all = search_ui.install(w)  # Search all traces… (#21)
    w.sources = live_ui.install(w)  # Sources pane, live traces followed (#16)


def catch_up(w: MainWindow) -> None:
    """Tell the panes what happened before they existed: the store was opened (the trace
    list, the run controls and the live sources read it), the main path was loaded (the
    goals, context, records and delegation panes and the scrubber load theirs) and a
    message was selected (the detail pane shows it)."""
    if w.session.store is not None:
        w.session.store_changed.emit()
    source = w.timeline.source
    if source is not None and source.head is None:
        w.timeline.main_path_loaded.emit()
    selected = w.timeline.selected_sequence()
    if selected is not None:
        w.detail.show_message(selected)
