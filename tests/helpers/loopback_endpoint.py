"""A configured model endpoint for tests: a real HTTP server on 127.0.0.1
(``core/llm/server.py:ModelServer``) whose replies say where they came from, with a usage
and model no estimate would produce, and that keeps every request it was sent."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from core.llm import BackendReply, ChatRequest, ModelServer

ANSWER = "answer from the configured endpoint"
MODEL = "endpoint-model-x"
USAGE = {"prompt_tokens": 4242, "completion_tokens": 7, "total_tokens": 4249}


class Endpoint:
    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    def reply(self, request: ChatRequest) -> BackendReply:
        self.requests.append(request)
        return BackendReply(text=ANSWER, usage=dict(USAGE), model=MODEL)


@contextmanager
def loopback_endpoint() -> Iterator[tuple[Endpoint, dict[str, str]]]:
    """The endpoint and the environment that configures it (base URL, model, a key)."""
    endpoint = Endpoint()
    with ModelServer(endpoint) as server:
        yield (
            endpoint,
            {
                "CTXLENS_BASE_URL": server.url,
                "CTXLENS_MODEL": MODEL,
                "CTXLENS_API_KEY": "sk-test-loopback-secret",
            },
        )
