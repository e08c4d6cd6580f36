"""Live sources in the window: the folder watcher and the OTLP receiver, writing to the
open store from their own threads, and the panes that follow what they write.

``install(window)`` is the main window's only line about them: it adds the Sources pane
and routes each change to the Traces pane (a new trace) and to the timeline (the open trace
grew: rows are inserted, ``TimelineWidget.follow_live``). Other kinds of source (the
recording proxy) join with ``LiveSources.add_source``: the pane lists anything with
``status()``, ``start()`` and ``stop()`` (``core/live/source.py:Source``).
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from core.errors import CtxlensError
from core.live.folders import added_folders, save_folders, tool_folders
from core.live.otlp_server import OtlpReceiver
from core.live.source import LiveChange, Source
from core.live.watch import Watcher
from ui.session import Session

if TYPE_CHECKING:
    from ui.main_window import MainWindow

DEFAULT_OTLP = ("127.0.0.1", 4318)


class LiveSources(QObject):
    """The sources of the open store; their changes arrive as ``changed`` on the UI thread."""

    changed = Signal(object)
    sources_changed = Signal()

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.watching = False
        self.receiving = False
        self.otlp_address = DEFAULT_OTLP
        self.watcher: Watcher | None = None
        self.receiver: OtlpReceiver | None = None
        self.extra: list[Source] = []
        session.closing.connect(self.stop_all)
        session.store_changed.connect(self._store_changed)

    # -- what the pane lists ------------------------------------------------------------
    def sources(self) -> list[Source]:
        own: list[Source] = [s for s in (self.watcher, self.receiver) if s is not None]
        return own + self.extra

    def add_source(self, source: Source) -> None:
        self.extra.append(source)
        self.sources_changed.emit()

    def folders(self) -> list[tuple[Path, bool]]:
        """Watched folders, each with whether the user added it (and may remove it)."""
        added = added_folders()
        return [(f, False) for f in tool_folders() if f not in added] + [(f, True) for f in added]

    # -- commands -----------------------------------------------------------------------
    def set_watching(self, on: bool) -> None:
        self.watching = on
        self._restart_watcher()

    def add_folder(self, folder: Path) -> None:
        save_folders([*added_folders(), folder])
        self._restart_watcher()

    def remove_folder(self, folder: Path) -> None:
        save_folders([f for f in added_folders() if f != folder])
        self._restart_watcher()

    def set_receiving(self, on: bool, address: tuple[str, int] | None = None) -> None:
        """Start or stop the OTLP receiver; a port in use leaves it in the error state."""
        self.receiving = on
        self.otlp_address = address or self.otlp_address
        if self.receiver is not None:
            self.receiver.stop()
            self.receiver = None
        store = self.session.store
        if store is not None:
            host, port = self.otlp_address
            self.receiver = OtlpReceiver(store, host, port, listener=self._emit)
            try:
                if on:
                    self.receiver.start()
            finally:
                self.sources_changed.emit()

    def stop_all(self) -> None:
        for source in self.sources():
            source.stop()

    # -- internals ----------------------------------------------------------------------
    def _emit(self, change: LiveChange) -> None:
        self.changed.emit(change)  # from a source thread: queued to the UI thread

    def _restart_watcher(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        store = self.session.store
        self.watcher = None
        if store is not None:
            folders = [f for f, _ in self.folders()]
            self.watcher = Watcher(store, folders, listener=self._emit)
            if self.watching:
                self.watcher.start()
        self.sources_changed.emit()

    def _store_changed(self) -> None:
        self._restart_watcher()
        with suppress(CtxlensError):  # the port is taken: the pane shows the receiver's error
            self.set_receiving(self.receiving)


def install(window: MainWindow) -> LiveSources:
    from ui.panes.sources import SourcesPane

    live = LiveSources(window.session, window)
    pane = SourcesPane(live)
    window._dock("sources", "Sources", pane, Qt.DockWidgetArea.LeftDockWidgetArea)
    window.tabifyDockWidget(window.docks["goals"], window.docks["sources"])
    window.docks["goals"].raise_()
    counts = QTimer(window)  # the Traces pane's message counts, at most once a second
    counts.setSingleShot(True)
    counts.setInterval(1000)
    counts.timeout.connect(lambda: _reload_traces(window))
    window.session.closing.connect(counts.stop)
    live.changed.connect(lambda change: _follow(window, change, counts))
    pane.failed.connect(lambda exc: window.report_error(exc, "Sources"))
    return live


def _follow(window: MainWindow, change: LiveChange, counts: QTimer) -> None:
    session = window.session
    if change.new_trace:
        _reload_traces(window)
        if session.trace_id is None:
            session.select_trace(change.trace_id)
    elif not counts.isActive():
        counts.start()
    if change.trace_id == session.trace_id:
        window.timeline.follow_live()


def _reload_traces(window: MainWindow) -> None:
    """Reload the trace list, keeping a multi-selection (two traces picked to compare)."""
    chosen = window.traces.selected_ids()
    window.traces.reload()
    if len(chosen) > 1:
        window.traces.select_ids(chosen)
