"""``ctxlens --self-test``: every check passes in the source tree, a failure is named, the
flag and the command agree, and the user's store and settings are never touched."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QWidget

from app.cli import main
from app.commands.self_test import CHECK_NAMES
from app.selftest import checks, report
from core.selftest import SelfTestError, run_check
from tests.helpers.ctxlens_process import run
from ui.selftest import check_images, check_render, platform_plugins

ROOT = Path(__file__).resolve().parents[2]


def test_self_test_passes_in_process(
    qapp: QApplication, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    assert main(["--self-test"], out=out) == 0
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["ok"] * len(CHECK_NAMES)
    assert [line.split(": ")[1] for line in lines] == list(CHECK_NAMES)
    assert "timeline rows" in lines[-1] and "distinct colours" in lines[-1]
    assert capsys.readouterr().err == ""
    # the window it built carried the app icon and the desktop entry's name
    assert not QApplication.windowIcon().isNull()
    assert QApplication.desktopFileName() == "ctxlens"


def test_the_check_list_matches_the_command_choices(tmp_path: Path) -> None:
    assert [name for name, _fn in checks(tmp_path)] == list(CHECK_NAMES)


def test_a_failing_check_is_named_and_the_exit_code_is_nonzero() -> None:
    def broken() -> str:
        raise SelfTestError("platform plugins missing: ['xcb']")

    def crashing() -> str:
        raise KeyError("tiktoken_ext")

    results = [
        run_check("encodings", lambda: "fine"),
        run_check("qt platform", broken),
        run_check("images", crashing),
    ]
    out, err = io.StringIO(), io.StringIO()
    assert report(results, out, err) == 1
    assert out.getvalue().splitlines() == [
        "ok: encodings: fine",
        "FAIL: qt platform: platform plugins missing: ['xcb']",
        "FAIL: images: KeyError: 'tiktoken_ext'",
    ]
    assert err.getvalue() == "ctxlens: self-test failed: qt platform, images\n"


def test_a_blank_window_fails_the_render_check(qtbot: Any) -> None:
    blank = QWidget()
    qtbot.addWidget(blank)
    blank.resize(300, 200)
    result = run_check("main window", lambda: check_render(blank))
    assert not result.ok and "blank" in result.detail


def test_a_missing_icon_fails_the_image_check(qapp: QApplication, tmp_path: Path) -> None:
    result = run_check("images", lambda: check_images(tmp_path / "missing.svg"))
    assert not result.ok and "missing.svg" in result.detail


def test_platform_plugins_are_named_from_their_files(tmp_path: Path) -> None:
    folder = tmp_path / "platforms"
    folder.mkdir()
    for name in ("libqxcb.so", "libqoffscreen.so", "qwindows.dll", "libqcocoa.dylib", "README"):
        (folder / name).write_bytes(b"")
    assert platform_plugins(tmp_path) == ["cocoa", "offscreen", "windows", "xcb"]


def test_flag_runs_in_a_clean_process_and_touches_no_user_files(tmp_path: Path) -> None:
    """The packaged entry point's contract: exit 0, one ok line per check, nothing in HOME."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "QT_QPA_PLATFORM": "offscreen",
    }
    env.pop("CTXLENS_DB", None)
    proc = run("--self-test", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("\nok: ") + proc.stdout.startswith("ok: ") == len(CHECK_NAMES)
    assert "FAIL" not in proc.stdout
    assert list(home.rglob("*")) == []


def test_flag_with_another_command_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--self-test", "traces"])
    assert exc.value.code == 2
    assert "--self-test takes no command" in capsys.readouterr().err
