"""Python's cycle collector paused while an import unit is read and written.

An import allocates a parsed record tree per line and frees it by reference counting a
moment later; almost nothing it makes is cyclic. The collector still runs every 700 net
allocations and walks every young object each time: 5 ms of a 2.9 MB Claude Code session's
~150 ms import, 14 ms of the whole ``ctxlens import`` (its held chains survive into the
older generations, which then get walked too). Paused, that work is not done; the few
cycles an import makes are collected by the first collection after it.

Process-wide (the collector has no per-thread switch), so nested and concurrent imports
count: the collector runs again when the last of them ends, and only if it ran before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic cycle collection inside (restored when the last holder leaves)."""
    global _active, _was_enabled
    with _lock:
        if _active == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _was_enabled:
                gc.enable()
