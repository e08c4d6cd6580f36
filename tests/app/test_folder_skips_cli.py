"""Issue 13: a folder import names every file it did not import, with the reason a direct
import of that file gives (a Langfuse ChatML map, an OpenHands ``base_state.json`` without
its events, a README), on stderr; stdout keeps one row per trace, in text and ``--json``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.importers.api import plan_paths
from tests.conftest import TRACES

LANGFUSE = TRACES / "otel_genai/langfuse__langfuse/worker/src/__tests__/chatml/framework-traces"
CHATML = LANGFUSE / "claude-agent-2025-12-22.chatml.json"
SETTINGS = TRACES / (
    "openhands/OpenHands__software-agent-sdk/tests/fixtures/conversations/"
    "v1_11_5_cli_default/base_state.json"
)
README = TRACES / "README.md"
pytestmark = pytest.mark.skipif(
    not (CHATML.is_file() and SETTINGS.is_file()), reason="shared traces not present"
)
Cli = Callable[..., tuple[int, str]]


def _direct_error(cli: Cli, db: str, path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The reason ``ctxlens import FILE`` gives for one file."""
    code, out = cli("--db", db, "import", str(path))
    err = capsys.readouterr().err
    assert code == 2 and out == "" and err.startswith("ctxlens: error: "), err
    return err.removeprefix("ctxlens: error: ").strip()


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_folder_import_names_each_skipped_file_as_a_direct_import_does(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    chatml_why = _direct_error(cli, str(tmp_path / "x.db"), CHATML, capsys)
    settings_why = _direct_error(cli, str(tmp_path / "x.db"), SETTINGS, capsys)
    assert (
        "a Langfuse ChatML map" in chatml_why and "claude-agent-2025-12-22.trace.json" in chatml_why
    )
    assert "base_state.json) without its events; open the conversation folder" in settings_why

    db = str(tmp_path / "s.db")
    code, out = cli("--db", db, "import", str(TRACES), *(["--json"] if as_json else []))
    err = capsys.readouterr().err
    assert code == 0, err
    skipped = [ln.removeprefix("ctxlens: skipped: ") for ln in err.splitlines()]
    assert all(ln.startswith(str(TRACES)) for ln in skipped), err
    assert chatml_why in skipped and settings_why in skipped
    (readme,) = [s for s in skipped if s.startswith(f"{README}:")]
    assert "not read (a folder import reads only .jsonl, .json" in readme
    assert len(skipped) == 3, "every other file of shared/traces is imported"
    if as_json:  # the --json list stays one row per trace
        rows = json.loads(out)
        assert rows and all(r["trace_id"] for r in rows)
        assert not {r["path"] for r in rows} & {str(CHATML), str(SETTINGS), str(README)}
    else:
        assert f"{CHATML}:" not in out and f"{SETTINGS}:" not in out


def test_every_file_of_shared_traces_is_imported_or_skipped_with_a_reason() -> None:
    """No file of a folder import disappears without a word."""
    planned = plan_paths([TRACES])
    read = {p.resolve() for u in planned.units for p in u.files}
    skipped = {Path(s.path).resolve(): s.reason for s in planned.skipped}
    files = {p.resolve() for p in TRACES.rglob("*") if p.is_file()}
    assert files == read | set(skipped) and not read & set(skipped)
    assert all(why.startswith(s.path + ": ") for s, why in zip(planned.skipped, skipped.values()))


def test_a_folder_of_only_non_traces_says_what_it_skipped(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = cli("--db", str(tmp_path / "s.db"), "import", str(SETTINGS.parent.parent))
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "no trace files of a known format in this folder (skipped: " in err
    assert "base_state.json) without its events" in err
    assert not (tmp_path / "s.db").exists(), "refused before anything was written"


def test_forcing_a_format_names_the_files_of_other_formats(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(
        "--db", str(tmp_path / "s.db"), "import", str(LANGFUSE.parent), "--format", "otel"
    )
    err = capsys.readouterr().err
    assert code == 0 and out.count(": otel -> ") == 3
    assert f"ctxlens: skipped: {CHATML}: a Langfuse ChatML map" in err


def test_links_out_of_the_folder_and_special_files_are_named(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "basic.json").symlink_to(
        TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
    )
    (folder / "gone.json").symlink_to(tmp_path / "nothing.json")
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "real.json").write_bytes(
        (TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json").read_bytes()
    )
    code, out = cli("--db", str(tmp_path / "s.db"), "import", str(folder))
    err = capsys.readouterr().err
    assert code == 0 and out.count(": openhands -> ") == 1, out + err
    assert f"skipped: {folder / 'basic.json'}: a link to outside {folder} (not followed)" in err
    assert f"skipped: {folder / 'gone.json'}: a broken symbolic link" in err
    assert f"skipped: {folder / 'pipe.jsonl'}: a named pipe (FIFO), not a file; not read" in err
