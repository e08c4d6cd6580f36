"""Every fault of the switchboard, through the real client and the retry policy.

Backoff waits go through a FakeClock, so the schedule is asserted exactly and the suite
never sleeps for it. Expected delays are re-derived here from the documented formula
(min(500·2^n, 32000) ms + jitter in [0, 0.25·delay) from sha256(seed:n)).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable

import pytest
from llm_helpers import run

from core.llm import (
    CallCancelled,
    ChatClient,
    ErrorKind,
    Fault,
    ModelCallError,
    ModelServer,
    ModelSettings,
    RetriesExhausted,
    RetryNotice,
    RetryPolicy,
    call_with_retries,
)
from tests.fake_clock import FakeClock

USER = [{"role": "user", "content": "hello"}]
MODES = [False, True]


def expected_delay_s(n: int, seed: str = "ctxlens") -> float:
    base = min(500 * 2**n, 32_000)
    frac = int.from_bytes(hashlib.sha256(f"{seed}:{n}".encode()).digest()[:8], "big") / 2**64
    return (base + base * 0.25 * frac) / 1000


def one_call(server: ModelServer, stream: bool, timeout_s: float = 5.0) -> ModelCallError:
    async def go() -> ModelCallError:
        settings = ModelSettings(server.url, "m", timeout_s=timeout_s)
        async with ChatClient(settings) as client:
            with pytest.raises(ModelCallError) as info:
                await client.complete(USER, stream=stream)
            ok = await client.complete(USER, stream=stream)  # the next call is fine again
            assert ok.text == "echo: hello"
        return info.value

    return run(go())


@pytest.mark.parametrize("stream", MODES)
@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        (Fault.rate_limited(), ErrorKind.RATE_LIMITED, 429),
        (Fault.overloaded(), ErrorKind.OVERLOADED, 529),
        (Fault.server_error(), ErrorKind.MODEL_ERROR, 500),
        (Fault.prompt_too_long("openai"), ErrorKind.PROMPT_TOO_LONG, 400),
        (Fault.prompt_too_long("anthropic"), ErrorKind.PROMPT_TOO_LONG, 400),
        (Fault.prompt_too_long("vllm"), ErrorKind.PROMPT_TOO_LONG, 400),
        (Fault.prompt_too_long("llamacpp"), ErrorKind.PROMPT_TOO_LONG, 400),
    ],
)
def test_http_faults_are_classified(
    echo_server: ModelServer, stream: bool, fault: Fault, kind: ErrorKind, status: int
) -> None:
    echo_server.faults.add(fault)
    err = one_call(echo_server, stream)
    assert (err.kind, err.status) == (kind, status)


def test_an_error_event_mid_stream_is_classified_and_retried(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.stream_error())
    err = one_call(echo_server, stream=True)
    assert (err.kind, err.status, err.message) == (ErrorKind.OVERLOADED, None, "Overloaded")
    echo_server.faults.add(Fault.stream_error())
    clock = FakeClock()
    assert retried(echo_server, clock=clock) == "primary"
    assert clock.sleeps == pytest.approx([expected_delay_s(0)])


@pytest.mark.parametrize("stream", MODES)
def test_retry_after_header_is_read(echo_server: ModelServer, stream: bool) -> None:
    echo_server.faults.add(Fault.rate_limited(retry_after=7))
    assert one_call(echo_server, stream).retry_after == 7.0
    echo_server.faults.add(Fault.rate_limited())
    assert one_call(echo_server, stream).retry_after is None


@pytest.mark.parametrize(
    ("fault", "stream", "detail"),
    [
        (Fault.cut_stream(2), True, "stream_cut"),
        (Fault.cut_stream(2, clean=True), True, "stream_cut"),
        (Fault.cut_stream(), False, "stream_cut"),
        (Fault.malformed_sse(1), True, "malformed_stream"),
        (Fault.malformed_sse(), False, "bad_response"),
    ],
)
def test_broken_bodies_are_classified_not_returned(
    echo_server: ModelServer, fault: Fault, stream: bool, detail: str
) -> None:
    echo_server.faults.add(fault)
    err = one_call(echo_server, stream)
    assert (err.kind, err.detail) == (ErrorKind.MODEL_ERROR, detail)


def test_a_clean_end_after_the_finish_chunk_is_a_complete_message(
    echo_server: ModelServer,
) -> None:
    # role, text, finish chunk sent; the usage chunk and [DONE] never come
    echo_server.faults.add(Fault.cut_stream(3, clean=True))

    async def go() -> None:
        async with ChatClient(ModelSettings(echo_server.url, "m")) as client:
            resp = await client.complete(USER)
        assert (resp.text, resp.finish_reason, resp.usage) == ("echo: hello", "stop", None)

    run(go())


@pytest.mark.parametrize(
    ("stream", "during"), [(False, "headers"), (True, "headers"), (True, "stream")]
)
def test_slow_responses_time_out(echo_server: ModelServer, stream: bool, during: str) -> None:
    echo_server.faults.add(Fault.slow(3.0, during=during))  # type: ignore[arg-type]
    err = one_call(echo_server, stream, timeout_s=0.3)
    assert err.kind == ErrorKind.TIMEOUT


def retried(
    server: ModelServer,
    *,
    stream: bool = True,
    fallback: str | None = None,
    policy: RetryPolicy | None = None,
    clock: FakeClock | None = None,
    cancel: asyncio.Event | None = None,
    notices: list[RetryNotice] | None = None,
) -> str:
    async def go() -> str:
        async with ChatClient(ModelSettings(server.url, "primary")) as client:
            resp = await call_with_retries(
                lambda model: client.complete(USER, model=model, stream=stream),
                model="primary",
                fallback_model=fallback,
                policy=policy or RetryPolicy(),
                clock=clock or FakeClock(),
                cancel=cancel,
                on_retry=None if notices is None else notices.append,
            )
            return resp.model

    return run(go())


@pytest.mark.parametrize("stream", MODES)
def test_429_backs_off_on_the_exact_schedule(echo_server: ModelServer, stream: bool) -> None:
    echo_server.faults.add(Fault.rate_limited(), times=4)
    clock = FakeClock()
    assert retried(echo_server, stream=stream, clock=clock) == "primary"
    assert clock.sleeps == pytest.approx([expected_delay_s(n) for n in range(4)])
    assert len(echo_server.requests) == 5


def test_retry_after_is_honoured_up_to_the_cap(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.rate_limited(retry_after=7))
    echo_server.faults.add(Fault.rate_limited(retry_after=5000))
    clock = FakeClock()
    retried(echo_server, clock=clock, policy=RetryPolicy(retry_after_cap_ms=60_000))
    assert clock.sleeps == [7.0, 60.0]


def test_three_529s_switch_to_the_fallback_model(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.overloaded(), times=10, model="primary")
    clock, notices = FakeClock(), []  # type: ignore[var-annotated]
    assert retried(echo_server, fallback="backup", clock=clock, notices=notices) == "backup"
    assert [r.model for r in echo_server.requests] == ["primary"] * 3 + ["backup"]
    assert clock.sleeps == pytest.approx([expected_delay_s(0), expected_delay_s(1)])
    assert [(n.model, n.next_model) for n in notices][-1] == ("primary", "backup")


def test_without_a_fallback_529s_keep_backing_off(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.overloaded(), times=3)
    clock = FakeClock()
    assert retried(echo_server, clock=clock) == "primary"
    assert clock.sleeps == pytest.approx([expected_delay_s(n) for n in range(3)])


def test_a_429_resets_the_consecutive_529_count(echo_server: ModelServer) -> None:
    for fault in [Fault.overloaded(), Fault.overloaded(), Fault.rate_limited(), Fault.overloaded()]:
        echo_server.faults.add(fault)
    assert retried(echo_server, fallback="backup") == "primary"
    assert {r.model for r in echo_server.requests} == {"primary"}


def test_at_most_ten_tries_in_bounded_time(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.rate_limited(), times=50)
    clock = FakeClock()
    with pytest.raises(RetriesExhausted) as info:
        retried(echo_server, clock=clock)
    assert info.value.attempts == 10 and info.value.kind == ErrorKind.RATE_LIMITED
    assert len(echo_server.requests) == 10
    assert clock.sleeps == pytest.approx([expected_delay_s(n) for n in range(9)])
    assert clock.slept <= 1.25 * (500 + 1000 + 2000 + 4000 + 8000 + 16000 + 3 * 32000) / 1000


@pytest.mark.parametrize(
    "fault",
    [
        Fault.prompt_too_long(),
        Fault.server_error(),
        Fault.cut_stream(),
        Fault.malformed_sse(),
        Fault.http_error(400, {"error": {"message": "Invalid 'messages[0]'", "type": "x"}}),
    ],
)
def test_non_retryable_errors_are_sent_once(echo_server: ModelServer, fault: Fault) -> None:
    echo_server.faults.add(fault, times=5)
    clock = FakeClock()
    with pytest.raises(ModelCallError) as info:
        retried(echo_server, clock=clock)
    assert not isinstance(info.value, RetriesExhausted)
    assert len(echo_server.requests) == 1 and clock.sleeps == []


def test_timeouts_can_be_opted_into_retries(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.slow(2.0))
    policy = RetryPolicy(retry_kinds=frozenset({ErrorKind.TIMEOUT}))

    async def go() -> None:
        async with ChatClient(ModelSettings(echo_server.url, "m", timeout_s=0.3)) as client:
            resp = await call_with_retries(
                lambda model: client.complete(USER, model=model),
                model="m",
                policy=policy,
                clock=FakeClock(),
            )
        assert resp.text == "echo: hello"

    run(go())


def test_cancel_during_backoff_stops_at_once(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.rate_limited(retry_after=30), times=5)

    async def go() -> None:
        cancel = asyncio.Event()
        async with ChatClient(ModelSettings(echo_server.url, "m")) as client:
            task = asyncio.ensure_future(
                call_with_retries(
                    lambda model: client.complete(USER, model=model),
                    model="m",
                    cancel=cancel,
                    on_retry=lambda notice: cancel.set(),  # user presses cancel mid-wait
                )
            )
            with pytest.raises(CallCancelled):
                await asyncio.wait_for(task, timeout=10)  # real clock: 30 s unless cancelled

    run(go())
    assert len(echo_server.requests) == 1


def test_cancel_during_a_call_in_flight(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.slow(20.0))

    async def go() -> None:
        cancel = asyncio.Event()
        async with ChatClient(ModelSettings(echo_server.url, "m")) as client:
            task = asyncio.ensure_future(
                call_with_retries(
                    lambda model: client.complete(USER, model=model), model="m", cancel=cancel
                )
            )
            while not echo_server.requests:
                await asyncio.sleep(0.01)
            cancel.set()
            with pytest.raises(CallCancelled):
                await asyncio.wait_for(task, timeout=10)

    run(go())


def test_asyncio_cancellation_propagates(echo_server: ModelServer) -> None:
    echo_server.faults.add(Fault.rate_limited(retry_after=30), times=5)

    async def go() -> None:
        async with ChatClient(ModelSettings(echo_server.url, "m")) as client:
            task = asyncio.ensure_future(
                call_with_retries(lambda model: client.complete(USER, model=model), model="m")
            )
            while not echo_server.requests:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=10)

    run(go())
    assert len(echo_server.requests) == 1


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_set_cancel_event_prevents_the_call(echo_server: ModelServer) -> None:
    """And leaves no coroutine behind unawaited (the streaming call's was made, then
    dropped: "coroutine 'ChatClient._complete_streaming' was never awaited")."""

    async def go() -> None:
        cancel = asyncio.Event()
        cancel.set()
        async with ChatClient(ModelSettings(echo_server.url, "m")) as client:
            with pytest.raises(CallCancelled):
                await client.complete(USER, cancel=cancel)

    run(go())
    assert echo_server.requests == []


def test_jitter_is_deterministic_and_keyed() -> None:
    from core.llm import backoff_ms

    p = RetryPolicy()
    assert [backoff_ms(n, p) for n in range(12)] == [backoff_ms(n, p) for n in range(12)]
    assert backoff_ms(3, p, key="trace-a") != backoff_ms(3, p, key="trace-b")
    for n in range(12):
        base = min(500 * 2**n, 32_000)
        assert base <= backoff_ms(n, p, key="k") < 1.25 * base


def test_server_stop_leaves_nothing_behind(serve: Callable[..., ModelServer]) -> None:
    server = serve()
    server.faults.add(Fault.slow(30.0))

    async def go() -> None:
        async with ChatClient(ModelSettings(server.url, "m", timeout_s=0.2)) as client:
            with pytest.raises(ModelCallError):
                await client.complete(USER)

    run(go())
    server.stop()  # a handler is still sleeping in the slow fault: stop must cancel it
    assert not server.running


@pytest.mark.parametrize("stream", MODES)
@pytest.mark.parametrize(
    "fault", [Fault.trickle(every_s=0.1), Fault.silent()], ids=["trickle", "silent"]
)
def test_trickling_and_silent_servers_end_at_the_deadline(
    serve: Callable[..., ModelServer], fault: Fault, stream: bool
) -> None:
    """A keep-alive every 0.1 s never trips a 30 s read timeout; the per-call deadline
    ends the call (a timeout error the retry and ladder code already handle)."""
    server = serve()
    server.faults.add(fault)

    async def go() -> ModelCallError:
        settings = ModelSettings(server.url, "m", timeout_s=30.0, deadline_s=0.8)
        async with ChatClient(settings) as client:
            with pytest.raises(ModelCallError) as info:
                await client.complete(USER, stream=stream)
            ok = await client.complete(USER, stream=stream)
            assert ok.text == "echo: hello"
        return info.value

    err = run(go())
    assert (err.kind, err.detail) == (ErrorKind.TIMEOUT, "deadline")
    assert "0.8 s deadline" in str(err)
    assert [r.fault for r in server.requests] == [fault.kind, None]
