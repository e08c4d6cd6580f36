"""Run benchmarks and print one JSON object per line (see bench/__init__.py); each bench
ends with its summary line (``bench/goals.py:summary``)."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from bench.goals import summary


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("names", nargs="*", help="bench modules to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for smoke tests")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest sizes that still run every code path (tests/bench); implies --quick",
    )
    args = parser.parse_args()
    here = Path(__file__).parent
    names = args.names or sorted(p.stem[len("bench_") :] for p in here.glob("bench_*.py"))
    failed = 0
    for name in names:
        figures: list[dict[str, Any]] = []
        error = _run_one(name, {"quick": args.quick or args.smoke, "smoke": args.smoke}, figures)
        failed += error is not None
        print(json.dumps(summary(name, figures, error)), flush=True)
    return 1 if failed else 0


def _run_one(name: str, sizes: dict[str, bool], figures: list[dict[str, Any]]) -> str | None:
    """Print the figures of one bench as they come; the error when it crashes (its
    traceback goes to stderr), so a broken bench neither hides the others nor passes.
    ``smoke`` reaches only the benches whose ``run`` takes it (the others run ``quick``)."""
    try:
        module = importlib.import_module(f"bench.bench_{name}")
        accepted = inspect.signature(module.run).parameters
        for fig in module.run(**{k: v for k, v in sizes.items() if k in accepted}):
            figures.append(fig)
            print(json.dumps(fig), flush=True)
    except Exception as exc:
        print(f"bench {name} failed:", file=sys.stderr)
        traceback.print_exc()
        return repr(exc)
    return None


if __name__ == "__main__":
    raise SystemExit(main())
