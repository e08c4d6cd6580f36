"""The delegation limits (seed A's defaults), all in one place so each is a setting."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from core.errors import InvalidInputError


@dataclass(frozen=True, slots=True)
class DelegationLimits:
    """Character limits of the protocol; characters of the canonical JSON form."""

    anchor_chars: int = 4_000
    brief_chars: int = 16_000
    refs_per_trace: int = 8
    snapshot_chars: int = 16_000
    ref_chars_total: int = 64_000
    validator_chars: int = 50_000
    max_depth: int = 4
    """Deepest level below the root a recursive ``agent()`` may create."""

    def with_settings(self, settings: dict[str, Any]) -> DelegationLimits:
        """A copy with ``settings`` applied; an unknown name or a non-positive value is an
        error naming it."""
        known = {f.name for f in fields(self)}
        for key, value in settings.items():
            if key not in known:
                raise InvalidInputError(f"unknown delegation setting {key!r}")
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidInputError(f"delegation setting {key}: expected a positive integer")
        return replace(self, **settings)

    def with_pairs(self, pairs: list[str]) -> DelegationLimits:
        """``["validator_chars=2000", …]`` from a command line."""
        settings: dict[str, Any] = {}
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            if not sep or not raw.strip().lstrip("-").isdigit():
                raise InvalidInputError(f"--limit {pair!r}: expected name=integer")
            settings[key.strip()] = int(raw)
        return self.with_settings(settings)

    def to_json(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


DEFAULT_LIMITS = DelegationLimits()
METADATA_KEY = "delegation"
"""The trace metadata key of every member of a delegation tree (``{root, parent}`` on a
child, ``{root, settings}`` on the root): what ``core/delegation/rerun.py`` registers."""
