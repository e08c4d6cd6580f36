"""Wires "Search all traces…" into the main window (its only line about search)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from ui.main_window import MainWindow
    from ui.search.window import SearchWindow

TIP = "Search messages and tool calls in every trace of the store, with filters"


class SearchUi(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.search_window: SearchWindow | None = None
        window.registry.add(
            "nav.search_all", "Search &all traces…", self.show, "Ctrl+Alt+F", TIP, "Navigate"
        )

    def show(self) -> SearchWindow:
        from ui.search.window import SearchWindow

        if self.search_window is None:
            w = self.window
            self.search_window = SearchWindow(lambda: w.session.store, w.runner, w)
            self.search_window.open_hit.connect(self.open_hit)
        self.search_window.show()
        self.search_window.raise_()
        self.search_window.box.setFocus()
        return self.search_window

    def open_hit(self, trace_id: str, sequence: int | None) -> None:
        if sequence is not None:
            self.window.timeline.select_after_reload(sequence)
        self.window.open_trace(trace_id)


def install(window: MainWindow) -> SearchUi:
    return SearchUi(window)
