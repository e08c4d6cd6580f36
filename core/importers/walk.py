"""What a path to import is, found before anything opens it, and the walk over a folder.

A named pipe would block the first read forever, ``/dev/zero`` never ends, and a folder
holding links to itself has no bottom: so a path's type is read from ``stat`` first and
only regular files are ever opened (and then without blocking, in case the path changed
in between). A folder is walked once per real folder, never leaving the folder it started
from: a link that leads outside is not followed, a file reached by two names is read once.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from core.errors import InvalidInputError

FILE = "file"
FOLDER = "folder"

_SPECIAL = (
    (stat.S_ISFIFO, "a named pipe (FIFO), not a file; not read"),
    (stat.S_ISCHR, "a character device, not a file; not read"),
    (stat.S_ISBLK, "a block device, not a file; not read"),
    (stat.S_ISSOCK, "a socket, not a file; not read"),
)


def classify(path: Path) -> str:
    """``FILE``, ``FOLDER``, or in words what else the path is (for an error message)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return f"a broken symbolic link (to {os.readlink(path)})"
        return "no such file or folder"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        return f"cannot read: {exc.strerror or exc}"
    return mode_kind(st.st_mode)


def mode_kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return FOLDER
    for test, words in _SPECIAL:
        if test(mode):
            return words
    return "not a regular file; not read"


def open_file(path: Path, where: str | None = None, buffering: int = -1) -> IO[bytes]:
    """``path`` opened for reading, refusing anything but a regular file without blocking."""
    name = where or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        kind = classify(path)
        words = kind if kind not in (FILE, FOLDER) else f"cannot read: {exc.strerror or exc}"
        raise InvalidInputError(f"{name}: {words}") from None
    kind = mode_kind(os.fstat(fd).st_mode)
    if kind != FILE:
        os.close(fd)
        raise InvalidInputError(f"{name}: {kind if kind != FOLDER else 'a folder, not a file'}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb", buffering=buffering)


@dataclass
class FolderWalk:
    """One walk under ``root``: the real folders and files seen so far."""

    root: Path
    real_root: Path = field(init=False)
    seen_folders: set[Path] = field(default_factory=set)
    seen_files: set[Path] = field(default_factory=set)
    passed: list[tuple[Path, str]] = field(default_factory=list)
    """Entries not walked into and why (special files, links out or broken), so a folder
    import can say what it passed over."""

    def __post_init__(self) -> None:
        self.real_root = self.root.resolve()

    def enter(self, folder: Path) -> bool:
        """True the first time a real folder is entered (False: seen, or outside root)."""
        real = self._inside(folder)
        if real is None or real in self.seen_folders:
            return False
        self.seen_folders.add(real)
        return True

    def entries(self, folder: Path) -> tuple[list[Path], list[Path]]:
        """``(files, folders)`` of one folder, sorted: regular files not met before, and
        folders, both only where they really lie inside the root."""
        files: list[Path] = []
        folders: list[Path] = []
        for entry in self._scan(folder):
            real = self._inside(entry)
            kind = classify(entry)
            if real is None:
                if kind in (FILE, FOLDER):
                    kind = f"a link to outside {self.root} (not followed)"
                self.passed.append((entry, kind))
                continue
            if kind == FILE and real not in self.seen_files:
                self.seen_files.add(real)
                files.append(entry)
            elif kind == FOLDER and real not in self.seen_folders:
                folders.append(entry)
            elif kind not in (FILE, FOLDER):
                self.passed.append((entry, kind))
        return files, folders

    def _scan(self, folder: Path) -> Iterator[Path]:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            yield folder / name

    def _inside(self, path: Path) -> Path | None:
        """The real path, when it lies inside the root (links out are not followed)."""
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None  # dangling link, link loop, vanished
        if real != self.real_root and self.real_root not in real.parents:
            return None
        return real
