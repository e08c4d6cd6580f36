"""Run benchmarks and print one JSON object per line (see bench/__init__.py); each bench
ends with its summary line (``bench/goals.py:summary``)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from bench.goals import summary


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("names", nargs="*", help="bench modules to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for smoke tests")
    args = parser.parse_args()
    here = Path(__file__).parent
    names = args.names or sorted(p.stem[len("bench_") :] for p in here.glob("bench_*.py"))
    failed = 0
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        figures: list[dict[str, Any]] = []
        error = None
        try:
            for fig in module.run(quick=args.quick):
                figures.append(fig)
                print(json.dumps(fig), flush=True)
        except Exception as exc:  # a broken bench must not hide the others
            failed += 1
            error = repr(exc)[-600:]  # the end of a worker's traceback names the cause
            print(f"bench {name} failed: {error}", file=sys.stderr)
        print(json.dumps(summary(name, figures, failed=error)), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
