"""Files that look like traces but are not one, and what they are (so a refusal can say so).

A Langfuse ChatML map is the first: ``{observation id: {"input": {success, data|error},
"output": {success, data|error}}}``, each side the result of Langfuse normalising one
observation's input or output into chat messages (its tests keep it beside the trace export
it came from, as the expected output). It holds chat messages, but keyed by observation in
no particular order, without times, parents or the trace's own input: read as a
conversation it would put replies before the requests and tool results after the answer.
So it is refused with what it is, never imported as an OTel trace or a chat.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from core.errors import InvalidInputError
from core.importers.jsonstream import BeyondLimits, JsonDocument
from core.importers.walk import open_file
from core.importers.zipmembers import LOCAL_MAGIC

#: Bytes of a ChatML map read at most to tell it (its members are small).
BUDGET = 8 << 20
CHATML_SUFFIX = ".chatml.json"


def chatml_side(value: Any) -> bool:
    """One side of a ChatML entry: a parse result, ``{success: bool, data | error}``."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("success"), bool)
        and ("data" in value or "error" in value)
        and len(value) <= 3
    )


def chatml_entry(value: Any) -> bool:
    """One observation of a Langfuse ChatML map: ``{input?, output}``, each a parse result."""
    return (
        isinstance(value, dict)
        and "output" in value
        and set(value) <= {"input", "output"}
        and all(chatml_side(v) for v in value.values())
    )


def langfuse_chatml(path: Path) -> int | None:
    """The number of observations when ``path`` is a Langfuse ChatML map, else ``None``
    (every top-level member must be a ChatML entry)."""
    n = 0
    with open_file(path) as f:
        doc = JsonDocument(f, str(path), max_value=BUDGET)
        try:
            if doc.begin() != "{":
                return None
            for _key in doc.members():
                if not chatml_entry(doc.value()) or f.tell() > BUDGET:
                    return None
                n += 1
            doc.end()
        except (BeyondLimits, InvalidInputError):
            return None
    return n or None


def chatml_refusal(path: Path, observations: int) -> str:
    """Why a ChatML map is not imported, and what to import instead."""
    trace = path.with_name(path.name.removesuffix(CHATML_SUFFIX) + ".trace.json")
    instead = (
        f"import the trace export it was made from ({trace.name})"
        if path.name.endswith(CHATML_SUFFIX) and trace.is_file()
        else "import the Langfuse trace export (trace + observations) instead"
    )
    return (
        f"{path}: a Langfuse ChatML map (the chat messages Langfuse normalised from "
        f"{observations} observation{'s' if observations != 1 else ''}, keyed by observation "
        "id), not a trace: it records no order, times or parents of those messages; "
        f"{instead}"
    )


def refusal(path: Path) -> str | None:
    """What a known non-trace file is and why it is not imported (``None``: not one):
    an empty file, a zip archive that cannot be opened (an ``.eval`` cut short), a
    Langfuse ChatML map."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return None  # the reader words it (no such file, permission denied)
    if not head:
        return f"{path}: empty file (0 bytes): nothing to import"
    if head == LOCAL_MAGIC and not zipfile.is_zipfile(path):
        return (
            f"{path}: a zip archive that cannot be opened (its end, the table of its members, "
            "is missing: cut short or damaged); an Inspect .eval log must be whole"
        )
    n = langfuse_chatml(path)
    return chatml_refusal(path, n) if n is not None else None
