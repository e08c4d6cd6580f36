"""Issue 18: inputs that used to crash, hang or mislead the import: special files, folders
linking to themselves, deep nesting, odd types, a re-serialized export, a one-line file."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from core.exporters.ctxlens_json import export_text
from core.importers.api import import_paths, plan
from core.store import Store
from tests.core.importers.test_bad_input import HANG, _snapshot

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def _plan_error(path: Path) -> str:
    """``ctxlens import``'s planning on a watchdog thread: the error it gives."""
    errors: list[str] = []

    def work() -> None:
        try:
            plan([path])
        except Exception as exc:  # the message is what is tested
            errors.append(f"{type(exc).__name__}: {exc}")

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(HANG)
    assert not worker.is_alive(), f"planning {path} hung"
    assert errors, f"{path} was accepted"
    return errors[0]


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: os.mkfifo(p), "a named pipe (FIFO), not a file; not read"),
        (lambda p: p.symlink_to("/dev/zero"), "a character device, not a file; not read"),
        (lambda p: p.symlink_to("gone.json"), "a broken symbolic link (to gone.json)"),
        (lambda p: p.symlink_to(p.name), "a symbolic link loop"),
    ],
    ids=["fifo", "dev-zero", "dangling", "loop"],
)
def test_special_files_say_what_they_are(
    tmp_path: Path, make: Callable[[Path], None], words: str
) -> None:
    path = tmp_path / "t.json"
    make(path)
    assert _plan_error(path) == f"InvalidInputError: {path}: {words}"


def test_a_fifo_in_a_folder_is_skipped_not_read(store: Store, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    os.mkfifo(tmp_path / "event-1.json")
    (tmp_path / "chat.json").write_text('[{"role": "user", "content": "hi"}]')
    assert [u.path.name for u in plan([tmp_path])] == ["chat.json"]


def test_a_folder_linking_to_itself_is_walked_once(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('[{"role": "user", "content": "not asked for"}]')
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "chat.json").write_text('[{"role": "user", "content": "hi"}]')
    (root / "self1").symlink_to(".")
    (root / "self2").symlink_to(".")
    (root / "sub" / "up").symlink_to("..")
    (root / "out").symlink_to(tmp_path)
    (root / "outside.json").symlink_to(outside)
    units = plan([root])
    assert [u.path.relative_to(root).as_posix() for u in units] == ["sub/chat.json"]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("deep.json", "[" * 100_000, "deep.json:1:"),
        (
            "deep.jsonl",
            '{"role":"user","content":"hi"}\n' + '{"a":' * 5_000 + "\n",
            "deep.jsonl:2:",
        ),
        ("deep1.jsonl", '{"a":' * 100_000 + "\n", "deep1.jsonl:1:"),
    ],
)
def test_deep_nesting_is_an_error_with_the_line(
    store: Store, tmp_path: Path, name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    before = _snapshot(store)
    with pytest.raises(Exception, match="nested too deeply") as exc:
        import_paths(store, [path])
    assert exc.type.__name__ == "BeyondLimits" or "InvalidInputError" in exc.type.__name__
    assert where in str(exc.value)
    assert _snapshot(store) == before


@pytest.mark.parametrize("odd", [{}, [], 1, None])
def test_a_non_string_type_is_no_crash(tmp_path: Path, odd: object) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"type": odd, "uuid": "u", "sessionId": "s"}) + "\n")
    assert "not a trace file of a known format" in _plan_error(path)


@pytest.mark.parametrize(
    "dump",
    [
        lambda d: json.dumps(d),
        lambda d: json.dumps(d, indent=2, sort_keys=True),
        lambda d: json.dumps({"zzz": "x" * 100_000, **d}, indent=1),
    ],
    ids=["json.dump", "indent-sorted", "format-late"],
)
def test_a_reserialized_export_is_still_a_ctxlens_export(
    store: Store, tmp_path: Path, cli: Callable[..., tuple[int, str]], dump: Callable[..., str]
) -> None:
    (orig,) = import_paths(store, [FIX / "codex/rollout-compacted.jsonl"])
    data = json.loads(export_text(store, orig.trace_id))
    path = tmp_path / "again.json"
    path.write_text(dump(data))
    code, out = cli("--db", str(tmp_path / "other.db"), "import", str(path), "--json")
    assert code == 0, out
    (row,) = json.loads(out)
    assert (row["format"], row["trace_id"]) == ("ctxlens", orig.trace_id)
    assert (row["messages"], row["compactions"]) == (orig.messages, orig.compactions)
    assert row["compactions"] > 0


def test_a_one_line_message_file_keeps_its_message(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text('{"role": "user", "content": "only line"}\n')
    (res,) = import_paths(store, [path])
    assert (res.format, res.messages) == ("openai", 1)


def test_a_file_without_messages_leaves_no_trace(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    before = _snapshot(store)
    with pytest.raises(Exception, match=r"empty\.jsonl: no messages"):
        import_paths(store, [path], fmt="claude-code")
    assert _snapshot(store) == before
