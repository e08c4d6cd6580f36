"""An agent writing a session file the way Claude Code does: a turn at a time, each turn's
first line in two writes (split inside a UTF-8 character where it has one)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.store import Store
from tests.helpers.ctxlens_process import child_env, spawn

REPO = Path(__file__).resolve().parents[3]


def turns(lines: list[bytes]) -> list[list[bytes]]:
    """Lines grouped into turns (a turn starts at a user prompt)."""
    out: list[list[bytes]] = []
    for line in lines:
        rec = json.loads(line) if line.strip() else {}
        content = (rec.get("message") or {}).get("content") if isinstance(rec, dict) else None
        prompt = rec.get("type") == "user" and isinstance(content, str)
        if prompt or not out:
            out.append([])
        out[-1].append(line)
    return out


def split_point(line: bytes) -> int:
    """A cut inside the first multi-byte UTF-8 character, else the middle."""
    for i, byte in enumerate(line):
        if byte >= 0xC0:
            return i + 1
    return len(line) // 2


def write_turn(path: Path, turn: list[bytes], pause: float = 0.03) -> None:
    with path.open("ab") as f:
        first = turn[0]
        cut = split_point(first)
        f.write(first[:cut])
        f.flush()
        time.sleep(pause)  # the agent is mid-record: the watcher must hold the partial line
        f.write(first[cut:] + b"".join(turn[1:]))


class Cli:
    """``ctxlens watch`` (or ``serve``) as a real process, its JSON lines collected."""

    def __init__(self, *argv: str, env: dict[str, str] | None = None) -> None:
        self.proc = spawn(*argv, env=child_env(**(env or {})))
        self.lines: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip().startswith("{"):
                self.lines.append(json.loads(line))

    def stop(self) -> str:
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=20)
        return err


def wait_for(check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {check}")
        time.sleep(0.02)


def imported_up_to(db: Path, path: Path) -> int:
    """How far the store says ``path`` was read (0 before the first batch)."""
    from core.live.batches import last_batch

    if not db.exists():
        return 0
    with Store.open(db) as s, s.read() as r:
        last = last_batch(r, str(path))
    return last.end if last else 0


def shape(store: Store, trace_id: str) -> Iterator[tuple[Any, ...]]:
    """What a trace holds, independent of ids: every message in sequence order."""
    with store.read() as r:
        for m in r.all_messages(trace_id):
            yield (
                m.sequence,
                m.parent_sequence,
                m.role,
                m.kind,
                m.content,
                m.branch_type,
                m.agent_name,
            )


def _identity(m: Any) -> tuple[Any, ...]:
    """A message as its source names it, whatever its sequence (a watch may write one
    response as two messages, the first of which is the call's response): a Claude Code
    reply by its API response id, a Codex one by its first item's time, another Claude
    Code message by its record's uuid, another Codex one by role, kind, time and call."""
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    if m.role == "assistant":
        return ("response", meta.get("message_id") or m.created_at)
    if meta.get("uuid"):
        return (m.role, m.kind, meta["uuid"])
    return (m.role, m.kind, m.created_at, m.tool_call_id)


def calls(store: Store, trace_id: str) -> list[tuple[Any, ...]]:
    """A trace's recorded model calls in call order: who made each, when, the recorded
    prompt, cached and output tokens, and the messages it links (head, response)."""
    from core.importers.usage import normalize_usage

    with store.read() as r:
        found = r.llm_calls(trace_id)
        wanted = [s for c in found for s in (c.head_sequence, c.response_sequence) if s is not None]
        msgs = r.messages(trace_id, wanted)
    out = []
    for c in found:
        usage = normalize_usage(c.usage) or {}
        head = _identity(msgs[c.head_sequence]) if c.head_sequence is not None else None
        reply = _identity(msgs[c.response_sequence]) if c.response_sequence is not None else None
        out.append(
            (
                c.agent_name,
                c.branch_type,
                c.model,
                c.created_at,
                usage.get("prompt_tokens"),
                usage.get("cached_tokens"),
                usage.get("completion_tokens"),
                head,
                reply,
            )
        )
    return out
