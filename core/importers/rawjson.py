"""A record's JSON text cut from its own line's bytes, instead of encoded again.

Importers keep many records as they are (Claude Code's progress and hook records are 1.1
of the 1.5 MB of metadata a 2.9 MB session stores). Parsing a line and encoding the dict
again costs a dict copy and an ``orjson.dumps`` per record; the line already holds that
text. What is stored is the same JSON value; only the bytes may differ where the source
wrote a value in another of JSON's spellings (an escaped character, a float's digits).
"""

from __future__ import annotations

from collections.abc import Set
from itertools import islice
from typing import Any

import orjson


def without_leading_keys(record: dict[str, Any], line: bytes, drop: Set[str]) -> bytes | None:
    """The JSON text of ``record`` without the keys in ``drop``, cut from ``line``, or
    ``None`` when that cannot be done exactly (the caller encodes the record instead).

    ``line`` must be exactly ``record``'s JSON text (``reading.parse_line_exact``). The
    keys to drop must all come first in the record (Claude Code writes its session keys
    first) and be spelled in the line as orjson would write them: their text is rebuilt
    and compared, so a match is exact, and what follows the last of them is the rest of
    the object. Anything else (a key to drop further on, another spelling) gives ``None``.
    """
    n = 0
    for key in record:
        if key not in drop:
            break
        n += 1
    if len(drop & record.keys()) != n:  # a key to drop after the first kept one
        return None
    body = line.rstrip()
    if n == 0:
        return body if body[:1] == b"{" else None
    if n == len(record):
        return b"{}"
    head = orjson.dumps(dict(islice(record.items(), n)))[:-1]  # b'{"k":v,...' without '}'
    if not body.startswith(head) or body[len(head) : len(head) + 1] != b",":
        return None
    return b"{" + body[len(head) + 1 :]
