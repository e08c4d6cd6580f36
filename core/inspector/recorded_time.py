"""How a recorded time is shown: what the file recorded, never a zone it did not give.

A time whose instant is known (an epoch number, a string with a zone, or a naive time at
the offset its file let the importer find) is shown in the viewer's zone, like every
other time. A naive time whose zone could not be found was stored as if it were UTC
(``core/importers/times.py``): converting that to the viewer's zone would invent an
offset, so it is shown as the wall clock the file recorded, marked "time zone not
recorded". The trace's ``metadata.time_basis`` says which (``Basis``).
"""

from __future__ import annotations

import time
from typing import Any

from core.importers.times import offset_text

Basis = dict[str, Any] | None
"""A trace's ``metadata.time_basis``: ``None`` when its times carried their zone."""
NO_ZONE = "time zone not recorded"


def basis_of(metadata: Any) -> Basis:
    """The ``time_basis`` of a trace's metadata (``None`` without one)."""
    basis = metadata.get("time_basis") if isinstance(metadata, dict) else None
    return basis if isinstance(basis, dict) else None


def zone_unknown(basis: Basis) -> bool:
    """The times have no zone and none was found: they are the recorded wall clock."""
    return basis is not None and bool(basis.get("naive")) and basis.get("offset_minutes") is None


def found_offset(basis: Basis) -> int | None:
    """Minutes east of UTC the importer found for naive times (``None``: none found, or the
    times carried their zone)."""
    if basis is None or not basis.get("naive"):
        return None
    minutes = basis.get("offset_minutes")
    return minutes if isinstance(minutes, int) and not isinstance(minutes, bool) else None


def clock(ts: float, basis: Basis) -> time.struct_time:
    """``ts`` on the clock it is shown by: the viewer's, or the recorded wall clock."""
    return time.gmtime(ts) if zone_unknown(basis) else time.localtime(ts)


def shown(ts: float, basis: Basis, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    """``ts`` formatted, followed by "(time zone not recorded)" where it is unknown."""
    text = time.strftime(fmt, clock(ts, basis))
    return f"{text} ({NO_ZONE})" if zone_unknown(basis) else text


def created_text(ts: float, basis: Basis) -> str:
    """A message's time for its facts: ``shown``, marked "(zone derived)" where the importer
    found the zone rather than the file recording it (which zone, and from what: the facts'
    tooltip, ``zone_note``). Short enough for its line of the facts grid at 1280×720:
    "(derived zone UTC−08:00)" wrapped there and pushed the grid's last line out of view."""
    text = shown(ts, basis)
    return text if found_offset(basis) is None else f"{text} (zone derived)"


def zone_note(basis: Basis) -> str:
    """How the times were read, in words ("" when they carried their zone)."""
    if zone_unknown(basis):
        return f"{NO_ZONE}: shown as the file wrote them (read as UTC)"
    minutes = found_offset(basis)
    if minutes is None or basis is None:
        return ""
    source = str(basis.get("from") or "")
    return (
        f"the file wrote local times without a zone: read at {offset_text(minutes)}, "
        f"the offset {SOURCES.get(source, source or 'its absolute times')} give"
    )


SOURCES = {"llm response created": "its model responses' creation times"}
"""``time_basis.from`` in words."""
