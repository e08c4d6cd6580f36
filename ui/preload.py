"""Load the modules the panes read with on a worker thread, before the panes are built.

Importing what the panes need (the inspector's reports, the runtime, the live sources,
Pygments) took ~0.45 s of the 0.5 s the UI thread stalled after a trace's rows were
painted. Those modules are ``core`` (never Qt, ``lint-imports`` keeps it so) and plain
libraries, so they can load off the UI thread; the panes' own ``ui`` modules (Qt classes)
still load on it, one pane at a time (``ui/window_panes.py:STEPS``).

Which modules: read from the source, not listed by hand, so a pane's new import is
preloaded too. ``modules_for`` walks the ``ui`` modules a build imports (every import of
the build module, the top-level imports of the ``ui`` modules they reach) and returns the
others; ``TYPE_CHECKING`` blocks are skipped.
"""

from __future__ import annotations

import ast
import gc
import importlib
import importlib.util
import logging
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)
#: Never loaded off the UI thread: Qt and what builds on it.
QT_ROOTS = frozenset({"PySide6", "shiboken6", "qasync", "ui", "__future__"})


def _source(name: str) -> Path | None:
    """The ``.py`` file of module ``name``, found without importing it or its packages
    (a package's ``__init__`` may be Qt code: it must not run on a worker thread)."""
    root, *parts = name.split(".")
    try:
        spec = importlib.util.find_spec(root)  # a top-level name: nothing else is imported
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    path = Path(spec.origin)
    for part in parts:
        if path.name != "__init__.py":
            return None  # a module has no submodules
        folder = path.parent / part
        path = folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")
        if not path.is_file():
            return None
    return path


def _is_type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test).endswith(
        "TYPE_CHECKING"
    )


def _top_level(tree: ast.Module) -> Iterable[ast.stmt]:
    """The module's statements, into ``try`` and ``if`` bodies, not into ``TYPE_CHECKING``."""
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if _is_type_checking(node):
            continue
        yield node
        if isinstance(node, ast.If | ast.Try):
            for body in (node.body, node.orelse, getattr(node, "finalbody", [])):
                stack.extend(reversed(body))


def _everywhere(tree: ast.Module) -> Iterable[ast.AST]:
    """Every node, in functions too (the build imports inside its steps), but not under
    ``TYPE_CHECKING``."""
    for node in tree.body:
        if not _is_type_checking(node):
            yield from ast.walk(node)


Wanted = tuple[str, tuple[str, ...]]
"""A module and the names taken from it (``from m import a``: a lazy attribute, such as
Pygments' lexers, loads when it is read)."""


def _imported(statements: Iterable[ast.AST]) -> list[Wanted]:
    """What the statements import; ``from pkg import name`` gives ``pkg.name`` too when
    that is a module of its own."""
    out: list[Wanted] = []
    for node in statements:
        if isinstance(node, ast.Import):
            out += [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = tuple(alias.name for alias in node.names)
            out.append((node.module, names))
            if node.module.split(".", 1)[0] in QT_ROOTS - {"ui"}:
                continue
            out += [(f"{node.module}.{n}", ()) for n in names if _source(f"{node.module}.{n}")]
    return out


def modules_for(build_module: str) -> list[Wanted]:
    """The non-Qt modules (with the names taken from them) that building
    ``build_module``'s parts imports, in first-seen order."""
    seen: set[Wanted] = set()
    out: list[Wanted] = []
    todo = [(build_module, True)]
    while todo:
        name, every = todo.pop(0)
        path = _source(name)
        if path is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = _imported(_everywhere(tree) if every else _top_level(tree))
        for wanted in found:
            if wanted in seen:
                continue
            seen.add(wanted)
            root = wanted[0].split(".", 1)[0]
            if root == "ui":
                todo.append((wanted[0], False))
            elif root not in QT_ROOTS:
                out.append(wanted)
    return out


def preload(build_module: str, report: Callable[[object], None] = lambda _v: None) -> int:
    """Import the non-Qt modules ``build_module`` needs (a worker thread calls this);
    ``report`` gets ``(done, total)``. A module that fails to load is left to fail where
    the UI imports it (with its error shown there). Returns how many were loaded."""
    wanted = modules_for(build_module)
    for done, (name, names) in enumerate(wanted, start=1):
        try:
            module = importlib.import_module(name)
            for attr in names:
                getattr(module, attr, None)
        except Exception as exc:  # reported where the UI thread imports it
            log.debug("preload %s: %s", name, exc)
        if done % 10 == 0 or done == len(wanted):
            report((done, len(wanted)))
    return len(wanted)


_frozen = False


def freeze_after_start() -> None:
    """Once per process, when the window's start is over: move what the start made (every
    module, class and function, the panes) out of the garbage collector's reach
    (``gc.freeze``), so a full collection walks only what came after. A full collection
    runs on whichever thread allocates and holds the GIL meanwhile; on the 1M-message
    store the ones after open went from ~36 ms (worst 130 ms) to ~4 ms (docs/bench.md)."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()
