"""Bad input (IMP-2): a clear error naming file and line, nothing partial in the store,
never a traceback; skippable unknown records are warnings. Plus a corruption fuzz over the
real files: truncate, flip bytes, drop and shuffle lines."""

from __future__ import annotations

import json
import os
import random
import threading
import zipfile
from pathlib import Path

import pytest

from core.errors import CtxlensError, InvalidInputError
from core.importers import inspect_ai
from core.importers.api import import_paths
from core.importers.formats import FORMATS
from core.store import Store
from tests.conftest import TRACES

FIX = Path(__file__).resolve().parents[2] / "fixtures"
CC_SESSION = FIX / "claude_code/session.jsonl"


def _snapshot(store: Store) -> tuple[int, ...]:
    with store.read() as r:
        return tuple(
            r.conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one()
            for t in (
                "traces",
                "messages",
                "lines",
                "compactions",
                "llm_calls",
                "refs",
                "import_records",
            )
        )


def _fails(store: Store, path: Path, match: str) -> InvalidInputError:
    before = _snapshot(store)
    with pytest.raises(InvalidInputError, match=match) as exc:
        import_paths(store, [path])
    assert _snapshot(store) == before, "nothing partial is left"
    return exc.value


def test_truncated_jsonl_names_the_last_line(store: Store, tmp_path: Path) -> None:
    data = CC_SESSION.read_bytes()
    bad = tmp_path / "s.jsonl"
    bad.write_bytes(data[: len(data) - 40])
    lines = bad.read_bytes().count(b"\n") + 1
    err = _fails(store, bad, rf"s\.jsonl:{lines}: invalid JSON")
    assert "truncated" in str(err)


def test_invalid_line_in_the_middle(store: Store, tmp_path: Path) -> None:
    lines = CC_SESSION.read_text().splitlines()
    lines[5] = "{not json"
    bad = tmp_path / "s.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    _fails(store, bad, r"s\.jsonl:6: invalid JSON")


def test_record_with_the_wrong_structure(store: Store, tmp_path: Path) -> None:
    lines = CC_SESSION.read_text().splitlines()
    rec = json.loads(lines[3])
    rec["message"] = "oops"
    lines[3] = json.dumps(rec)
    bad = tmp_path / "s.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    _fails(store, bad, r"s\.jsonl:4: assistant record has no 'message' object")


def test_unknown_record_type_is_a_warning_not_an_error(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "codex/rollout-compacted.jsonl"])
    assert any("unknown type 'brand_new_record'" in w and ":23:" in w for w in res.warnings)


def test_wrong_format_and_forced_wrong_format(store: Store, tmp_path: Path) -> None:
    odd = tmp_path / "notes.json"
    odd.write_text('{"hello": "world"}')
    _fails(store, odd, r"notes\.json: not a trace file of a known format")
    with pytest.raises(InvalidInputError, match=r"rollout-compacted\.jsonl:\d+: "):
        import_paths(store, [FIX / "codex/rollout-compacted.jsonl"], fmt="claude-code")


def test_huge_single_line(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.importers import reading

    monkeypatch.setattr(reading, "MAX_LINE", 1 << 20)
    big = tmp_path / "big.jsonl"
    first = CC_SESSION.read_text().splitlines()[1]
    with big.open("w") as f:
        f.write(first + "\n")
        f.write('{"type":"user","uuid":"x","sessionId":"s","message":{"role":"user","content":"')
        f.write("a" * (2 << 20))
        f.write('"}}\n')
    _fails(store, big, r"big\.jsonl:2: line longer than 1 MB")


def test_huge_single_json_value(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.importers import jsonstream

    monkeypatch.setattr(jsonstream, "MAX_VALUE", 1 << 20)
    doc = tmp_path / "chat.json"
    doc.write_text(json.dumps([{"role": "user", "content": "a" * (3 << 20)}]))
    _fails(store, doc, r"chat\.json:1: a single JSON value is over 1 MB")


def _bomb(path: Path, size: int) -> None:
    """An .eval whose one sample inflates from a few KB to ``size`` bytes of zeros."""
    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}})
    chunk = b"\0" * (1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", header)
        with z.open("samples/1_epoch_1.json", "w", force_zip64=True) as f:
            for _ in range(size >> 20):
                f.write(chunk)


def test_zip_bomb_in_an_eval_is_refused(store: Store, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.eval"
    _bomb(bomb, 64 << 20)
    assert bomb.stat().st_size < 200_000
    _fails(
        store,
        bomb,
        r"bomb\.eval!samples/1_epoch_1\.json: compression ratio \d+:1; refusing \(zip bomb\?\)",
    )


def test_zip_member_larger_than_declared(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inspect_ai, "MAX_MEMBER", 1 << 20)
    big = tmp_path / "big.eval"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as z:
        z.writestr("header.json", "{}")
        z.writestr(
            "samples/1_epoch_1.json",
            json.dumps({"messages": [{"role": "user", "content": "a" * (2 << 20)}]}),
        )
    _fails(store, big, r"big\.eval!samples/1_epoch_1\.json: member is \d+ MB uncompressed")


def test_corrupt_eval_zip(store: Store, tmp_path: Path) -> None:
    src = next(TRACES.rglob("*.eval")) if TRACES.is_dir() else None
    if src is None:
        pytest.skip("no shared .eval")
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        info = next(i for i in z.infolist() if i.filename.startswith("samples/"))
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    data[start : start + 40] = b"\xff" * 40  # inside a sample's compressed bytes
    bad = tmp_path / "bad.eval"
    bad.write_bytes(bytes(data))
    before = _snapshot(store)
    with pytest.raises(CtxlensError, match=r"bad\.eval"):
        import_paths(store, [bad])
    assert _snapshot(store) == before


# -- fuzz -------------------------------------------------------------------------------
FUZZ_SOURCES = (
    sorted(
        p
        for p in [
            *TRACES.rglob("*.jsonl"),
            *TRACES.rglob("*.json"),
            *TRACES.rglob("*.traj"),
            *FIX.rglob("*.json*"),
        ]
        if p.is_file() and p.stat().st_size < 3_000_000 and "subagents" not in p.parts
    )
    if TRACES.is_dir()
    else sorted(FIX.rglob("*.json*"))
)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One corruption: truncate, flip bytes, drop lines, shuffle lines or duplicate one."""
    how = rng.randrange(5)
    if how == 0:
        return data[: rng.randrange(len(data))]
    if how == 1:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(buf))
            buf[i] = rng.randrange(256)
        return bytes(buf)
    lines = data.split(b"\n")
    if how == 2 and len(lines) > 1:
        for _ in range(rng.randint(1, max(1, len(lines) // 5))):
            lines.pop(rng.randrange(len(lines)))
    elif how == 3:
        rng.shuffle(lines)
    elif lines:
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines)), lines[i])
    return b"\n".join(lines)


def run_variant(store: Store, src: Path, data: bytes, where: Path) -> str:
    """Import one corrupted copy: either it imports, or it fails with a CtxlensError and
    leaves the store exactly as it was. Returns 'ok' or 'error'."""
    where.write_bytes(data)
    return import_checked(store, where, _format_of(src))


def import_checked(
    store: Store, where: Path, fmt: str = "auto", errors: list[str] | None = None
) -> str:
    """Import ``where``: it imports (no empty trace without a warning), or it fails with a
    CtxlensError naming it and leaves the store as it was. Returns 'ok' or 'error'."""
    before = _snapshot(store)
    try:
        results = import_paths(store, [where], fmt=fmt)
    except CtxlensError as exc:
        assert str(where.name) in str(exc) or "unknown format" in str(exc), str(exc)
        assert _snapshot(store) == before, f"partial trace left by {exc}"
        if errors is not None:
            errors.append(str(exc))
        return "error"
    assert all(r.messages or r.warnings for r in results), f"a silent empty trace: {where}"
    return "ok"


#: Special inputs: what each writes at ``path`` (a file, link, pipe or folder).
def _fifo(path: Path, rng: random.Random) -> None:
    os.mkfifo(path)


def _dangling(path: Path, rng: random.Random) -> None:
    path.symlink_to(path.with_name(path.name + ".gone"))


def _link_loop(path: Path, rng: random.Random) -> None:
    other = path.with_name(path.name + ".other")
    path.symlink_to(other.name)
    other.symlink_to(path.name)


def _dev_zero(path: Path, rng: random.Random) -> None:
    path.symlink_to("/dev/zero")


def _self_links(path: Path, rng: random.Random) -> None:
    """A folder holding links to itself, to its parent's parent and a real trace."""
    path.mkdir()
    (path / "sub").mkdir()
    (path / "sub" / "chat.json").write_text('[{"role": "user", "content": "hi"}]')
    for i in range(rng.randint(1, 3)):
        (path / f"self{i}").symlink_to(".")
    (path / "sub" / "up").symlink_to("..")
    (path / "out").symlink_to(path.parent.parent)


def _deep(path: Path, rng: random.Random) -> None:
    depth = rng.choice((1_200, 20_000, 100_000))
    opener = rng.choice(("[", '{"a":', '{"type":"user","uuid":"u","message":'))
    path.write_text(opener * depth + "\n")


def _odd_types(path: Path, rng: random.Random) -> None:
    odd = rng.choice(({}, [], 1, None, True, 1.5))
    key = rng.choice(("type", "kind", "role", "messages", "format", "payload", "content"))
    rec = {"type": "user", "uuid": "u", "sessionId": "s", "role": "user", "content": "x"}
    rec[key] = odd
    path.write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n")


def _blank(path: Path, rng: random.Random) -> None:
    path.write_bytes(rng.choice((b"", b"\xef\xbb\xbf", b"\n\n", b"\0" * 100, b"{", b"[]", b"{}")))


SPECIAL = (_fifo, _dangling, _link_loop, _dev_zero, _self_links, _deep, _odd_types, _blank)


def run_special(store: Store, folder: Path, i: int, rng: random.Random) -> tuple[str, str]:
    """One special input, imported on a watchdog thread: ``(kind, outcome)``; a hang
    past ``HANG`` seconds is the outcome ``hang``."""
    make = rng.choice(SPECIAL)
    target = folder / f"s{i}{rng.choice(('.json', '.jsonl', '.traj'))}"
    make(target, rng)
    fmt = rng.choice(("auto", "auto", *FORMATS))
    outcome: list[str] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(import_checked(store, target, fmt))
        except BaseException as exc:  # reported to the caller
            failed.append(exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(HANG)
    if worker.is_alive():
        return make.__name__, "hang"
    if failed:
        raise failed[0]
    return make.__name__, outcome[0]


#: Seconds an import of one special input may take before it counts as a hang.
HANG = 60.0


_FORMATS: dict[Path, str] = {}


def _format_of(src: Path) -> str:
    from core.importers.detect import sniff

    if src not in _FORMATS:
        _FORMATS[src] = sniff(src) or "auto"
    return _FORMATS[src]


@pytest.mark.parametrize("seed", range(4))
def test_corruption_fuzz(store: Store, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    outcomes = {"ok": 0, "error": 0}
    for i in range(75):
        src = rng.choice(FUZZ_SOURCES)
        data = src.read_bytes()
        if not data:
            continue
        target = tmp_path / f"v{i}{''.join(src.suffixes[-2:])}"
        outcomes[run_variant(store, src, mutate(data, rng), target)] += 1
    assert outcomes["error"] > 0 and sum(outcomes.values()) >= 70


@pytest.mark.parametrize("seed", range(2))
def test_special_inputs_never_crash_or_hang(store: Store, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    seen: dict[str, set[str]] = {}
    for i in range(40):
        kind, outcome = run_special(store, tmp_path, i, rng)
        assert outcome != "hang", f"{kind} hung the import"
        seen.setdefault(kind, set()).add(outcome)
    assert {"_fifo", "_deep", "_self_links", "_odd_types"} <= seen.keys()
    assert seen["_fifo"] == {"error"} and seen["_deep"] == {"error"}
