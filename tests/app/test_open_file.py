"""A file given to ``ctxlens gui FILE`` (a double-click): a store opens, a trace imports."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from app.open_file import resolve
from core.errors import InvalidInputError
from core.store import Store
from tests.helpers.ctxlens_process import child_env, run
from tests.sample_trace import write_sample

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sample_store(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "sample.ctxlens"
    with Store.open(db) as s:
        write_sample(s)
        return db, s.traces()[0].id


def test_a_store_file_is_opened_as_the_store(
    tmp_path: Path, sample_store: tuple[Path, str]
) -> None:
    db, _trace = sample_store
    other = tmp_path / "default.db"
    assert resolve(str(db), str(other)) == (str(db), None)
    assert not other.exists()  # nothing imported, no default store created


def test_a_trace_file_is_imported_once_and_shown(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"  # JSON Lines of OpenAI chat messages (the .jsonl MIME type)
    lines = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Name a prime."},
        {"role": "assistant", "content": "7"},
    ]
    chat.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
    target = tmp_path / "data" / "ctxlens.db"
    store, shown = resolve(str(chat), str(target), default_store=True)
    assert store == str(target) and shown is not None
    again = resolve(str(chat), str(target), default_store=True)
    assert again == (store, shown)  # the same content finds the trace imported before
    with Store.open(target) as s:
        traces = {t.id: t for t in s.traces()}
        with s.read() as r:
            length = r.main_path_length(shown)
    assert len(traces) == 2  # the default store's first-start trace, plus the imported one
    assert traces[shown].source == "openai" and length == len(lines)


def test_a_missing_or_unknown_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no such file"):
        resolve(str(tmp_path / "nope.jsonl"), str(tmp_path / "s.db"))
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    with pytest.raises(InvalidInputError, match=r"notes\.txt"):
        resolve(str(junk), str(tmp_path / "s.db"))


GUI = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("PySide6", "qasync")),
    reason="the window needs PySide6 and qasync (a headless install has neither)",
)


def _gui(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(*args, env=child_env(QT_QPA_PLATFORM="offscreen"), timeout=240, cwd=cwd)


@GUI
def test_a_file_that_does_not_open_still_opens_the_window_and_says_why(
    tmp_path: Path, sample_store: tuple[Path, str]
) -> None:
    """A double-click has no terminal: the window opens on the store, with the error shown
    in it; the command still fails (exit 2) and names the file."""
    db, _trace = sample_store
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    shot = tmp_path / "shot.png"
    out = _gui("--db", str(db), "gui", str(junk), "--screenshot", str(shot), cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "notes.txt: not a trace file" in out.stderr and "Traceback" not in out.stderr
    assert "the window reported an error" in out.stderr, "shown in the window, not only printed"
    assert "--format NAME" in out.stderr and shot.stat().st_size > 0


@GUI
def test_an_unknown_trace_is_said_not_swapped_silently(
    tmp_path: Path, sample_store: tuple[Path, str]
) -> None:
    db, _trace = sample_store
    shot = tmp_path / "shot.png"
    out = _gui("--db", str(db), "gui", "--trace", "zzzz", "--screenshot", str(shot), cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "zzzz" in out.stderr and "Traceback" not in out.stderr
