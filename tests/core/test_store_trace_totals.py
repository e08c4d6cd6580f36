"""Issue 21: per-trace usage sums (``trace_totals``) on both backends: they price exactly as
a pass over every call does, follow appended calls, and serve search bounds."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from sqlalchemy import func, select

from core.cost.compute import totals_by_trace
from core.cost.stored import call_usages
from core.cost.table import load_table
from core.cost.totals import catch_up, trace_totals
from core.errors import StoreOpenError
from core.records import LlmCall, NewMessage
from core.search.engine import search
from core.search.query import parse
from core.store import Store
from core.store import schema as t

OPENAI = {"prompt_tokens": 120_000, "completion_tokens": 800,
          "prompt_tokens_details": {"cached_tokens": 20_000}}  # fmt: skip
ANTHROPIC = {"input_tokens": 900, "cache_read_input_tokens": 50_000,
             "cache_creation_input_tokens": 4_000, "output_tokens": 1_200}  # fmt: skip


def _call(store: Store, trace_id: str, model: str, usage: Any, agent: str = "main") -> None:
    with store.write() as w:
        index = w.next_call_index(trace_id)
        w.record_llm_call(LlmCall(trace_id, index, (), "0" * 64, model, 0, 1, usage,
                                  agent_name=agent))  # fmt: skip


def _traces(store: Store) -> list[str]:
    ids = []
    for title in ("one", "two", "three"):
        tr = store.create_trace(title)
        store.append(tr.id, [NewMessage("user", f"task {title}")])
        ids.append(tr.id)
    _call(store, ids[0], "gpt-4o", OPENAI)
    _call(store, ids[0], "gpt-4o", OPENAI, agent="sub-1")
    _call(store, ids[0], "claude-sonnet-4", ANTHROPIC)
    _call(store, ids[1], "claude-sonnet-4", ANTHROPIC)
    _call(store, ids[1], "gpt-4o", None)  # no usage: unpriced
    _call(store, ids[1], "my-model", OPENAI)  # no price
    _call(store, ids[2], "gpt-4o-mini", {"prompt_tokens": 10, "completion_tokens": 5})
    return ids


def _full_pass(store: Store) -> tuple[dict[str, Any], dict[str, int]]:
    table = load_table()
    with store.read() as r:
        costs, tokens = totals_by_trace(call_usages(r), table)
    return {k: v.to_json() for k, v in costs.items()}, tokens


def _sums(store: Store) -> tuple[dict[str, Any], dict[str, int]]:
    costs, tokens = trace_totals(store, load_table())
    return {k: v.to_json() for k, v in costs.items()}, tokens


def _close(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for tid in a:
        x, y = a[tid], b[tid]
        assert {k: v for k, v in x.items() if k not in ("usd", "saved_usd", "by_agent",
                "by_model", "by_goal")} == {k: v for k, v in y.items() if k not in (
                "usd", "saved_usd", "by_agent", "by_model", "by_goal")}  # fmt: skip
        assert (x["usd"] is None) == (y["usd"] is None)
        if x["usd"] is not None:
            assert abs(x["usd"] - y["usd"]) < 1e-9 and abs(x["saved_usd"] - y["saved_usd"]) < 1e-9


def test_sums_price_as_a_pass_over_every_call(store: Store) -> None:
    ids = _traces(store)
    costs, tokens = _sums(store)
    full_costs, full_tokens = _full_pass(store)
    _close(costs, full_costs)
    assert tokens == full_tokens
    assert costs[ids[1]]["unpriced_calls"] == 2 and costs[ids[1]]["priced_calls"] == 1
    assert costs[ids[1]]["unpriced_models"] == ["gpt-4o", "my-model"]
    assert set(costs[ids[0]]["by_agent"]) == {"main", "sub-1"}


def test_appended_calls_are_folded_in_and_nothing_twice(store: Store) -> None:
    ids = _traces(store)
    _sums(store)
    assert catch_up(store) == 0  # up to date: nothing to fold
    _call(store, ids[2], "gpt-4o", OPENAI)
    _call(store, ids[2], "gpt-4o-mini", {"prompt_tokens": 10, "completion_tokens": 5})
    assert catch_up(store) == 1
    assert catch_up(store) == 0
    costs, tokens = _sums(store)
    full_costs, full_tokens = _full_pass(store)
    _close(costs, full_costs)
    assert tokens == full_tokens
    assert costs[ids[2]]["priced_calls"] == 3
    with store.read() as r:
        summed = r.conn.execute(select(func.sum(t.trace_totals.c.calls))).scalar()
        calls = r.conn.execute(select(func.count()).select_from(t.llm_calls)).scalar()
    assert summed == calls == 9


def test_a_call_below_the_summed_index_is_summed_again_from_scratch(store: Store) -> None:
    ids = _traces(store)
    with store.write() as w:  # indexes 0 and 5: 5 is summed first, then 3 arrives
        w.record_llm_call(LlmCall(ids[2], 5, (), "0" * 64, "gpt-4o", 0, 1, OPENAI))
    _sums(store)
    with store.write() as w:
        w.record_llm_call(LlmCall(ids[2], 3, (), "0" * 64, "gpt-4o", 0, 1, OPENAI))
    costs, tokens = _sums(store)
    assert costs[ids[2]]["priced_calls"] == 3
    assert tokens == _full_pass(store)[1]


def test_search_bounds_read_the_sums(store: Store) -> None:
    ids = _traces(store)

    def found(text: str) -> set[str]:
        return {h.trace_id for h in search(store, parse(text)).hits}

    costs, tokens = _sums(store)
    usd = {tid: c["usd"] for tid, c in costs.items()}
    middle = sorted(u for u in usd.values() if u is not None)[1]
    assert found(f"cost>{middle}") == {tid for tid, u in usd.items() if u and u > middle}
    assert found(f"tokens>{tokens[ids[2]]}") == {ids[0], ids[1]}
    _call(store, ids[2], "gpt-4o", {"prompt_tokens": 10**7, "completion_tokens": 0})
    assert ids[2] in found("cost>20")  # the appended call counts at once


def test_cli_search_bounds_and_traces_costs_agree_with_the_sums(
    store: Store, store_url: str, cli: Any
) -> None:
    ids = _traces(store)
    costs, _ = _sums(store)
    code, out = cli("--db", store_url, "search", "cost>1", "--json")
    assert code == 0
    hits = {h["trace_id"] for h in json.loads(out)["hits"]}
    assert hits == {tid for tid, c in costs.items() if c["usd"] and c["usd"] > 1}
    code, out = cli("--db", store_url, "traces", "--json")
    assert code == 0
    listed = {row["id"]: row["cost"] for row in json.loads(out)}
    for tid in ids:
        assert listed[tid]["priced_calls"] == costs[tid]["priced_calls"]
        assert listed[tid]["unpriced_calls"] == costs[tid]["unpriced_calls"]
        if costs[tid]["usd"] is not None:
            assert abs(listed[tid]["usd"] - costs[tid]["usd"]) < 1e-6


def test_a_store_this_user_may_only_read_is_priced_from_its_calls(
    pg_cluster: Any, pg_url: str
) -> None:
    import psycopg

    from tests.servers.postgres import SUPERUSER

    with Store.open(pg_url) as owner:
        ids = _traces(owner)
        expected = _full_pass(owner)
    role = f"reader{os.getpid()}"
    with psycopg.connect(host="127.0.0.1", port=pg_cluster.port, user=SUPERUSER,
                         dbname=pg_url.rsplit("/", 1)[1], autocommit=True) as admin:  # fmt: skip
        admin.execute(f"DROP ROLE IF EXISTS {role}")  # type: ignore[arg-type]
        admin.execute(f"CREATE ROLE {role} LOGIN")  # type: ignore[arg-type]
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")  # type: ignore[arg-type]
    with Store.open(pg_url.replace(f"{SUPERUSER}@", f"{role}@")) as reader:
        with pytest.raises(StoreOpenError, match="write failed"):
            catch_up(reader)  # the sums cannot be written here
        costs, tokens = _sums(reader)
        _close(costs, expected[0])
        assert tokens == expected[1]
        usd = {tid: c["usd"] or 0 for tid, c in costs.items()}
        hits = {h.trace_id for h in search(reader, parse("cost>0.0001")).hits}
        assert hits == {tid for tid in ids if usd[tid] > 0.0001}
