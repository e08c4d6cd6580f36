"""Bad input met as a user with messy files and scripts meets it, through the real CLI:
each case is one line on stderr naming the file, member, option or id at fault, exit code
2, no traceback, no hang, and the store keeps what it held. Derived broken files are made
here in ``tmp_path`` from the real traces of shared/traces."""

from __future__ import annotations

import json
import os
import select
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import TRACES
from tests.helpers import ctxlens_process

Cli = Callable[..., tuple[int, str]]
ANY_AGENT = TRACES / "otel_genai/mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"
MINI_SWE = TRACES / "swe_agent/SWE-agent__mini-swe-agent/tests/test_data/github_issue.traj.json"
POPULARITY = TRACES / (
    "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/scorer/logs/"
    "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
)
CODEX = TRACES / (
    "codex/codemie-ai__codemie-code/src/agents/plugins/codex/__tests__/fixtures/"
    "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
MESSAGES = TRACES / "chat_messages/OpenHands__software-agent-sdk/tests/fixtures/llm_data/"
FNCALL = MESSAGES / "fncall-llm-message.json"
pytestmark = pytest.mark.skipif(
    not all(p.is_file() for p in (ANY_AGENT, MINI_SWE, POPULARITY, CODEX, FNCALL)),
    reason="shared traces not present",
)


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of the last command (no traceback, no Python exception name)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Error:" not in err.replace("ctxlens: error:", ""), err
    return err


def _stored(db: Path) -> tuple[int, int, int]:
    """Traces, messages and import records in the store (read with sqlite3 alone)."""
    with sqlite3.connect(db) as c:
        return tuple(  # type: ignore[return-value]
            c.execute(f"select count(*) from {table}").fetchone()[0]
            for table in ("traces", "messages", "import_records")
        )


def _refused(
    cli: Cli, held: Path, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[str, str]:
    """``ctxlens --db HELD ARGV…`` refused: exit 2, one error line, the store as it was;
    ``(stdout, the error)``."""
    before = _stored(held)
    code, out = cli("--db", str(held), *argv)
    err = _error(capsys)
    assert code == 2, (out, err)
    assert _stored(held) == before
    return out, err


@pytest.fixture
def held(cli: Cli, tmp_path: Path) -> Path:
    """A store already holding one imported trace (what a bad command must not damage)."""
    db = tmp_path / "held.db"
    assert cli("--db", str(db), "import", str(MINI_SWE))[0] == 0
    return db


# -- entry point ---------------------------------------------------------------------------
def _process(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m app.cli ARGS`` as a process of its own, within ``timeout`` seconds."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ctxlens_process.ROOT,
        env=ctxlens_process.child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_python_m_app_cli_is_the_command(held: Path) -> None:
    """``python -m app.cli`` ran the module and exited 0 having done nothing."""
    done = _process("--db", str(held), "traces", "--json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == 1


# -- import ------------------------------------------------------------------------------
def test_another_tools_file_forced_as_swe_agent_is_an_error(
    cli: Cli, held: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was exit 0 with an empty trace stored and a warning ("no history messages")."""
    out, err = _refused(cli, held, capsys, "import", str(ANY_AGENT), "--format", "swe-agent")
    assert out == ""
    assert f"{ANY_AGENT}: not a SWE-agent trajectory" in err


def _rewrite_eval(target: Path, change: Callable[[str, bytes], bytes]) -> Path:
    with zipfile.ZipFile(POPULARITY) as src, zipfile.ZipFile(target, "w") as out:
        for info in src.infolist():
            out.writestr(info.filename, change(info.filename, src.read(info.filename)))
    return target


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        # json read this line as UTF-16 (its first bytes are a byte order mark) and its
        # error named the line's last byte: "byte 0x0a"
        (b"\xff\xfe\x00garbage", "not UTF-8 text (byte 0xff at column 1)"),
        (b'{"a": "caf\xe9"}', "not UTF-8 text (byte 0xe9 at column 11)"),
    ],
)
def test_a_line_that_is_not_utf8_names_its_first_bad_byte(
    cli: Cli, tmp_path: Path, bad: bytes, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"user","message":{"role":"user","content":"hi"}}\n' + bad + b"\n")
    code, _ = cli("--db", str(tmp_path / "s.db"), "import", str(path), "--format", "claude-code")
    assert code == 2 and f"{path}:2: {said}" in _error(capsys)


def test_eval_member_nested_too_deeply_is_named(
    cli: Cli, held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The error named the sample read before the bad one (the import's last ``where``)."""
    deep = b"[" * 100_000 + b"]" * 100_000
    bad = _rewrite_eval(
        tmp_path / "deep.eval", lambda n, b: deep if n == "samples/3_epoch_1.json" else b
    )
    _, err = _refused(cli, held, capsys, "import", str(bad))
    assert f"{bad}!samples/3_epoch_1.json: data nested too deeply" in err


def test_eval_member_with_corrupt_compressed_data_is_named(
    cli: Cli, held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A deflate error was "cannot import this record (error: Error -3 ...)" under the name
    of the sample before it."""
    data = bytearray(POPULARITY.read_bytes())
    with zipfile.ZipFile(POPULARITY) as z:
        info = z.getinfo("samples/10_epoch_1.json")
    assert info.compress_type == zipfile.ZIP_DEFLATED
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 10
    for i in range(start, start + 40):
        data[i] ^= 0x5A
    bad = tmp_path / "corrupt.eval"
    bad.write_bytes(bytes(data))
    _, err = _refused(cli, held, capsys, "import", str(bad))
    assert f"{bad}!samples/10_epoch_1.json: corrupt zip member" in err


def test_a_list_whose_first_item_is_cut_short_says_so(
    cli: Cli, held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A truncated (or not UTF-8) JSON list of messages was "not a trace file of a known
    format", hiding where it breaks."""
    data = FNCALL.read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(data[: len(data) // 2])
    code, _ = cli("--db", str(held), "import", str(cut))
    err = _error(capsys)
    assert code == 2 and f"{cut}:" in err and "invalid JSON" in err, err
    assert "known format" not in err
    garbled = tmp_path / "garbled.json"
    at = data.index(b'": "', 100) + 4
    garbled.write_bytes(data[:at] + b"\xff\xfe" + data[at:])
    code, _ = cli("--db", str(held), "import", str(garbled))
    err = _error(capsys)
    assert code == 2 and f"{garbled}:" in err and "not UTF-8 text" in err, err


def test_files_removed_between_plan_and_read_are_named_and_the_rest_imports(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file deleted after ``ctxlens import`` planned it was "cannot import this record
    (FileNotFoundError: ...)"; now the words a direct import gives. The others import."""
    import core.importers.api as api

    folder = tmp_path / "traces"
    folder.mkdir()
    kept = folder / "kept.traj.json"
    kept.write_bytes(MINI_SWE.read_bytes())
    gone = {
        folder / "spans.json": ANY_AGENT,
        folder / "log.eval": POPULARITY,
        folder / "messages.json": FNCALL,
    }
    for path, source in gone.items():
        path.write_bytes(source.read_bytes())
    planned = api.plan_paths

    def plan_then_remove(paths: list[str], fmt: str = "auto") -> api.Plan:
        plan = planned(paths, fmt)
        for path in gone:
            path.unlink()
        return plan

    monkeypatch.setattr(api, "plan_paths", plan_then_remove)
    db = tmp_path / "s.db"
    code, out = cli("--db", str(db), "import", str(folder), "--json")
    err = _error(capsys)
    assert code == 2
    assert [Path(r["path"]).name for r in json.loads(out)] == [kept.name]
    for path in gone:
        assert f"ctxlens: error: {path}: no such file or folder" in err, err
    assert _stored(db)[0] == 1


# -- export ------------------------------------------------------------------------------
def test_export_to_a_folder_is_an_error(
    cli: Cli, held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a traceback (IsADirectoryError from os.replace)."""
    (trace,) = _trace_ids(cli, held)
    folder = tmp_path / "out"
    folder.mkdir()
    code, _ = cli("--db", str(held), "export", trace, "-o", str(folder))
    assert code == 2
    assert f"{folder}: is a folder" in _error(capsys)
    assert list(folder.iterdir()) == [] and not list(tmp_path.glob(".ctxlens-export-*"))


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux /proc")
def test_export_into_a_folder_that_takes_no_files_is_an_error(
    cli: Cli, held: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``/proc`` takes no new files, even from root: the temporary file could not be made
    (a traceback from tempfile.mkstemp)."""
    (trace,) = _trace_ids(cli, held)
    code, _ = cli("--db", str(held), "export", trace, "-o", "/proc/ctxlens-export.json")
    assert code == 2
    assert "/proc/ctxlens-export.json: cannot write in folder /proc" in _error(capsys)


def test_export_to_a_named_pipe_writes_into_it(cli: Cli, held: Path, tmp_path: Path) -> None:
    """``-o`` a FIFO (as ``/dev/stdout`` may be): the export was written to a temporary file
    that then replaced the pipe (as root, ``-o /dev/null`` replaced the device node)."""
    (trace,) = _trace_ids(cli, held)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = bytearray()
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        writer = threading.Thread(
            target=cli, args=("--db", str(held), "export", trace, "-o", str(fifo)), daemon=True
        )
        writer.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([reader], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(reader, 1 << 16)
            if chunk:
                got += chunk
            elif got and not writer.is_alive():
                break  # the writer closed the pipe after writing
        writer.join(10)
    finally:
        os.close(reader)
    assert fifo.is_fifo(), "the pipe was replaced by a regular file"
    assert json.loads(got)["trace"]["id"] == trace


def _trace_ids(cli: Cli, db: Path) -> list[str]:
    code, out = cli("--db", str(db), "traces", "--json")
    assert code == 0
    return [row["id"] for row in json.loads(out)]


# -- store -------------------------------------------------------------------------------
@pytest.fixture
def write_lock(held: Path) -> Iterator[None]:
    """Another connection holding a write transaction on ``held`` until the test ends."""
    other = sqlite3.connect(held, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE traces SET title = title")
    yield
    other.execute("ROLLBACK")
    other.close()


def test_a_store_locked_by_another_writer_waits_a_bounded_time_then_says_so(
    cli: Cli,
    held: Path,
    write_lock: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It said "write failed: database is locked" and no more."""
    import core.store.engine as engine

    monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", 300)
    started = time.monotonic()
    code, _ = cli("--db", str(held), "import", str(ANY_AGENT))
    err = _error(capsys)
    assert code == 2 and time.monotonic() - started < 30
    assert f"{held}: write failed: database is locked: another process kept a write" in err
    assert "0.3 s; this write was rolled back" in err


def test_an_ambiguous_trace_prefix_lists_the_matches(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.store import Store

    db = tmp_path / "s.db"
    with Store.open(str(db)) as store:
        for tid in ("abc1000000000000", "abc2000000000000", "abd3000000000000"):
            store.create_trace("t", trace_id=tid)
    code, _ = cli("--db", str(db), "show", "ab")
    assert code == 2
    assert (
        "trace id prefix 'ab' is ambiguous (matches abc1000000000000, abc2000000000000, "
        "abd3000000000000); give more of the id"
    ) in _error(capsys)
    code, _ = cli("--db", str(db), "show", "")
    assert code == 2
    assert "empty trace id" in _error(capsys)


# -- other commands ----------------------------------------------------------------------
def test_compact_apply_with_nothing_to_do_does_not_ask_for_apply(cli: Cli, held: Path) -> None:
    """``--apply`` with nothing to compact printed "dry run: nothing written (use --apply)"."""
    (trace,) = _trace_ids(cli, held)
    code, out = cli("--db", str(held), "compact", trace, "--level", "auto", "--apply")
    assert code == 0
    assert out.splitlines()[-1] == "  not applied: nothing written (not_needed)"
    assert "use --apply" not in out


@pytest.mark.parametrize("interval", ["inf", "nan", "-1", "1e308"])
def test_watch_interval_out_of_range_is_an_error(
    cli: Cli, tmp_path: Path, interval: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--interval inf`` was a traceback (OverflowError) at the first wait; -1 was taken."""
    code, _ = cli(
        "--db", str(tmp_path / "s.db"), "watch", str(tmp_path), "--once", "--interval", interval
    )
    assert code == 2
    assert f"--interval {float(interval)}: expected seconds between 0 and 86400" in _error(capsys)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # every call printed a traceback (OverflowError: connect(): port must be 0-65535)
        (["--upstream", "http://user:pw@127.0.0.1:99999"], "--upstream: port 99999 is not"),
        (["--upstream", "http://[::1"], "--upstream 'http://[::1': not a URL"),
        # every call then failed at once, "timeout: no response from upstream within nan s"
        (["--upstream", "http://127.0.0.1:9", "--timeout", "nan"], "--timeout nan: expected"),
        (["--upstream", "http://127.0.0.1:9", "--timeout", "inf"], "--timeout inf: expected"),
        (["--upstream", "http://127.0.0.1:9", "--timeout", "0"], "--timeout 0: expected"),
    ],
)
def test_proxy_arguments_out_of_range_are_an_error_before_it_listens(
    tmp_path: Path, args: list[str], said: str
) -> None:
    """Live review: a port past 65535 in the upstream URL and a NaN timeout were taken;
    the proxy listened, and every call failed. Each is one line at start, naming it. (A
    process with a time limit: a proxy that starts would serve until stopped.)"""
    db = str(tmp_path / "s.db")
    done = _process("--db", db, "proxy", *args, "--listen", "127.0.0.1:0", timeout=60)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
    assert "user:pw" not in done.stderr, "the credentials are not echoed"


def test_serve_model_on_a_taken_port_is_an_error(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a traceback (RuntimeError: model server did not start: OSError(98, ...))."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _ = cli("--db", str(tmp_path / "s.db"), "serve", "--model", f"127.0.0.1:{port}")
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in _error(capsys)


@pytest.mark.parametrize("size", ["0", "-1"])
def test_serve_otlp_max_bytes_below_one_is_an_error(tmp_path: Path, size: str) -> None:
    """It started a receiver that refused every body ("body over -1 bytes")."""
    done = ctxlens_process.run(
        "--db",
        str(tmp_path / "s.db"),
        "serve",
        "--otlp",
        "127.0.0.1:0",
        "--max-bytes",
        size,
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--max-bytes {size}: expected a size of at least 1 byte" in done.stderr


# -- a ctxlens export edited by hand -------------------------------------------------------
@pytest.mark.parametrize(
    ("table", "field", "value", "words"),
    [
        ("llm_calls", "usage", -5, "field 'usage' is -5: expected an object or null"),
        ("llm_calls", "usage", "12", "field 'usage' is '12': expected an object or null"),
        ("llm_calls", "call_index", "1", "field 'call_index' is '1': expected a whole number"),
        ("messages", "created_at", "yesterday", "field 'created_at' is 'yesterday': expected"),
        ("messages", "created_at", -1e18, "field 'created_at' is -1e+18: not a time"),
        ("messages", "created_at", None, "field 'created_at' is required, found null"),
    ],
)
def test_an_edited_export_with_a_wrong_value_is_refused_naming_the_field(
    cli: Cli,
    held: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    table: str,
    field: str,
    value: object,
    words: str,
) -> None:
    """It was stored as written: a usage that is not an object then broke ``ctxlens
    traces`` (TypeError), a time of -1e18 broke ``ctxlens search`` (OSError), text for a time
    was "cannot import this record (StatementError: ... [SQL: INSERT ...])"."""
    source = tmp_path / "source.db"
    assert cli("--db", str(source), "import", str(ANY_AGENT))[0] == 0
    (trace,) = _trace_ids(cli, source)
    exported = tmp_path / "export.json"
    assert cli("--db", str(source), "export", trace, "-o", str(exported))[0] == 0
    data = json.loads(exported.read_text(encoding="utf-8"))
    assert data[table] and field in data[table][1]
    data[table][1][field] = value
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    _, err = _refused(cli, held, capsys, "import", str(edited))
    assert f"{edited}: {table}[1]: {words}" in err
    assert cli("--db", str(held), "traces")[0] == 0
    assert cli("--db", str(held), "search", "year")[0] == 0


# -- replay ------------------------------------------------------------------------------
def test_a_refused_replay_leaves_no_trace_behind(
    cli: Cli, held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A replay refused after its new trace was made left an empty "Replay of …" trace
    (which an export could not even bring back: "no messages in it")."""
    (trace,) = _trace_ids(cli, held)
    _, err = _refused(cli, held, capsys, "replay", trace, "--on-diverge", "live")
    assert "--on-diverge live: this trace has no offline model" in err
    eval_log = TRACES / "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/log/test_eval_log"
    db = tmp_path / "tool_errors.db"
    assert cli("--db", str(db), "import", str(eval_log / "log_tool_call_error.json"))[0] == 0
    (no_user,) = _trace_ids(cli, db)
    before = _stored(db)
    code, _ = cli("--db", str(db), "replay", no_user)
    assert code == 2
    assert f"trace {no_user}: no user message to start a replay from" in _error(capsys)
    assert _stored(db) == before


def test_an_empty_file_and_a_cut_short_eval_say_what_they_are(
    cli: Cli, held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both read "not a trace file of a known format …; --format NAME forces one", which
    sent the user to force a format on a file that has nothing to read. In a folder they
    are skipped with the same words, and the rest imports."""
    empty = tmp_path / "in" / "session.jsonl"
    empty.parent.mkdir()
    empty.touch()
    half = tmp_path / "in" / POPULARITY.name
    whole = POPULARITY.read_bytes()
    half.write_bytes(whole[: len(whole) // 2])
    for path, words in ((empty, "empty file (0 bytes)"), (half, "a zip archive that cannot")):
        _, err = _refused(cli, held, capsys, "import", str(path))
        assert f"{path}: {words}" in err and "--format" not in err, err
    (tmp_path / "in" / MINI_SWE.name).write_bytes(MINI_SWE.read_bytes() + b"\n")
    code, out = cli("--db", str(held), "import", str(tmp_path / "in"))
    err = _error(capsys)
    assert code == 0 and out.count(" -> ") == 1, out
    assert f"skipped: {empty}: empty file" in err and f"skipped: {half}: a zip archive" in err
