"""Writing a text file atomically: into a temporary file beside the target, then moved
into place, so a failed write never leaves half a file where the user expects one.

What the target is decides how (``write_atomically``): a folder is refused; a device, a
named pipe or a socket (``-o /dev/stdout``, ``/dev/null``, a FIFO another program reads) is
written in place, never replaced by a regular file; a symbolic link keeps pointing where it
did and the file it leads to is replaced. A folder that cannot be written in, a target that
cannot be replaced or a full disk is an ``InvalidInputError`` naming the target.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from core.errors import InvalidInputError


def write_atomically(target: Path, write: Callable[[IO[str]], object], prefix: str) -> Path:
    """Call ``write`` on a UTF-8 temporary file in ``target``'s folder (named ``prefix...``)
    and replace ``target`` with it; on any failure the temporary file is removed."""
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _cannot_write(target, exc) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise InvalidInputError(f"{target}: is a folder; give a file name to write")
    if mode is not None and not stat.S_ISREG(mode):
        return _write_in_place(target, write)
    real = Path(os.path.realpath(target)) if target.is_symlink() else target
    try:
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=prefix)
    except OSError as exc:
        raise InvalidInputError(
            f"{target}: cannot write in folder {real.parent}: {exc.strerror or exc}"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            write(f)
        os.replace(tmp, real)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _cannot_write(target, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _write_in_place(target: Path, write: Callable[[IO[str]], object]) -> Path:
    """A device, pipe or socket: written as it is (replacing it would destroy it)."""
    try:
        with open(target, "w", encoding="utf-8") as f:
            write(f)
    except OSError as exc:
        raise _cannot_write(target, exc) from None
    return target


def _cannot_write(target: Path, exc: OSError) -> InvalidInputError:
    return InvalidInputError(f"{target}: cannot write: {exc.strerror or exc}")
