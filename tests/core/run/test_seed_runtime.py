"""Issue 14: what seeds A/B/C say happens through the real run loop (a Runner against a
model server on 127.0.0.1), not only in the helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from core.llm import ChatClient, ModelServer, Script, ScriptedModel, Step
from core.records import LlmCall, Message
from core.run.config import RunConfig
from core.run.runner import Runner
from core.run.state import RunResult
from core.store import Store
from tests.core.run.helpers import script, tools


def _drive(
    store: Store, server: ModelServer, config: RunConfig, task: str = "look up the keys", **kw: Any
) -> tuple[Runner, RunResult]:
    async def go() -> tuple[Runner, RunResult]:
        async with ChatClient(server.settings()) as client:
            trace = store.create_trace("seed")
            r = Runner(store, trace.id, client, config, tools=tools(), **kw)
            await r.start_turn(task)
            return r, await r.run()

    return asyncio.run(go())


def _calls(store: Store, trace_id: str) -> list[LlmCall]:
    with store.read() as rd:
        return rd.llm_calls(trace_id)


def _messages(store: Store, trace_id: str) -> dict[int, Message]:
    with store.read() as rd:
        return {m.sequence: m for m in rd.all_messages(trace_id)}


def test_on_complete_compacts_the_finished_goal_and_its_reminders(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(script(4)))
    config = RunConfig(goal_mode="on_complete", injection_interval=2)
    r, _ = _drive(store, server, config)
    with store.read() as rd:
        events = rd.compactions(r.trace_id)
    goal_events = [e for e in events if e.level == "goal"]
    assert goal_events and goal_events[0].removed
    assert goal_events[0].tokens_after < goal_events[0].tokens_before
    msgs = _messages(store, r.trace_id)
    last = _calls(store, r.trace_id)[-1]
    sent = [msgs[i.sequence] for i in last.context if i.sequence is not None]
    assert not [m for m in sent if m.name == "lookup"]
    assert not [m for m in sent if m.role == "user" and m.kind == "injected_context"]
    assert any(m.kind == "injected_context" for m in msgs.values())  # there were some


def _big(args: dict[str, Any], ctx: Any) -> Any:
    from core.run.tools import ToolResult

    return ToolResult("\n".join(f"row {n}: " + "x" * 60 for n in range(400)))


def _with_big() -> Any:
    from core.run.tools import Tool

    return tools().extend([Tool("big", "A big output.", {"type": "object"}, _big)])


def test_a_text_read_ref_enters_the_context_once(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    steps = (
        Step.tool("B", "big"),
        Step.tool("R", "read_ref", ref="full output of big", length=600),
        Step.final("F", "read it"),
    )
    server = serve(ScriptedModel(Script(steps)))

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            r = Runner(store, store.create_trace("ref").id, client, RunConfig(), tools=_with_big())
            await r.start_turn("read the big output")
            await r.run()
            return r

    r = asyncio.run(go())
    msgs = _messages(store, r.trace_id)
    sent = [msgs[i.sequence] for i in _calls(store, r.trace_id)[-1].context if i.sequence]
    assert len([m for m in sent if m.content.startswith("[ref out-")]) == 1


def test_a_bad_save_memory_type_is_an_error_result_not_the_end_of_the_run(
    store: Store, serve: Callable[..., ModelServer], tmp_path: Any
) -> None:
    steps = (
        Step.tool("M", "save_memory", type="bogus", content="four words at least here"),
        Step.final("F", "done anyway"),
    )
    server = serve(ScriptedModel(Script(steps)))
    r, result = _drive(store, server, RunConfig(memory_dir=str(tmp_path / "mem")))
    assert result.stopped == "done" and r.final == "done anyway"
    assert "bogus" in server.requests[-1].messages[-1]["content"]
    from core.inspector.timeline import row_of

    (result_msg,) = [m for m in _messages(store, r.trace_id).values() if m.role == "tool"]
    assert (result_msg.metadata or {}).get("is_error") is True, "said as an import says it"
    assert "error" in row_of(result_msg).badges


async def _delegate(args: dict[str, Any], ctx: Any) -> Any:
    from core.run.tools import ToolResult

    text = await ctx.runtime.spawn_subagent("check k0", name="checker", system_prompt="CHECKER")
    return ToolResult(text)


def test_a_subagent_starts_from_a_fresh_system_and_user_message(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    from core.run.tools import Tool

    main = Script(
        (
            Step.tool("T", "todo_write", todos=[{"id": 1, "content": "check", "status": "x"}]),
            Step.tool("D", "delegate"),
            Step.final("F", "delegated"),
        )
    )
    sub = Script((Step.final("SF", "checked"),), name="sub", match="CHECKER")
    server = serve(ScriptedModel(main, sub))
    reg = tools().extend([Tool("delegate", "Delegate.", {"type": "object"}, _delegate)])

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            r = Runner(store, store.create_trace("sub").id, client, RunConfig(), tools=reg)
            await r.start_turn("delegate the check")
            await r.run()
            return r

    r = asyncio.run(go())
    first_sub = next(c for c in _calls(store, r.trace_id) if c.agent_name != "main")
    msgs = _messages(store, r.trace_id)
    roles = [msgs[i.sequence].role for i in first_sub.context if i.sequence is not None]
    assert roles == ["system", "user"] and r.final == "delegated"


class _Recording(ScriptedModel):
    """The scripted model, keeping every request body it answered."""

    def __init__(self, *scripts: Script) -> None:
        super().__init__(*scripts)
        self.bodies: list[dict[str, Any]] = []

    def reply(self, request: Any) -> Any:
        self.bodies.append(dict(request.body))
        return super().reply(request)


def test_the_ladder_escalation_raises_what_the_request_carries(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    from core.llm import Fault

    backend = _Recording(script(1))
    server = serve(backend)
    body = {"error": {"message": "output hit max_tokens", "type": "invalid_request_error"}}
    server.faults.add(Fault.http_error(400, body), times=1)
    r, result = _drive(store, server, RunConfig(escalation_limit=50_000))
    assert result.stopped == "done"
    assert backend.bodies[0].get("max_tokens") == 50_000
    assert r.monitors.budget.hard_limit == 50_000
    from core.context.compaction import load_records

    with store.read() as rd:
        lines = [f.line() for f in load_records(rd, r.trace_id).failures]
    assert any("recovered by raise_hard_limit" in line for line in lines), lines


def test_settings_reach_the_run(store: Store, serve: Callable[..., ModelServer]) -> None:
    """Seed numbers set with ``--set`` change what the run does (duplicate limit, todo nag)."""
    steps = [Step.tool(f"L{i}", "lookup", key="same") for i in range(3)]
    server = serve(ScriptedModel(Script((*steps, Step.final("F", "done")))))
    config = RunConfig().with_settings(["duplicate_limit=2", "todo_nag_steps=2"])
    r, _ = _drive(store, server, config)
    msgs = _messages(store, r.trace_id).values()
    blocked = [m for m in msgs if m.name == "lookup" and (m.metadata or {}).get("nudge")]
    nags = [m for m in msgs if (m.metadata or {}).get("nudge") == "todo_nag"]
    assert len(blocked) == 2 and nags and "2 steps" in nags[0].content


class _BigPrompts:
    """A usage meter that reports every prompt as 120,000 tokens (a provider whose
    tokenizer or hidden tool schemas weigh far more than the local estimate)."""

    def __init__(self) -> None:
        from core.llm.backend import UsageMeter

        self.real = UsageMeter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def usage(self, size: Any, reply: Any) -> dict[str, Any]:
        return {**self.real.usage(size, reply), "prompt_tokens": 120_000}


def test_provider_reported_prompt_tokens_drive_nudges_and_compaction(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    from core.run.events import EventBus, RunEvent

    server = serve(ScriptedModel(script(10)), meter=_BigPrompts())
    bus, seen = EventBus(), []
    bus.subscribe(seen.append)
    r, result = _drive(store, server, RunConfig(), events=bus)
    assert result.stopped == "done"
    msgs = _messages(store, r.trace_id).values()
    nudges = [m for m in msgs if m.kind == "nudge"]
    assert any("over the hard limit" in m.content and "120," in m.content for m in nudges)
    tried: list[RunEvent] = [e for e in seen if e.type == "compaction"]
    assert tried, "a context the provider counts at 120,000 tokens is compacted"
    assert r.budget_tokens() >= 120_000 - 2_000


def test_model_call_retries_reach_the_summary_contract(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    """A call that failed and was retried is a "failure and retry" a summary keeps."""
    from core.context.compaction import load_records
    from core.llm import Fault
    from tests.fake_clock import FakeClock

    server = serve(ScriptedModel(script(1)))
    server.faults.add(Fault.overloaded(), times=2)
    r, result = _drive(store, server, RunConfig(), clock=FakeClock())
    assert result.stopped == "done"
    with store.read() as rd:
        records = load_records(rd, r.trace_id)
    calls = [f for f in records.failures if f.tool == "model call"]
    assert calls and calls[0].attempts == 2 and calls[0].resolved
    assert "overloaded" in calls[0].line()


def test_session_and_permission_hooks_fire_in_the_run(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    from core.run.hooks import HookDecision, Hooks
    from core.run.tools import Tool, ToolResult

    fired: list[tuple[str, dict[str, Any]]] = []
    hooks = Hooks()
    for name in ("session_start", "session_stop", "permission_denied"):
        hooks.on(name, lambda p, n=name: fired.append((n, p)))  # type: ignore[misc]
    hooks.on("permission_request", lambda p: HookDecision(allow=p["tool"] != "delete"))
    wrote: list[str] = []
    reg = tools().extend(
        [
            Tool("delete", "Delete.", {"type": "object"}, lambda a, c: ToolResult("gone"), False),
            Tool(
                "write", "Write.", {"type": "object"}, lambda a, c: wrote.append("w") or "ok", False
            ),
        ]
    )
    steps = (Step.tool("D", "delete"), Step.tool("W", "write"), Step.final("F", "done"))
    server = serve(ScriptedModel(Script(steps)))

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            r = Runner(
                store, store.create_trace("h").id, client, RunConfig(), tools=reg, hooks=hooks
            )
            await r.start_turn("delete and write")
            await r.run()
            return r

    r = asyncio.run(go())
    names = [n for n, _ in fired]
    assert names == ["session_start", "permission_denied", "session_stop"], names
    assert fired[0][1]["resumed"] is False and fired[-1][1]["stopped"] == "done"
    assert wrote == ["w"]
    results = [m for m in _messages(store, r.trace_id).values() if m.name == "delete"]
    assert results and results[0].content.startswith("Blocked")


def _chart(args: dict[str, Any], ctx: Any) -> Any:
    from core.run.tools import ImageBlob, ToolResult

    name = str(args["chart"])
    png = b"\x89PNG\r\n\x1a\n" + name.encode() * 40
    return ToolResult(f"chart {name} drawn", images=(ImageBlob(png, "image/png", f"chart {name}"),))


def test_old_images_become_reference_text_before_a_new_image_grant(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    from core.run.events import EventBus, RunEvent
    from core.run.tools import Tool

    params = {"type": "object", "properties": {"chart": {"type": "string"}}}
    reg = tools().extend([Tool("chart", "Draw a chart.", params, _chart)])
    steps: list[Step] = []
    for name in ("alpha", "beta", "gamma", "delta"):
        steps += [Step.tool(f"C{name}", "chart", chart=name)]
        steps += [Step.tool(f"R{name}", "read_ref", ref=f"chart {name}")]
    server = serve(ScriptedModel(Script((*steps, Step.final("F", "charts seen")))))
    bus, seen = EventBus(), []
    bus.subscribe(seen.append)

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            config = RunConfig(grant_max_images=2)
            r = Runner(store, store.create_trace("img").id, client, config, tools=reg, events=bus)
            await r.start_turn("draw and look at four charts")
            await r.run()
            return r

    r = asyncio.run(go())
    grants: list[RunEvent] = [e for e in seen if e.type == "grant"]
    assert len([g for g in grants if "cost" in g.data]) == 4, [g.data for g in grants]
    with store.read() as rd:
        images = [e for e in rd.compactions(r.trace_id) if e.level == "images"]
        deferred = [e for e in rd.table_rows("run_events", r.trace_id) if "defer" in str(e)]
    assert len(images) == 2 and not deferred
    last = server.requests[-1].messages
    shown = [p for m in last if isinstance(m.get("content"), list) for p in m["content"]]
    assert len([p for p in shown if p.get("type") == "image_url"]) == 2


def test_continuations_run_until_diminishing_returns_stops_them(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    """A text reply with goals still open continues the turn; replies that add little
    trigger the diminishing-returns stop, and the final answer comes without tools."""
    steps = (Step.goal("G", add=["Look up the keys"], focus="1"), Step.final("F", "I think so."))
    server = serve(ScriptedModel(Script(steps)))
    r, result = _drive(store, server, RunConfig())
    assert result.stopped == "done" and r.final
    msgs = list(_messages(store, r.trace_id).values())
    names = [(m.metadata or {}).get("nudge") for m in msgs if m.kind == "nudge"]
    assert names.count("continuation") >= 3 and "diminishing_returns" in names
    assert (_calls(store, r.trace_id)[-1].params or {})["tools"] is False


def test_the_system_prompt_chain_and_skill_filter_reach_the_run(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(script(0)))

    async def go(config: RunConfig, messages: Any = ()) -> str:
        async with ChatClient(server.settings()) as client:
            r = Runner(store, store.create_trace("p").id, client, config, tools=tools())
            await r.start_turn("go", messages)
            await r.run()
        with store.read() as rd:
            return next(m.content for m in rd.all_messages(r.trace_id) if m.role == "system")

    preset = RunConfig(preset_prompt="PRESET identity.", prompt_skills=("goal_planning",))
    text = asyncio.run(go(preset))
    assert text.startswith("PRESET identity.")
    assert "goal_planning" in text and "risk_analysis_strategy" not in text
    given = asyncio.run(go(preset, [{"role": "system", "content": "GIVEN prompt."}]))
    assert given == "GIVEN prompt."


def test_callers_feed_the_periodic_context_and_each_source_is_shown(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    from core.context.periodic import Collaborator, ContextSources, InjectionHooks
    from core.run.events import EventBus

    hooks = InjectionHooks()
    hooks.register("Build", lambda: "CI is green")
    sources = ContextSources(
        collaborators=lambda: [Collaborator("ana", "reviewing")],
        notifications=lambda: ["dataset refreshed"],
        hooks=hooks,
    )
    bus, seen = EventBus(), []
    bus.subscribe(seen.append)
    server = serve(ScriptedModel(script(2)))
    r, _ = _drive(store, server, RunConfig(injection_interval=1), events=bus, context=sources)
    injected = [m for m in _messages(store, r.trace_id).values() if m.kind == "injected_context"]
    text = next(m.content for m in injected if m.role == "tool")
    assert "ana: reviewing" in text and "dataset refreshed" in text and "CI is green" in text
    shown = [e.data.get("sources") for e in seen if e.type == "injection"]
    assert ["Current time", "Goals", "Collaborators", "Notifications", "Build"] in shown


def test_a_completed_task_is_reflected_on_in_a_side_branch(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    from core.llm import ModelCompactionSummarizer

    server = serve(ScriptedModel(script(1)))

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            config = RunConfig(enable_completion_extraction=True)
            r = Runner(
                store,
                store.create_trace("refl").id,
                client,
                config,
                tools=tools(),
                summarizer=ModelCompactionSummarizer(client),
            )
            await r.start_turn("look up a key")
            await r.run()
            return r

    r = asyncio.run(go())
    with store.read() as rd:
        every = list(rd.all_messages(r.trace_id))
        path = {m.sequence for m in rd.iter_main_path(r.trace_id)}
    branch = [m for m in every if m.branch_type == "reflection"]
    assert [m.role for m in branch] == ["user", "assistant"] and branch[1].content
    assert not path & {m.sequence for m in branch} and r.final


class _BigFinalPrompts(_BigPrompts):
    """Reports 120,000 prompt tokens for text replies only: the run compacts only after a
    turn's final answer, so the next turn's first PREPARE must compact."""

    def usage(self, size: Any, reply: Any) -> dict[str, Any]:
        usage = self.real.usage(size, reply)
        return usage if reply.tool_calls else {**usage, "prompt_tokens": 120_000}


def _big_lookups() -> Any:
    from core.run.tools import Tool, ToolRegistry, ToolResult

    def lookup(args: dict[str, Any], ctx: Any) -> ToolResult:
        rows = " ".join(f"r{i}={i * 7}" for i in range(400))
        return ToolResult(f"rows of {args['key']}: {rows}")

    params = {"type": "object", "properties": {"key": {"type": "string"}}}
    return ToolRegistry().extend([Tool("lookup", "Look a key up.", params, lookup)])


def test_pending_knowledge_is_evaluated_by_the_next_summary_compaction(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    """Seed A: a reflection leaves knowledge pending; the next Level 2 compaction runs the
    queue ``[knowledge_eval, compression]`` over it (no flag), which judges it once."""
    from core.llm import ModelCompactionSummarizer
    from core.run.events import EventBus
    from core.run.knowledge import pending_knowledge

    server = serve(ScriptedModel(script(4)), meter=_BigFinalPrompts())
    bus, seen = EventBus(), []
    bus.subscribe(seen.append)

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            config = RunConfig(enable_completion_extraction=True, goal_mode="none")
            summarizer = ModelCompactionSummarizer(client)
            r = Runner(store, store.create_trace("k").id, client, config, tools=_big_lookups(),
                       summarizer=summarizer, events=bus)  # fmt: skip
            await r.start_turn("look up the keys")
            await r.run()
            await r.start_turn("and once more")
            await r.run()
            return r

    r = asyncio.run(go())
    every = sorted(_messages(store, r.trace_id).values(), key=lambda m: m.sequence)
    notes = [m for m in every if m.branch_type == "reflection" and m.role == "assistant"]
    asks = [m for m in every if m.branch_type == "knowledge_eval" and m.role == "user"]
    assert len(notes) == 2 and len(asks) == 1, [m.branch_type for m in every]
    assert notes[0].sequence < asks[0].sequence < notes[1].sequence
    assert notes[0].content in asks[0].content  # it judged the first turn's knowledge
    stages = [e.data["stages"] for e in seen if e.type == "compaction" and "stages" in e.data]
    assert stages == [["knowledge_eval", "compression"]]
    with store.read() as rd:
        assert pending_knowledge(rd, r.trace_id) == (notes[1].content,)


def test_file_feeds_are_read_anew_at_every_injection(
    store: Store, serve: Callable[..., ModelServer], tmp_path: Any
) -> None:
    """``ctxlens run --feed``'s sources through the Runner: a file another process keeps
    current reaches each periodic injection as it is then."""
    from core.run.feeds import Feed, feed_sources
    from core.run.hooks import Hooks

    inbox = tmp_path / "inbox.txt"
    inbox.write_text("first note")
    hooks = Hooks()
    hooks.on("step_complete", lambda p: inbox.write_text(f"note after step {p['iteration']}"))
    sources = feed_sources([Feed.parse(f"notifications=@{inbox}"), Feed.parse("Plan=step two")])
    server = serve(ScriptedModel(script(2)))
    r, _ = _drive(store, server, RunConfig(injection_interval=1), context=sources, hooks=hooks)
    injected = [
        m.content
        for m in sorted(_messages(store, r.trace_id).values(), key=lambda m: m.sequence)
        if m.kind == "injected_context" and m.role == "tool"
    ]
    assert len(injected) >= 2 and all("## Plan\nstep two" in text for text in injected)
    assert "- first note" in injected[0] and "- note after step 1" in injected[1]
