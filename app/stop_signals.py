"""Ctrl-C and SIGTERM as a request to stop, for commands that can stop cleanly.

``ctxlens watch`` records the open responses' calls before it exits; ``ctxlens import``
rolls back the file it is reading and reports the traces it finished. Both need the
signal as a flag their loop checks, not an exception thrown from wherever the code was.
A second signal while the first is being honoured is the user insisting: it raises
``KeyboardInterrupt`` as Python's default handler would (``app/cli.py:main`` says
"interrupted").
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """While inside, SIGINT and SIGTERM set ``stop``; the previous handlers come back on
    the way out. Off the main thread (signals reach only it) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(_sig: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    old = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    for sig in _SIGNALS:
        signal.signal(sig, handle)
    try:
        yield stop
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
