"""Judging figures against their goals, and the per-bench summary line (issue 20).

A figure's own ``met`` wins. Otherwise a goal of one plain comparison is checked here:
``<= 20 ms``, ``≤ 1.0 s``, ``== 0 calls``, ``ratio <= 1.3``, ``>= 0.9 (baseline: …)`` (the
unit, when given, must be the figure's; ``ratio`` compares the ratio), or ``== baseline``
(the value equals the baseline measured in the same run). A note in parentheses may follow.
A goal starting with ``informational``, ``diagnostic`` or ``report`` is informational on
purpose; any other goal this cannot read counts as unchecked, and a figure whose ratio or
baseline is missing (a baseline that could not be measured) is unchecked too, so a summary
never claims more than it checked.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable
from typing import Any

INFORMATIONAL = ("informational", "diagnostic", "report")
_OPS = {"<=": operator.le, "≤": operator.le, "<": operator.lt, "==": operator.eq,
        ">=": operator.ge, "≥": operator.ge, ">": operator.gt}  # fmt: skip
_NOTE = r"\s*(?:\(.*\))?$"
_GOAL = re.compile(
    r"^(?P<ratio>ratio\s*)?(?P<op><=|≤|<|==|>=|≥|>)\s*(?P<num>[\d][\d,]*(?:\.\d+)?)\s*"
    r"(?P<unit>[A-Za-z/%µ]+)?" + _NOTE
)
_BASELINE = re.compile(r"^(?P<op><=|≤|<|==|>=|≥|>)\s*baseline" + _NOTE)


def judge(fig: dict[str, Any]) -> bool | None:
    """``True``/``False`` when the goal can be checked, ``None`` when it cannot."""
    if "met" in fig:
        return bool(fig["met"])
    goal = str(fig.get("goal", "")).strip()
    against = _BASELINE.match(goal)
    if against is not None:
        return _compare(against["op"], fig.get("value"), fig.get("baseline"))
    match = _GOAL.match(goal)
    if match is None:
        return None
    unit = match["unit"]
    if unit and not match["ratio"] and unit != fig.get("unit"):
        return None
    value = fig.get("ratio") if match["ratio"] else fig.get("value")
    return _compare(match["op"], value, float(match["num"].replace(",", "")))


def _compare(op: str, value: Any, limit: Any) -> bool | None:
    if value is None or limit is None:
        return None
    return bool(_OPS[op](float(value), float(limit)))


def informational(fig: dict[str, Any]) -> bool:
    return str(fig.get("goal", "")).strip().lower().startswith(INFORMATIONAL)


def summary(
    bench: str, figures: Iterable[dict[str, Any]], error: str | None = None
) -> dict[str, Any]:
    """The closing line of one bench: figures meeting their goal, and which do not. A bench
    that crashed (``error``) or printed no figure is never met."""
    met, missed, info, unchecked = 0, [], [], []
    figures = list(figures)
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
        "met": bool(figures) and not missed and not unchecked and error is None,
        "missed": missed,
        "unchecked": unchecked,
        "informational": info,
    }
    if error is not None:
        line["error"] = error
    return line
