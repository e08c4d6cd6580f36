"""Screenshots of the window and its dialogs, rendered offscreen, to look at (and for docs).

    QT_QPA_PLATFORM=offscreen python tools/screenshots.py OUTDIR [--db DB] [--level L] [--dark]

Writes ``main.png`` (the window at 1600×1000 on the sample trace), ``compact.png`` (the
compact dialog showing a dry run of ``--level``), ``compact-summary.png`` (the summary
level) and ``import.png`` (an import of one good and one truncated file, errors listed),
``new-demo.png`` (Run → New demo run…) and ``run.png`` (a demo run paused mid-way, then
stepped: the run controls and the phase in the status bar).
Without ``--db`` a fresh sample store is written into OUTDIR.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def wait_until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    """Turn the event loop until ``check()``, then 20 turns more, deleting what was
    ``deleteLater``'d as a running loop does: ``processEvents`` alone never deletes, and
    the shots then showed widgets the app has deleted (a tab bar Qt replaces while it lays
    out the docks, "Skills | Grants", stayed across the Traces list)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    def turn() -> None:
        QApplication.processEvents()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)

    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there in time")
        turn()
        time.sleep(0.01)
    for _ in range(20):
        turn()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--db", type=Path)
    p.add_argument("--level", default="goal")
    p.add_argument("--dark", action="store_true", help="use the dark theme")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication

    from core.store import Store
    from tests.sample_trace import write_sample
    from ui.main_window import MainWindow
    from ui.settings import AppSettings

    db = args.db
    if db is None:
        db = args.out / "sample.db"
        for old in args.out.glob("sample.db*"):
            old.unlink()
        with Store.open(db) as s:
            write_sample(s)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = args.out / "screenshots.ini"
    settings.unlink(missing_ok=True)
    prefs = AppSettings(settings)
    prefs.theme = "dark" if args.dark else "light"
    win = MainWindow(prefs)
    win.resize(1600, 1000)
    win.show()
    win.open_store(db)
    wait_until(win.is_settled)
    win.timeline.scroll_to_current()
    wait_until(win.is_settled)
    win.grab().save(str(args.out / "main.png"))

    for level, name in ((args.level, "compact.png"), ("summary", "compact-summary.png")):
        win.show_compact()
        dialog = win.compact_dialog
        assert dialog is not None
        dialog.set_level(level)
        wait_until(
            lambda d=dialog, lv=level: d.current is not None and d.current.request.level == lv
        )  # type: ignore[misc]
        wait_until(lambda: not win.runner.busy)
        dialog.grab().save(str(args.out / name))
        dialog.reject()

    import_shot(win, args.out)
    run_shot(win, args.out)
    win.close()
    app.processEvents()
    print(f"wrote {', '.join(sorted(p.name for p in args.out.glob('*.png')))} to {args.out}")
    return 0


def import_shot(win: object, out: Path) -> None:
    from tests.conftest import TRACES

    good = TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
    bad = out / "truncated-rollout.jsonl"
    source = next(TRACES.glob("codex/**/rollout-*.jsonl"), None)
    if not good.is_file() or source is None:
        return
    data = source.read_bytes()
    bad.write_bytes(data[: len(data) // 3])
    win.import_paths([str(good), str(bad)])  # type: ignore[attr-defined]
    importer = win.importer  # type: ignore[attr-defined]
    wait_until(lambda: not importer.running)
    wait_until(lambda: not win.runner.busy)  # type: ignore[attr-defined]
    importer.dialog.grab().save(str(out / "import.png"))
    importer.dialog.close()


def run_shot(win: Any, out: Path, tools_before_pause: int = 45, steps: int = 2) -> None:
    """``new-demo.png`` (the dialog) and ``run.png``: a new demo run, Run paused from a
    signal after some tool results, then a few single steps — the window mid-run."""
    import asyncio

    import qasync
    from PySide6.QtWidgets import QApplication

    from app.gui import settled
    from core.demo.scenario import DemoOptions

    loop = qasync.QEventLoop(QApplication.instance(), already_running=False)
    asyncio.set_event_loop(loop)
    seen: list[object] = []

    def pause_after(event: Any) -> None:
        if event.type == "tool_result":
            seen.append(event)
            if len(seen) == tools_before_pause:
                win.live.pause()

    async def go() -> None:
        win.show_new_demo()
        await asyncio.sleep(0.2)
        win.demo_dialog.grab().save(str(out / "new-demo.png"))
        win.demo_dialog.reject()
        win.new_demo_run(DemoOptions())
        await settled(win, 30)
        win.live.run_event.connect(pause_after)
        win.registry["run.run"].trigger()
        await settled(win, 60)
        for _ in range(steps):
            win.registry["run.step"].trigger()
            await settled(win, 30)
        win.timeline.scroll_to_current()
        await asyncio.sleep(0.05)
        win.grab().save(str(out / "run.png"))
        await win.live.aclose()

    try:
        loop.run_until_complete(go())
    finally:
        loop.close()
        asyncio.set_event_loop(None)


if __name__ == "__main__":
    raise SystemExit(main())
