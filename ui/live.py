"""Live sources in the window: the folder watcher, the OTLP receiver and the recording
proxy, writing to the open store from their own threads, and the panes that follow what
they write.

``install(window)`` is the main window's only line about them: it adds the Sources pane
and routes each change to the Traces pane (a new trace) and to the timeline (the open trace
grew: rows are inserted, ``TimelineWidget.follow_live``). Other kinds of source join with
``LiveSources.add_source``: the pane lists anything with ``status()``, ``start()`` and
``stop()`` (``core/live/source.py:Source``). The proxy's listen address, upstream and
whether it is on are remembered in the settings (``proxy/…``).
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from core.errors import CtxlensError, InvalidInputError
from core.live.folders import added_folders, save_folders, tool_folders
from core.live.otlp_server import OtlpReceiver, parse_address
from core.live.source import LiveChange, Source
from core.live.watch import Watcher
from ui.session import Session
from ui.settings import AppSettings

if TYPE_CHECKING:
    from core.proxy.source import ProxySource
    from ui.main_window import MainWindow

DEFAULT_OTLP = ("127.0.0.1", 4318)
DEFAULT_PROXY = "127.0.0.1:8787"


class LiveSources(QObject):
    """The sources of the open store; their changes arrive as ``changed`` on the UI thread."""

    changed = Signal(object)
    sources_changed = Signal()

    def __init__(self, session: Session, settings: AppSettings | None, parent: QObject) -> None:
        super().__init__(parent)
        self.session = session
        self.settings = settings
        self.watching = False
        self.receiving = False
        self.otlp_address = DEFAULT_OTLP
        self.watcher: Watcher | None = None
        self.receiver: OtlpReceiver | None = None
        self.proxy: ProxySource | None = None
        self.proxying = self._remembered("on", "false") == "true"
        self.proxy_listen = self._remembered("listen", DEFAULT_PROXY)
        self.proxy_upstream = self._remembered("upstream", "")
        self.extra: list[Source] = []
        self._retired: list[ProxySource] = []
        """Proxies asked to stop, joined by ``stop_all``."""
        session.closing.connect(self.stop_all)
        session.store_changed.connect(self._store_changed)

    # -- what the pane lists ------------------------------------------------------------
    def sources(self) -> list[Source]:
        own = [s for s in (self.watcher, self.receiver, self.proxy) if s is not None]
        return [*own, *self.extra]

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

    def set_proxy(self, on: bool, listen: str | None = None, upstream: str | None = None) -> None:
        """Start or stop the recording proxy (it binds on a thread of its own); a bad
        address or upstream URL is an ``InvalidInputError`` and changes nothing."""
        listen = self.proxy_listen if listen is None else listen.strip()
        upstream = self.proxy_upstream if upstream is None else upstream.strip()
        host, port = parse_address(listen)
        store = self.session.store
        new = None
        if on and store is not None:
            if not upstream:
                raise InvalidInputError(
                    "Proxy: give the upstream URL, e.g. https://api.openai.com/v1"
                )
            from core.proxy.server import ProxyServer  # httpx: loaded on first use
            from core.proxy.source import ProxySource

            server = ProxyServer(store, upstream, host, port)  # checks the URL
            new = ProxySource(server, listener=self._emit)
        if self.proxy is not None:
            self.proxy.stop()
            self._retired.append(self.proxy)
        old, self.proxy = self.proxy, new
        if new is not None:
            new.start(after=old)
        self.proxying, self.proxy_listen, self.proxy_upstream = on, listen, upstream
        self._remember(on=str(on).lower(), listen=listen, upstream=upstream)
        self.sources_changed.emit()

    def stop_all(self) -> None:
        for source in self.sources():
            source.stop()
        for proxy in [*self._retired, *([self.proxy] if self.proxy else [])]:
            proxy.join()  # what was in flight is recorded as incomplete before the exit
        self._retired.clear()

    def _remembered(self, key: str, default: str) -> str:
        value = self.settings.get(f"proxy/{key}", default) if self.settings else default
        return str(value)

    def _remember(self, **values: str) -> None:
        if self.settings is not None:
            for key, value in values.items():
                self.settings.set(f"proxy/{key}", value)

    # -- internals ----------------------------------------------------------------------
    def _emit(self, change: LiveChange) -> None:
        self.changed.emit(change)  # from a source thread: queued to the UI thread

    def _restart_watcher(self) -> None:
        if self.watcher is not None:  # still watching: the next watcher goes on at once
            self.watcher.stop(end=not (self.watching and self.session.store is not None))
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
        with suppress(CtxlensError):  # a remembered address gone bad: the pane shows it off
            self.set_proxy(self.proxying)


def install(window: MainWindow) -> LiveSources:
    from ui.panes.sources import SourcesPane

    live = LiveSources(window.session, window.settings, window)
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
    """Reload the trace list (it keeps a multi-selection: two traces picked to compare)."""
    window.traces.reload()
