"""Issue 21: the price table's lookups and the usage shapes of every recorded format."""

from __future__ import annotations

import pytest

from core.cost import call_cost, load_table, token_usage
from core.cost.table import normalize_model


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("litellm_proxy/claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("openai/gpt-4o", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4.1-2025-04-14", "gpt-4.1"),
        ("gpt-5-codex", "gpt-5"),
        ("anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku"),
        ("claude-3-5-sonnet@20240620", "claude-3-5-sonnet"),
    ],
)
def test_recorded_model_names_find_their_row(name: str, model: str) -> None:
    price = load_table().lookup(name)
    assert price is not None and price.model == model and price.date and price.source


@pytest.mark.parametrize("name", ["claude-opus-4-99", "gpt-5.5", "sonnet", "scripted", "", None])
def test_models_the_table_does_not_name_have_no_price(name: str | None) -> None:
    assert load_table().lookup(name) is None
    cost = call_cost(None, {"prompt_tokens": 10, "completion_tokens": 1}, name or "")
    assert cost.usd is None and cost.reason.startswith("no price")


def test_normalize_keeps_what_names_the_model() -> None:
    assert normalize_model("GPT-4o-Mini") == "gpt-4o-mini"
    assert normalize_model("o3-mini") == "o3-mini"


@pytest.mark.parametrize(
    ("usage", "prompt", "cached", "creation", "completion"),
    [
        ({"prompt_tokens": 100, "completion_tokens": 5,
          "prompt_tokens_details": {"cached_tokens": 60}}, 100, 60, 0, 5),
        ({"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 60,
          "cache_creation_tokens": 30, "raw": {"input_tokens": 10}}, 100, 60, 30, 5),
        ({"input_tokens": 10, "cache_read_input_tokens": 60,
          "cache_creation_input_tokens": 30, "output_tokens": 5}, 100, 60, 30, 5),
        ({"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 5,
          "reasoning_output_tokens": 2}, 100, 60, 0, 5),
        ({"input_tokens": 10, "input_tokens_cache_read": 60, "input_tokens_cache_write": 30,
          "output_tokens": 5}, 100, 60, 30, 5),
    ],
)  # fmt: skip
def test_usage_shapes(
    usage: dict[str, object], prompt: int, cached: int, creation: int, completion: int
) -> None:
    u = token_usage(usage)
    assert u is not None
    assert (u.prompt, u.cached, u.cache_creation, u.completion) == (
        prompt, cached, creation, completion,
    )  # fmt: skip


def test_anthropic_call_priced_with_cache_read_and_write() -> None:
    price = load_table().lookup("claude-sonnet-4-20250514")
    usage = {"input_tokens": 1_000_000, "cache_read_input_tokens": 1_000_000,
             "cache_creation_input_tokens": 1_000_000, "output_tokens": 1_000_000}  # fmt: skip
    cost = call_cost(price, usage)
    assert cost.usd == pytest.approx(3.0 + 0.3 + 3.75 + 15.0)
    assert cost.saved_usd == pytest.approx(3.0 - 0.3)


def test_a_cache_read_without_a_cache_price_is_not_guessed() -> None:
    price = load_table().lookup("gemini-2.5-flash")
    assert price is not None and price.cache_read is None
    cost = call_cost(price, {"prompt_tokens": 10, "completion_tokens": 1, "cached_tokens": 5})
    assert cost.usd is None and "cache-read" in cost.reason
    assert call_cost(price, {"prompt_tokens": 10, "completion_tokens": 1}).usd is not None


def test_no_usage_is_unpriced() -> None:
    cost = call_cost(load_table().lookup("gpt-4o"), None, "gpt-4o")
    assert cost.usd is None and cost.reason == "no usage recorded"
