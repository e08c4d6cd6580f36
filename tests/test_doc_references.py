"""Docs link code as ``path.py:Name`` (or ``path.py:Class.method``): every link resolves.

Docs move with the code; a renamed function must not leave a page pointing at nothing.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"`((?:core|ui|app|bench|tools|packaging|tests)/[\w/]+\.py):([A-Za-z_][\w.]*)")


@cache
def _names(path: Path) -> frozenset[str]:
    """Top-level names of a module, and ``Class.member`` for members of its classes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in tree.body:
        targets: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            targets = [node.name]
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        out.update(targets)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    out.add(f"{node.name}.{item.name}")
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    out.add(f"{node.name}.{item.target.id}")
                elif isinstance(item, ast.Assign):
                    out.update(
                        f"{node.name}.{t.id}" for t in item.targets if isinstance(t, ast.Name)
                    )
    return frozenset(out)


def test_every_code_link_in_the_docs_resolves() -> None:
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    broken: list[str] = []
    checked = 0
    for page in pages:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            for rel, name in LINK.findall(line):
                checked += 1
                path = ROOT / rel
                where = f"{page.relative_to(ROOT)}:{n}: {rel}:{name}"
                if not path.is_file():
                    broken.append(f"{where} (no such file)")
                elif name.rstrip(".") not in _names(path):
                    broken.append(f"{where} (no such name)")
    assert checked > 100, "the docs link code; the pattern must still find the links"
    assert not broken, "broken code links in docs:\n" + "\n".join(broken)


FILE = re.compile(
    r"`((?:core|ui|app|bench|tools|packaging|tests|resources)/[\w/.-]+\.(?:py|json|sh|spec))[`:]"
)


def test_every_file_named_in_the_docs_exists() -> None:
    """Files named alone (``core/store/export_format.py``, a data table) exist: a moved module
    must not leave a page naming its old place."""
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    missing = [
        f"{page.relative_to(ROOT)}:{n}: {rel}"
        for page in pages
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        for rel in FILE.findall(line)
        if not (ROOT / rel).is_file()
    ]
    assert not missing, "files the docs name that do not exist:\n" + "\n".join(missing)
