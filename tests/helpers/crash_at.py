"""``ctxlens ARGS`` in a child that SIGKILLs itself at an exact point: right after the
first committed write transaction after which ``PREDICATE(db_path)`` holds.

A crash test that polls a free-running child and kills it from outside hits its point only
as often as the machine's timing allows (stop 27: a loaded CI machine never did); this one
dies at the point every time, with a real SIGKILL, so nothing after it is written.

    python -m tests.helpers.crash_at MODULE:FUNCTION --db DB demo --json
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.store.store import Store
from core.store.writer import Writer


def _install(predicate: Callable[[Path], bool]) -> None:
    write = Store.write

    @contextmanager
    def dying_write(self: Store) -> Iterator[Writer]:
        with write(self) as writer:
            yield writer
        database = self.engine.url.database
        if database and predicate(Path(database)):
            os.kill(os.getpid(), signal.SIGKILL)

    Store.write = dying_write  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    target, *args = argv
    module, _, name = target.partition(":")
    _install(getattr(importlib.import_module(module), name))
    from app.cli import main as ctxlens

    return ctxlens(args)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
