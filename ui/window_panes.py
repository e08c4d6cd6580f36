"""The main window's panes and controllers but the timeline, built after its rows are
painted (issues 17, 20), one pane at a time.

What the panes read with (the inspector's reports, the runtime, the live sources,
Pygments) is most of a cold start; the trace's rows do not wait for it
(``ui/window_timeline.py`` builds the timeline first). After the rows, ``ui/preload.py``
loads those modules on a worker thread; then each step of ``STEPS`` builds one pane (its
``ui`` module imported there) in a turn of the event loop of its own, so the window keeps
answering input meanwhile. The docks say "Loading…" (``ui/window_layout.py:DOCKS``) until
every pane is made; ``place`` then puts them in, and ``catch_up`` tells them what they
missed. ``build`` runs every step at once (tests, scripts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ui.main_window import MainWindow


def _traces(w: MainWindow) -> None:
    from ui.panes.traces import TraceBrowser

    w.traces = TraceBrowser(w.session, w.settings, w.runner)


def _goals(w: MainWindow) -> None:
    from ui.panes.goals import GoalPane

    w.goals = GoalPane(w.session, w.runner)


def _detail(w: MainWindow) -> None:
    from ui.panes.detail import MessageDetailPane

    w.detail = MessageDetailPane(w.session, w.runner)


def _context(w: MainWindow) -> None:
    from ui.panes.context import ContextPane

    w.context = ContextPane(w.session, w.runner)


def _records(w: MainWindow) -> None:
    from ui.panes.budget import BudgetPane
    from ui.panes.skills_grants import GrantsPane, RecordsLoader, SkillsPane

    w.skills = SkillsPane()
    w.grants = GrantsPane()
    w.budget = BudgetPane()
    w.records = RecordsLoader(w.session, w.runner, w.skills, w.grants)
    w.records.neither_recorded = lambda: _budget_in_front(w)


def _budget_in_front(w: MainWindow) -> None:
    """A trace that records neither skills nor grants (an import): if one of those two
    empty tabs is in front, the Budget tab comes forward (its figures hold for any trace).
    At 1280×720 the empty Skills tab took a fifth of the window on every import while the
    timeline showed nine rows (screenshot review)."""
    if any(not w.docks[n].visibleRegion().isEmpty() for n in ("skills", "grants")):
        w.docks["budget"].raise_()


def _delegation(w: MainWindow) -> None:
    from ui.panes.delegation import DelegationPane

    w.delegation = DelegationPane(w.session, w.runner)


def _controllers(w: MainWindow) -> None:
    from ui.dialogs.imports import Importer
    from ui.export import TraceExporter
    from ui.run_controller import RunController

    w.live = RunController(w.session, w, w.runner)
    w.importer = Importer(w.session, w.runner, w)
    w.exporter = TraceExporter(w, w.session, w.runner)


def _replay(w: MainWindow) -> None:
    from ui.replay.install import install

    w.replay = install(w)  # playback scrubber, Re-run with…, Compare (#9)


def _search(w: MainWindow) -> None:
    from ui.search.install import install

    w.search_all = install(w)  # Search all traces… (#21)


def _sources(w: MainWindow) -> None:
    from ui.live import install

    w.sources = install(w)  # Sources pane, live traces followed (#16)


#: In this order: the panes first (the visible ones before the tabbed-away ones), then
#: what builds on them.
STEPS: tuple[Callable[[MainWindow], None], ...] = (
    _traces,
    _detail,
    _context,
    _goals,
    _records,
    _delegation,
    _controllers,
    _replay,
    _search,
    _sources,
)


#: The docks the steps' panes go into, all in one go (``place``).
DOCKED = ("traces", "goals", "detail", "context", "skills", "grants", "budget", "delegation")


def build(w: MainWindow) -> None:
    """Make every pane at once (the timeline exists)."""
    for step in STEPS:
        step(w)


def place(w: MainWindow) -> None:
    """Put the panes into their docks, right before ``catch_up`` (same loop turn): a pane
    is never painted before it knows the store and the trace (it would say "No store
    open", "No goals recorded" meanwhile)."""
    for name in DOCKED:
        w.docks[name].setWidget(getattr(w, name))


def catch_up(w: MainWindow) -> None:
    """Tell the panes what happened before they existed: a message was selected (the
    detail pane shows it), the store was opened (the trace list, the run controls and the
    live sources read it) and the main path was loaded (the goals, context, records and
    delegation panes and the scrubber load theirs)."""
    selected = w.timeline.selected_sequence()
    if selected is not None:  # first: its read is short, the others' can take seconds
        w.detail.show_message(selected)
    if w.session.store is not None:
        w.session.store_changed.emit()
    source = w.timeline.source
    if source is not None and source.head is None:
        w.timeline.main_path_loaded.emit()
