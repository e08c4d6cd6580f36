"""``ctxlens watch``: tail agent session folders into the store (core/live/watch.py)."""

from __future__ import annotations

import json
import sys
import threading
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from app.cli import CliContext

HELP = "follow Claude Code / Codex session folders into the store as they grow"
DESCRIPTION = """Tail session files (Claude Code, Codex) into the store: new sessions become
traces, appended lines new messages. With no folder: the Claude Code projects folder
($CLAUDE_CONFIG_DIR), the Codex sessions folder ($CODEX_HOME) and the folders added in the GUI's
Sources pane. A restart continues where it stopped. Ctrl-C or SIGTERM stops it: the responses
still open then get their model calls."""
#: Longest ``--interval`` (a day): a larger wait overflows the platform's timeout.
MAX_INTERVAL = 86400.0


def arguments(p: ArgumentParser) -> None:
    p.add_argument("dirs", nargs="*", metavar="DIR", help="folders (or session files) to watch")
    p.add_argument("--once", action="store_true", help="read what is there now, then exit")
    p.add_argument("--json", action="store_true", help="one JSON object per change, per line")
    p.add_argument("--interval", type=float, default=0.1, help="seconds between looks")


def run(ctx: CliContext) -> int:
    from core.errors import InvalidInputError
    from core.live.folders import default_folders
    from core.live.watch import Watcher

    interval = ctx.args.interval
    if not 0 <= interval <= MAX_INTERVAL:  # NaN too; inf or 1e308 would overflow the wait
        raise InvalidInputError(
            f"--interval {interval}: expected seconds between 0 and {MAX_INTERVAL:g}"
        )
    folders = [Path(d) for d in ctx.args.dirs] or default_folders()
    for folder in ctx.args.dirs:
        if not Path(folder).exists():
            raise InvalidInputError(f"{folder}: no such file or folder")
    store = ctx.store(create=True)

    def report(change: Any) -> None:
        if ctx.args.json:
            ctx.out.write(json.dumps(change.to_json(), ensure_ascii=False) + "\n")
        else:
            verb = "new trace" if change.new_trace else "appended to"
            ctx.out.write(f"{change.where}: {verb} {change.trace_id} (+{change.messages})\n")
        ctx.out.flush()

    watcher = Watcher(store, folders, listener=report, interval=max(0.01, interval))
    if not ctx.args.json:
        ctx.out.write(f"watching {', '.join(str(f) for f in folders)} (Ctrl-C stops)\n")
        ctx.out.flush()
    if ctx.args.once:
        watcher.poll(drain=True)
        watcher.end()
        _errors(watcher)
        return 0
    from app.stop_signals import stop_on_signals

    try:
        with stop_on_signals(threading.Event()) as stop:
            while not stop.is_set():
                watcher.poll()
                _errors(watcher)
                stop.wait(watcher.next_wait())
    finally:  # a stop or Ctrl-C: the open responses get their calls
        watcher.end()
        _errors(watcher)
    return 0


def _errors(watcher: Any) -> None:
    for message in watcher.tally.take_errors():
        print(f"ctxlens: warning: {message}", file=sys.stderr)
