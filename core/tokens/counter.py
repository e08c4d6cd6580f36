"""Counting tokens of texts and chat messages, each distinct text encoded once.

A grown history costs only its new messages (TOK-1): the store keeps each message's count in
its row, and this counter memoizes texts it has seen (overridden contents, placeholders).
Provider-reported usage beats any estimate (TOK-2): see ``estimate_prompt_tokens``.
Images are budgeted as image blocks, not text tokens (TOK-3).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.tokens.encodings import get_encoding, thread_encoding

#: Per-message framing tokens of the chat format (role markers), as OpenAI documents.
MESSAGE_OVERHEAD = 3
#: Tokens that prime the assistant's reply at the end of every request.
REPLY_PRIMING = 3
#: Joins the texts of one ``count_texts`` call (a special token of every shipped encoding).
BATCH_SEPARATOR = "<|endoftext|>"
#: Tokens per tool call beyond its name and arguments (type/function wrapper).
TOOL_CALL_OVERHEAD = 8
#: Encodings whose pre-tokenizer (``encodings.py``) never puts a newline in one piece with
#: a following character that is neither whitespace nor ``/`` (o200k's punctuation run
#: takes ``[\r\n/]*``), and has no lookbehind: a text splits into the same pieces on both
#: sides of such a join, and BPE never merges across pieces, so counts add up there.
_ADDITIVE_AFTER_NEWLINE = frozenset({"cl100k_base", "o200k_base"})


#: What ``count_messages`` needs of a message: role, content, tool calls, name.
MessageTexts = tuple[str, str, Iterable[Any], str | None]


@dataclass(frozen=True, slots=True)
class MessageSize:
    tokens: int
    image_blocks: int = 0


class TokenCounter:
    """Memoizing token counter for one encoding. Thread-safe; bounded memory."""

    def __init__(
        self,
        encoding: str = "cl100k_base",
        max_entries: int = 200_000,
        memo_max_chars: int | None = None,
        own_encoding: bool = False,
    ) -> None:
        self.encoding_name = encoding
        self.own_encoding = own_encoding
        """Encode with each thread's own encoding (``thread_encoding``): for counters used
        on long-lived counting threads, where it makes tiktoken a third cheaper."""
        self._max = max_entries
        self.memo_max_chars = memo_max_chars
        """Longer texts are counted without entering the memo (``None``: no limit)."""
        self._memo: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded_chars = 0
        """Characters actually encoded (not served from the memo): a cost meter for tests."""

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if self.memo_max_chars is not None and len(text) > self.memo_max_chars:
            n = self.count_uncached(text)
            with self._lock:
                self.encoded_chars += len(text)
            return n
        with self._lock:
            hit = self._memo.get(text)
            if hit is not None:
                self._memo.move_to_end(text)
                return hit
        n = self.count_uncached(text)
        with self._lock:
            self.encoded_chars += len(text)
            self._memo[text] = n
            if len(self._memo) > self._max:
                self._memo.popitem(last=False)
        return n

    def count_joined(self, parts: Sequence[str]) -> int:
        """``count_text("".join(parts))`` from the memoized counts of the parts, when every
        join is a piece boundary (``piece_boundary``); else the joined text is counted. The
        joined text's count enters the memo either way, so counting it next is a hit.

        For a text made of a part that repeats across calls and parts that change (the
        summary block: its body stays while the span and the narrative move), a call then
        encodes only what changed."""
        text = "".join(parts)
        if self.encoding_name not in _ADDITIVE_AFTER_NEWLINE or not all(
            piece_boundary(a, b) for a, b in itertools.pairwise(parts)
        ):
            return self.count_text(text)
        n = sum(self.count_text(p) for p in parts)
        if self.memo_max_chars is None or len(text) <= self.memo_max_chars:
            with self._lock:
                self._memo[text] = n
                if len(self._memo) > self._max:
                    self._memo.popitem(last=False)
        return n

    def count_uncached(self, text: str) -> int:
        """Encode without the memo (the baseline a cache is measured against)."""
        return token_count(self._encoding(len(text)), text)

    def _encoding(self, chars: int) -> Any:
        """The encoding to encode ``chars`` characters with on this thread."""
        if self.own_encoding:
            return thread_encoding(self.encoding_name, chars)
        return get_encoding(self.encoding_name)

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        """``count_text`` of each text, encoding all texts not in the memo in one call.

        The texts are joined by a special token that only this call allows: tiktoken
        encodes the runs between allowed special tokens independently (its regex starts
        afresh on each run), so each run's token count is exactly the text's own. Texts
        that contain the separator themselves are encoded alone. One call instead of one per
        text matters on a worker thread, where each call gives up and retakes the GIL.
        """
        out = [0] * len(texts)
        todo: dict[str, list[int]] = {}
        limit = self.memo_max_chars
        with self._lock:
            memo = self._memo
            for i, text in enumerate(texts):
                if not text:
                    continue
                hit = memo.get(text) if limit is None or len(text) <= limit else None
                if hit is not None:
                    memo.move_to_end(text)
                    out[i] = hit
                else:
                    todo.setdefault(text, []).append(i)
        if not todo:
            return out
        counts = self._encode_many(list(todo))
        with self._lock:
            for (text, slots), n in zip(todo.items(), counts, strict=True):
                self.encoded_chars += len(text)
                for i in slots:
                    out[i] = n
                if limit is None or len(text) <= limit:
                    self._memo[text] = n
            while len(self._memo) > self._max:
                self._memo.popitem(last=False)
        return out

    def _encode_many(self, texts: list[str]) -> list[int]:
        alone = [i for i, t in enumerate(texts) if len(t) > LONG_TEXT or BATCH_SEPARATOR in t]
        specials = get_encoding(self.encoding_name).special_tokens_set
        if BATCH_SEPARATOR not in specials or len(texts) - len(alone) < 2:
            return [self.count_uncached(t) for t in texts]
        skip = set(alone)
        joined = BATCH_SEPARATOR.join(t for i, t in enumerate(texts) if i not in skip)
        enc = self._encoding(len(joined))
        it = iter(run_lengths(enc, joined, len(texts) - len(alone)))
        return [self.count_uncached(t) if i in skip else next(it) for i, t in enumerate(texts)]

    def count_messages(self, messages: Sequence[MessageTexts]) -> list[int]:
        """``count_message(...).tokens`` of each ``(role, content, tool_calls, name)``,
        with all their texts counted by one ``count_texts`` call."""
        texts: list[str] = []
        for _role, content, tool_calls, name in messages:
            texts.append(content)
            if name:
                texts.append(name)
            for call in tool_calls:
                cname, cargs = _call_texts(call)
                texts.append(cname)
                texts.append(cargs)
        counts = iter(self.count_texts(texts))
        out: list[int] = []
        for _role, _content, tool_calls, name in messages:
            tokens = MESSAGE_OVERHEAD + next(counts)
            if name:
                tokens += next(counts) + 1
            for _call in tool_calls:
                tokens += TOOL_CALL_OVERHEAD + next(counts) + next(counts)
            out.append(tokens)
        return out

    def count_message(
        self,
        role: str,  # noqa: ARG002 (the same call as core.tokens.count_message)
        content: str,
        tool_calls: Iterable[Any] = (),
        name: str | None = None,
        parts: Sequence[Any] | None = None,
    ) -> MessageSize:
        tokens = MESSAGE_OVERHEAD + self.count_text(content)
        if name:
            tokens += self.count_text(name) + 1
        for call in tool_calls:
            cname, cargs = _call_texts(call)
            tokens += TOOL_CALL_OVERHEAD + self.count_text(cname) + self.count_text(cargs)
        images = 0
        if parts:
            images = sum(1 for p in parts if isinstance(p, dict) and _is_image(p))
        return MessageSize(tokens, images)

    def count_openai(self, messages: Sequence[dict[str, Any]]) -> int:
        """Tokens of a whole request in OpenAI chat shape (messages only, no tool schemas)."""
        total = REPLY_PRIMING
        for m in messages:
            content = m.get("content") or ""
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            calls = [
                {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                for c in m.get("tool_calls") or ()
            ]
            total += self.count_message(m.get("role", ""), content, calls, m.get("name")).tokens
        return total


#: Texts longer than this are counted alone, through tiktoken's token buffer.
LONG_TEXT = 1 << 16


def token_count(enc: Any, text: str) -> int:
    """``len(enc.encode(text, disallowed_special=()))`` without the list of tokens.

    A list costs ~36 bytes a token (a 45 MB text: ~300 MB); tiktoken's own buffer, which its
    ``encode_to_numpy`` reads, costs 4. Short texts (and a tiktoken without the buffer) use
    ``encode``: the same count either way.
    """
    to_buffer = getattr(getattr(enc, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
    if to_buffer is not None and len(text) > LONG_TEXT:
        try:
            return memoryview(to_buffer(text, set())).nbytes // 4
        except UnicodeEncodeError:
            pass  # lone surrogates: ``encode`` repairs them first
    return len(enc.encode(text, disallowed_special=()))


def run_lengths(enc: Any, joined: str, runs: int) -> list[int]:
    """Tokens of each of the ``runs`` texts that ``joined`` holds between ``BATCH_SEPARATOR``s.

    Read from tiktoken's token buffer: the separators are found by a bytes search, where a
    list of the tokens would cost a Python int a token, built with the GIL held, which on
    a counting thread is time the importing thread waits (``CountsAhead``). ``encode``'s
    list where there is no buffer or the text has lone surrogates (``encode`` repairs them).
    """
    sep_id = enc.encode_single_token(BATCH_SEPARATOR)
    to_buffer = getattr(getattr(enc, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
    if to_buffer is not None:
        try:
            raw = memoryview(to_buffer(joined, {BATCH_SEPARATOR})).tobytes()
        except UnicodeEncodeError:
            pass  # lone surrogates
        else:
            found = _runs_in_buffer(raw, sep_id.to_bytes(4, sys.byteorder), runs)
            if found is not None:
                return found
    tokens = enc.encode(joined, allowed_special={BATCH_SEPARATOR}, disallowed_special=())
    out: list[int] = []
    start = 0
    for _ in range(runs - 1):
        end = tokens.index(sep_id, start)
        out.append(end - start)
        start = end + 1
    out.append(len(tokens) - start)
    return out


def _runs_in_buffer(raw: bytes, mark: bytes, runs: int) -> list[int] | None:
    """Run lengths between the 4-byte tokens ``mark`` in ``raw`` (native u32 tokens); a
    match not on a token's first byte spans two tokens and is skipped. ``None`` if fewer
    than ``runs - 1`` separators are there."""
    out: list[int] = []
    start = pos = 0
    while len(out) < runs - 1:
        pos = raw.find(mark, pos)
        if pos < 0:
            return None
        if pos % 4:
            pos += 1
            continue
        out.append((pos - start) // 4)
        start = pos = pos + 4
    out.append((len(raw) - start) // 4)
    return out


def _call_texts(call: Any) -> tuple[str, str]:
    """A tool call's name and arguments text (a ``ToolCall`` or an OpenAI-style dict)."""
    cname = call.name if hasattr(call, "name") else call["name"]
    cargs = call.arguments if hasattr(call, "arguments") else call.get("arguments", "")
    if not isinstance(cargs, str):
        cargs = json.dumps(cargs, ensure_ascii=False)
    return cname, cargs


def _is_image(part: dict[str, Any]) -> bool:
    return part.get("type") in ("image", "image_url")


#: Texts longer than this stay out of a ``bounded_counter``'s memo.
SHORT_TEXT_CHARS = 4096


def bounded_counter(own_encoding: bool = False) -> TokenCounter:
    """A counter whose memo keeps only short texts, so memory stays bounded when it counts
    a whole imported trace (long tool outputs are rarely counted twice)."""
    return TokenCounter(
        max_entries=4096, memo_max_chars=SHORT_TEXT_CHARS, own_encoding=own_encoding
    )


_default: TokenCounter | None = None


def default_counter() -> TokenCounter:
    global _default
    if _default is None:
        _default = TokenCounter()
    return _default


def count_text(text: str) -> int:
    return default_counter().count_text(text)


def piece_boundary(left: str, right: str) -> bool:
    """``left + right`` joins where the pre-tokenizers of ``_ADDITIVE_AFTER_NEWLINE`` always
    start a new piece: ``left`` ends with a newline after a character that is not
    whitespace, and ``right`` starts with one that is neither whitespace nor ``/``."""
    return (
        len(left) >= 2
        and left[-1] == "\n"
        and not left[-2].isspace()
        and bool(right)
        and not right[0].isspace()
        and right[0] != "/"
    )


def count_message(
    role: str,
    content: str,
    tool_calls: Iterable[Any] = (),
    name: str | None = None,
    parts: Sequence[Any] | None = None,
) -> MessageSize:
    return default_counter().count_message(role, content, tool_calls, name, parts)


def estimate_prompt_tokens(
    last_reported: int | None, counts_since_report: Iterable[int], fallback_total: int
) -> int:
    """TOK-2: the provider's last ``prompt_tokens`` plus estimates of what was added since.

    Without any report, the full estimate ``fallback_total`` is all we have.
    """
    if last_reported is None:
        return fallback_total
    return last_reported + sum(counts_since_report)
