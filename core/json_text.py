"""Text that is usually JSON but may not be: tool arguments a model wrote, a body a server
sent, a string attribute that may carry an encoded value.

Readers that show or forward such text keep going when it is not JSON (the text itself, or
nothing, stands in for the value); ``loads_or`` is that one decision, so every reader
treats the same text alike. Readers that must reject bad input raise their own error
naming file, line or field instead.
"""

from __future__ import annotations

import json
from typing import Any


def loads_or(text: str | bytes, fallback: Any) -> Any:
    """The decoded value of ``text``, or ``fallback`` when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return fallback
