"""A source-id → sequence map whose memory does not grow with the trace.

Importers link records by the ids the source gave them (Claude Code ``uuid``, OpenHands
event ids, tool call ids). Most lookups are for recent records, so the newest entries stay
in a dict and older ones spill, in batches, to a temporary table of the import's own
connection (rolled back with it on error).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable

from sqlalchemy import Connection, text

_TABLE = "ctxlens_import_ids"


class IdMap:
    """``str → int`` with at most ``capacity`` entries in memory."""

    def __init__(self, conn: Connection, capacity: int = 8192) -> None:
        self._conn = conn
        self._capacity = max(2, capacity)
        self._mem: dict[str, int] = {}
        self._ns = uuid.uuid4().hex[:12]
        self._spilled = False

    def __setitem__(self, key: str, value: int) -> None:
        mem = self._mem
        if key in mem:
            del mem[key]  # keep insertion order = recency
        mem[key] = value
        if len(mem) > self._capacity:
            self._spill()

    def update_all(self, keys: Iterable[str], value: int) -> None:
        """``self[key] = value`` for every key (a Claude Code unit maps all its record
        uuids to the message that ends it: one call per unit, not per record)."""
        mem = self._mem
        for key in keys:
            if key in mem:
                del mem[key]
            mem[key] = value
        while len(mem) > self._capacity:
            self._spill()

    def get(self, key: str | None) -> int | None:
        if key is None:
            return None
        hit = self._mem.get(key)
        if hit is not None or not self._spilled:
            return hit
        row = self._conn.execute(
            text(f"SELECT v FROM {_TABLE} WHERE ns = :ns AND k = :k"), {"ns": self._ns, "k": key}
        ).first()
        return None if row is None else int(row[0])

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def _spill(self) -> None:
        if not self._spilled:
            self._conn.execute(
                text(
                    f"CREATE TEMPORARY TABLE IF NOT EXISTS {_TABLE} "
                    "(ns VARCHAR(16) NOT NULL, k TEXT NOT NULL, v INTEGER NOT NULL, "
                    "PRIMARY KEY (ns, k))"
                )
            )
            self._spilled = True
        n = len(self._mem) // 2
        old = list(itertools.islice(self._mem.items(), n))
        for k, _ in old:
            del self._mem[k]
        self._conn.execute(
            text(f"DELETE FROM {_TABLE} WHERE ns = :ns AND k = :k"),
            [{"ns": self._ns, "k": k} for k, _ in old],
        )
        self._conn.execute(
            text(f"INSERT INTO {_TABLE} (ns, k, v) VALUES (:ns, :k, :v)"),
            [{"ns": self._ns, "k": k, "v": v} for k, v in old],
        )

    def rebind(self, conn: Connection) -> None:
        """Go on in another transaction (live capture keeps a map across many). Spilled rows
        live in the old connection's temporary table, so they are read back first and this
        map no longer spills."""
        if self._spilled:
            rows = self._conn.execute(
                text(f"SELECT k, v FROM {_TABLE} WHERE ns = :ns"), {"ns": self._ns}
            ).all()
            self.close()
            self._mem.update({str(k): int(v) for k, v in rows})
            self._spilled = False
        self._conn = conn
        self._capacity = 1 << 62

    def close(self) -> None:
        """Forget spilled rows (the temporary table outlives a committed transaction)."""
        if self._spilled:
            self._conn.execute(text(f"DELETE FROM {_TABLE} WHERE ns = :ns"), {"ns": self._ns})
        self._mem.clear()
