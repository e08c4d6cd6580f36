"""Which imported messages carry no recorded time, per format, on the real traces.

``python -m tools.undated_survey [FOLDER]`` (default: shared/traces) imports every unit of
the folder into a temporary store and prints one row per file: its format, messages,
messages without a recorded time (the trace metadata ``undated``, ``core/undated.py``) by
role, and what their time was filled with. ``--json``: the rows as JSON.
"""

from __future__ import annotations

import collections
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from core.importers.api import import_paths, plan_paths
from core.store import Store
from core.undated import undated_of

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "traces"


def survey(folder: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as d:
        for n, unit in enumerate(plan_paths([folder]).units):
            with Store.open(Path(d) / f"{n}.db") as store:
                results = import_paths(store, [unit.path])
                total, undated = 0, 0
                roles: collections.Counter[str] = collections.Counter()
                filled: set[str] = set()
                with store.read() as r:
                    for res in results:
                        tr = r.trace(res.trace_id)
                        und = undated_of(tr.metadata)
                        total += tr.messages
                        if und is None:
                            continue
                        undated += und.messages
                        filled.add(und.filled_with)
                        for m in r.all_messages(res.trace_id):
                            if und.covers(m.sequence):
                                roles[m.role] += 1
            rows.append(
                {
                    "format": results[0].format if results else "?",
                    "file": str(unit.path.relative_to(folder)),
                    "traces": len(results),
                    "messages": total,
                    "undated": undated,
                    "by_role": dict(sorted(roles.items())),
                    "filled_with": sorted(filled),
                }
            )
    return sorted(rows, key=lambda x: (x["format"], x["file"]))


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--json"]
    folder = Path(args[0]) if args else DEFAULT
    rows = survey(folder)
    if "--json" in argv:
        print(json.dumps(rows, indent=1))
        return 0
    for x in rows:
        print(
            f"{x['format']:<12}{x['messages']:>5}{x['undated']:>5}  "
            f"{', '.join(f'{k} {v}' for k, v in x['by_role'].items()) or '-':<42}"
            f"{', '.join(x['filled_with']) or '-':<13} {Path(x['file']).name[:60]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
