"""Writing a text file atomically: into a temporary file beside the target, then moved
into place, so a failed write never leaves half a file where the user expects one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


def write_atomically(target: Path, write: Callable[[IO[str]], object], prefix: str) -> Path:
    """Call ``write`` on a UTF-8 temporary file in ``target``'s folder (named ``prefix...``)
    and replace ``target`` with it; on any failure the temporary file is removed."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            write(f)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
