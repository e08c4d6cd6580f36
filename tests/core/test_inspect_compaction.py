"""The compact dialog's content: request validation, the aligned diff, retention rows, apply."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.context.compaction import dry_run
from core.context.view import View, current_items
from core.errors import ConflictError, InvalidInputError
from core.inspector.compaction import (
    CompactRequest,
    build,
    commit,
    diff_rows,
    full_text,
    model_from_env,
    request_for,
    retention_rows,
    retention_summary,
    run_preview,
    summarizer_label,
)
from core.llm.backend import BackendReply, ChatRequest
from core.llm.server import ModelServer
from core.records import ContextItem, Message, NewMessage
from core.store import Store
from tests.sample_trace import write_sample


def _msg(seq: int, role: str = "user") -> Message:
    return Message(
        trace_id="t", sequence=seq, parent_sequence=seq - 1 if seq else None, role=role,  # type: ignore[arg-type]
        content=f"message {seq}", parts=None, tool_calls=(), tool_call_id=None, name=None,
        goal_id=None, kind="message", branch_type=None, branch_id=None, agent_name="main",
        token_count=3 + seq % 5, usage=None, created_at=0.0, metadata=None,
    )  # fmt: skip


@st.composite
def _contexts(draw: st.DrawFn) -> tuple[View, View]:
    """A context and a compaction of it: a subsequence with some items replaced and some
    synthetic items inserted (what every level produces), over real ``Message`` records."""
    n = draw(st.integers(0, 30))
    before: list[ContextItem] = [ContextItem(s) for s in range(n)]
    for pos in draw(st.lists(st.integers(0, n), max_size=3)):
        before.insert(pos, ContextItem(None, f"old note {pos}", "user", "placeholder"))
    after: list[ContextItem] = []
    for item in before:
        fate = draw(st.sampled_from(["keep", "keep", "drop", "replace"]))
        if fate == "keep":
            after.append(item)
        elif fate == "replace" and item.sequence is not None:
            after.append(ContextItem(item.sequence, f"[cleared {item.sequence}]"))
    for pos in draw(st.lists(st.integers(0, len(after)), max_size=3)):
        after.insert(pos, ContextItem(None, "## Summary", "user", "summary"))
    msgs = {s: _msg(s, "user" if s % 2 == 0 else "assistant") for s in range(n)}
    return View(tuple(before), msgs), View(tuple(after), msgs)


@settings(max_examples=200, deadline=None)
@given(_contexts())
def test_diff_rows_show_every_item_once_on_each_side_in_order(pair: tuple[View, View]) -> None:
    before, after = pair
    rows = diff_rows(before, after)
    left = [r.before for r in rows if r.before is not None]
    right = [r.after for r in rows if r.after is not None]
    assert [c.sequence for c in left] == [i.sequence for i in before.items]
    assert [c.sequence for c in right] == [i.sequence for i in after.items]
    after_seqs = {i.sequence for i in after.items if i.sequence is not None}
    for r in rows:
        if r.status == "removed":
            assert r.after is None and r.before is not None
            assert r.before.sequence is None or r.before.sequence not in after_seqs
        elif r.status == "added":
            assert r.before is None and r.after is not None
        else:
            assert r.before is not None and r.after is not None
            assert r.before.sequence == r.after.sequence
            assert (r.status == "kept") == (r.before.text == r.after.text)


def test_request_validation_names_the_bad_field() -> None:
    with pytest.raises(InvalidInputError, match="window"):
        CompactRequest(window=0).config()
    with pytest.raises(InvalidInputError, match="threshold"):
        CompactRequest(threshold=1.5).config()
    with pytest.raises(InvalidInputError, match="level"):
        CompactRequest(level="everything").config()
    with pytest.raises(InvalidInputError, match="goal mode"):
        CompactRequest(goal_mode="sometimes").config()
    cfg = CompactRequest("micro", 9000, 0.25, "none").config()
    assert (cfg.window, cfg.threshold, cfg.goal_mode) == (9000, 0.25, "none")


def test_request_defaults_come_from_the_trace_budget(store: Store) -> None:
    tr = write_sample(store)
    req = request_for(tr.metadata, "goal")
    budget = tr.metadata["budget"]  # type: ignore[index]
    assert (req.level, req.window, req.threshold) == (
        "goal",
        budget["context_window"],
        budget["compaction_threshold"],
    )
    assert request_for(None).window == 128_000


def test_goal_preview_on_the_sample_rows_match_the_outcome(store: Store) -> None:
    tr = write_sample(store)
    cp = run_preview(store, tr.id, request_for(tr.metadata, "goal"))
    o = cp.preview.outcome
    assert o.compacted and cp.can_apply
    removed = [r.before.sequence for r in cp.rows if r.status == "removed" and r.before]
    replaced = [r.after for r in cp.rows if r.status == "replaced" and r.after]
    assert tuple(removed) == o.removed
    assert tuple(c.sequence for c in replaced) == o.replaced
    assert all("details cleared" in c.text for c in replaced)
    assert sum(r.after.tokens for r in cp.rows if r.after) == o.tokens_after
    assert sum(r.before.tokens for r in cp.rows if r.before) == o.tokens_before
    assert f"{o.tokens_saved:,} saved" in cp.headline()
    # the same numbers as the CLI's dry run
    cli = dry_run(store, tr.id, "goal", config=cp.request.config())
    assert cli.to_json()["removed"] == list(o.removed)


def test_retention_rows_name_every_lost_fact(store: Store) -> None:
    tr = write_sample(store)
    cp = run_preview(store, tr.id, request_for(tr.metadata, "goal"))
    ret = cp.preview.retention
    lost = {(r.field, r.fact) for r in cp.retention if not r.kept}
    kept = {(r.field, r.fact) for r in cp.retention if r.kept}
    for name in ("refs", "constraints", "completed_steps", "skills"):
        assert {f for n, f in lost if n == name} == set(getattr(ret, name).lost)
        assert {f for n, f in kept if n == name} == set(getattr(ret, name).kept)
    assert ("skills", "timezone-handling") in lost, "goal 2's skill result leaves the context"
    assert "lost: timezone-handling" in retention_summary(ret)
    assert retention_rows(ret) == cp.retention


def test_unchanged_preview_cannot_be_applied(store: Store) -> None:
    tr = write_sample(store)
    cp = run_preview(store, tr.id, request_for(tr.metadata, "snip"))
    assert not cp.can_apply and "unchanged" in cp.headline()
    with pytest.raises(InvalidInputError, match="nothing to apply"):
        commit(store, cp)


def test_commit_records_the_previewed_context(store: Store) -> None:
    tr = write_sample(store)
    cp = run_preview(store, tr.id, request_for(tr.metadata, "goal"))
    with store.read() as r:
        n_before = len(r.compactions(tr.id))
    done = commit(store, cp)
    assert done.preview.applied and not done.can_apply
    with store.read() as r:
        items, boundary = current_items(r, tr.id)
        assert len(r.compactions(tr.id)) == n_before + 1
    assert boundary is not None and boundary.id == done.preview.event.id  # type: ignore[union-attr]
    assert items == cp.preview.outcome.items


def test_commit_refuses_after_the_head_moved(store: Store) -> None:
    tr = write_sample(store)
    cp = run_preview(store, tr.id, request_for(tr.metadata, "goal"))
    store.append(tr.id, [NewMessage("user", "one more thing")])
    with pytest.raises(ConflictError):
        commit(store, cp)


def test_model_settings_from_the_environment() -> None:
    assert model_from_env({}) is None
    assert "scripted" in summarizer_label(None)
    m = model_from_env({"CTXLENS_BASE_URL": "http://127.0.0.1:1/v1", "CTXLENS_MODEL": "m"})
    assert m is not None and m.model == "m" and "model m" in summarizer_label(m)


class _Narrator:
    """A served model that writes a fixed narrative (reached over real HTTP)."""

    def reply(self, request: ChatRequest) -> BackendReply:
        return BackendReply(text="The agent fixed parse_date and added a regression test.")


def test_summary_preview_uses_a_configured_model(store: Store) -> None:
    tr = write_sample(store)
    with ModelServer(_Narrator()) as server:
        cp = run_preview(
            store, tr.id, request_for(tr.metadata, "summary"), model=server.settings("narrator")
        )
        served = len(server.requests)
    assert served >= 1
    at = next(n for n, r in enumerate(cp.rows) if r.after and r.after.kind == "summary")
    assert cp.rows[at].status == "added" and full_text(cp, at, "before") == ""
    assert "## Narrative\nThe agent fixed parse_date" in full_text(cp, at, "after")
    first_removed = next(n for n, r in enumerate(cp.rows) if r.status == "removed")
    seq = cp.rows[first_removed].before.sequence  # type: ignore[union-attr]
    assert full_text(cp, first_removed, "before") == cp.preview.outcome.before.messages[seq].content
    assert "model narrator" in cp.summarizer
    assert build(cp.request, cp.preview, "x").rows == cp.rows
