"""The price table: shipped rows (``data/prices.json``), user overrides, exact lookups.

Model names are matched exactly after removing what only says where the model ran: a
provider prefix (``openai/``, ``anthropic.``, ``litellm_proxy/``), a date or version suffix
(``-20250929``, ``-2024-08-06``, ``@20240620``, ``-v1:0``). No family or prefix guessing:
``claude-opus-4-6`` is not ``claude-opus-4``; a model the table does not name has no price.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.errors import InvalidInputError

FIELDS = ("input", "output", "cache_read", "cache_write")
"""Prices per million tokens; ``None`` where the provider publishes none."""

SHIPPED = Path(__file__).with_name("data") / "prices.json"
"""The price table shipped with ctxlens (read as a file: ``importlib.resources`` costs
``ctxlens traces`` a tenth of its start-up)."""
_DATE_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-v\d+(:\d+)?|-latest)$")


@dataclass(frozen=True, slots=True)
class Price:
    model: str
    input: float
    output: float
    cache_read: float | None
    cache_write: float | None
    date: str
    source: str


@dataclass(frozen=True)
class PriceTable:
    table_date: str
    prices: Mapping[str, Price]
    """Normalized name or alias → price."""

    def lookup(self, model: str | None) -> Price | None:
        if not model:
            return None
        return self.prices.get(normalize_model(model))

    def with_overrides(self, overrides: Mapping[str, Mapping[str, Any]]) -> PriceTable:
        """A table where ``{model: {field: value}}`` replaces or adds rows."""
        prices = dict(self.prices)
        for model, fields in overrides.items():
            key = normalize_model(model)
            base = prices.get(key) or Price(key, 0.0, 0.0, None, None, "", "")
            # the shipped row's date does not date the price given here (unless it says)
            changed = {"date": "", **_checked(model, fields)}
            prices[key] = replace(base, **changed, source="override")
        return PriceTable(self.table_date, prices)


def normalize_model(model: str) -> str:
    """``openai/gpt-4o-2024-08-06`` → ``gpt-4o``; ``anthropic.claude-3-5-haiku-v1:0`` → …"""
    name = model.strip().lower()
    name = name.rsplit("/", 1)[-1]
    for prefix in ("anthropic.", "us.anthropic.", "eu.anthropic."):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    while True:
        stripped = _DATE_SUFFIX.sub("", name)
        if stripped == name:
            return name
        name = stripped


def load_table(
    user_file: Path | None = None, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> PriceTable:
    """Shipped table, then ``user_file`` (default ``$CTXLENS_PRICES``), then ``overrides``."""
    raw = json.loads(SHIPPED.read_text(encoding="utf-8"))
    table = PriceTable(table_date(raw), _index(raw["models"]))
    path = user_file or _env_file()
    if path is not None:
        table = table.with_overrides(_read_user_file(path))
    return table.with_overrides(overrides or {})


def table_date(raw: Mapping[str, Any]) -> str:
    """The table's date: its own, or its newest row's when a row is newer (a row added
    later, ``claude-opus-4-6`` of 2026-02-05, must not be listed under an older date)."""
    dates = [str(row["date"]) for row in raw["models"]]
    return max([str(raw["table_date"]), *dates])


def parse_price_settings(pairs: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``price.MODEL.FIELD=VALUE`` pairs (``--set``) → overrides; other keys are refused."""
    out: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        head, _, rest = key.partition(".")
        model, _, field = rest.rpartition(".")
        if not sep or head != "price" or not model or field not in FIELDS:
            raise InvalidInputError(
                f"--set {pair!r}: expected price.MODEL.FIELD=VALUE with FIELD one of "
                f"{', '.join(FIELDS)}"
            )
        out.setdefault(model, {})[field] = value
    return out


def _price(row: Mapping[str, Any]) -> Price:
    return Price(
        model=row["model"],
        input=float(row["input"]),
        output=float(row["output"]),
        cache_read=_opt(row.get("cache_read")),
        cache_write=_opt(row.get("cache_write")),
        date=str(row["date"]),
        source=str(row["source"]),
    )


def _index(rows: Iterable[Mapping[str, Any]]) -> dict[str, Price]:
    out: dict[str, Price] = {}
    for row in rows:
        price = _price(row)
        for name in (row["model"], *row.get("aliases", ())):
            out[normalize_model(name)] = price
    return out


def _checked(model: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name not in (*FIELDS, "date"):
            raise InvalidInputError(f"price of {model!r}: unknown field {name!r}")
        if name == "date":
            out[name] = str(value)
            continue
        try:
            number = None if value is None else float(value)
        except (TypeError, ValueError):
            raise InvalidInputError(f"price of {model!r}: {name} must be a number") from None
        if number is not None and not number >= 0:
            raise InvalidInputError(f"price of {model!r}: {name} must be ≥ 0")
        out[name] = number
    return out


def _read_user_file(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read the price file ({exc.strerror})") from None
    except ValueError as exc:
        raise InvalidInputError(f"{path}: not valid JSON ({exc})") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict) or not all(isinstance(v, dict) for v in models.values()):
        raise InvalidInputError(f'{path}: expected {{"models": {{MODEL: {{FIELD: price}}}}}}')
    return models


def _env_file() -> Path | None:
    value = os.environ.get("CTXLENS_PRICES")
    return Path(value) if value else None


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)
