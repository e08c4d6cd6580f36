"""The timeline's core modules (the inspector's row builders; then the store and
SQLAlchemy), imported without PySide6's import hook.

Once PySide6 is loaded, every ``import`` statement goes through its ``__feature_import__``,
which reads the source of each newly imported module (``inspect.getsource``) to learn
whether it mentions PySide6 (for ``__feature__`` switching and lazy star imports). ``core/``
never imports Qt (the layers contract in ``pyproject.toml``), so for the ~190 modules behind
the timeline (SQLAlchemy most of them) that read only ever concludes "no": about 15 % of
the CPU of importing them, on the cold start's path to the trace's rows. They are imported
here through ``importlib.__import__``, the interpreter's own import, with the hook put back
afterwards. Modules outside this list import as before; one this list misses only costs
the hook's read again.

``TIMELINE_CORE`` is imported on the UI thread at the window's first frame, ``STORE_CORE``
when the store opens (after the first rows, or at once when they need the store).
``builtins.__import__`` is process-wide while it is swapped, so a worker thread importing
meanwhile (a first start records the demo run on one) skips the hook too: harmless here,
ctxlens uses neither ``__feature__`` nor star imports from PySide6.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Iterator
from contextlib import contextmanager

#: What ``ui/timeline/*`` makes rows with (``ui/window_timeline.py`` imports them first):
#: no SQLAlchemy, the first page is read with ``sqlite3`` (``core/store/first_page.py``).
TIMELINE_CORE = (
    "core.records",
    "core.store",
    "core.store.paths",
    "core.store.first_page",
    "core.inspector.bands",
    "core.inspector.branches",
    "core.inspector.timeline",
)

#: The store itself and what the timeline reads with it once it is open (SQLAlchemy most
#: of it): imported when the store opens, after the first rows are painted
#: (``ui/window_timeline.py:open_store``).
STORE_CORE = (
    "core.store.store",
    "core.store.reader",
    "core.inspector.membership",
)


@contextmanager
def without_qt_import_hook() -> Iterator[None]:
    """Imports inside go through ``importlib.__import__``; the hook is restored after."""
    hook = builtins.__import__
    builtins.__import__ = importlib.__import__
    try:
        yield
    finally:
        builtins.__import__ = hook


def preload(names: tuple[str, ...] = TIMELINE_CORE) -> None:
    """Import ``names`` (modules of ``core/`` only: no Qt) without PySide6's import hook."""
    with without_qt_import_hook():
        for name in names:
            importlib.import_module(name)


preload()
