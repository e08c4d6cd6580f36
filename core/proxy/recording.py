"""Proxied calls into the store: the request before it is forwarded, the outcome after.

``begin`` runs before a byte goes upstream: it stores the request body (byte for byte, with
its SHA-256), the messages it sent that the trace does not hold yet, and a
``proxy_requests`` row in state ``in_flight``. ``finish`` appends the assembled response,
records the ``llm_calls`` row (its context: exactly the messages of the body) and closes
the request row. ``recover`` turns rows a killed proxy left in flight into ``incomplete``
calls. All methods are blocking; the server runs them on one worker thread, in order.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update

from core.proxy.assemble import Assembled
from core.proxy.grouping import Conversations, message_key
from core.proxy.http import Request
from core.proxy.messages import request_messages
from core.records import ContextItem, LlmCall, NewMessage, Trace
from core.store import Store
from core.store import schema as t
from core.store.headers import storable_headers
from core.store.writer import Writer

TRACE_HEADER = "x-ctxlens-trace"
_TRACE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
INCOMPLETE = "incomplete: ctxlens stopped before the response ended"


@dataclass
class Pending:
    """A recorded request waiting for its outcome (in memory only: it holds the secrets
    that must be scrubbed from whatever the outcome stores)."""

    row_id: int
    trace_id: str
    call_index: int
    api: str
    model: str
    stream: bool
    sha256: str
    context: list[int]
    keys: list[str]
    secrets: list[str] = field(repr=False, default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    previous_response_id: str | None = None
    """A Responses call that continued a stored response: its context includes that
    response's (reconstructed from the store, not sent in this body)."""


@dataclass
class Outcome:
    state: str
    """done | error | timeout | disconnected | unreachable | incomplete (the proxy stopped)."""
    status: int | None
    assembled: Assembled
    error: str | None = None
    chunks: int = 0
    response_bytes: int = 0
    first_byte_ms: float | None = None


class Recorder:
    def __init__(self, store: Store, upstream: str) -> None:
        self.store = store
        self.upstream = upstream
        self.conversations = Conversations()
        self._by_key: dict[str, dict[str, list[int]]] = {}
        self.traces_seen: set[str] = set()

    # -- start ---------------------------------------------------------------------------
    def recover(self) -> int:
        """Mark requests a killed proxy left in flight as incomplete; learn old traces."""
        with self.store.write() as w:
            rows = (
                w.conn.execute(
                    select(t.proxy_requests).where(t.proxy_requests.c.state == "in_flight")
                )
                .mappings()
                .all()
            )
            for row in rows:
                self._close_incomplete(w, row)
            known = w.conn.execute(
                select(
                    t.proxy_requests.c.trace_id,
                    t.proxy_requests.c.message_keys,
                    t.proxy_requests.c.response_key,
                ).order_by(t.proxy_requests.c.id)
            ).all()
        for trace_id, keys, response_key in known:
            self.conversations.add(trace_id, keys)
            if response_key:
                self.conversations.add(trace_id, [*keys, response_key])
        return len(rows)

    def _close_incomplete(self, w: Writer, row: Any) -> None:
        items = [ContextItem(s) for s in row["context"]]
        w.record_llm_call(
            LlmCall(
                row["trace_id"],
                row["call_index"],
                tuple(items),
                row["body_sha256"],
                row["model"],
                row["context"][-1] if row["context"] else None,
                error=INCOMPLETE,
                params={
                    "proxy": {"api": row["api"], "request": row["id"], "outcome": "incomplete"}
                },
                created_at=row["started_at"],
            )
        )
        w.conn.execute(
            update(t.proxy_requests)
            .where(t.proxy_requests.c.id == row["id"])
            .values(state="incomplete", error=INCOMPLETE, ended_at=time.time())
        )

    # -- request ---------------------------------------------------------------------------
    def begin(self, api: str, req: Request, secrets: list[str]) -> Pending:
        body, problem = _parse(req.body)
        fields = body or {}
        messages = request_messages(api, body) if body is not None else []
        keys = [message_key(m) for m in messages]
        with self.store.write() as w:
            earlier = _previous_response(w, fields) if api == "responses" else None
            model, stream = str(fields.get("model") or ""), bool(fields.get("stream"))
            if earlier is not None and not req.header(TRACE_HEADER):
                trace_id = earlier[0]
            else:
                trace_id = self._trace_for(w, api, req, messages, keys, model)
            context = self._sequences(w, trace_id, messages, keys)
            if earlier is not None and earlier[0] == trace_id:
                context = _continued(earlier[1], context, messages)
            sha = hashlib.sha256(req.body).hexdigest()
            c = t.proxy_requests.c
            index = w.next_index(c.call_index, c.trace_id, trace_id)
            p = Pending(0, trace_id, index, api, model, stream, sha, context, keys, secrets)
            p.row_id = _insert_request(w, p, req, problem)
        if earlier is not None:
            p.previous_response_id = str(fields.get("previous_response_id"))
        self.conversations.add(trace_id, keys)
        self.traces_seen.add(trace_id)
        return p

    def _trace_for(
        self, w: Writer, api: str, req: Request, messages: list[NewMessage], keys: list[str],
        model: str,
    ) -> str:  # fmt: skip
        named = req.header(TRACE_HEADER)
        if named:
            return self._named_trace(w, api, named.strip(), model)
        found = self.conversations.find(keys)
        return found if found is not None else self._new_trace(w, api, _title(messages), model).id

    def _named_trace(self, w: Writer, api: str, name: str, model: str) -> str:
        """The trace the user named: its id is the name when that is a valid id and no
        other tool's trace has it, else a stable id derived from the name."""
        derived = "proxy-" + hashlib.sha256(name.encode()).hexdigest()[:12]
        for tid in (name, derived) if _TRACE_ID.match(name) else (derived,):
            row = w.conn.execute(select(t.traces.c.source).where(t.traces.c.id == tid)).first()
            if row is None:
                return self._new_trace(w, api, name, model, tid).id
            if row[0] == "proxy":
                return tid
        return self._new_trace(w, api, name, model).id

    def _new_trace(
        self, w: Writer, api: str, title: str, model: str, tid: str | None = None
    ) -> Trace:
        """A new proxy trace; ``model``, the first call's, names the window the inspector
        reads from the model table (``core/context/window.py:imported_window``)."""
        meta: dict[str, Any] = {"proxy": {"api": api, "upstream": self.upstream}}
        if model:
            meta["model"] = model
        return w.create_trace(title, "proxy", metadata=meta, trace_id=tid)

    def _sequences(
        self, w: Writer, trace_id: str, messages: list[NewMessage], keys: list[str]
    ) -> list[int]:
        """The stored sequence of each sent message, appending the ones not stored yet."""
        by_key = self._keys_of(w, trace_id)
        used: set[int] = set()
        out: list[int | None] = []
        new: list[tuple[int, NewMessage]] = []
        for i, (m, key) in enumerate(zip(messages, keys)):
            seq = next((s for s in by_key.get(key, ()) if s not in used), None)
            if seq is None:
                new.append((i, _tagged(m, key)))
            else:
                used.add(seq)
            out.append(seq)
        stored = w.append(trace_id, [m for _, m in new]) if new else []
        for (i, _), msg in zip(new, stored):
            out[i] = msg.sequence
            by_key[keys[i]].append(msg.sequence)
        return [s for s in out if s is not None]

    def _keys_of(self, w: Writer, trace_id: str) -> dict[str, list[int]]:
        if trace_id not in self._by_key:
            index: dict[str, list[int]] = defaultdict(list)
            for m in w.read.all_messages(trace_id):
                key = ((m.metadata or {}).get("proxy") or {}).get("key")
                if key:
                    index[key].append(m.sequence)
            self._by_key[trace_id] = index
        return self._by_key[trace_id]

    # -- outcome ---------------------------------------------------------------------------
    def finish(self, p: Pending, o: Outcome) -> None:
        a = o.assembled
        latency = (time.perf_counter() - p.started) * 1000
        error = scrub(o.error or a.error, p.secrets)
        if error is None and not a.complete and o.state == "done":
            error = "response ended before the model said it was done"
        response_key = None
        with self.store.write() as w:
            response_seq = None
            if a.message is not None:
                response_key = message_key(a.message)
                msg = _tagged(a.message, response_key, a.usage, p.row_id, a.complete)
                response_seq = w.append(p.trace_id, [msg])[0].sequence
                self._keys_of(w, p.trace_id)[response_key].append(response_seq)
            w.record_llm_call(self._call(p, o, response_seq, latency, error))
            w.conn.execute(
                update(t.proxy_requests)
                .where(t.proxy_requests.c.id == p.row_id)
                .values(
                    state=o.state,
                    status=o.status,
                    error=error,
                    response_key=response_key,
                    response_id=a.response_id,
                    response_sequence=response_seq,
                    chunks=o.chunks,
                    response_bytes=o.response_bytes,
                    first_byte_ms=o.first_byte_ms,
                    ended_at=time.time(),
                )
            )
        if response_key is not None:
            self.conversations.add(p.trace_id, [*p.keys, response_key])

    def _call(
        self, p: Pending, o: Outcome, response_seq: int | None, latency: float, error: str | None
    ) -> LlmCall:
        a = o.assembled
        proxy = {
            "api": p.api,
            "request": p.row_id,
            "outcome": o.state,
            "status": o.status,
            "stream": p.stream,
            "complete": a.complete,
            "finish_reason": a.finish_reason,
        }
        if p.previous_response_id:
            proxy["previous_response_id"] = p.previous_response_id
        return LlmCall(
            p.trace_id,
            p.call_index,
            tuple(ContextItem(s) for s in p.context),
            p.sha256,
            a.model or p.model,
            p.context[-1] if p.context else None,
            response_sequence=response_seq,
            usage=a.usage,
            latency_ms=latency,
            error=error,
            params={"proxy": proxy},
            created_at=time.time(),
        )


def _parse(body: bytes) -> tuple[dict[str, Any] | None, str | None]:
    try:
        obj = json.loads(body)
    except ValueError as exc:
        return None, f"request body is not JSON: {exc}"
    if not isinstance(obj, dict):
        return None, "request body is not a JSON object"
    return obj, None


def _previous_response(w: Writer, body: dict[str, Any] | None) -> tuple[str, list[int]] | None:
    """For a Responses request that names ``previous_response_id``: the trace of that
    response and the context the model had then (the earlier call's, plus its response)."""
    previous = (body or {}).get("previous_response_id")
    if not isinstance(previous, str) or not previous:
        return None
    c = t.proxy_requests.c
    row = w.conn.execute(
        select(c.trace_id, c.context, c.response_sequence)
        .where(c.response_id == previous)
        .order_by(c.id.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    trace_id, context, response_seq = row
    return trace_id, [*context, *([response_seq] if response_seq is not None else [])]


def _continued(earlier: list[int], sent: list[int], messages: list[NewMessage]) -> list[int]:
    """What the model saw for a call that continues a stored response: this body's system
    turns first, then the earlier context (without those same turns), then the rest of
    what this body sent."""
    system = [s for s, m in zip(sent, messages) if m.role == "system"]
    rest = [s for s, m in zip(sent, messages) if m.role != "system"]
    return system + [s for s in earlier if s not in system] + rest


def _insert_request(w: Writer, p: Pending, req: Request, problem: str | None) -> int:
    """The request row, in flight; its id."""
    res = w.conn.execute(
        t.proxy_requests.insert().values(
            trace_id=p.trace_id,
            call_index=p.call_index,
            api=p.api,
            method=req.method,
            path=req.path,
            body=req.body,
            body_sha256=p.sha256,
            headers={**storable_headers(req.headers), **_problem(problem)},
            model=p.model,
            stream=int(p.stream),
            context=p.context,
            message_keys=p.keys,
            state="in_flight",
            chunks=0,
            response_bytes=0,
            started_at=time.time(),
        )
    )
    return int(res.inserted_primary_key[0])  # type: ignore[index]


def _problem(problem: str | None) -> dict[str, str]:
    return {"x-ctxlens-problem": problem} if problem else {}


def _title(messages: list[NewMessage]) -> str:
    first = next((m.content for m in messages if m.role == "user" and m.content), "")
    return " ".join(first.split())[:80] or "proxied call"


def _tagged(
    m: NewMessage,
    key: str,
    usage: Any = None,
    request: int | None = None,
    complete: bool | None = None,
) -> NewMessage:
    proxy: dict[str, Any] = {"key": key}
    if request is not None:
        proxy.update(response_to=request, complete=complete)
    return NewMessage(
        m.role,
        m.content,
        m.parts,
        m.tool_calls,
        m.tool_call_id,
        m.name,
        kind=m.kind,
        usage=usage,
        metadata={"proxy": proxy},
    )


def scrub(text: str | None, secrets: list[str]) -> str | None:
    """``text`` without any credential the request carried (an upstream may echo it)."""
    if text is None:
        return None
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text
