"""The recording proxy as a live source (``core/live/source.py:Source``) for the Sources pane.

``start`` and ``stop`` return at once: the proxy binds, recovers requests a kill left in
flight and serves on threads of its own (``core/proxy/server.py:ProxyServer.start``), so
the window never waits for a port or the store. Each recorded call is told to the
listener as a ``LiveChange`` (the trace's first call as a new trace).
"""

from __future__ import annotations

import threading
from typing import Any

from core.live.source import Listener, LiveChange, SourceStatus, State
from core.proxy.server import ProxyServer, ProxyStatus

STATES: dict[str, State] = {
    "starting": "starting",
    "listening": "listening",
    "stopped": "stopped",
    "failed": "error",
}


class ProxySource:
    kind = "proxy"

    def __init__(self, server: ProxyServer, listener: Listener | None = None) -> None:
        """``server``: not started yet; each call it records is told to ``listener``."""
        self.listener = listener
        self.server = server
        server.on_call = self._called
        self.after: ProxySource | None = None
        self._thread: threading.Thread | None = None
        self._failure = ""
        self._started = False

    @property
    def url(self) -> str:
        return self.server.url

    def status(self) -> SourceStatus:
        s: ProxyStatus = self.server.status
        state = STATES.get(s.state, "error")
        if not self._started:
            state = "stopped"
        elif self._failure:
            state = "error"
        return SourceStatus(
            kind=self.kind,
            name="Recording proxy",
            state=state,
            address=f"{s.address} → {s.upstream}",
            traces_seen=s.traces_seen,
            errors=s.errors + bool(self._failure),
            last_error=self._failure or s.last_error or "",
            calls=s.calls,
        )

    def start(self, after: ProxySource | None = None) -> None:
        """Bind and serve on threads of its own, once ``after`` (a proxy being stopped,
        maybe on the same port) has stopped."""
        if self._started:
            return
        self._started, self.after = True, after
        self._thread = threading.Thread(target=self._serve, name="ctxlens-proxy-start", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Ask the proxy to stop; it records what is in flight as incomplete and exits."""
        self.server.request_stop()

    def join(self, timeout: float = 30.0) -> None:
        """Wait until the proxy has stopped (closing the window, tests)."""
        if self._thread is not None:
            self._thread.join(timeout)
        self.server.join(timeout)

    def _serve(self) -> None:
        if self.after is not None:
            self.after.join()
            self.after = None
        try:
            self.server.start()
        except Exception as exc:  # shown in the pane: a port in use, a store error
            self._failure = f"cannot listen on {self.server.host}:{self.server.port}: {exc}"

    def _called(self, event: dict[str, Any]) -> None:
        if self.listener is not None:
            self.listener(
                LiveChange("proxy", str(event["trace"]), event["call"] == 0, 1, event["api"])
            )
