"""Where a call's context comes from, in one set of words for every pane (h13d).

Three answers, from the trace's source and what its importer recorded with the call:

- **ctxlens's run** (its own sources, or a trace with a ``run_config``): the runtime stored
  the exact item list it sent.
- **the tool** that wrote the trace logged the request: the recording proxy's request body,
  an OTel span with its input messages, an Inspect model event's input, a SWE-agent step's
  messages, a logged completion's messages. The list is what the model received.
- **reconstructed from the transcript**: the tool logged only the reply (a Claude Code or
  Codex session, an OTel span without input messages: ``params.context = "reconstructed"``),
  or the trace records no calls at all and each assistant message stands for one. ctxlens
  rebuilt the list with its View at the call's head; it is not what the tool sent.

The playback strip said "context derived from the path" for a call the Context pane beside
it called "context reconstructed from the transcript"; both now show ``ContextOrigin.text``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from core.replay.unrecorded import records_runtime

OriginKind = Literal["run", "tool", "transcript"]


@dataclass(frozen=True, slots=True)
class ContextOrigin:
    kind: OriginKind
    detail: str = ""
    """What exactly was recorded ("the request body as sent"); "" when not known."""

    @property
    def recorded(self) -> bool:
        """The item list is what the model received (not rebuilt by ctxlens)."""
        return self.kind != "transcript"

    @property
    def text(self) -> str:
        """``context recorded by the tool (the span's input messages)``, ``context
        reconstructed from the transcript``, ``context recorded by ctxlens's run (…)``."""
        if self.kind == "transcript":
            return "context reconstructed from the transcript"
        who = "ctxlens's run" if self.kind == "run" else WHO.get(self.detail, "the tool")
        return f"context recorded by {who}" + (f" ({self.detail})" if self.detail else "")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "recorded": self.recorded, "text": self.text}


PROXY = "the request body as sent"
WHO = {PROXY: "the recording proxy"}
"""Who recorded a detail, where it is not "the tool" (the proxy records other agents)."""

#: What a tool's importer kept of the request, by the trace's source.
TOOL_DETAILS = {
    "otel": "the span's input messages",
    "inspect": "the model event's input",
    "swe-agent": "the step's messages",
    "openai": "the logged request's messages",
}


def context_origin(
    source: str, meta: Any, params: Any, *, call_recorded: bool = True
) -> ContextOrigin:
    """Where the context of a call comes from: ``params`` are the call's
    (``llm_calls.params``); ``call_recorded=False`` for a call the trace does not record
    (derived from an assistant message: ``core/replay/calls.py:derived_calls``)."""
    p = params if isinstance(params, Mapping) else {}
    if not call_recorded or p.get("context") == "reconstructed":
        return ContextOrigin("transcript")
    if isinstance(p.get("proxy"), Mapping):
        return ContextOrigin("tool", PROXY)
    if records_runtime(source, meta):
        return ContextOrigin("run", "the request it sent")
    return ContextOrigin("tool", TOOL_DETAILS.get(source, ""))
