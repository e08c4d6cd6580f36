"""Initial schema: every table of core/store/schema.py plus append-only triggers."""

import sqlalchemy as sa
from alembic import op

from core.store import triggers
from core.store.migrations.columns import (
    create_index_batch,
    create_trace_table,
    created_at_column,
    dialect,
    drop_table_batch,
    execute_all,
    grant_columns,
    id_column,
    jsonb_0001,
    ref_columns,
    trace_fk,
    trace_id_column,
)

revision = "0001_initial"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "traces",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        created_at_column(),
        sa.Column("head_sequence", sa.Integer(), nullable=True),
        sa.Column("next_sequence", sa.Integer(), nullable=False),
        sa.Column("next_line", sa.Integer(), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("metadata", jsonb_0001(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    create_trace_table(
        "audit_log",
        sa.Column("session_id", sa.String(length=64), nullable=True),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("tool_name", sa.String(length=128), nullable=False),
        sa.Column("tool_call_id", sa.String(length=128), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("elapsed_ms", sa.Float(), nullable=False),
        sa.Column("output_preview", sa.Text(), nullable=False),
        created_at_column(),
    )
    create_index_batch("audit_log", "ix_audit_trace", ["trace_id"])
    create_trace_table(
        "checkpoints",
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("object_key", sa.Text(), nullable=False),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        created_at_column(),
        unique=("generation", "uq_checkpoints_trace_generation"),
    )
    create_trace_table(
        "compactions",
        sa.Column("level", sa.String(length=32), nullable=False),
        sa.Column("trigger", sa.String(length=32), nullable=False),
        sa.Column("at_sequence", sa.Integer(), nullable=True),
        sa.Column("removed", jsonb_0001(), nullable=False),
        sa.Column("context_after", jsonb_0001(), nullable=False),
        sa.Column("tokens_before", sa.Integer(), nullable=False),
        sa.Column("tokens_after", sa.Integer(), nullable=False),
        sa.Column("messages_before", sa.Integer(), nullable=False),
        sa.Column("messages_after", sa.Integer(), nullable=False),
        sa.Column("summary_sequence", sa.Integer(), nullable=True),
        sa.Column("goal_id", sa.String(length=64), nullable=True),
        sa.Column("details", jsonb_0001(), nullable=True),
        created_at_column(),
    )
    create_index_batch("compactions", "ix_compactions_trace", ["trace_id", "at_sequence"])
    create_trace_table(
        "goal_events",
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("op", sa.String(length=16), nullable=False),
        sa.Column("goal_id", sa.String(length=64), nullable=True),
        sa.Column("payload", jsonb_0001(), nullable=True),
    )
    create_index_batch("goal_events", "ix_goal_events_trace", ["trace_id", "sequence"])
    op.create_table(
        "import_records",
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("item", sa.Integer(), nullable=False),
        trace_id_column(),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("format", sa.String(length=32), nullable=False),
        sa.Column("imported_at", sa.Float(), nullable=False),
        trace_fk(),
        sa.PrimaryKeyConstraint("content_hash", "item"),
    )
    op.create_table(
        "lines",
        trace_id_column(),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("parent_line", sa.Integer(), nullable=True),
        sa.Column("start_depth", sa.Integer(), nullable=False),
        sa.Column("start_sequence", sa.Integer(), nullable=False),
        sa.Column("tip_sequence", sa.Integer(), nullable=False),
        sa.Column("tip_depth", sa.Integer(), nullable=False),
        sa.Column("branch_type", sa.String(length=32), nullable=True),
        sa.Column("branch_id", sa.String(length=64), nullable=True),
        trace_fk(),
        sa.PrimaryKeyConstraint("trace_id", "line"),
    )
    create_trace_table(
        "llm_calls",
        sa.Column("call_index", sa.Integer(), nullable=False),
        sa.Column("head_sequence", sa.Integer(), nullable=True),
        sa.Column("context", jsonb_0001(), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("response_sequence", sa.Integer(), nullable=True),
        sa.Column("usage", jsonb_0001(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("agent_name", sa.String(length=128), nullable=False),
        sa.Column("branch_type", sa.String(length=32), nullable=True),
        sa.Column("params", jsonb_0001(), nullable=True),
        created_at_column(),
        unique=("call_index", "uq_llm_calls_trace_index"),
    )
    create_trace_table(
        "messages",
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("parent_sequence", sa.Integer(), nullable=True),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("parts", jsonb_0001(), nullable=True),
        sa.Column("tool_calls", jsonb_0001(), nullable=True),
        sa.Column("tool_call_id", sa.String(length=128), nullable=True),
        sa.Column("name", sa.String(length=128), nullable=True),
        sa.Column("goal_id", sa.String(length=64), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("branch_type", sa.String(length=32), nullable=True),
        sa.Column("branch_id", sa.String(length=64), nullable=True),
        sa.Column("agent_name", sa.String(length=128), nullable=False),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.Column("usage", jsonb_0001(), nullable=True),
        created_at_column(),
        sa.Column("metadata", jsonb_0001(), nullable=True),
        unique=("sequence", "uq_messages_trace_sequence"),
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index("ix_messages_line_depth", ["trace_id", "line", "depth"], unique=False)
        batch_op.create_index(
            "ix_messages_tool_call_id", ["trace_id", "tool_call_id"], unique=False
        )

    op.create_table(
        "refs",
        sa.Column("id", sa.String(length=64), nullable=False),
        trace_id_column(),
        *ref_columns(jsonb_0001()),
        trace_fk(),
        sa.PrimaryKeyConstraint("id"),
    )
    create_index_batch("refs", "ix_refs_trace", ["trace_id"])
    create_trace_table(
        "run_events",
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=True),
        sa.Column("payload", jsonb_0001(), nullable=True),
        created_at_column(),
    )
    create_index_batch("run_events", "ix_run_events_trace", ["trace_id", "id"])
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        trace_id_column(),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=True),
        created_at_column(),
        sa.Column("metadata", jsonb_0001(), nullable=True),
        trace_fk(),
        sa.PrimaryKeyConstraint("id"),
    )
    create_trace_table(
        "skill_injections",
        sa.Column("skill", sa.String(length=128), nullable=False),
        sa.Column("message_sequence", sa.Integer(), nullable=False),
        sa.Column("call_sequence", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(length=16), nullable=False),
        created_at_column(),
    )
    create_index_batch("skill_injections", "ix_skill_injections_trace", ["trace_id", "skill"])
    create_trace_table(
        "tasks",
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(length=64), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("blocked_by", jsonb_0001(), nullable=True),
        sa.Column("owner", sa.String(length=128), nullable=True),
    )
    create_index_batch("tasks", "ix_tasks_trace", ["trace_id", "sequence"])
    create_trace_table(
        "grants",
        *grant_columns(jsonb_0001()),
        references=[sa.ForeignKeyConstraint(["ref_id"], ["refs.id"])],
    )
    create_index_batch("grants", "ix_grants_trace", ["trace_id"])
    op.create_table(
        "turns",
        id_column(),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("turn_index", sa.Integer(), nullable=False),
        sa.Column("user_sequence", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "turn_index", name="uq_turns_session_index"),
    )
    execute_all(triggers.strict_statements(dialect()))


def downgrade() -> None:
    drop_table_batch("turns")
    drop_table_batch("grants", "ix_grants_trace")
    drop_table_batch("tasks", "ix_tasks_trace")
    drop_table_batch("skill_injections", "ix_skill_injections_trace")
    drop_table_batch("sessions")
    drop_table_batch("run_events", "ix_run_events_trace")
    drop_table_batch("refs", "ix_refs_trace")
    drop_table_batch("messages", "ix_messages_tool_call_id", "ix_messages_line_depth")
    drop_table_batch("llm_calls")
    drop_table_batch("lines")
    drop_table_batch("import_records")
    drop_table_batch("goal_events", "ix_goal_events_trace")
    drop_table_batch("compactions", "ix_compactions_trace")
    drop_table_batch("checkpoints")
    drop_table_batch("audit_log", "ix_audit_trace")
    drop_table_batch("traces")
