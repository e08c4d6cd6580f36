"""The main window at the sizes a user has, light and dark, for docs/img (issue 17).

    QT_QPA_PLATFORM=offscreen python tools/window_shots.py OUTDIR [--db DB]

Writes ``main-<W>x<H>-<theme>.png`` for 1280×720 and 1920×1200 in both themes, on the demo
store (``--db``, else the bench's cached copy, built on first use). Also prints the
window's size after loading, which must equal the size asked for (the window never
resizes itself on content).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = ((1280, 720), (1920, 1200))


def save_small(image: Any, path: Path) -> None:
    """A PNG; reduced to a 64-colour palette with ``pngquant`` when it is installed (a UI
    has few colours: a fraction of the RGB file's size)."""
    image.save(str(path), "PNG", 0)
    if shutil.which("pngquant"):
        cmd = ["pngquant", "--force", "--skip-if-larger", "--output", str(path), "64", str(path)]
        subprocess.run(cmd, check=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--db", type=Path)
    p.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    p.add_argument("--themes", default="light,dark")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication

    from tools.screenshots import wait_until
    from ui.main_window import MainWindow
    from ui.settings import AppSettings

    if args.db is None:
        from bench.bench_gui import sample_store

        args.db = sample_store()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    for size in args.sizes.split(","):
        w, h = (int(n) for n in size.split("x"))
        for theme in args.themes.split(","):
            settings = AppSettings(str(Path(tempfile.mkdtemp()) / "s.ini"))
            settings.theme = theme
            win = MainWindow(settings)
            win.resize(w, h)
            win.show()
            win.open_store(str(args.db))
            wait_until(win.is_settled, 60)
            win.timeline.scroll_to_current()
            wait_until(lambda: True)
            path = args.out / f"main-{w}x{h}-{theme}.png"
            save_small(win.grab().toImage(), path)
            print(f"{path}: window {win.width()}x{win.height()} (asked {w}x{h})")
            win.close()
            win.deleteLater()
            app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
