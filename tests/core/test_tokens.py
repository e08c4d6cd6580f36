"""TOK-1..3: offline encodings, per-message caching, usage beats estimates, images."""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from core.records import NewMessage
from core.store import Store
from core.tokens import TokenCounter, get_encoding
from core.tokens.counter import estimate_prompt_tokens
from core.tokens.encodings import ENCODINGS, load_ranks
from tests.conftest import TRACES

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import os, socket
from core.tokens import get_encoding
for name in ("cl100k_base", "o200k_base"):
    enc = get_encoding(name)
    assert enc.decode(enc.encode("hello world")) == "hello world"
    print(name, len(enc.encode("The quick brown fox jumps over the lazy dog.")))
try:
    socket.create_connection(("openaipublic.blob.core.windows.net", 443), timeout=2)
    print("NETWORK-REACHABLE")
except OSError:
    print("no-network")
"""


def test_encodings_load_with_the_network_cut(tmp_path: Path) -> None:
    """Run in a new network namespace (no interfaces up) with an empty tiktoken cache."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"]).returncode != 0:
        pytest.skip("unshare -n not permitted here; the encodings still load from package data")
    env = {
        "PATH": "/usr/bin:/bin",
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"),
        "HOME": str(tmp_path),
    }
    res = subprocess.run(
        [unshare, "-n", sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.split()
    assert "no-network" in lines
    # token counts agree with the well-known values for this sentence
    assert res.stdout.splitlines()[:2] == ["cl100k_base 10", "o200k_base 10"]
    assert not (tmp_path / "empty-cache").exists(), "nothing was downloaded or cached"


def test_shipped_files_match_pinned_hashes() -> None:
    for spec in ENCODINGS.values():
        ranks = load_ranks(spec)
        assert len(ranks) > 100_000


def test_ranks_read_in_one_split_equal_a_line_by_line_read() -> None:
    """``load_ranks`` splits the whole (hash-checked) file at once: the same ranks as
    reading it a line at a time."""
    import base64

    from core.tokens.encodings import DATA

    for spec in ENCODINGS.values():
        expected: dict[bytes, int] = {}
        for line in (DATA / f"{spec.name}.tiktoken").read_bytes().splitlines():
            if line:
                token, rank = line.split()
                expected[base64.b64decode(token)] = int(rank)
        assert load_ranks(spec) == expected


def test_a_changed_ranks_file_is_refused_before_any_rank_is_read(tmp_path: Path) -> None:
    from core.tokens.encodings import DATA

    spec = ENCODINGS["cl100k_base"]
    raw = (DATA / f"{spec.name}.tiktoken").read_bytes()
    (tmp_path / f"{spec.name}.tiktoken").write_bytes(raw.replace(b" 0\n", b" 1\n", 1))
    with pytest.raises(RuntimeError, match="does not match the pinned"):
        load_ranks(spec, tmp_path)


def test_known_token_counts() -> None:
    enc = get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]
    assert get_encoding("o200k_base").encode("hello world") == [24912, 2375]


def test_counter_encodes_each_text_once() -> None:
    c = TokenCounter()
    texts = [f"message number {i} " * 20 for i in range(50)]
    first = [c.count_text(t) for t in texts]
    encoded = c.encoded_chars
    again = [c.count_text(t) for t in texts]
    assert first == again and c.encoded_chars == encoded
    assert first == [c.count_uncached(t) for t in texts]


def test_stored_counts_make_a_grown_history_cost_only_new_messages(store: Store) -> None:
    tr = store.create_trace("t")
    store.append(tr.id, [NewMessage("user", f"line {i} " * 30) for i in range(20)])
    with store.read() as r:
        before = sum(m.token_count for m in r.iter_main_path(tr.id))
    store.append(tr.id, [NewMessage("assistant", "one more")])
    with store.read() as r:
        after = [m.token_count for m in r.iter_main_path(tr.id)]
    assert (
        sum(after) - before
        == after[-1]
        == TokenCounter().count_message("assistant", "one more").tokens
    )


def test_reported_usage_wins_over_estimates() -> None:
    assert estimate_prompt_tokens(None, [5, 5], fallback_total=999) == 999
    assert estimate_prompt_tokens(1200, [30, 12], fallback_total=999) == 1242


def test_images_are_blocks_not_tokens() -> None:
    c = TokenCounter()
    parts = [
        {"type": "text", "text": "see"},
        {"type": "image", "ref": "img-1"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA" * 1000}},
    ]
    size = c.count_message("user", "see", parts=parts)
    assert size.image_blocks == 2
    assert size.tokens == c.count_message("user", "see").tokens


#: Pieces that stress tiktoken's pre-tokenizer at text boundaries: whitespace runs and line
#: ends (``\s+(?!\S)``, ``\s++$``), contractions, digits, punctuation with newlines, the
#: batch separator and other special tokens, fragments of them, non-ASCII, lone surrogates.
_PIECES = st.sampled_from(
    [
        " ",
        "  ",
        "\n",
        "\r\n",
        "\t",
        " \n ",
        "'s",
        "'ll",
        "a",
        "Word",
        "é",
        "中文",
        "🙂",
        "123",
        "4567",
        ".",
        "!?\n",
        "<|endoftext|>",
        "<|endoftext",
        "|>",
        "<|fim_prefix|>",
        "\ud800",
        "x",
    ]
)
_TEXTS = st.lists(st.lists(_PIECES, max_size=12).map("".join), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_batched_counts_equal_one_by_one(texts: list[str]) -> None:
    """``count_texts`` encodes many texts in one call; each count is the text's own."""
    c = TokenCounter()
    expected = [c.count_uncached(t) if t else 0 for t in texts]
    assert c.count_texts(texts) == expected
    assert c.count_texts(texts) == expected, "second time from the memo"


@settings(max_examples=100, deadline=None)
@given(_TEXTS, st.integers(0, 40))
def test_batched_counts_with_a_bounded_memo(texts: list[str], limit: int) -> None:
    c = TokenCounter(memo_max_chars=limit)
    assert c.count_texts(texts) == [c.count_uncached(t) if t else 0 for t in texts]
    assert all(len(t) <= limit for t in c._memo)


def test_batched_message_counts_equal_count_message() -> None:
    from core.records import ToolCall

    c = TokenCounter()
    msgs = [
        ("user", "hello there", (), None),
        ("assistant", "", (ToolCall("1", "read", '{"path": "a b"}'), ToolCall("2", "ls")), None),
        ("tool", "out\n\n", (), "read"),
        ("assistant", "x", ({"name": "f", "arguments": {"k": [1, 2]}},), None),
        ("user", "", (), ""),
    ]
    expected = [TokenCounter().count_message(r, t, calls, n).tokens for r, t, calls, n in msgs]
    assert c.count_messages(msgs) == expected


@pytest.mark.parametrize(
    "text",
    [
        "lorem ipsum dolor " * 20_000,
        "a" * 300_000,
        ("x<|endoftext|>y " * 10_000) + "\ud800 tail",
        "日本語のテキスト。" * 20_000,
    ],
    ids=["words", "one-piece", "special-and-surrogate", "cjk"],
)
def test_long_texts_count_exactly_without_a_token_list(text: str) -> None:
    """Texts past ``LONG_TEXT`` are counted through tiktoken's buffer (4 bytes a token,
    not a Python list): the count is ``encode``'s, alone or in a batch."""
    from core.tokens.counter import LONG_TEXT, token_count

    enc = get_encoding("cl100k_base")
    assert len(text) > LONG_TEXT
    expected = len(enc.encode(text, disallowed_special=()))
    assert token_count(enc, text) == expected
    assert TokenCounter().count_texts(["short one", text, "another"])[1] == expected


def test_a_thread_encodes_with_its_own_encoding_once_it_has_encoded_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``thread_encoding``: the shared encoding until the thread has encoded
    ``OWN_AFTER_CHARS`` with it, then one of the thread's own (the same tokens), kept for
    the thread; another thread starts over with the shared one and builds its own."""
    import threading

    from core.tokens import encodings

    monkeypatch.setattr(encodings, "OWN_AFTER_CHARS", 100)
    shared = get_encoding("cl100k_base")
    text = "Counting on a thread of its own: ünïcödé, 12345, and\n  spaces."
    seen: list[list[object]] = []

    def run() -> None:
        got = [encodings.thread_encoding("cl100k_base", 60) for _ in range(4)]
        seen.append([*got, got[-1].encode(text, disallowed_special=())])

    for _ in range(2):
        th = threading.Thread(target=run)
        th.start()
        th.join()
    for first, second, third, fourth, tokens in seen:
        assert first is shared and second is shared, "60 then 120 characters on the shared one"
        assert third is not shared and fourth is third, "then its own, kept"
        assert tokens == shared.encode(text, disallowed_special=())
    assert seen[0][2] is not seen[1][2], "each thread builds its own"


def test_the_thread_that_built_the_shared_encoding_keeps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It searched with the shared encoding first (``WARM_UP``), so it owns the regex pools
    and an encoding of its own would cost a build for nothing; another thread still gets
    one of its own after ``OWN_AFTER_CHARS``."""
    import threading

    from core.tokens import encodings

    monkeypatch.setattr(encodings, "_cache", {})
    monkeypatch.setattr(encodings, "OWN_AFTER_CHARS", 10)
    got: dict[str, list[object]] = {}

    def builder() -> None:
        shared = encodings.get_encoding("o200k_base")
        got["builder"] = [shared, *(encodings.thread_encoding("o200k_base", 99) for _ in range(3))]

    def other() -> None:
        got["other"] = [encodings.thread_encoding("o200k_base", 99) for _ in range(3)]

    for run in (builder, other):
        th = threading.Thread(target=run)
        th.start()
        th.join()
    shared = got["builder"][0]
    assert all(e is shared for e in got["builder"]), "the builder keeps the shared one"
    first, then, kept = got["other"]
    assert first is shared and then is not shared and kept is then


def test_counts_on_a_threads_own_encoding_equal_the_shared_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TOK-1 holds on the private encodings too: batched, long and alone texts (on a
    thread of its own: the one that built the shared encoding keeps using it)."""
    import threading

    from core.tokens import encodings

    monkeypatch.setattr(encodings, "OWN_AFTER_CHARS", 0)
    texts = ["short one", "lorem ipsum dolor " * 5_000, "x<|endoftext|>y", "\ud800 tail", "日本"]
    got: list[object] = []

    def run() -> None:
        got.append(TokenCounter(own_encoding=True).count_texts(texts))
        got.append(encodings._own.encodings["cl100k_base"])

    th = threading.Thread(target=run)
    th.start()
    th.join()
    assert got[0] == [TokenCounter().count_uncached(t) for t in texts]
    assert got[1] is not get_encoding("cl100k_base")


def test_run_lengths_from_the_token_buffer_skip_a_separator_across_two_tokens() -> None:
    """The separator's 4 bytes can occur spanning two tokens (a token's high byte and the
    next one's low bytes); only a match on a token's first byte is a separator."""
    from core.tokens.counter import _runs_in_buffer

    sep = 100257  # a1 87 01 00, little-endian
    tokens = [5, 0xA1000000, 0x05000187, sep, 7]
    raw = b"".join(n.to_bytes(4, sys.byteorder) for n in tokens)
    mark = sep.to_bytes(4, sys.byteorder)
    if sys.byteorder == "little":
        assert raw.find(mark) == 7, "the crafted tokens hold a match across two tokens"
    assert _runs_in_buffer(raw, mark, 2) == [3, 1]
    assert _runs_in_buffer(raw, mark, 3) is None, "one separator short"


@settings(max_examples=100, deadline=None)
@given(_TEXTS)
def test_run_lengths_equal_the_token_list(texts: list[str]) -> None:
    """The buffer's run lengths are the ones the token list gives (``encode``)."""
    from core.tokens.counter import BATCH_SEPARATOR, run_lengths

    enc = get_encoding("cl100k_base")
    plain = [t for t in texts if BATCH_SEPARATOR not in t] or [""]
    joined = BATCH_SEPARATOR.join(plain)
    tokens = enc.encode(joined, allowed_special={BATCH_SEPARATOR}, disallowed_special=())
    sep = enc.encode_single_token(BATCH_SEPARATOR)
    cuts = [-1, *(i for i, n in enumerate(tokens) if n == sep), len(tokens)]
    assert run_lengths(enc, joined, len(plain)) == [b - a - 1 for a, b in itertools.pairwise(cuts)]


# -- the pre-split patterns: tiktoken's pieces, faster ---------------------------------------


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _shared_texts() -> list[str]:
    """Every string of every JSON value in the shared traces, and each file's raw text."""
    texts: list[str] = []
    for path in sorted(TRACES.rglob("*")):
        if path.suffix not in (".json", ".jsonl", ".traj", ".md"):
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        texts.append(raw)
        lines = raw.splitlines() if path.suffix == ".jsonl" else [raw]
        for line in lines:
            with contextlib.suppress(ValueError):
                texts.append("\n".join(_strings(json.loads(line))))
    return texts


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_pre_split_pattern_gives_tiktokens_tokens_on_every_shared_trace(name: str) -> None:
    """``core/tokens/encodings.py:_look_ahead_last``: the grouped pattern (and cl100k's
    without possessive quantifiers) splits every text as tiktoken's published one does:
    the same tokens, not only the same count, on ~8 MB of real agent text."""
    ours, theirs = get_encoding(name), _published()[name]
    texts = _shared_texts()
    assert sum(map(len, texts)) > 5_000_000
    for text in texts:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


#: What the patterns treat apart: letters of each case and script, marks, digits, every
#: kind of blank and line end, contractions in both cases, punctuation, ``/`` (o200k).
_EDGES = st.sampled_from(
    [
        *[" ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u2028", "\u3000", "\x0b", "\x0c"],
        *["a", "Z", "é", "É", "ß", "ǅ", "ʰ", "中", "ا", "\u0301", "\u0903", "Ⅻ", "٣", "7", "12345"],
        *["'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'m", "'t", "'", "’s"],
        *[".", ",", "!", "?", "/", "//", "-", "_", "(", ")", "{", "}", '"', "#", "🙂", "\u200d"],
    ]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(_EDGES | st.characters(), max_size=40).map("".join))
def test_pre_split_pattern_gives_tiktokens_tokens_on_edge_texts(text: str) -> None:
    for name, theirs in _published().items():
        assert get_encoding(name).encode_ordinary(text) == theirs.encode_ordinary(text), name


_PUBLISHED: dict[str, tiktoken.Encoding] = {}


def _published() -> dict[str, tiktoken.Encoding]:
    """Each shipped encoding built with the pattern tiktoken itself publishes
    (``tiktoken_ext.openai_public``, its ranks read from our files, not the network)."""
    if not _PUBLISHED:
        from tiktoken_ext import openai_public

        for name, spec in ENCODINGS.items():
            ranks = load_ranks(spec)
            original = openai_public.load_tiktoken_bpe
            openai_public.load_tiktoken_bpe = lambda *_a, _r=ranks, **_k: _r  # type: ignore[assignment]
            try:
                definition = getattr(openai_public, name)()
            finally:
                openai_public.load_tiktoken_bpe = original
            assert definition["pat_str"] != spec.pat_str  # ours is the rewritten one
            _PUBLISHED[name] = tiktoken.Encoding(**definition)
    return _PUBLISHED
