"""The cycle collector is paused while an import unit is written, and comes back after."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import InvalidInputError
from core.importers import api
from core.importers.api import import_paths
from core.importers.gcpause import collector_paused
from core.store import Store

FIXTURE = Path(__file__).parents[2] / "fixtures" / "claude_code" / "session.jsonl"


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_and_restored_by_the_last_to_leave(collector_on: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the outer holder still pauses it"
    assert gc.isenabled()


def test_a_collector_off_before_stays_off(collector_on: None) -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_restored_when_the_import_fails(collector_on: None, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(FIXTURE.read_text().splitlines()[0] + "\n{not json\n")
    failed = pytest.raises(InvalidInputError, match=r"bad\.jsonl:2")
    with Store.open(tmp_path / "s.db") as store, failed:
        import_paths(store, [bad])
    assert gc.isenabled()


def test_an_import_runs_with_the_collector_paused(
    collector_on: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    real = api.importer

    def spying(fmt: str) -> object:
        module = real(fmt)

        class Spy:
            @staticmethod
            def run(*args: object) -> object:
                seen.append(gc.isenabled())
                return module.run(*args)

        return Spy

    monkeypatch.setattr(api, "importer", spying)
    with Store.open(tmp_path / "s.db") as store:
        (res,) = import_paths(store, [FIXTURE])
    assert res.messages > 0 and seen == [False]
    assert gc.isenabled()
