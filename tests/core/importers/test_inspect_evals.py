"""Inspect AI logs as evals: zstd and deflate ``.eval`` members, the eval header and each
sample's id, epoch, input, target, answer and score in the trace metadata, empty samples
skipped. The expectations are read from the raw files with plain ``zipfile``/``json``."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from core.importers import inspect_ai
from core.importers.api import import_paths
from core.store import Store
from tests.conftest import TRACES
from tests.core.importers.test_bad_input import _fails
from tests.core.importers.zstd_eval import ZIP_ZSTANDARD, recompress, write_eval
from tests.helpers.ctxlens_process import child_env, run

REAL_EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*.eval"))), None)
needs_real = pytest.mark.skipif(REAL_EVAL is None, reason="shared/traces not present")
ROOT = Path(__file__).resolve().parents[3]


def _raw(path: Path) -> tuple[dict[str, Any], dict[tuple[str, int], dict[str, Any]]]:
    """Header and samples by (id, epoch), read with zstandard where needed."""
    import zstandard

    out: dict[tuple[str, int], dict[str, Any]] = {}
    header: dict[str, Any] = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.compress_type == ZIP_ZSTANDARD:
                with open(path, "rb") as f:
                    f.seek(info.header_offset + 26)
                    n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
                    f.seek(n + m, 1)
                    data = zstandard.ZstdDecompressor().stream_reader(f.read(info.compress_size))
                    value = json.loads(data.read())
            else:
                value = json.loads(z.read(info))
            if info.filename == "header.json":
                header = value
            elif info.filename.startswith("samples/"):
                out[(str(value["id"]), int(value["epoch"]))] = value
    return header, out


def _metas(store: Store, results: list[Any]) -> list[dict[str, Any]]:
    with store.read() as r:
        return [r.trace(res.trace_id).metadata for res in results]


@needs_real
@pytest.mark.parametrize("zstd", [False, True], ids=["deflate", "zstd"])
def test_eval_header_and_samples(store: Store, tmp_path: Path, zstd: bool) -> None:
    assert REAL_EVAL is not None
    path = recompress(REAL_EVAL, tmp_path / "z.eval") if zstd else REAL_EVAL
    if zstd:
        with zipfile.ZipFile(path) as z:
            assert {i.compress_type for i in z.infolist()} == {ZIP_ZSTANDARD}
    header, samples = _raw(path)
    results = import_paths(store, [path])
    assert len(results) == len(samples)
    metas = _metas(store, results)
    want_metrics = {
        s["name"]: {k: m["value"] for k, m in s["metrics"].items()}
        for s in header["results"]["scores"]
    }
    for meta, res in zip(metas, results, strict=True):
        ev = meta["eval"]
        assert ev["task"] == header["eval"]["task"] and ev["model"] == header["eval"]["model"]
        assert ev["status"] == header["status"]
        assert ev["solver"] == " → ".join(s["solver"] for s in header["plan"]["steps"])
        assert {s["scorer"]: s["metrics"] for s in ev["scores"]} == want_metrics
        s = meta["sample"]
        raw = samples[(str(s["id"]), int(s["epoch"]))]
        (name, score), *_ = raw["scores"].items()
        assert (s["score"], s["scorer"], s["answer"]) == (score["value"], name, score["answer"])
        assert s["target"] == raw["target"] and s["input"] == raw["input"][:500]
        assert res.messages == len(raw["messages"])
    keys = {m["eval"]["key"] for m in metas}
    assert len(keys) == 1, "the samples of one eval share its key"


def test_json_log_carries_the_eval(store: Store) -> None:
    path = next((TRACES / "inspect_ai").rglob("log_images_tc.json"), None)
    if path is None:
        pytest.skip("shared/traces not present")
    raw = json.loads(path.read_text())
    (meta,) = _metas(store, import_paths(store, [path]))
    assert meta["eval"]["task"] == raw["eval"]["task"]
    assert meta["sample"]["id"] == raw["samples"][0]["id"]


def _sample(i: int, messages: list[Any]) -> bytes:
    return json.dumps({"id": i, "epoch": 1, "input": f"q{i}", "messages": messages}).encode()


def test_empty_samples_are_skipped_and_reported(store: Store, tmp_path: Path) -> None:
    header = json.dumps({"version": 2, "status": "started", "eval": {"task": "t"}}).encode()
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    members = [("header.json", header)]
    members += [(f"samples/{i}_epoch_1.json", _sample(i, [])) for i in range(20_000)]
    members += [(f"samples/{i}_epoch_1.json", _sample(i, chat)) for i in (20_000, 20_001)]
    path = write_eval(tmp_path / "mostly-empty.eval", members)
    results = import_paths(store, [path])
    assert [r.messages for r in results] == [2, 2]
    assert any("skipped 20000 samples with no messages" in w for w in results[0].warnings)
    assert len(store.traces()) == 2


def test_only_empty_samples_is_an_error(store: Store, tmp_path: Path) -> None:
    members = [(f"samples/{i}_epoch_1.json", _sample(i, [])) for i in range(3)]
    path = write_eval(tmp_path / "empty.eval", [("header.json", b"{}"), *members])
    _fails(store, path, r"empty\.eval: 3 samples, none with messages; nothing to import")


def test_zstd_member_larger_than_declared_is_refused(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The central directory claims 1,000 bytes; the zstd stream inflates to 2 MB: the
    read stops at the bound, it does not trust the declaration."""
    monkeypatch.setattr(inspect_ai, "MAX_MEMBER", 1 << 20)
    big = json.dumps({"messages": [{"role": "user", "content": "a" * (2 << 20)}]}).encode()
    path = write_eval(
        tmp_path / "liar.eval", [("header.json", b"{}"), ("samples/1_epoch_1.json", big)]
    )
    data = bytearray(path.read_bytes())
    cd = data.index(b"samples/1_epoch_1.json", data.index(b"PK\x01\x02")) - 46
    assert data[cd : cd + 4] == b"PK\x01\x02"
    data[cd + 24 : cd + 28] = (1000).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    _fails(store, path, r"liar\.eval!samples/1_epoch_1\.json: member larger than declared")


def test_corrupt_zstd_member(store: Store, tmp_path: Path) -> None:
    path = write_eval(
        tmp_path / "bad.eval", [("header.json", b"{}"), ("samples/1_epoch_1.json", _sample(1, []))]
    )
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("samples/1_epoch_1.json")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 4
    data[start : start + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))
    _fails(store, path, r"bad\.eval!samples/1_epoch_1\.json: (corrupt zip member|CRC check)")


@needs_real
def test_cli_imports_a_zstd_eval(tmp_path: Path) -> None:
    assert REAL_EVAL is not None
    path = recompress(REAL_EVAL, tmp_path / "z.eval")
    db = tmp_path / "s.db"
    env = child_env({"PATH": "/usr/bin:/bin"})
    out = run("--db", str(db), "import", str(path), "--json", env=env)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == len(_raw(path)[1])


def test_a_sample_with_naive_times_marks_only_its_own_trace(store: Store, tmp_path: Path) -> None:
    """Review of 13e: the naive-time count was compared at the unit's start, so once one
    sample of an eval read a time without a zone, every later sample of the file was
    marked "time zone not recorded" too. Each sample's trace now says what its own times
    were; the eval header's times, read for every sample, count for every sample."""
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}}).encode()
    times = {
        1: ("2025-03-01T10:00:00+00:00", "2025-03-01T10:01:00+00:00"),
        2: ("2025-03-01T10:02:00", "2025-03-01T10:03:00"),  # no zone
        3: ("2025-03-01T10:04:00Z", "2025-03-01T10:05:00Z"),
    }
    members = [("header.json", header)]
    for i, (start, end) in times.items():
        sample = {"id": i, "epoch": 1, "input": f"q{i}", "messages": chat}
        sample |= {"started_at": start, "completed_at": end}
        members.append((f"samples/{i}_epoch_1.json", json.dumps(sample).encode()))
    path = write_eval(tmp_path / "mixed-zones.eval", members)
    results = import_paths(store, [path])
    bases = {m["sample_id"]: m.get("time_basis") for m in _metas(store, results)}
    assert bases == {1: None, 2: {"naive": True, "offset_minutes": None, "from": None}, 3: None}
    # the same eval whose header time has no zone: every sample read it
    naive_header = {"version": 2, "status": "success", "eval": {"task": "t"}}
    naive_header["eval"]["created"] = "2025-03-01T09:59:00"
    members[0] = ("header.json", json.dumps(naive_header).encode())
    for i in times:  # without their own times, each sample's trace starts at the eval's
        sample = {"id": i, "epoch": 1, "input": f"q{i}", "messages": chat}
        members[i] = (f"samples/{i}_epoch_1.json", json.dumps(sample).encode())
    path = write_eval(tmp_path / "naive-header.eval", members)
    results = import_paths(store, [path])
    assert all(m.get("time_basis") for m in _metas(store, results))
