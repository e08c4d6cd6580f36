"""``ui/core_preload.py``: the timeline's core modules, and then the store's, import without
the import hook installed when they are loaded (PySide6's ``__feature_import__`` in the
window), and the hook is back afterwards, also when an import fails. The timeline's own
need no SQLAlchemy (its first rows are read with ``sqlite3``); the store's bring it."""

from __future__ import annotations

import builtins
import subprocess
import sys
from pathlib import Path

import pytest

from ui.core_preload import STORE_CORE, TIMELINE_CORE, without_qt_import_hook

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import builtins, sys
seen = []
real = builtins.__import__
def hook(name, *args, **kwargs):
    seen.append(name)
    return real(name, *args, **kwargs)
builtins.__import__ = hook
import ui.core_preload
timeline_only = "sqlalchemy" in sys.modules
ui.core_preload.preload(ui.core_preload.STORE_CORE)
print(builtins.__import__ is hook, "sqlalchemy" in sys.modules,
      sorted({n for n in seen if n.startswith(("sqlalchemy", "core."))}), timeline_only)
"""


def test_the_timeline_core_imports_bypass_the_hook_which_is_restored() -> None:
    assert all(name.startswith("core.") for name in TIMELINE_CORE)  # no Qt in core/
    assert all(name.startswith("core.") for name in STORE_CORE)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert proc.stdout.split() == ["True", "True", "[]", "False"]


def test_the_hook_is_restored_when_an_import_fails() -> None:
    hook = builtins.__import__
    with pytest.raises(ModuleNotFoundError), without_qt_import_hook():
        assert builtins.__import__ is not hook
        import core.no_such_module  # noqa: F401
    assert builtins.__import__ is hook


def test_the_timeline_loads_without_the_search_parser() -> None:
    """The query parser (``core/inspector/query.py``, with ``shlex`` and ``datetime``) loads
    at the first search, not on the way to the trace's rows."""
    probe = (
        "import os; os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "import sys\nfrom PySide6.QtWidgets import QApplication\napp = QApplication([])\n"
        "import ui.window_timeline\n"
        "names = ('core.inspector.query', 'core.search.query')\n"
        "print(sorted(m for m in names if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert proc.stdout.split() == ["[]"]
