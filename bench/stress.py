"""``python -m bench.stress``: run every ``bench/stress_*.py`` module (long robustness runs).

``--only resume`` runs one of them (``stress_resume``); ``--trials N`` sets the SIGKILL
trials of a run (``stress_resume``, default 100); other modules run with their defaults.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).parent
    names = sorted(p.stem.removeprefix("stress_") for p in here.glob("stress_*.py"))
    p = argparse.ArgumentParser(prog="python -m bench.stress", description=__doc__)
    p.add_argument("--only", choices=names, action="append", help="run only these (repeatable)")
    p.add_argument("--trials", type=int, default=100, help="SIGKILL trials of a run")
    a = p.parse_args(argv)
    for name in a.only or names:
        path = here / f"stress_{name}.py"
        print(f"== {path.stem}", flush=True)
        sys.argv = [str(path), *(["--trials", str(a.trials)] if name == "resume" else [])]
        runpy.run_path(str(path), run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
