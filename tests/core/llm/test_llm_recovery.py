"""The recovery ladder for context errors, alone and end to end against a real server
whose context window rejects long prompts with the provider's own 400."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from llm_helpers import run

from core.llm import (
    ChatClient,
    ErrorKind,
    Fault,
    LadderEntry,
    ModelCallError,
    ModelServer,
    RecoveryActions,
    RecoveryLadder,
    RecoveryStep,
    ResendGuard,
    UnchangedResendError,
    call_with_recovery,
)
from tests.fake_clock import FakeClock

TOO_LONG = ModelCallError(ErrorKind.PROMPT_TOO_LONG, "prompt is too long", status=400)
ORDER = [
    RecoveryStep.AGGRESSIVE_COMPACT,
    RecoveryStep.SUMMARY_COMPACT,
    RecoveryStep.RAISE_HARD_LIMIT,
    RecoveryStep.MULTI_TURN,
]


def recording(log: list[str], name: str, changed: bool = True) -> Any:
    async def action(error: ModelCallError) -> bool:
        log.append(name)
        return changed

    return action


def all_actions(log: list[str], changed: bool = True) -> RecoveryActions:
    return RecoveryActions(**{s.value: recording(log, s.value, changed) for s in ORDER})


def test_ladder_climbs_in_order_each_step_once() -> None:
    log: list[str] = []
    ladder = RecoveryLadder(all_actions(log))

    async def go() -> list[RecoveryStep]:
        return [await ladder.recover(TOO_LONG) for _ in range(7)]

    steps = run(go())
    assert steps == [*ORDER, RecoveryStep.SURFACE, RecoveryStep.SURFACE, RecoveryStep.SURFACE]
    assert log == [s.value for s in ORDER]


def test_steps_that_change_nothing_fall_through() -> None:
    log: list[str] = []
    actions = RecoveryActions(
        aggressive_compact=recording(log, "aggressive", changed=False),
        raise_hard_limit=recording(log, "raise"),
    )
    ladder = RecoveryLadder(actions)
    assert run(ladder.recover(TOO_LONG)) is RecoveryStep.RAISE_HARD_LIMIT
    assert log == ["aggressive", "raise"]
    assert [e.changed for e in ladder.history] == [False, True]
    assert run(ladder.recover(TOO_LONG)) is RecoveryStep.SURFACE


@pytest.mark.parametrize("kind", [ErrorKind.MODEL_ERROR, ErrorKind.TIMEOUT, ErrorKind.RATE_LIMITED])
def test_other_errors_surface_at_once(kind: ErrorKind) -> None:
    log: list[str] = []
    ladder = RecoveryLadder(all_actions(log))
    assert run(ladder.recover(ModelCallError(kind, "x"))) is RecoveryStep.SURFACE
    assert log == []


def test_token_exhausted_also_climbs() -> None:
    ladder = RecoveryLadder(all_actions([]))
    err = ModelCallError(ErrorKind.TOKEN_EXHAUSTED, "max_tokens")
    assert ladder.next_step(err) is RecoveryStep.AGGRESSIVE_COMPACT


def test_resend_guard() -> None:
    guard = ResendGuard()
    msgs = [{"role": "user", "content": "x"}]
    guard.failed(msgs)
    with pytest.raises(UnchangedResendError):
        guard.check([{"content": "x", "role": "user"}])  # same content, other key order
    guard.check([{"role": "user", "content": "y"}])


class Conversation:
    """A context the ladder's actions really shrink (what the run loop would do)."""

    def __init__(self, filler: int) -> None:
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a careful analyst."},
            {"role": "user", "content": "Analyse the events."},
            *({"role": "user", "content": f"raw event row {i} " * 40} for i in range(filler)),
        ]

    async def prepare(self) -> Sequence[Mapping[str, Any]]:
        return list(self.messages)

    def shrink_to(self, keep: int) -> Any:
        async def action(error: ModelCallError) -> bool:
            before = len(self.messages)
            self.messages = self.messages[:keep]
            return len(self.messages) < before

        return action


def with_client(server: ModelServer, fn: Any) -> Any:
    async def go() -> Any:
        async with ChatClient(server.settings("m")) as client:
            return await fn(client)

    return run(go())


@pytest.mark.parametrize("stream", [False, True])
def test_prompt_too_long_compacts_then_succeeds(serve: Any, stream: bool) -> None:
    server = serve(context_window=2000)
    conv = Conversation(filler=30)
    entries: list[LadderEntry] = []
    actions = RecoveryActions(aggressive_compact=conv.shrink_to(keep=4))

    async def call(client: ChatClient) -> Any:
        return await call_with_recovery(
            conv.prepare,
            lambda msgs, model: client.complete(msgs, model=model, stream=stream),
            actions=actions,
            model="m",
            clock=FakeClock(),
            on_recovery=entries.append,
        )

    resp = with_client(server, call)
    assert resp.text.startswith("echo: raw event row 1 ")  # 4 kept: system, task, rows 0-1
    assert [r.status for r in server.requests] == [400, 200]
    assert len(server.requests[1].messages) == 4
    assert [(e.step, e.changed) for e in entries] == [(RecoveryStep.AGGRESSIVE_COMPACT, True)]


def test_an_action_that_leaves_the_request_unchanged_is_not_resent(serve: Any) -> None:
    server = serve(context_window=2000)
    conv = Conversation(filler=30)
    log: list[str] = []
    actions = RecoveryActions(
        aggressive_compact=recording(log, "claims-change"),  # says True, changes nothing
        summary_compact=conv.shrink_to(keep=3),
    )

    async def call(client: ChatClient) -> Any:
        return await call_with_recovery(
            conv.prepare,
            lambda msgs, model: client.complete(msgs, model=model),
            actions=actions,
            model="m",
            clock=FakeClock(),
        )

    with_client(server, call)
    assert log == ["claims-change"]
    # the unchanged request was never sent again: one 400, then the compacted one
    assert [r.status for r in server.requests] == [400, 200]
    assert len(server.requests[1].messages) == 3


def test_ladder_exhausted_surfaces_the_error_without_resends(serve: Any) -> None:
    server = serve(context_window=2000)
    conv = Conversation(filler=30)
    log: list[str] = []

    async def call(client: ChatClient) -> Any:
        return await call_with_recovery(
            conv.prepare,
            lambda msgs, model: client.complete(msgs, model=model),
            actions=all_actions(log, changed=False),
            model="m",
            clock=FakeClock(),
        )

    with pytest.raises(ModelCallError) as info:
        with_client(server, call)
    assert info.value.kind == ErrorKind.PROMPT_TOO_LONG
    assert "maximum context length is 2000 tokens" in info.value.message
    assert log == [s.value for s in ORDER]
    assert len(server.requests) == 1  # never resent unchanged


def test_rate_limits_inside_recovery_use_the_backoff_path(serve: Any) -> None:
    server = serve()
    server.faults.add(Fault.rate_limited(), times=2)
    clock = FakeClock()
    conv = Conversation(filler=0)

    async def call(client: ChatClient) -> Any:
        return await call_with_recovery(
            conv.prepare,
            lambda msgs, model: client.complete(msgs, model=model),
            actions=all_actions([]),
            model="m",
            clock=clock,
        )

    assert with_client(server, call).text == "echo: Analyse the events."
    assert len(clock.sleeps) == 2 and len(server.requests) == 3


def test_model_errors_surface_without_climbing(serve: Any) -> None:
    server = serve()
    server.faults.add(Fault.server_error())
    log: list[str] = []
    conv = Conversation(filler=0)

    async def call(client: ChatClient) -> Any:
        return await call_with_recovery(
            conv.prepare,
            lambda msgs, model: client.complete(msgs, model=model),
            actions=all_actions(log),
            model="m",
            clock=FakeClock(),
        )

    with pytest.raises(ModelCallError) as info:
        with_client(server, call)
    assert info.value.status == 500 and log == [] and len(server.requests) == 1
