"""Faults from the command line: ``NAME[:ARG,...][*TIMES][@MODEL]`` → a queued ``Fault``.

``ctxlens serve --model --fault rate_limited:20*3`` makes a local model endpoint fail the
way real providers do, so an agent's retry, fallback and timeout handling can be tried
against it. The names are the named constructors of ``core/llm/faults.py:Fault``; their
arguments are given positionally, as numbers or words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.errors import CtxlensError
from core.llm.faults import Fault

PROVIDERS = ("openai", "anthropic", "vllm", "llamacpp")

_SPEC = re.compile(
    r"^(?P<name>[a-z_]+)(?::(?P<args>[^*@]*))?(?:\*(?P<times>\d+))?(?:@(?P<model>.+))?$"
)

# name → (constructor, what its arguments are, for the help text and errors)
FAULTS: dict[str, tuple[Callable[..., Fault], str]] = {
    "rate_limited": (Fault.rate_limited, "[RETRY_AFTER_S]: 429 as OpenAI sends it"),
    "overloaded": (Fault.overloaded, ": 529 as Anthropic sends it"),
    "server_error": (Fault.server_error, ": 500 as OpenAI sends it"),
    "prompt_too_long": (
        Fault.prompt_too_long,
        "[PROVIDER[,TOKENS[,LIMIT]]]: 400 over the window (openai, anthropic, vllm, llamacpp)",
    ),
    "slow": (Fault.slow, "SECONDS[,headers|stream]: wait before the reply or mid-stream"),
    "cut_stream": (Fault.cut_stream, "[AFTER_CHUNKS]: drop the connection mid-stream"),
    "stream_error": (Fault.stream_error, ": an error event mid-stream (Anthropic's overload)"),
    "trickle": (Fault.trickle, "[EVERY_S[,FOR_S]]: keep-alive comments and never a reply"),
    "silent": (Fault.silent, "[FOR_S]: accept and send nothing"),
    "malformed_sse": (Fault.malformed_sse, "[AFTER_CHUNKS]: one event whose data is not JSON"),
}


@dataclass(frozen=True)
class QueuedFault:
    """A parsed ``--fault``: what to fail with, how many requests, for which model."""

    spec: str
    fault: Fault
    times: int
    model: str | None


def parse_fault(spec: str) -> QueuedFault:
    """Parse one spec, or raise ``CtxlensError`` naming it and what was wrong."""
    match = _SPEC.match(spec.strip())
    if match is None:
        raise CtxlensError(f"--fault {spec!r}: expected NAME[:ARG,...][*TIMES][@MODEL]")
    name = match["name"]
    if name not in FAULTS:
        raise CtxlensError(f"--fault {spec!r}: unknown fault {name!r}; known: {', '.join(FAULTS)}")
    make, usage = FAULTS[name]
    args = [_value(a) for a in (match["args"] or "").split(",") if a.strip()]
    _check_words(spec, name, args)
    try:
        fault = make(*args)
    except (TypeError, ValueError) as exc:
        raise CtxlensError(f"--fault {spec!r}: {name}{usage.split(':')[0]}: {exc}") from None
    times = int(match["times"] or 1)
    if times < 1:
        raise CtxlensError(f"--fault {spec!r}: *TIMES must be at least 1")
    return QueuedFault(spec, fault, times, match["model"])


_WORDS = {"slow": (1, ("headers", "stream")), "prompt_too_long": (0, PROVIDERS)}


def _check_words(spec: str, name: str, args: list[Any]) -> None:
    """The word arguments a constructor would take silently (an unknown provider, a typo)."""
    position, allowed = _WORDS.get(name, (-1, ()))
    for i, arg in enumerate(args):
        if isinstance(arg, str) and (i != position or arg not in allowed):
            want = f"one of {', '.join(allowed)}" if i == position else "a number"
            raise CtxlensError(f"--fault {spec!r}: argument {i + 1} is {arg!r}, expected {want}")


def fault_help() -> str:
    return "; ".join(f"{name}{usage}" for name, (_, usage) in FAULTS.items())


def _value(text: str) -> Any:
    text = text.strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number
