"""The relational schema of the trace store (SPEC STORE-1..8).

Portable across SQLite and PostgreSQL: generic types only, JSON as ``JSON`` (PostgreSQL's
``json``, which keeps the text verbatim: ``jsonb`` would alter what a lossless copy stores).
The migrations in ``migrations/versions`` create exactly these tables; a test compares the
two so they never drift.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    event,
    text,
)
from sqlalchemy.schema import SchemaItem

metadata = MetaData()
#: Which rows ``ix_messages_tool_call_id`` covers: tool results, the rows that have one.
TOOL_RESULTS_ONLY = "tool_call_id IS NOT NULL"

Json = JSON(none_as_null=True)
# SQLite only aliases ROWID for exactly "INTEGER PRIMARY KEY".
Id = BigInteger().with_variant(Integer(), "sqlite")


def id_column() -> Column[int]:
    """The autoincrement key of a table whose rows have no natural one."""
    return Column("id", Id, primary_key=True, autoincrement=True)


def trace_id_column() -> Column[str]:
    """The trace a row belongs to."""
    return Column("trace_id", String(64), ForeignKey("traces.id"), nullable=False)


def trace_key_column() -> Column[str]:
    """The trace a row belongs to, as the first part of the row's key."""
    return Column("trace_id", String(64), ForeignKey("traces.id"), primary_key=True)


def created_at_column() -> Column[float]:
    return Column("created_at", Float, nullable=False)


def trace_table(name: str, *items: SchemaItem) -> Table:
    """A table of rows a trace owns, keyed by ``id``: ``id``, ``trace_id``, then ``items``."""
    return Table(name, metadata, id_column(), trace_id_column(), *items)


traces = Table(
    "traces",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("title", Text, nullable=False, default=""),
    Column("source", String(32), nullable=False, default="ctxlens"),
    created_at_column(),
    Column("head_sequence", Integer, nullable=True),
    Column("next_sequence", Integer, nullable=False, default=0),
    Column("next_line", Integer, nullable=False, default=0),
    Column("message_count", Integer, nullable=False, default=0),
    Column("metadata", Json, nullable=True),
)

messages = trace_table(
    "messages",
    Column("sequence", Integer, nullable=False),
    Column("parent_sequence", Integer, nullable=True),
    Column("line", Integer, nullable=False),
    Column("depth", Integer, nullable=False),
    Column("role", String(16), nullable=False),
    Column("content", Text, nullable=False, default=""),
    Column("parts", Json, nullable=True),
    Column("tool_calls", Json, nullable=True),
    Column("tool_call_id", String(128), nullable=True),
    Column("name", String(128), nullable=True),
    Column("goal_id", String(64), nullable=True),
    Column("kind", String(32), nullable=False, default="message"),
    Column("branch_type", String(32), nullable=True),
    Column("branch_id", String(64), nullable=True),
    Column("agent_name", String(128), nullable=False, default="main"),
    Column("token_count", Integer, nullable=False, default=0),
    Column("usage", Json, nullable=True),
    created_at_column(),
    Column("metadata", Json, nullable=True),
    UniqueConstraint("trace_id", "sequence", name="uq_messages_trace_sequence"),
    Index("ix_messages_line_depth", "trace_id", "line", "depth"),
    # Only tool results carry a tool_call_id: the index skips the other rows (an import
    # writes a third fewer index entries); ``tool_call_id = ?`` implies it is not NULL.
    Index(
        "ix_messages_tool_call_id",
        "trace_id",
        "tool_call_id",
        sqlite_where=text(TOOL_RESULTS_ONLY),
    ),  # PostgreSQL: the same condition, given as it creates the table (below)
)


@event.listens_for(messages, "before_create")
def _partial_on_postgresql(_table: Table, connection: Any, **_kw: Any) -> None:
    """``postgresql_where`` in the ``Index`` above would import SQLAlchemy's PostgreSQL
    dialect on every start of a SQLite store (~40 ms of the window's cold start, issue 20):
    a server store gets the index's condition here, when its tables are created."""
    if connection.dialect.name == "postgresql":
        index = next(i for i in messages.indexes if i.name == "ix_messages_tool_call_id")
        index.dialect_options["postgresql"]["where"] = text(TOOL_RESULTS_ONLY)


# A line is a straight run of messages (each the only child of the previous one on it).
# The main path is a short chain of line segments, so paging it is an index range scan.
lines = Table(
    "lines",
    metadata,
    trace_key_column(),
    Column("line", Integer, primary_key=True),
    Column("parent_line", Integer, nullable=True),
    Column("start_depth", Integer, nullable=False),
    Column("start_sequence", Integer, nullable=False),
    Column("tip_sequence", Integer, nullable=False),
    Column("tip_depth", Integer, nullable=False),
    Column("branch_type", String(32), nullable=True),
    Column("branch_id", String(64), nullable=True),
)

llm_calls = trace_table(
    "llm_calls",
    Column("call_index", Integer, nullable=False),
    Column("head_sequence", Integer, nullable=True),
    Column("context", Json, nullable=False),
    Column("request_sha256", String(64), nullable=False),
    Column("model", String(128), nullable=False, default=""),
    Column("response_sequence", Integer, nullable=True),
    Column("usage", Json, nullable=True),
    Column("latency_ms", Float, nullable=True),
    Column("error", Text, nullable=True),
    Column("agent_name", String(128), nullable=False, default="main"),
    Column("branch_type", String(32), nullable=True),
    Column("params", Json, nullable=True),
    created_at_column(),
    UniqueConstraint("trace_id", "call_index", name="uq_llm_calls_trace_index"),
)

# Per-trace sums of the usage its model calls recorded (issue 21), one row per (trace,
# agent, model, usage shape): a cache of ``llm_calls`` that
# ``core/cost/totals.py:catch_up`` keeps current (calls are append-only: it folds in the
# calls past ``upto_call``), so cost and token bounds and the Traces pane read a few rows
# per trace instead of every call's usage. ``shape`` says which cache counts the calls
# carry (none: no token counts; plain, read, write, both), because a call with cache
# reads its model has no cache-read price for is unpriced, not priced at the input rate.
TOTALS_KEYS = (("agent_name", 128), ("model", 128), ("shape", 8))
TOTALS_SUMS = ("prompt", "uncached", "cached", "cache_creation", "completion")


def _totals_columns() -> list[Column[Any]]:
    keys = [trace_key_column()]
    keys += [Column(name, String(n), primary_key=True) for name, n in TOTALS_KEYS]
    counts = [Column(name, Integer, nullable=False) for name in ("calls", "upto_call")]
    return keys + counts + [Column(name, BigInteger, nullable=False) for name in TOTALS_SUMS]


trace_totals = Table("trace_totals", metadata, *_totals_columns())

compactions = trace_table(
    "compactions",
    Column("level", String(32), nullable=False),
    Column("trigger", String(32), nullable=False, default="auto"),
    Column("at_sequence", Integer, nullable=True),
    Column("removed", Json, nullable=False),
    Column("context_after", Json, nullable=False),
    Column("tokens_before", Integer, nullable=False, default=0),
    Column("tokens_after", Integer, nullable=False, default=0),
    Column("messages_before", Integer, nullable=False, default=0),
    Column("messages_after", Integer, nullable=False, default=0),
    Column("summary_sequence", Integer, nullable=True),
    Column("goal_id", String(64), nullable=True),
    Column("details", Json, nullable=True),
    created_at_column(),
    Index("ix_compactions_trace", "trace_id", "at_sequence"),
)

goal_events = trace_table(
    "goal_events",
    Column("sequence", Integer, nullable=False),
    Column("op", String(16), nullable=False),
    Column("goal_id", String(64), nullable=True),
    Column("payload", Json, nullable=True),
    Index("ix_goal_events_trace", "trace_id", "sequence"),
)

tasks = trace_table(
    "tasks",
    Column("sequence", Integer, nullable=False),
    Column("task_id", String(64), nullable=False),
    Column("content", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("blocked_by", Json, nullable=True),
    Column("owner", String(128), nullable=True),
    Index("ix_tasks_trace", "trace_id", "sequence"),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    trace_id_column(),
    Column("title", Text, nullable=False, default=""),
    Column("model", String(128), nullable=True),
    created_at_column(),
    Column("metadata", Json, nullable=True),
)

turns = Table(
    "turns",
    metadata,
    id_column(),
    Column("session_id", String(64), ForeignKey("sessions.id"), nullable=False),
    Column("turn_index", Integer, nullable=False),
    Column("user_sequence", Integer, nullable=True),
    Column("status", String(16), nullable=False, default="running"),
    Column("started_at", Float, nullable=False),
    Column("ended_at", Float, nullable=True),
    UniqueConstraint("session_id", "turn_index", name="uq_turns_session_index"),
)

skill_injections = trace_table(
    "skill_injections",
    Column("skill", String(128), nullable=False),
    Column("message_sequence", Integer, nullable=False),
    Column("call_sequence", Integer, nullable=True),
    Column("reason", String(16), nullable=False),
    created_at_column(),
    Index("ix_skill_injections_trace", "trace_id", "skill"),
)

refs = Table(
    "refs",
    metadata,
    # A ref id is unique within its trace (REF-1); a replay keeps its source's ref ids.
    trace_key_column(),
    Column("id", String(64), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("tokens", Integer, nullable=False, default=0),
    Column("bytes", Integer, nullable=False, default=0),
    Column("image_blocks", Integer, nullable=False, default=0),
    Column("source_sequence", Integer, nullable=True),
    Column("content", Text, nullable=True),
    created_at_column(),
    Column("metadata", Json, nullable=True),
    Index("ix_refs_trace", "trace_id"),
)

grants = trace_table(
    "grants",
    Column("ref_id", String(64), nullable=False),
    Column("granted_by", String(32), nullable=False),
    Column("reason", Text, nullable=False, default=""),
    Column("cost", Json, nullable=False),
    Column("granted_at_sequence", Integer, nullable=True),
    Column("message_sequence", Integer, nullable=True),
    Column("revoked_at_sequence", Integer, nullable=True),
    Column("revoked_reason", Text, nullable=True),
    created_at_column(),
    ForeignKeyConstraint(["trace_id", "ref_id"], ["refs.trace_id", "refs.id"]),
    Index("ix_grants_trace", "trace_id"),
)

checkpoints = trace_table(
    "checkpoints",
    Column("generation", Integer, nullable=False),
    Column("type", String(32), nullable=False),
    Column("object_key", Text, nullable=False),
    Column("token_count", Integer, nullable=False, default=0),
    Column("sha256", String(64), nullable=False),
    Column("size", Integer, nullable=False),
    created_at_column(),
    UniqueConstraint("trace_id", "generation", name="uq_checkpoints_trace_generation"),
)

checkpoint_blobs = Table(
    "checkpoint_blobs",
    metadata,
    # The embedded blob store (issue 18): a checkpoint's bytes under its object key, in the
    # database itself, so copying the store file copies everything.
    Column("key", String(512), primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

audit_log = trace_table(
    "audit_log",
    Column("session_id", String(64), nullable=True),
    Column("step", Integer, nullable=False, default=0),
    Column("tool_name", String(128), nullable=False),
    Column("tool_call_id", String(128), nullable=True),
    Column("status", String(16), nullable=False),
    Column("elapsed_ms", Float, nullable=False, default=0.0),
    Column("output_preview", Text, nullable=False, default=""),
    created_at_column(),
    Index("ix_audit_trace", "trace_id"),
)

run_events = trace_table(
    "run_events",
    Column("type", String(32), nullable=False),
    Column("sequence", Integer, nullable=True),
    Column("payload", Json, nullable=True),
    created_at_column(),
    Index("ix_run_events_trace", "trace_id", "id"),
)

import_records = Table(
    "import_records",
    metadata,
    Column("content_hash", String(64), primary_key=True),
    Column("item", Integer, primary_key=True),
    trace_id_column(),
    Column("path", Text, nullable=False),
    Column("format", String(32), nullable=False),
    Column("imported_at", Float, nullable=False),
    # Total size of the unit's files: a unit of a size never imported cannot be a re-import,
    # so its content hash can be computed beside the import instead of before it.
    Column("bytes", BigInteger, nullable=True),
)

# -- recursive delegation (DEL-1..4, core/delegation/) -----------------------------------------


def ref_version_columns() -> list[Column[Any]]:
    """Which snapshot of a delegation ref a row is about: the ref/version pair and its kind."""
    return [
        Column("ref_id", String(128), nullable=False),
        Column("version", String(64), nullable=False),
        Column("kind", String(32), nullable=False),
    ]


delegation_traces = Table(
    "delegation_traces",
    metadata,
    # One row per trace of a delegation tree: its lineage, the root's anchor hash (the root's
    # row alone holds the anchor itself), the frozen tool snapshot and the budget root.
    trace_key_column(),
    Column("root_trace_id", String(64), nullable=False),
    Column("parent_trace_id", String(64), nullable=True),
    Column("depth", Integer, nullable=False, default=0),
    Column("name", String(128), nullable=False, default="root"),
    Column("call_sequence", Integer, nullable=True),
    Column("anchor", Json, nullable=True),
    Column("anchor_sha256", String(64), nullable=False),
    Column("tools", Json, nullable=True),
    Column("budget_root", String(64), nullable=False),
    created_at_column(),
    Index("ix_delegation_parent", "parent_trace_id"),
)

task_protocol_versions = trace_table(
    "task_protocol_versions",
    # Every version of a trace's TaskBrief; the newest is current, older rows never change.
    Column("version_index", Integer, nullable=False),
    Column("version", String(64), nullable=False),
    Column("brief", Json, nullable=False),
    Column("chars", Integer, nullable=False),
    Column("approved_version", String(64), nullable=True),
    Column("parent_sequence", Integer, nullable=True),
    created_at_column(),
    UniqueConstraint("trace_id", "version_index", name="uq_protocol_version"),
)

context_ref_snapshots = trace_table(
    "context_ref_snapshots",
    # Immutable snapshot content (canonical JSON text) in its owner's local catalogue, made
    # at the owner's message ``made_at_sequence`` (a reviewed result: the ``agent()`` call;
    # off the main path after a rewind, it leaves the catalogue).
    *ref_version_columns(),
    Column("content", Text, nullable=False),
    Column("chars", Integer, nullable=False),
    Column("made_at_sequence", Integer, nullable=True),
    created_at_column(),
    Index("ix_ref_snapshots_pair", "trace_id", "ref_id", "version"),
)

delegation_grants = trace_table(
    "delegation_grants",
    # A ref/version pair held by ``trace_id``, granted by the parent trace at its message
    # ``granted_at_sequence``; ended (never deleted) by a revision or a rewind.
    *ref_version_columns(),
    Column("chars", Integer, nullable=False),
    Column("granted_by", String(64), nullable=False),
    Column("granted_at_sequence", Integer, nullable=False),
    Column("dropped_reason", Text, nullable=True),
    created_at_column(),
    Index("ix_delegation_grants_trace", "trace_id"),
    Index("ix_delegation_grants_granter", "granted_by"),
)

# One row per request the recording proxy received (issue 16): written before the request
# is forwarded (state ``in_flight``), completed after its response ended. A row still in
# flight when the proxy starts was cut short by a kill: it becomes ``incomplete``.
proxy_requests = trace_table(
    "proxy_requests",
    Column("call_index", Integer, nullable=False),
    Column("api", String(16), nullable=False),
    Column("method", String(16), nullable=False),
    Column("path", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("body_sha256", String(64), nullable=False),
    Column("headers", Json, nullable=True),
    Column("model", String(128), nullable=False, default=""),
    Column("stream", Integer, nullable=False, default=0),
    Column("context", Json, nullable=False),
    Column("message_keys", Json, nullable=False),
    Column("state", String(16), nullable=False),
    Column("status", Integer, nullable=True),
    Column("error", Text, nullable=True),
    Column("response_key", String(40), nullable=True),
    Column("response_id", String(128), nullable=True),
    Column("response_sequence", Integer, nullable=True),
    Column("chunks", Integer, nullable=False, default=0),
    Column("response_bytes", BigInteger, nullable=False, default=0),
    Column("first_byte_ms", Float, nullable=True),
    Column("started_at", Float, nullable=False),
    Column("ended_at", Float, nullable=True),
    UniqueConstraint("trace_id", "call_index", name="uq_proxy_requests_trace_index"),
    Index("ix_proxy_requests_state", "state"),
    Index("ix_proxy_requests_response_id", "response_id"),
)

watch_batches = Table(
    "watch_batches",
    metadata,
    id_column(),
    Column("path", Text, nullable=False),
    trace_id_column(),
    # Byte range of the file read into this batch (written in the batch's own transaction,
    # so the newest row's ``end`` is exactly how far the file was imported); ``start ==
    # end``: the watch stopped there and recorded the open responses' calls (``Watcher.end``).
    Column("start", BigInteger, nullable=False),
    Column("end", BigInteger, nullable=False),
    # The file's identity when read: a replaced, truncated or rotated file has another.
    Column("head_sha256", String(64), nullable=False),
    Column("inode", BigInteger, nullable=True),
    Column("format", String(32), nullable=False),
    created_at_column(),
    Index("ix_watch_batches_path", "path", "id"),
    Index("ix_watch_batches_trace", "trace_id", "id"),
)
