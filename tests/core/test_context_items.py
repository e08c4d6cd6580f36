"""Context item lists are stored run-length encoded and decode to exactly what was stored."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.records import ContextItem, ItemsEncoder, decode_items, encode_items

ITEM = st.one_of(
    st.builds(ContextItem, st.integers(0, 60)),
    st.builds(ContextItem, st.integers(0, 60), st.text(max_size=3)),
    st.builds(ContextItem, st.integers(0, 60), st.none(), st.none(), st.just("summary")),
    st.builds(ContextItem, st.none(), st.text(max_size=3), st.just("user"), st.just("summary")),
)


@given(st.lists(ITEM, max_size=40))
def test_encode_decode_round_trip(items: list[ContextItem]) -> None:
    assert decode_items(encode_items(items)) == tuple(items)


def test_runs_become_ranges() -> None:
    items = [ContextItem(s) for s in range(1000)] + [ContextItem(2000)]
    assert encode_items(items) == [{"range": [0, 999]}, 2000]


@given(st.lists(st.lists(ITEM, max_size=12), max_size=6))
def test_a_growing_context_encodes_as_the_whole(pieces: list[list[ContextItem]]) -> None:
    """Each call of an imported agent feeds what its context gained; every snapshot is the
    encoding of everything fed so far, and an earlier snapshot is not changed later."""
    enc = ItemsEncoder()
    fed: list[ContextItem] = []
    snapshots = []
    for piece in pieces:
        enc.feed(piece)
        fed.extend(piece)
        snapshots.append((enc.encoded(), encode_items(fed)))
    for got, want in snapshots:
        assert got == want
