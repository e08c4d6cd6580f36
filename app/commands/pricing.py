"""Price options shared by the commands that report cost (``--prices``, ``--set price.*``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.cost.table import PriceTable, load_table, parse_price_settings


def add_price_options(p: Any) -> None:
    p.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help='price overrides, JSON {"models": {MODEL: {input, output, cache_read, '
        "cache_write}}} in USD per million tokens (default: $CTXLENS_PRICES)",
    )
    p.add_argument(
        "--set",
        dest="price_set",
        action="append",
        default=[],
        metavar="price.MODEL.FIELD=USD",
        help="override one price (per million tokens), e.g. price.claude-opus-4-6.input=5",
    )


def price_table(args: argparse.Namespace) -> PriceTable:
    return load_table(args.prices, parse_price_settings(args.price_set))
