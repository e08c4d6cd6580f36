"""Corruption stress for the importers: corrupted copies of the real traces and special
inputs (pipes, link loops, ``/dev/zero``, folders linking to themselves, deep nesting, odd
types, empty files).

Each input must either import or fail with a ``CtxlensError`` that names it and leaves the
store exactly as it was; any other exception is a traceback, an import still running after
60 s is a hang (both stop the run). Figures: outcomes, errors that name only the file (no
line, member or JSON path), peak RSS. ``python -m bench.stress_import [N] [SEED]``.
"""

from __future__ import annotations

import json
import random
import re
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.core.importers.test_bad_input import (  # noqa: E402
    FUZZ_SOURCES,
    import_checked,
    mutate,
    run_special,
)

#: Errors that named only the file, by message (what to give a place next).
unplaced: Counter[str] = Counter()
#: One input in this many is a special one (the rest are corrupted copies).
SPECIAL_EVERY = 4


def run(variants: int = 1000, seed: int = 1) -> Counter[str]:
    from core.store import Store

    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    unplaced.clear()
    with tempfile.TemporaryDirectory() as d, Store.open(Path(d) / "stress.db") as store:
        for i in range(variants):
            if i % SPECIAL_EVERY == 0:
                kind, outcome = run_special(store, Path(d), i, rng)
                outcomes[f"special {outcome}"] += 1
                if outcome == "hang":
                    raise SystemExit(f"hang: special input {kind} #{i}")
                continue
            src = rng.choice(FUZZ_SOURCES)
            data = src.read_bytes()
            if not data:
                continue
            target = Path(d) / f"v{i}{''.join(src.suffixes[-2:])}"
            target.write_bytes(mutate(data, rng))
            errors: list[str] = []
            outcomes[import_checked(store, target, _format(src), errors)] += 1
            for message in errors:
                if not _names_a_place(message, target):
                    outcomes["error naming only the file"] += 1
                    unplaced[message.split(": ", 1)[-1][:60]] += 1
            target.unlink(missing_ok=True)
    return outcomes


def _format(src: Path) -> str:
    from tests.core.importers.test_bad_input import _format_of

    return _format_of(src)


def _names_a_place(message: str, target: Path) -> bool:
    """The error names a line (``file:12``), a zip member (``file!m``) or a JSON path."""
    rest = message.split(str(target), 1)[-1]
    return bool(re.match(r"(:\d+|!\S|: \S*\[|: \w+\.)", rest))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    t = time.perf_counter()
    result = run(n, seed)
    took = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(f"{n} inputs in {took:.1f} s: {dict(result)}; 0 tracebacks, 0 hangs, 0 partial")
    for message, count in unplaced.most_common(8):
        print(f"  named only the file ({count}x): {message}")
    for figure, value, unit in (
        ("inputs", n, "inputs"),
        ("tracebacks", 0, "inputs"),
        ("hangs", 0, "inputs"),
        ("errors naming only the file", result["error naming only the file"], "errors"),
        ("peak RSS", peak, "MB"),
    ):
        row = {"bench": "stress_import", "figure": figure, "value": value, "unit": unit}
        print(json.dumps(row))


if __name__ == "__main__":
    main()
