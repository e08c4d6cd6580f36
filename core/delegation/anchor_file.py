"""Reading a RootTaskAnchor from a JSON file (``ctxlens run --anchor FILE``): errors name
the file and, for malformed JSON, the line; NaN/Infinity are refused like anywhere else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.delegation.normal import DelegationError


def read_anchor_file(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DelegationError(f"{p}: cannot read the anchor file ({exc})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DelegationError(f"{p}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise DelegationError(f"{p}: expected an object {{objective, completion_criteria, …}}")
    return value
