"""A task run against an endpoint the user names in the GUI ("Run a task…", issue 16).

The trace gets what a live runner needs to continue it (``run_config``, the task, the
base URL without credentials); the key never reaches the store or the settings: it is read
when the run opens, from an environment variable or the desktop keyring (the ``keyring``
package, when installed), and lives in memory as a ``Secret``. The run itself is the
ordinary endpoint run of ``core/run/live.py:open_live_run``, fed the endpoint as an
environment mapping (``endpoint_env``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from core.errors import InvalidInputError
from core.llm.secrets import Secret
from core.llm.settings import ENV_BASE_URL, ENV_MODEL
from core.run.config import RunConfig
from core.run.rerunners import DEMO_TOOLS
from core.store import Store

KEYRING_SERVICE = "ctxlens"
KEY_ENV = "CTXLENS_API_KEY"


@dataclass(frozen=True)
class TaskRun:
    base_url: str
    model: str
    task: str
    key_source: str = "env:" + KEY_ENV
    """``env:NAME``, ``keyring`` (service ``ctxlens``, user = the URL's host) or ``none``."""
    window: int = 128_000
    demo_tools: bool = False

    def check(self) -> TaskRun:
        url = urlsplit(self.base_url.strip())
        if url.scheme not in ("http", "https") or not url.hostname:
            raise InvalidInputError(f"base URL {self.base_url!r}: not an http(s) URL")
        if not self.model.strip():
            raise InvalidInputError("model: give the model name the endpoint serves")
        if not self.task.strip():
            raise InvalidInputError("task: say what the agent should do")
        return self


def keyring_available() -> bool:
    try:
        import keyring  # noqa: F401
    except Exception:
        return False
    return True


def find_key(source: str, base_url: str, env: Mapping[str, str] | None = None) -> Secret | None:
    """The key named by ``source``; ``None`` when that place has none."""
    env = os.environ if env is None else env
    if source.startswith("env:"):
        value = env.get(source[4:])
        return Secret(value) if value else None
    if source == "keyring" and keyring_available():
        import keyring

        try:
            value = keyring.get_password(KEYRING_SERVICE, urlsplit(base_url).hostname or "")
        except Exception:  # a locked or absent keyring backend: no key, said by the caller
            return None
        return Secret(value) if value else None
    return None


def create_task_trace(store: Store, run: TaskRun) -> str:
    """A new trace that a live runner can open and start ``run.task`` on."""
    run.check()
    extra = {"tools": DEMO_TOOLS} if run.demo_tools else {}
    config = RunConfig(model=run.model.strip(), window=run.window, extra=extra)
    meta = {
        "run_config": config.to_json(),
        "run": {"base_url": public_url(run.base_url.strip()), "demo_tools": run.demo_tools},
        "task": run.task,
    }
    return store.create_trace(" ".join(run.task.split())[:80], "ctxlens", metadata=meta).id


def endpoint_env(run: TaskRun, key: Secret | None) -> dict[str, str]:
    """The endpoint as the environment mapping ``open_live_run`` reads (memory only)."""
    env = {ENV_BASE_URL: run.base_url.strip(), ENV_MODEL: run.model.strip()}
    if key:
        env[KEY_ENV] = key.reveal()
    return env


def public_url(url: str) -> str:
    """The URL without user:password@ (credentials never enter the store)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc)) if parts.netloc else url
