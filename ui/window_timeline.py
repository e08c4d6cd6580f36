"""The main window's timeline, built before every other pane (issue 20: the trace's rows
first).

Importing this module loads what the rows are read with (the store, SQLAlchemy, the
timeline's model), and nothing the other panes need: those load after the rows are painted
(``ui/window_panes.py:build``), their docks saying "Loading…" meanwhile. The core modules
come first, without PySide6's import hook (``ui/core_preload.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ui.core_preload  # noqa: F401  (the store and SQLAlchemy first, without PySide6's hook)
from ui.fonts import use_emoji_fonts
from ui.timeline.widget import TimelineWidget

if TYPE_CHECKING:
    from ui.main_window import MainWindow


def build_timeline(w: MainWindow) -> None:
    """Make the timeline and put it in the window's centre (in place of "Loading…")."""
    use_emoji_fonts()  # trace content is shown from here on
    w.timeline = TimelineWidget(w.session, w.runner)
    w._center.replace(w.timeline)
