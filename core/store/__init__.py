"""The trace store (SPEC STORE-1..8). See docs/store.md.

The names below load on first use (PEP 562), so a stdlib-only submodule such as
``core.store.quick`` imports without SQLAlchemy (``ctxlens traces`` starts in a fraction
of the time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.lazy_names import lazy_getattr

if TYPE_CHECKING:
    from core.store.reader import Reader
    from core.store.store import Store
    from core.store.writer import HEAD, Writer

__all__ = ["HEAD", "Reader", "Store", "Writer"]

_HOMES = {
    "HEAD": "core.store.writer",
    "Reader": "core.store.reader",
    "Store": "core.store.store",
    "Writer": "core.store.writer",
}


__getattr__ = lazy_getattr(__name__, _HOMES, globals())
