"""Every window action in one registry: menus, toolbar, shortcuts and the command palette
all read from it, so nothing can be reachable in one place and missing in another.

Actions are declared as ``Spec`` rows (``ui/window_actions.py`` is the main window's
table); ``ActionRegistry.add_table`` makes them, and ``on_added`` listeners (the menus) see
every action however late it is registered (panes installed after the first paint)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence


@dataclass
class Entry:
    id: str
    action: QAction
    category: str


class Spec(NamedTuple):
    """One row of an action table: ``handler`` gets the table's target when it fires (so
    it may name panes that do not exist yet when the action is made)."""

    id: str
    text: str
    handler: Callable[[Any], object]
    shortcut: str | None = None
    tip: str = ""
    menu: str = "General"
    checkable: bool = False
    enabled: bool = True


class ActionRegistry:
    def __init__(self, owner: QObject) -> None:
        self.owner = owner
        self.entries: dict[str, Entry] = {}
        self.on_added: list[Callable[[Entry], None]] = []

    def add_table(self, specs: Iterable[Spec], target: object) -> None:
        for s in specs:
            slot = _bound(s.handler, target)
            self.add(s.id, s.text, slot, s.shortcut, s.tip, s.menu, s.checkable, s.enabled)

    def add(
        self,
        id: str,
        text: str,
        slot: Callable[[], object] | None = None,
        shortcut: str | QKeySequence.StandardKey | None = None,
        tip: str = "",
        category: str = "General",
        checkable: bool = False,
        enabled: bool = True,
    ) -> QAction:
        action = QAction(text, self.owner)
        action.setObjectName(id)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(tip or text.replace("…", ""))
        action.setStatusTip(tip)
        action.setCheckable(checkable)
        action.setEnabled(enabled)
        if slot is not None:
            if checkable:
                action.toggled.connect(lambda _checked: slot())
            else:
                action.triggered.connect(lambda _checked=False: slot())
        return self._register(Entry(id, action, category))

    def adopt(
        self, id: str, action: QAction, category: str, shortcut: str | None = None
    ) -> QAction:
        """Register an action made elsewhere (a dock's toggle action)."""
        action.setObjectName(id)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        return self._register(Entry(id, action, category))

    def _register(self, entry: Entry) -> QAction:
        self.entries[entry.id] = entry
        for listener in self.on_added:
            listener(entry)
        return entry.action

    def __getitem__(self, id: str) -> QAction:
        return self.entries[id].action

    def all(self) -> list[Entry]:
        return list(self.entries.values())


def label_of(entry: Entry) -> str:
    return f"{entry.category}: {entry.action.text().replace('&', '')}"


def _bound(handler: Callable[[Any], object], target: object) -> Callable[[], object]:
    return lambda: handler(target)
