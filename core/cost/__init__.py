"""Cost of model calls from recorded usage and a shipped, dated price table (issue 21).

``table.py`` loads the price table (shipped JSON, user overrides, ``--set price.*``);
``usage.py`` reads the token counts of any recorded usage shape; ``compute.py`` prices calls
and sums them per trace, agent, goal and model. An unknown model is "no price", never a guess.
"""

from core.cost.compute import CallCost, CostSummary, call_cost, summarize
from core.cost.table import Price, PriceTable, load_table
from core.cost.usage import TokenUsage, token_usage

__all__ = [
    "CallCost",
    "CostSummary",
    "Price",
    "PriceTable",
    "TokenUsage",
    "call_cost",
    "load_table",
    "summarize",
    "token_usage",
]
