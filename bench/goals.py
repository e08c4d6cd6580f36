"""Judging figures against their goals, and the per-bench summary line (issue 20).

A figure's own ``met`` wins. Otherwise a goal of one plain comparison is checked here:
``<= 20 ms``, ``≤ 1.0 s``, ``ratio <= 1.3``, ``>= 0.9 (baseline: …)`` (the unit, when
given, must be the figure's; ``ratio`` compares the ratio). A goal starting with
``informational``, ``diagnostic`` or ``report`` is informational on purpose; any other goal
this cannot read counts as unchecked, so a summary never claims more than it checked.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable
from typing import Any

INFORMATIONAL = ("informational", "diagnostic", "report")
_OPS = {"<=": operator.le, "≤": operator.le, "<": operator.lt,
        ">=": operator.ge, "≥": operator.ge, ">": operator.gt}  # fmt: skip
_GOAL = re.compile(
    r"^(?P<ratio>ratio\s*)?(?P<op><=|≤|<|>=|≥|>)\s*(?P<num>[\d][\d,]*(?:\.\d+)?)\s*"
    r"(?P<unit>[A-Za-z/%µ]+)?\s*(?:\(.*\))?$"
)


def judge(fig: dict[str, Any]) -> bool | None:
    """``True``/``False`` when the goal can be checked, ``None`` when it cannot."""
    if "met" in fig:
        return bool(fig["met"])
    match = _GOAL.match(str(fig.get("goal", "")).strip())
    if match is None:
        return None
    value = fig.get("ratio") if match["ratio"] else fig.get("value")
    unit = match["unit"]
    if value is None or (unit and not match["ratio"] and unit != fig.get("unit")):
        return None
    return bool(_OPS[match["op"]](float(value), float(match["num"].replace(",", ""))))


def informational(fig: dict[str, Any]) -> bool:
    return str(fig.get("goal", "")).strip().lower().startswith(INFORMATIONAL)


def summary(
    bench: str, figures: Iterable[dict[str, Any]], failed: str | None = None
) -> dict[str, Any]:
    """The closing line of one bench: figures meeting their goal, and which do not. A bench
    that crashed (``failed``: its error) has not met its goals, whatever it printed first."""
    met, missed, info, unchecked = 0, [], [], []
    for fig in figures:
        if informational(fig):
            info.append(fig["figure"])
            continue
        verdict = judge(fig)
        if verdict is None:
            unchecked.append(fig["figure"])
        elif verdict:
            met += 1
        else:
            missed.append(fig["figure"])
    checked = met + len(missed)
    line = {
        "bench": bench,
        "figure": "summary",
        "value": met,
        "unit": "figures meeting their goal",
        "baseline": checked,
        "ratio": round(met / checked, 4) if checked else None,
        "goal": "every checked figure meets its goal",
        "met": not missed and not unchecked and failed is None,
        "missed": missed,
        "unchecked": unchecked,
        "informational": info,
    }
    if failed is not None:
        line["failed"] = failed
    return line
