"""Compaction (SPEC CMP-1..9): levels and layers as pure context transforms, with guards.

Each level or layer is a function from a context (``View``: items + messages) to a new item
list plus a record of what left (``LayerResult``); nothing is mutated and nothing is
written until an outcome is recorded as a boundary. See docs/context.md.
"""

from core.context.compaction.breaker import CircuitBreaker
from core.context.compaction.compactor import Budget, Compactor
from core.context.compaction.config import (
    ALL_LEVELS,
    LEVELS,
    CompactionConfig,
    FileParams,
    GuardParams,
    IdentityParams,
    MicroParams,
    SnipParams,
    SummaryParams,
)
from core.context.compaction.contract import RESUME, contract_problems
from core.context.compaction.files import CachedFile, FileStateCache, restore_files
from core.context.compaction.goal import compact_goals
from core.context.compaction.identity import inject_identity
from core.context.compaction.layers import LAYERS, Layer, level_help
from core.context.compaction.micro import micro
from core.context.compaction.outcome import CompactionOutcome
from core.context.compaction.persist import record_outcome
from core.context.compaction.preview import (
    Preview,
    apply_preview,
    apply_sync,
    dry_run,
    preview,
)
from core.context.compaction.result import LayerResult
from core.context.compaction.retention import Retention, retention_report
from core.context.compaction.snip import snip
from core.context.compaction.summarizer import ScriptedSummarizer, Summarizer, SummaryRequest
from core.context.compaction.summary import summarize
from core.context.compaction.summary_state import Records, load_records
from core.context.compaction.units import Unit, units
from core.context.compaction.validity import is_provider_valid, validity_problems

__all__ = [
    "ALL_LEVELS",
    "LAYERS",
    "LEVELS",
    "RESUME",
    "Budget",
    "CachedFile",
    "CircuitBreaker",
    "CompactionConfig",
    "CompactionOutcome",
    "Compactor",
    "FileParams",
    "FileStateCache",
    "GuardParams",
    "IdentityParams",
    "Layer",
    "LayerResult",
    "MicroParams",
    "Preview",
    "Records",
    "Retention",
    "ScriptedSummarizer",
    "SnipParams",
    "Summarizer",
    "SummaryParams",
    "SummaryRequest",
    "Unit",
    "apply_preview",
    "apply_sync",
    "compact_goals",
    "contract_problems",
    "dry_run",
    "inject_identity",
    "is_provider_valid",
    "level_help",
    "load_records",
    "micro",
    "preview",
    "record_outcome",
    "restore_files",
    "retention_report",
    "snip",
    "summarize",
    "units",
    "validity_problems",
]
