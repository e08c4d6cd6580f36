"""A small, deterministic trace for tests, screenshots and benchmarks (the app's default store
is recorded from a demo run instead, ``app/default_store.py``).

``write_sample(store)`` records a short, deterministic coding-agent run with everything the
inspector can show: goals, tool calls and results (JSON, code, a diff), periodic context
injection, a caller-requested skill and its re-injection, a slimmed tool output kept as a
ref and granted back, a token-budget nudge, a subagent branch, a compression side branch
with its summary, an L1 goal compaction and a summary compaction, recorded LLM calls, and
a rewind that left an abandoned branch.
``write_long_trace`` writes a straight synthetic trace of any length (the 1M-message bench).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from core.context.view import current_items, current_view, request_sha256, resolve
from core.context.view import token_breakdown as breakdown
from core.records import (
    CompactionEvent,
    ContextItem,
    ContextRef,
    GoalEvent,
    Grant,
    LlmCall,
    Message,
    MessageKind,
    NewMessage,
    SkillInjection,
    ToolCall,
    Trace,
)
from core.store.store import Store
from core.store.writer import Writer

T0 = 1_767_000_000.0
BUDGET = {"context_window": 4096, "soft": 1600, "hard": 2000, "compaction_threshold": 0.5}

TEST_FILE = """import datetime as dt

from dates import parse_date


def test_parse_dates():
    got = parse_date("2024-03-01T10:00:00+01:00")
    assert got == dt.datetime(2024, 3, 1, 9, 0, tzinfo=dt.timezone.utc)
"""

PATCH = """diff --git a/dates.py b/dates.py
--- a/dates.py
+++ b/dates.py
@@ -4,5 +4,6 @@ import datetime as dt
 def parse_date(text: str) -> dt.datetime:
-    value = dt.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")
-    return value
+    value = dt.datetime.fromisoformat(text)
+    if value.tzinfo is None:
+        value = value.replace(tzinfo=dt.timezone.utc)
+    return value.astimezone(dt.timezone.utc)
"""

SKILL = """# timezone-handling

Always keep datetimes timezone-aware. Parse with `datetime.fromisoformat`, convert to UTC
with `astimezone(timezone.utc)` before comparing, never strip offsets with slicing.
"""

GREP = "\n".join(
    f"src/{name}.py:{n}: value = parse_date(row[{n % 7}])"
    for n, name in enumerate(["io", "report", "sync", "cli", "export", "api"] * 8, start=10)
)


@dataclass
class _Run:
    """Appends messages one by one, recording an LLM call before each assistant reply."""

    w: Writer
    trace: Trace
    clock: float = T0
    calls: int = 0
    last: list[Message] = field(default_factory=list)

    def add(self, msg: NewMessage, call: bool = True) -> Message:
        self.clock += 7.0
        if msg.role == "assistant" and msg.branch_type is None and call:
            return self._with_call(msg)
        stored = self.w.append(self.trace.id, [_at(msg, self.clock)])[0]
        self.last = [stored]
        return stored

    def _with_call(self, msg: NewMessage) -> Message:
        self.w.flush()
        items, _ = current_items(self.w.read, self.trace.id)
        view = resolve(self.w.read, self.trace.id, items)
        total, _by = breakdown(view)
        usage = {"prompt_tokens": total, "completion_tokens": 40 + 3 * self.calls}
        meta = {"latency_ms": 850 + 37 * self.calls}
        stored = self.w.append(self.trace.id, [_at(msg, self.clock, usage=usage, metadata=meta)])[0]
        self.w.record_llm_call(
            LlmCall(
                self.trace.id,
                self.calls,
                items,
                request_sha256(view.openai()),
                "scripted-demo",
                head_sequence=stored.parent_sequence,
                response_sequence=stored.sequence,
                usage=usage,
                latency_ms=meta["latency_ms"],
                created_at=self.clock,
            )
        )
        self.calls += 1
        self.last = [stored]
        return stored

    def tool(
        self, call: Message, content: str, goal: str | None, kind: MessageKind = "message"
    ) -> Message:
        tc = call.tool_calls[0]
        msg = NewMessage("tool", content, tool_call_id=tc.id, name=tc.name, goal_id=goal, kind=kind)
        return self.add(msg)

    def call(
        self, name: str, args: dict[str, object], goal: str | None, kind: MessageKind = "message"
    ) -> Message:
        tc = ToolCall(f"call_{self.calls}_{name}", name, json.dumps(args))
        return self.add(NewMessage("assistant", "", tool_calls=(tc,), goal_id=goal, kind=kind))


def _at(msg: NewMessage, when: float, **extra: object) -> NewMessage:
    from dataclasses import replace

    return replace(msg, created_at=when, **extra)  # type: ignore[arg-type]


def write_sample(store: Store, title: str = "Sample: fix a failing date test") -> Trace:
    """Record the sample trace in one transaction and return it."""
    with store.write() as w:
        trace = w.create_trace(
            title, "sample", metadata={"budget": BUDGET, "sample": True}, created_at=T0
        )
        run = _Run(w, trace)
        _opening(run)
        _goal_one_one(run)
        _goal_one_two(run)
        _summary(run)
        _goal_two(run)
        _rewind(run)
    return store.trace(trace.id)


def _skill(run: _Run, message: int, call: int, reason: str) -> None:
    rec = SkillInjection(run.trace.id, "timezone-handling", message, call, reason, run.clock)
    run.w.add_skill_injection(rec)


def _goal(run: _Run, op: str, goal: str, seq: int, **payload: str) -> None:
    run.w.add_goal_event(GoalEvent(run.trace.id, seq, op, goal, payload or None))


def _opening(run: _Run) -> None:
    run.add(
        NewMessage(
            "system",
            "You are a careful coding agent. Use tools, keep goals up to date, be brief.",
            kind="system_prompt",
        )
    )
    run.add(NewMessage("user", "test_parse_dates fails on CI. Find the cause and fix it."))
    m = run.call("goal", {"add": "Fix test_parse_dates", "under": None}, "1")
    run.tool(m, "Added goal 1. Added 1.1 Reproduce, 1.2 Fix. Focus: 1.1", "1")
    _goal(run, "add", "1", m.sequence, title="Fix test_parse_dates")
    _goal(run, "add", "1.1", m.sequence, title="Reproduce the failure", parent="1")
    _goal(run, "add", "1.2", m.sequence, title="Fix parse_date", parent="1")
    _goal(run, "focus", "1.1", m.sequence)


def _goal_one_one(run: _Run) -> None:
    first = run.call("read_file", {"path": "tests/test_dates.py"}, "1.1")
    run.tool(first, TEST_FILE, "1.1")
    m = run.call("run_tests", {"args": ["-k", "parse_dates"]}, "1.1")
    error = "AssertionError: datetime(2024, 3, 1, 10, 0) != datetime(2024, 3, 1, 9, 0, tzinfo=utc)"
    out = {"passed": 0, "failed": 1, "failures": [{"test": "test_parse_dates", "error": error}]}
    last = run.tool(m, json.dumps(out), "1.1")
    ctx = run.call("get_current_context", {}, "1.1", kind="injected_context")
    state = {"time": "2026-01-01T10:01:10Z", "goals": "1 Fix test_parse_dates [in progress]\n"
             "  1.1 Reproduce [in progress] ← focus\n  1.2 Fix parse_date [pending]"}  # fmt: skip
    run.tool(ctx, json.dumps(state), "1.1",
             kind="injected_context")  # fmt: skip
    done = run.call("goal", {"done": "parse_date drops the UTC offset (slices text[:19])"}, "1.1")
    result = run.tool(done, "Goal 1.1 completed. Focus: 1.2", "1.1")
    _goal(run, "done", "1.1", done.sequence, summary="parse_date drops the UTC offset")
    _goal(run, "focus", "1.2", done.sequence)
    removed = tuple(range(first.sequence, last.sequence + 1))
    marker = {result.sequence: "[goal 1.1 done: details cleared]"}
    _compact(run, "goal", result.sequence, removed, marker, goal="1.1")


def _compact(
    run: _Run,
    level: str,
    at: int,
    removed: tuple[int, ...],
    overrides: dict[int, str],
    goal: str | None = None,
    keep: list[ContextItem] | None = None,
    summary: int | None = None,
) -> None:
    run.w.flush()
    before = current_view(run.w.read, run.trace.id)
    before_tokens, _ = breakdown(before)
    if keep is None:
        keep = [
            ContextItem(i.sequence, overrides.get(i.sequence or -1, i.content), i.role, i.kind)
            for i in before.items
            if i.sequence not in removed
        ]
    after_tokens, _ = breakdown(resolve(run.w.read, run.trace.id, keep))
    run.w.record_compaction(
        CompactionEvent.between(
            run.trace.id, level, at, before.items, keep, (before_tokens, after_tokens),
            removed=removed, summary_sequence=summary, goal_id=goal, created_at=run.clock,
        )
    )  # fmt: skip


def _goal_one_two(run: _Run) -> None:
    sk = run.call("skill", {"name": "timezone-handling"}, "1.2", kind="injected_skill")
    res = run.tool(sk, SKILL, "1.2", kind="injected_skill")
    _skill(run, res.sequence, sk.sequence, "caller")
    g = run.call("grep", {"pattern": "parse_date(", "path": "src"}, "1.2")
    sub = run.w.append(
        run.trace.id,
        [
            NewMessage("user", "List callers of parse_date that pass naive strings.",
                       branch_type="subagent", branch_id="explorer-1", agent_name="explorer"),
            NewMessage("assistant", "src/io.py and src/sync.py pass naive strings.",
                       branch_type="subagent", branch_id="explorer-1", agent_name="explorer"),
        ],
        parent=g.sequence,
    )  # fmt: skip
    slim = "48 matches in 6 files (io, report, sync, cli, export, api). Full output: ref grep-1."
    out = run.tool(g, slim, "1.2")
    run.w.add_ref(ContextRef("grep-1", run.trace.id, "tool_output", "grep parse_date( in src",
                             tokens=900, bytes=len(GREP), source_sequence=out.sequence,
                             content=GREP, created_at=run.clock))  # fmt: skip
    image = ContextRef(
        "img-1",
        run.trace.id,
        "image",
        "CI failure screenshot",
        bytes=48_213,
        image_blocks=1,
        source_sequence=sub[0].sequence,
        created_at=run.clock,
    )
    run.w.add_ref(image)  # fmt: skip
    rq = run.call("read_ref", {"ref": "grep-1"}, "1.2")
    gr = run.tool(rq, GREP, "1.2", kind="grant")
    cost = {"tokens": gr.token_count}
    grant = Grant(
        None,
        run.trace.id,
        "grep-1",
        "model",
        "needs the call sites",
        cost,
        rq.sequence,
        gr.sequence,
        created_at=run.clock,
    )
    run.w.add_grant(grant)  # fmt: skip
    p = run.call("apply_patch", {"patch": PATCH}, "1.2")
    run.tool(p, PATCH, "1.2")
    nudge = "[budget] 80% of the soft token budget used: keep the next steps short."
    run.add(NewMessage("user", nudge, kind="nudge", goal_id="1.2"))
    t = run.call("run_tests", {"args": ["-k", "dates"]}, "1.2")
    run.tool(t, json.dumps({"passed": 4, "failed": 0}), "1.2")


def _summary(run: _Run) -> None:
    head = run.last[0].sequence
    side = run.w.append(
        run.trace.id,
        [
            NewMessage("user", "Summarize the work so far for a fresh context.",
                       branch_type="compression", branch_id="cmp-1"),
            NewMessage("assistant", "Goal 1.1 done (offset dropped by slicing). 1.2: patched "
                       "parse_date to fromisoformat + UTC; tests pass.",
                       branch_type="compression", branch_id="cmp-1"),
        ],
        parent=head,
    )  # fmt: skip
    text = (
        "## Summary\nTask: fix test_parse_dates.\nDone: 1.1 reproduced (offset dropped); "
        "1.2 patched dates.parse_date, 4 tests pass.\nRefs: grep-1.\nPending: regression test."
        "\n\nContinue from where you stopped; do not redo completed steps."
    )
    summ = run.add(NewMessage("user", text, kind="summary", goal_id="1.2",
                              metadata={"from_branch": side[-1].sequence}))  # fmt: skip
    run.w.flush()
    keep = [ContextItem(0), ContextItem(1), ContextItem(summ.sequence)]
    removed = tuple(
        i.sequence
        for i in current_view(run.w.read, run.trace.id).items
        if i.sequence not in (0, 1, summ.sequence) and i.sequence is not None
    )
    _compact(run, "summary", summ.sequence, removed, {}, keep=keep, summary=summ.sequence)
    grant = run.w.read.grants(run.trace.id)[0]
    run.w.revoke_grant(grant.id or 0, summ.sequence, "compacted away by summary")


def _goal_two(run: _Run) -> None:
    summary = "parse_date returns aware UTC datetimes"
    d = run.call("goal", {"done": "1.2", "summary": summary}, "1.2")
    run.tool(d, "Goal 1.2 completed; goal 1 completed. Added 2 Add a regression test, "
             "3 Update CHANGELOG.md, 4 Refactor dates.py. Focus: 2", "2")  # fmt: skip
    _goal(run, "done", "1.2", d.sequence, summary=summary)
    _goal(run, "done", "1", d.sequence, summary="test_parse_dates passes again")
    _goal(run, "add", "2", d.sequence, title="Add a regression test")
    _goal(run, "add", "3", d.sequence, title="Update CHANGELOG.md")
    _goal(run, "add", "4", d.sequence, title="Refactor dates.py")
    _goal(run, "focus", "2", d.sequence)
    sk = run.call("skill", {"name": "timezone-handling"}, "2", kind="injected_skill")
    res = run.tool(sk, SKILL, "2", kind="injected_skill")
    _skill(run, res.sequence, sk.sequence, "reinject")
    wf = run.call("write_file", {"path": "tests/test_dates_offsets.py", "content": "..."}, "2")
    run.tool(wf, json.dumps({"written": 412}), "2")
    rt = run.call("run_tests", {"args": ["-k", "offsets"]}, "2")
    run.tool(rt, json.dumps({"passed": 3, "failed": 0}), "2")
    done = "tests/test_dates_offsets.py covers +00:00, +02:00 and Z"
    d2 = run.call("goal", {"done": "2", "summary": done}, "2")
    run.tool(d2, "Goal 2 completed. Focus: 3", "2")
    _goal(run, "done", "2", d2.sequence, summary=done)
    _goal(run, "focus", "3", d2.sequence)
    run.add(NewMessage("assistant", "Fixed: parse_date now keeps the UTC offset and returns aware "
                       "UTC datetimes; added tests/test_dates_offsets.py. All date tests pass.",
                       goal_id="3"))  # fmt: skip


def _rewind(run: _Run) -> None:
    end = run.last[0].sequence
    run.add(NewMessage("user", "Also refactor all of dates.py while you are there.", goal_id="3"))
    run.add(
        NewMessage("assistant", "Refactoring dates.py: splitting parse and format…", goal_id="3")
    )
    run.w.rewind(run.trace.id, end)
    run.add(NewMessage("user", "Thanks, that's all. Skip the refactor.", goal_id="3"))
    why = "the user asked to skip the refactor"
    ab = run.call("goal", {"abandon": "4", "reason": why}, "3")
    run.tool(ab, "Goal 4 abandoned. Focus: 3", "3")
    _goal(run, "abandon", "4", ab.sequence, reason=why)
    run.add(NewMessage("assistant", "You're welcome. The CHANGELOG entry is next.", goal_id="3"))


def _synthetic(i: int) -> NewMessage:
    goal = f"{i // 10_000 + 1}.{(i // 1000) % 10 + 1}"
    tokens = 20 + (i * 7) % 60
    phase = i % 4
    if phase == 0:
        return NewMessage("user", f"step {i}: look at item {i}", goal_id=goal, token_count=tokens)
    if phase == 1:
        call = ToolCall(f"c{i}", "search", f'{{"q": "item {i}"}}')
        return NewMessage("assistant", "", tool_calls=(call,), goal_id=goal, token_count=tokens)
    if phase == 2:
        return NewMessage("tool", f'{{"hits": {i % 13}, "item": {i}}}', tool_call_id=f"c{i - 1}",
                          name="search", goal_id=goal, token_count=tokens)  # fmt: skip
    return NewMessage("assistant", f"item {i - 3} checked", goal_id=goal, token_count=tokens)


def write_long_trace(
    store: Store, n: int, compact_every: int = 0, chunk: int = 20_000, title: str | None = None
) -> Trace:
    """A straight trace of ``n`` synthetic messages in one transaction (tests, benchmarks).

    Token counts are given (no tokenizer work), so a million messages take one bulk insert.
    With ``compact_every`` a snip boundary is recorded after every that many messages.
    """
    with store.write() as w:
        trace = w.create_trace(title or f"synthetic {n:,} messages", "synthetic", created_at=T0)
        for start in range(0, n, chunk):
            w.append(trace.id, [_synthetic(i) for i in range(start, min(n, start + chunk))])
        for at in range(compact_every - 1, n - 1, compact_every) if compact_every else ():
            note = ContextItem(None, f"[{at - 1} earlier messages snipped]", "user", "placeholder")
            keep = (ContextItem(0), note)
            w.record_compaction(
                CompactionEvent(trace.id, "snip", at, removed=(), context_after=keep,
                                tokens_before=40 * at, tokens_after=60, messages_before=at + 1,
                                messages_after=2, created_at=T0 + at)
            )  # fmt: skip
    return store.trace(trace.id)
