"""The main window's panes and controllers, built after its first frame (issue 17).

Importing this module loads what the panes read with (the store, SQLAlchemy, the
inspector's reports): a second of a cold start that the window no longer waits for. The
docks they go into exist already (``ui/main_window.py:DOCKS``, shown as "Loading…").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui import live as live_ui
from ui.dialogs.imports import Importer
from ui.export import TraceExporter
from ui.fonts import use_emoji_fonts
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
from ui.timeline.widget import TimelineWidget

if TYPE_CHECKING:
    from ui.main_window import MainWindow


def build(w: MainWindow) -> None:
    """Make the panes, put each into its dock, then install what builds on them."""
    use_emoji_fonts()  # trace content is shown from here on
    s, r = w.session, w.runner
    w.timeline = TimelineWidget(s, r)
    w._center.replace(w.timeline)
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
