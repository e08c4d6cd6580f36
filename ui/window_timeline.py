"""The main window's timeline, built before every other pane (issue 20: the trace's rows
first).

Importing this module loads the timeline's model and the few core modules its rows are made
with; neither the store nor SQLAlchemy: at start-up a current SQLite store's first rows are
read with ``sqlite3`` alone (``first_rows``, ``core/store/first_page.py``), and the ``Store``
opens once they are painted (``open_after_rows``). What the other panes need loads after
that (``ui/window_panes.py:build``), their docks saying "Loading…" meanwhile. The core
modules come first, without PySide6's import hook (``ui/core_preload.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.store.first_page import QuickStore
from ui.core_preload import STORE_CORE, preload  # the timeline's core modules first
from ui.fonts import use_emoji_fonts
from ui.timeline.widget import TimelineWidget

if TYPE_CHECKING:
    from ui.main_window import MainWindow


def build_timeline(w: MainWindow) -> None:
    """Make the timeline and put it in the window's centre (in place of "Loading…")."""
    use_emoji_fonts()  # trace content is shown from here on
    w.timeline = TimelineWidget(w.session, w.runner)
    w._center.replace(w.timeline)


def first_rows(
    w: MainWindow, path: str | Path, trace_id: str | None, failed: Callable[[], None]
) -> Callable[[], None] | None:
    """Show the trace a start opens from a current SQLite store file, read without the
    ``Store``, and return what opens the ``Store`` once those rows are painted; ``None``
    (nothing done) for anything else: the caller opens the ``Store``, which migrates an old
    store and names what is wrong. ``failed`` runs when the first rows cannot be read this
    way after all (the caller opens the ``Store`` then)."""
    store = QuickStore.open(path)
    if store is None:
        return None
    w.timeline.show_first(store, trace_id, failed)
    return lambda: open_after_rows(w, path)


def open_after_rows(w: MainWindow, path: str | Path) -> None:
    """The first rows are painted: open the ``Store`` on the trace they show (its
    ``changed`` refreshes the timeline in place, without a reset, and loads the context
    membership; the panes built next find it open)."""
    trace_id = w.timeline.first_trace
    if trace_id is not None and w.session.store is None:
        w.timeline.panes_at_handover = w.ready  # else their catch-up tells them, once
        open_store(w, path, trace_id)


def open_store(w: MainWindow, path: str | Path, trace_id: str | None) -> None:
    """``MainWindow.open_store``, with the store's modules imported without PySide6's hook."""
    preload(STORE_CORE)
    w.open_store(path, trace_id)
