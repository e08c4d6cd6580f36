"""Delegation trees in ``core/run/rerunners.py``: every tree member (``metadata
["delegation"]``) runs again on the ``DelegatingRunner`` with its tree's settings, so a
replay, a resume or the GUI's Run/Step keep the ``agent()`` and ``read_context_ref``
tools and the protocol instead of falling back to the plain ``Runner``.

A replay of a root makes its new trace a root with the same anchor, tools and settings
(its children are made again by its ``agent()`` calls); a child is re-run only through its
root. The runtime is imported when a runner is made, so registering loads nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.delegation.config import METADATA_KEY
from core.run.rerunners import RunnerKind, register_runner_kind


def delegating_runner(store: Any, trace_id: str, model: Any, config: Any, **parts: Any) -> Any:
    """A ``DelegatingRunner`` with the settings its tree's root recorded."""
    from core.delegation.runner import DelegatingRunner
    from core.delegation.runtime import settings_of

    with store.read() as r:
        settings = settings_of(r, trace_id)
    return DelegatingRunner(store, trace_id, model, config, delegation=settings, **parts)


def child_refusal(metadata: Mapping[str, Any]) -> str | None:
    """A delegated child (``delegation.parent`` set) runs only inside its parent's
    ``agent()`` call: it is never run, replayed or resumed alone."""
    record = metadata.get(METADATA_KEY)
    if not isinstance(record, Mapping) or not record.get("parent"):
        return None
    root = record.get("root")
    return (
        "this trace is a delegated child: it runs inside its parent's agent() call; "
        f"run, replay or resume its root {root} instead"
    )


def adopt_root(store: Any, source_id: str, target_id: str) -> None:
    """The replay ``target_id`` of the root ``source_id``: a root of its own, same anchor,
    tools and settings (a child was refused before: ``child_refusal``)."""
    from core.delegation.runtime import settings_of, start_root
    from core.delegation.store import load_anchor, node

    with store.read() as r:
        here = node(r, source_id)
        if here is None:
            return
        anchor = load_anchor(r, here.root_trace_id)
        settings = settings_of(r, source_id)
    start_root(
        store, target_id, anchor.to_json(), here.tools, settings=settings, copied_prefix=True
    )


def register() -> None:
    register_runner_kind(RunnerKind(METADATA_KEY, delegating_runner, child_refusal, adopt_root))
