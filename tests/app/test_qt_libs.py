"""Qt's xcb system libraries: the table matches the installed plugin, and a missing one
stops ``ctxlens`` with one line and exit 2 before Qt can abort the process."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from app import qt_libs
from app.cli import main

REPO = Path(__file__).resolve().parents[2]


def _pyside_qt() -> Path:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or spec.origin is None:
        pytest.skip("PySide6 is not installed")
    return Path(spec.origin).parent / "Qt"


def _needed(path: Path) -> list[str]:
    sys.path.insert(0, str(REPO / "packaging"))
    try:
        from elf import needed
    finally:
        sys.path.remove(str(REPO / "packaging"))
    return needed(path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb platform is Linux")
def test_table_covers_every_system_library_the_xcb_plugin_needs() -> None:
    qt = _pyside_qt()
    shipped = {p.name for p in (qt / "lib").iterdir()}
    elves = [qt / "plugins/platforms/libqxcb.so"] + [
        qt / "lib" / name for name in ("libQt6XcbQpa.so.6", "libQt6Gui.so.6", "libQt6DBus.so.6")
    ]
    base = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0"}
    wanted = {lib for f in elves for lib in _needed(f)} - shipped - base
    assert wanted, "the plugin's DT_NEEDED list was read"
    assert wanted - set(qt_libs.XCB_LIBS) == set()


def test_table_agrees_with_the_deb_dependencies() -> None:
    deb = {}
    for line in (REPO / "packaging/deb/sonames.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            soname, package, _relation = line.split()
            deb[soname] = package
    assert {s: deb.get(s) for s in qt_libs.XCB_LIBS} == qt_libs.XCB_LIBS


def test_missing_names_the_library_that_cannot_load() -> None:
    assert qt_libs.missing(["libc.so.6"]) == []
    assert qt_libs.missing(["libctxlens-absent.so.7"]) == ["libctxlens-absent.so.7"]


def test_only_an_x_display_without_another_platform_needs_xcb() -> None:
    linux = sys.platform.startswith("linux")
    assert qt_libs.needs_xcb({"DISPLAY": ":0"}) is linux
    assert qt_libs.needs_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}) is linux
    assert qt_libs.needs_xcb({"QT_QPA_PLATFORM": "xcb:dpi=96"}) is linux
    assert not qt_libs.needs_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"})
    assert not qt_libs.needs_xcb({})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb platform is Linux")
def test_gui_with_a_missing_library_prints_one_line_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(qt_libs.XCB_LIBS, "libxcb-ctxlens-absent.so.3", "libxcb-ctxlens-absent3")
    monkeypatch.setenv("DISPLAY", ":97")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    db = tmp_path / "never.db"
    assert main(["--db", str(db), "gui"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "libxcb-ctxlens-absent.so.3" in err[0] and "apt-get install -y" in err[0]
    assert "libxcb-ctxlens-absent3" in err[0]
    assert not db.exists(), "nothing was created before the check"


def test_make_helper_exits_1_with_the_command(tmp_path: Path) -> None:
    """``python3 -m app.qt_libs`` (what make runs) with the system Python's stdlib only."""
    result = subprocess.run(
        [sys.executable, "-S", "-m", "app.qt_libs"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    missing_now = qt_libs.missing()
    assert result.returncode == (1 if missing_now and sys.platform.startswith("linux") else 0)
    if missing_now:
        assert "apt-get install -y" in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(
    "not __import__('os').environ.get('CTXLENS_NEWCOMER')",
    reason="minutes (a fresh clone and venv under Xvfb): set CTXLENS_NEWCOMER=1 "
    "(.ci/run runs make check-newcomer)",
)
def test_newcomer_make_run_maps_the_window() -> None:
    result = subprocess.run(
        ["bash", str(REPO / "tools/check_newcomer.sh"), str(REPO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the window maps" in result.stdout
