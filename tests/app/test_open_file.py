"""A file given to ``ctxlens gui FILE`` (a double-click): a store opens, a trace imports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.open_file import resolve
from core.errors import InvalidInputError
from core.store import Store
from tests.sample_trace import write_sample


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
