"""Review 11: the agents a forked or replayed delegation root calls are titled after their
root's lineage ("Fork at #1 · root/scout: …"), so no trace of the new tree reads like one
of the source's; a replay and a fork take their titles from the same module."""

from __future__ import annotations

from pathlib import Path

import core.demo  # noqa: F401 (registers the demo's re-runners)
from core.delegation.store import children
from core.demo.delegation import run_delegation
from core.lineage import child_title, fork_title, lineage_tag, replay_title
from core.replay.fork import fork_options
from core.replay.rerun import ReplayOptions, replay
from core.store import Store


def _tree(store: Store, root: str) -> list[str]:
    """Titles of every agent under ``root``, depth first."""
    out: list[str] = []
    with store.read() as r:
        for child in children(r, root):
            out.append(r.trace(child.trace_id).title)
            out += _tree(store, child.trace_id)
    return out


def test_children_of_a_forked_or_replayed_root_carry_its_lineage(tmp_path: Path) -> None:
    with Store.open(tmp_path / "d.db") as store:
        source = run_delegation(store)["trace_id"]
        own = _tree(store, source)
        assert own and all(t.startswith("root/") for t in own)
        with store.read() as r:
            task = r.message(source, 1)
            source_title = r.trace(source).title
        fork = replay(store, *fork_options(store, source, 1, task.content + "\nBe brief."))
        again = replay(store, source, ReplayOptions(from_call=0))
        forked, replayed = _tree(store, fork.trace_id), _tree(store, again.trace_id)
        assert forked and all(t.startswith("Fork at #1 · root/") for t in forked), forked
        assert replayed and all(t.startswith("Replay from call 0 · root/") for t in replayed)
        assert not set(forked) & set(own) and not set(replayed) & set(own)
        assert {t.split(" · ", 1)[1] for t in forked} <= set(own)  # the same agents' titles
        with store.read() as r:
            assert r.trace(fork.trace_id).title == fork_title(source_title, 1, "user")
            assert r.trace(again.trace_id).title == replay_title(source_title, 0)


def test_lineage_words() -> None:
    fork = {"replay_of": {"trace": "a", "from_call": 2, "edited_sequence": 7}}
    assert lineage_tag(fork) == "Fork at #7"
    assert lineage_tag({"replay_of": {"trace": "a", "from_call": 3}}) == "Replay from call 3"
    assert lineage_tag({"demo": {}}) is None and lineage_tag(None) is None
    assert child_title("root/scout", "x" * 80, None) == "root/scout: " + "x" * 60
    assert child_title("root/scout", "List", fork) == "Fork at #7 · root/scout: List"
    assert replay_title("T", 4, ("window=8000",)) == "Replay of T from call 4 (window=8000)"
