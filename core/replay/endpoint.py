"""A configured model endpoint as the model that answers after a divergence (issue 17:
a fork with an edit continues with "the scripted or a configured model").

The replay's runner talks to the local ``ModelServer`` as always; once the recorded
replies no longer fit, ``RecordedModel`` hands each request to ``EndpointModel``, which
sends it on to the endpoint the user configured (``CTXLENS_BASE_URL``, ``CTXLENS_MODEL``,
the key from the environment: ``core/llm/settings.py``) and returns the reply with the
usage and model the endpoint reported, so the fork records what the endpoint said, not an
estimate. Nothing is sent anywhere unless an endpoint is configured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.llm import BackendReply, ChatRequest
from core.llm.settings import ENV_MODEL, ModelConfigError, ModelSettings


def configured_endpoint(
    metadata: Mapping[str, Any] | None, env: Mapping[str, str] | None = None
) -> ModelSettings | None:
    """The endpoint from the environment (the model named there, else the trace's own
    run model), or ``None`` when none is configured."""
    env = os.environ if env is None else env
    config = (metadata or {}).get("run_config")
    own = config.get("model") if isinstance(config, dict) else None
    model = env.get(ENV_MODEL) or (own if own != "recorded" else None)
    try:
        return ModelSettings.resolve({"model": model, "stream": False}, env)
    except ModelConfigError:
        return None


def describe(settings: ModelSettings) -> str:
    return f"model {settings.model} at {settings.base_url}"


@dataclass(frozen=True)
class EndpointModel:
    """A ``ChatBackend`` answering through a real endpoint (one call per request)."""

    settings: ModelSettings

    async def reply(self, request: ChatRequest) -> BackendReply:
        from core.llm.client import ChatClient

        async with ChatClient(self.settings) as client:
            r = await client.complete(
                list(request.messages),
                tools=list(request.tools) or None,
                tool_choice=request.tool_choice,
                stream=False,
            )
        return BackendReply(r.text, r.tool_calls, r.finish_reason, r.reasoning, r.usage, r.model)
