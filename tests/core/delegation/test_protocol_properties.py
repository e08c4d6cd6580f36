"""DEL-1..4 property tests: normalization, inheritance, grants, limits, rewind, packet."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.canonical import canonical_sha256
from core.delegation.anchor import normalize_anchor
from core.delegation.brief import (
    RefPin,
    brief_diff,
    inherited_constraints,
    match_approved,
    normalize_brief,
)
from core.delegation.config import DelegationLimits
from core.delegation.normal import DelegationError
from core.delegation.snapshots import (
    CatalogueEntry,
    RefGrant,
    active,
    catalogue,
    dropped_by_rewind,
    plan_grants,
)

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
word_lists = st.lists(words, max_size=6)
versions = st.text("0123456789abcdef", min_size=64, max_size=64)


def raw_brief(objective: str = "do it", **more: Any) -> dict[str, Any]:
    return {"objective": objective, "completion_criteria": ["done"], **more}


@given(root=word_lists, parent=word_lists, own=word_lists)
def test_inheritance_only_grows(root: list[str], parent: list[str], own: list[str]) -> None:
    anchor = normalize_anchor({"objective": "o", "completion_criteria": ["c"], "constraints": root})
    mid = normalize_brief(raw_brief(constraints=parent), inherited_constraints(anchor))
    child = normalize_brief(raw_brief(constraints=own), inherited_constraints(anchor, mid))
    assert set(anchor.constraints) <= set(mid.constraints) <= set(child.constraints)
    inherited = inherited_constraints(anchor, mid)
    assert child.constraints[: len(inherited)] == inherited  # kept first, in order
    assert len(set(child.constraints)) == len(child.constraints)


@given(own=word_lists, extra=word_lists)
def test_a_child_cannot_remove_an_inherited_constraint(own: list[str], extra: list[str]) -> None:
    inherited = ("never delete data", "cite windows")
    brief = normalize_brief(raw_brief(constraints=own + extra), inherited)
    assert set(inherited) <= set(brief.constraints)


@given(
    criteria=st.lists(words, min_size=1, max_size=5),
    outputs=word_lists,
    findings=word_lists,
    constraints=word_lists,
    pins=st.lists(
        st.tuples(st.sampled_from(["brief:root", "result:root/a"]), versions), max_size=4
    ),
)
def test_normalization_is_idempotent(
    criteria: list[str],
    outputs: list[str],
    findings: list[str],
    constraints: list[str],
    pins: list[tuple[str, str]],
) -> None:
    if not any(c.strip() for c in criteria):
        criteria = ["x"]
    raw = raw_brief(
        completion_criteria=criteria,
        expected_outputs=outputs,
        findings=findings,
        constraints=constraints,
        context_refs=[{"ref_id": r, "version": v} for r, v in pins],
    )
    once = normalize_brief(raw, ("inherited",))
    twice = normalize_brief(once.to_json(), ("inherited",))
    assert twice == once
    assert twice.version == once.version == canonical_sha256(once.to_json())


@given(pad=st.sampled_from(["", " ", "\t", "  \n"]), repeat=st.integers(1, 3))
def test_approved_brief_equals_call_brief_after_normalization(pad: str, repeat: int) -> None:
    approved = raw_brief(constraints=["a", "b", "c"], findings=["f"])
    # the call pads whitespace, repeats entries and repeats an inherited one: the same brief
    called = raw_brief(
        objective=f"{pad}do it{pad}",
        constraints=[f"{pad}{c}" for c in ["a", "b", "c"] * repeat] + ["a"],
        findings=["f", f"f{pad}"] * repeat,
    )
    inherited = ("a",)
    got = match_approved(approved, called, inherited)
    assert got == normalize_brief(approved, inherited)
    assert got.text == normalize_brief(called, inherited).text


def test_a_call_brief_that_differs_from_the_approved_one_is_refused() -> None:
    with pytest.raises(DelegationError, match="differs from the approved one in objective"):
        match_approved(raw_brief("one thing"), raw_brief("another thing"))
    with pytest.raises(DelegationError, match="in findings"):  # order is content
        match_approved(raw_brief(findings=["x", "y"]), raw_brief(findings=["y", "x"]))


@given(
    bad=st.sampled_from([math.nan, math.inf, -math.inf]),
    where=st.sampled_from(["findings", "expected_outputs", "extra"]),
)
def test_nan_and_infinity_are_refused(bad: float, where: str) -> None:
    raw = raw_brief(**{where: ["ok", bad]} if where != "extra" else {"context_refs": [bad]})
    with pytest.raises(DelegationError, match="NaN/Infinity"):
        normalize_brief(raw)
    with pytest.raises(DelegationError, match="NaN/Infinity"):
        normalize_anchor({"objective": "o", "completion_criteria": ["c"], "n": bad})


def test_missing_fields_and_sizes_are_named() -> None:
    with pytest.raises(DelegationError, match=r"brief\.objective: required"):
        normalize_brief({"objective": "  ", "completion_criteria": ["c"]})
    with pytest.raises(DelegationError, match=r"brief\.completion_criteria: at least one"):
        normalize_brief({"objective": "o"})
    with pytest.raises(DelegationError, match="brief: 16,"):
        normalize_brief(raw_brief(context="x" * 16_000))
    with pytest.raises(DelegationError, match="anchor: 4,"):
        normalize_anchor({"objective": "o" * 4_000, "completion_criteria": ["c"]})
    with pytest.raises(DelegationError, match=r"context_refs\[0\]\.version"):
        normalize_brief(raw_brief(context_refs=[{"ref_id": "r", "version": "latest"}]))


def test_a_root_without_an_anchor_is_refused() -> None:
    with pytest.raises(DelegationError, match="needs a RootTaskAnchor"):
        normalize_anchor(None)


entries = st.builds(
    CatalogueEntry,
    st.sampled_from([f"brief:root/c{n}" for n in range(12)]),
    versions,
    st.sampled_from(["task_brief", "reviewed_task_result"]),
    st.integers(0, 20_000),
)


@settings(max_examples=200)
@given(
    local=st.lists(entries, max_size=12),
    foreign=st.lists(entries, max_size=3),
    pick=st.lists(st.integers(0, 14), max_size=10),
)
def test_grants_only_from_the_local_catalogue_and_within_limits(
    local: list[CatalogueEntry], foreign: list[CatalogueEntry], pick: list[int]
) -> None:
    cat = {e.pin: e for e in local}
    pool = list(cat.values()) + [f for f in foreign if f.pin not in cat]
    pins = list(dict.fromkeys(pool[i].pin for i in pick if i < len(pool)))
    limits = DelegationLimits()
    try:
        grants = plan_grants(cat, pins, granter="p", holder="c", at_sequence=7, limits=limits)
    except DelegationError:
        outside = [p for p in pins if p not in cat]
        sizes = [cat[p].chars for p in pins if p in cat]
        assert (
            outside
            or len(pins) > limits.refs_per_trace
            or any(s > limits.snapshot_chars for s in sizes)
            or sum(sizes) > limits.ref_chars_total
        )
        return
    assert all(RefPin(g.ref_id, g.version) in cat for g in grants)
    assert len(grants) <= limits.refs_per_trace
    assert all(g.chars <= limits.snapshot_chars for g in grants)
    assert sum(g.chars for g in grants) <= limits.ref_chars_total
    assert {g.granted_at_sequence for g in grants} <= {7}


@given(
    st.lists(
        st.tuples(st.sampled_from(["p", "q"]), st.integers(0, 30), st.booleans()), max_size=20
    ),
    st.integers(0, 30),
)
def test_rewind_drops_exactly_the_later_grants(spec: list[tuple[str, int, bool]], to: int) -> None:
    grants = [
        RefGrant(
            "c",
            f"r{n}",
            "0" * 64,
            "task_brief",
            1,
            by,
            seq,
            dropped="revised" if gone else None,
            id=n,
        )
        for n, (by, seq, gone) in enumerate(spec)
    ]
    dropped = dropped_by_rewind(grants, "p", to)
    ids = {g.id for g in dropped}
    assert ids == {
        g.id for g in active(grants) if g.granted_by == "p" and g.granted_at_sequence > to
    }
    assert all(g.dropped == f"rewind to {to}" for g in dropped)
    kept = [g for g in active(grants) if g.id not in ids and g.granted_by == "p"]
    assert all(g.granted_at_sequence <= to for g in kept)


def test_a_level_that_does_not_regrant_cuts_off_its_descendants() -> None:
    """The grandchild's catalogue holds only what the child re-granted."""
    root_ref = CatalogueEntry("brief:root", "a" * 64, "task_brief", 10)
    result_ref = CatalogueEntry("result:root/s", "b" * 64, "reviewed_task_result", 10)
    child_held = plan_grants(
        {e.pin: e for e in (root_ref, result_ref)},
        [root_ref.pin, result_ref.pin],
        granter="R",
        holder="A",
        at_sequence=3,
    )
    grand = plan_grants(
        catalogue((), child_held), [result_ref.pin], granter="A", holder="G", at_sequence=2
    )
    with pytest.raises(DelegationError, match="not in this trace's local catalogue"):
        plan_grants(catalogue((), grand), [root_ref.pin], granter="G", holder="X", at_sequence=1)


def test_brief_diff_names_changed_fields() -> None:
    a = normalize_brief(raw_brief(findings=["x"]))
    b = normalize_brief(raw_brief(findings=["x", "y"], expected_outputs=["z"]))
    changes = {c.field: (c.removed, c.added) for c in brief_diff(a, b)}
    assert changes == {"findings": ((), ("y",)), "expected_outputs": ((), ("z",))}
