"""Where the model lives and how to reach it: base URL, model name, key, timeouts.

Resolution order for every field: explicit overrides > a settings mapping (the app's
settings file) > environment (``CTXLENS_BASE_URL``, ``CTXLENS_MODEL``, ``CTXLENS_API_KEY``
or ``OPENAI_API_KEY``, ``CTXLENS_FALLBACK_MODEL`` or ``FALLBACK_MODEL``) > defaults. The key
is held as a ``Secret``; ``public_dict()`` is the only form meant for storage.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from core.errors import CtxlensError
from core.llm.secrets import Secret

ENV_BASE_URL = "CTXLENS_BASE_URL"
ENV_MODEL = "CTXLENS_MODEL"
ENV_KEYS = ("CTXLENS_API_KEY", "OPENAI_API_KEY")
ENV_FALLBACK = ("CTXLENS_FALLBACK_MODEL", "FALLBACK_MODEL")
ENV_TIMEOUT = "CTXLENS_TIMEOUT_S"
ENV_DEADLINE = "CTXLENS_CALL_DEADLINE_S"
log = logging.getLogger("ctxlens.llm")
_warned_hosts: set[str] = set()


class ModelConfigError(CtxlensError):
    """Model access is not configured (no base URL or model name)."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """How to reach one OpenAI-compatible endpoint. Its repr never shows the key."""

    base_url: str
    """Up to and including the API version, e.g. ``https://api.openai.com/v1``."""
    model: str
    api_key: Secret | None = None
    fallback_model: str | None = None
    timeout_s: float = 120.0
    """Read timeout: the longest silence tolerated between bytes (or SSE chunks)."""
    connect_timeout_s: float = 10.0
    deadline_s: float = 600.0
    """Longest a whole call may take, first byte to last: a server that keeps the
    connection alive with SSE comments (or sends nothing) cannot hold a call past it."""
    stream: bool = True
    """Default for ``ChatClient.complete(stream=None)``."""
    include_usage: bool = True
    """Send ``stream_options.include_usage`` so streamed calls report usage too."""

    def __post_init__(self) -> None:
        clean = without_userinfo(self.base_url)
        if clean != self.base_url:
            _warn_userinfo_once(clean)
            object.__setattr__(self, "base_url", clean)

    @property
    def chat_url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def with_model(self, model: str) -> ModelSettings:
        return replace(self, model=model)

    def public_dict(self) -> dict[str, Any]:
        """Everything but the key (only whether there is one): safe to store or export."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "fallback_model": self.fallback_model,
            "has_api_key": bool(self.api_key),
            "timeout_s": self.timeout_s,
            "deadline_s": self.deadline_s,
            "stream": self.stream,
        }

    @classmethod
    def resolve(
        cls,
        settings: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        **overrides: Any,
    ) -> ModelSettings:
        """Build settings from overrides, a settings mapping and the environment."""
        env = os.environ if env is None else env
        given = {**(settings or {}), **{k: v for k, v in overrides.items() if v is not None}}
        base_url = given.get("base_url") or env.get(ENV_BASE_URL)
        model = given.get("model") or env.get(ENV_MODEL)
        if not base_url:
            raise ModelConfigError(f"no model base URL: set {ENV_BASE_URL} or base_url")
        if not model:
            raise ModelConfigError(f"no model name: set {ENV_MODEL} or model")
        key = given.get("api_key") or _first(env, ENV_KEYS)
        timeout = given.get("timeout_s") or env.get(ENV_TIMEOUT) or 120.0
        deadline = given.get("deadline_s") or env.get(ENV_DEADLINE) or 600.0
        return cls(
            base_url=str(base_url),
            model=str(model),
            api_key=key if isinstance(key, Secret) else (Secret(str(key)) if key else None),
            fallback_model=given.get("fallback_model") or _first(env, ENV_FALLBACK),
            timeout_s=float(timeout),
            deadline_s=float(deadline),
            connect_timeout_s=float(given.get("connect_timeout_s", 10.0)),
            stream=bool(given.get("stream", True)),
            include_usage=bool(given.get("include_usage", True)),
        )


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        if env.get(name):
            return env[name]
    return None


def without_userinfo(url: str) -> str:
    """``url`` without a ``user:password@`` part (httpx would send it as Basic auth in
    place of the configured key, and it would reach settings files and the store)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host))


def _warn_userinfo_once(clean: str) -> None:
    if clean in _warned_hosts:
        return
    _warned_hosts.add(clean)
    log.warning(
        "the base URL held a user name or password; removed (sending %s with the configured "
        "API key instead)",
        clean,
    )
