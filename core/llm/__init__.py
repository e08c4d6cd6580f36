"""Model access (SPEC LLM): client, local server, scripted model, errors and recovery.

- ``ChatClient`` (``client.py``): OpenAI-compatible chat completions over httpx, streaming
  and plain, returning ``ModelResponse`` (``response.py``).
- ``ModelServer`` (``server.py``): a real HTTP server on 127.0.0.1 serving any backend, with
  a fault switchboard (``faults.py``); ``ScriptedModel`` (``scripted.py``) is the offline
  backend that decides only from its context (``script.py``).
- ``classify`` / ``ModelCallError`` (``errors.py``), ``call_with_retries`` (``retry.py``),
  ``RecoveryLadder`` / ``call_with_recovery`` (``recovery.py``).

Names load on first use (PEP 562): the window and the CLI import ``core.llm.settings``
without paying for httpx and the server until a model is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.lazy_names import lazy_getattr

if TYPE_CHECKING:
    from core.llm.backend import BackendReply, ChatBackend, ChatRequest, EchoBackend, UsageMeter
    from core.llm.client import ChatClient
    from core.llm.clock import Clock, RealClock
    from core.llm.errors import (
        CONTEXT_ERRORS,
        CallCancelled,
        ErrorKind,
        ModelCallError,
        RetriesExhausted,
        UnchangedResendError,
        classify,
    )
    from core.llm.faults import Fault, FaultBoard
    from core.llm.recovery import (
        LadderEntry,
        RecoveryActions,
        RecoveryLadder,
        RecoveryStep,
        ResendGuard,
        call_with_recovery,
    )
    from core.llm.response import (
        ModelResponse,
        ReasoningDelta,
        StreamDone,
        StreamEvent,
        TextDelta,
        ToolCallDelta,
    )
    from core.llm.retry import RetryNotice, RetryPolicy, backoff_ms, call_with_retries
    from core.llm.script import Progress, Script, ScriptCall, Step, done_marker, read_progress
    from core.llm.scripted import ScriptedModel, ScriptError
    from core.llm.secrets import Secret, redact
    from core.llm.server import ModelServer, ServedRequest
    from core.llm.settings import ModelConfigError, ModelSettings
    from core.llm.summarizer import (
        SUMMARY_TAG,
        ModelCompactionSummarizer,
        summarize_messages,
    )

_WHERE = {
    "BackendReply": "core.llm.backend",
    "CONTEXT_ERRORS": "core.llm.errors",
    "CallCancelled": "core.llm.errors",
    "ChatBackend": "core.llm.backend",
    "ChatClient": "core.llm.client",
    "ChatRequest": "core.llm.backend",
    "Clock": "core.llm.clock",
    "EchoBackend": "core.llm.backend",
    "ErrorKind": "core.llm.errors",
    "Fault": "core.llm.faults",
    "FaultBoard": "core.llm.faults",
    "LadderEntry": "core.llm.recovery",
    "ModelCallError": "core.llm.errors",
    "ModelCompactionSummarizer": "core.llm.summarizer",
    "ModelConfigError": "core.llm.settings",
    "ModelResponse": "core.llm.response",
    "ModelServer": "core.llm.server",
    "ModelSettings": "core.llm.settings",
    "Progress": "core.llm.script",
    "RealClock": "core.llm.clock",
    "ReasoningDelta": "core.llm.response",
    "RecoveryActions": "core.llm.recovery",
    "RecoveryLadder": "core.llm.recovery",
    "RecoveryStep": "core.llm.recovery",
    "ResendGuard": "core.llm.recovery",
    "RetriesExhausted": "core.llm.errors",
    "RetryNotice": "core.llm.retry",
    "RetryPolicy": "core.llm.retry",
    "SUMMARY_TAG": "core.llm.summarizer",
    "Script": "core.llm.script",
    "ScriptCall": "core.llm.script",
    "ScriptError": "core.llm.scripted",
    "ScriptedModel": "core.llm.scripted",
    "Secret": "core.llm.secrets",
    "ServedRequest": "core.llm.server",
    "Step": "core.llm.script",
    "StreamDone": "core.llm.response",
    "StreamEvent": "core.llm.response",
    "TextDelta": "core.llm.response",
    "ToolCallDelta": "core.llm.response",
    "UnchangedResendError": "core.llm.errors",
    "UsageMeter": "core.llm.backend",
    "backoff_ms": "core.llm.retry",
    "call_with_recovery": "core.llm.recovery",
    "call_with_retries": "core.llm.retry",
    "classify": "core.llm.errors",
    "done_marker": "core.llm.script",
    "read_progress": "core.llm.script",
    "redact": "core.llm.secrets",
    "summarize_messages": "core.llm.summarizer",
}


__getattr__ = lazy_getattr(__name__, _WHERE, globals())


__all__ = [
    "CONTEXT_ERRORS",
    "SUMMARY_TAG",
    "BackendReply",
    "CallCancelled",
    "ChatBackend",
    "ChatClient",
    "ChatRequest",
    "Clock",
    "EchoBackend",
    "ErrorKind",
    "Fault",
    "FaultBoard",
    "LadderEntry",
    "ModelCallError",
    "ModelCompactionSummarizer",
    "ModelConfigError",
    "ModelResponse",
    "ModelServer",
    "ModelSettings",
    "Progress",
    "RealClock",
    "ReasoningDelta",
    "RecoveryActions",
    "RecoveryLadder",
    "RecoveryStep",
    "ResendGuard",
    "RetriesExhausted",
    "RetryNotice",
    "RetryPolicy",
    "Script",
    "ScriptCall",
    "ScriptError",
    "ScriptedModel",
    "Secret",
    "ServedRequest",
    "Step",
    "StreamDone",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "UnchangedResendError",
    "UsageMeter",
    "backoff_ms",
    "call_with_recovery",
    "call_with_retries",
    "classify",
    "done_marker",
    "read_progress",
    "redact",
    "summarize_messages",
]
