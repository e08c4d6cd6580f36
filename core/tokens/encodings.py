"""tiktoken encodings loaded from files shipped inside the package, never from the network.

The ``.tiktoken`` files in ``data/`` are byte-identical to OpenAI's published ones: their
sha256 is checked against the hashes tiktoken itself pins before any rank is used.
"""

from __future__ import annotations

import binascii
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

import tiktoken

DATA = Path(__file__).with_name("data")


@dataclass(frozen=True)
class EncodingSpec:
    name: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


def _look_ahead_last(plain: list[str], fancy: list[str]) -> str:
    """One pre-split pattern: the alternatives a regex without look-around can match, in
    one group, then the ones that need the look-ahead.

    tiktoken's patterns (``tiktoken_ext/openai_public.py``) are alternations whose next to
    last alternative, ``\\s+(?!\\S)``, needs a look-ahead, so fancy_regex runs the whole
    alternation in its backtracking VM, trying each alternative in turn at every piece. An
    ordered alternation is associative (``A|B|C`` matches as ``(?:A|B)|C``), so grouping
    the alternatives before it changes no piece, and the group goes to the ``regex`` crate
    as one automaton: cl100k encodes in half the time, o200k in four fifths (docs/
    decisions.md, "Pre-split patterns"). The pieces are tiktoken's own: checked token by
    token against its published patterns in ``tests/core/test_tokens.py``."""
    return "(?:" + "|".join(plain) + ")|" + "|".join(fancy)


_O200K_PAT = _look_ahead_last(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
    ],
    [r"""\s+(?!\S)""", r"""\s+"""],
)

_CL100K_PAT = _look_ahead_last(
    # tiktoken's cl100k pattern without its possessive quantifiers (``?+``, ``++``,
    # ``{1,3}+``, ``*+``), which fancy_regex runs in its VM too. None of them changes a
    # piece: nothing follows an alternative, and in each the greedy match either succeeds
    # as the possessive one does or backtracks only to fail as well (an optional
    # non-letter before letters: without it the letters would have to start on that
    # non-letter; ``[\r\n]*`` after punctuation matches anyway; ``\s+$``: ``$`` is the
    # end of the text only).
    [
        r"""'(?i:[sdmt]|ll|ve|re)""",
        r"""[^\r\n\p{L}\p{N}]?\p{L}+""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
        r"""\s+$""",
        r"""\s*[\r\n]""",
    ],
    [r"""\s+(?!\S)""", r"""\s"""],
)

ENCODINGS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        "cl100k_base",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": EncodingSpec(
        "o200k_base",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PAT,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

_cache: dict[str, tiktoken.Encoding] = {}
_ranks: dict[str, dict[bytes, int]] = {}
_lock = threading.Lock()
_lock_ranks = threading.Lock()

#: Characters a thread encodes with the shared encoding before ``thread_encoding`` builds
#: it one of its own. A build costs ~40-55 ms; a character the other thread encodes on the
#: shared encoding cost ~55 ns more with tiktoken's published patterns, not ~25: the owner
#: slows too (the two threads contend for the pools; counted import, both threads: 76 ms of
#: CPU against 58 on own encodings, hcount3), so the rent-or-buy break-even was ~0.9 M
#: characters. With ``_look_ahead_last``'s patterns the whole encode costs half as much and
#: the pools a quarter more per character (24 ms against 19 for 630 K): the break-even is
#: higher now, but a long import ends on own encodings either way.
OWN_AFTER_CHARS = 1 << 20
#: Searched once by the thread that builds the shared encoding, so that it is the first
#: to use (and owns) the regex pools: letters, a contraction, digits, punctuation, blanks.
WARM_UP = "Hello World's 123 !?\n  \n x"


class _ThreadEncodings(threading.local):
    def __init__(self) -> None:
        self.encodings: dict[str, tiktoken.Encoding] = {}
        self.shared_chars: dict[str, int] = {}
        self.owns_shared: set[str] = set()
        """The shared encodings this thread built (and searched first)."""


_own = _ThreadEncodings()


def load_ranks(spec: EncodingSpec, folder: Path = DATA) -> dict[bytes, int]:
    """Read and hash-check a shipped ``.tiktoken`` file (one ``base64 rank`` per line)."""
    path = folder / f"{spec.name}.tiktoken"
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec.sha256:
        raise RuntimeError(f"{path}: sha256 {digest} does not match the pinned {spec.sha256}")
    # The hash pins every byte, so the file is known well formed: one split of the whole
    # file instead of one per line (cl100k 58 → 41 ms, o200k 119 → 89: on the way to the
    # first count of a process, e.g. a one-session ``ctxlens import``).
    fields = raw.split()
    return {binascii.a2b_base64(t): int(r) for t, r in zip(fields[::2], fields[1::2], strict=True)}


def get_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """The named encoding, built once per process from the shipped data."""
    enc = _cache.get(name)
    if enc is not None:
        return enc
    with _lock:
        enc = _cache.get(name)
        if enc is None:
            enc = _build(name)
            enc.encode_ordinary(WARM_UP)
            _own.owns_shared.add(name)
            _cache[name] = enc
    return enc


def thread_encoding(name: str = "cl100k_base", chars: int = 0) -> tiktoken.Encoding:
    """The named encoding for this thread to encode ``chars`` more characters with: the
    process's own (``get_encoding``) until the thread has encoded ``OWN_AFTER_CHARS`` with
    it, then one built for this thread alone (from the ranks read once per process). The
    thread that built the shared encoding keeps it: it owns its pools already.

    tiktoken's pre-split regex (fancy_regex) keeps its scratch caches in pools that every
    copy of one encoding shares, and only the thread that searched with a pool first takes
    its fast path; any other thread locks and unlocks the pool for each search. That cost a
    counting thread a third more per character (64 ms against 48 for the same 635 K
    characters; a quarter, 24 against 19, with ``_look_ahead_last``'s patterns), and the
    owner slows too while another thread shares its pools (counted import, both threads:
    76 ms of CPU against 58 on own encodings, hcount3); an encoding of its own makes the
    thread the owner of its pools. Building one costs
    ~45 ms and ~22 MB while the thread lives, hence the wait: by ``OWN_AFTER_CHARS`` the
    locking has cost about a build, so a thread never pays more than twice the better of
    the two choices, and a small import builds nothing.
    """
    mine = _own
    enc = mine.encodings.get(name)
    if enc is not None:
        return enc
    if name in mine.owns_shared:
        return get_encoding(name)
    done = mine.shared_chars.get(name, 0)
    if done < OWN_AFTER_CHARS:
        mine.shared_chars[name] = done + chars
        return get_encoding(name)
    enc = mine.encodings[name] = _build(name)
    return enc


def _build(name: str) -> tiktoken.Encoding:
    try:
        spec = ENCODINGS[name]
    except KeyError:
        known = ", ".join(ENCODINGS)
        raise ValueError(f"unknown encoding {name!r} (known: {known})") from None
    with _lock_ranks:
        ranks = _ranks.get(name)
        if ranks is None:
            ranks = _ranks[name] = load_ranks(spec)
    return tiktoken.Encoding(
        name=spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=spec.special_tokens,
    )


def encoding_for_model(model: str) -> str:
    """The encoding a model family uses (o200k for the 4o/o-series/gpt-5, else cl100k)."""
    m = model.lower()
    if any(m.startswith(p) for p in ("gpt-4o", "o1", "o3", "o4", "gpt-4.1", "gpt-5", "chatgpt-4o")):
        return "o200k_base"
    return "cl100k_base"
