"""Command palette (Ctrl+Shift+P): every action, fuzzy-filtered as you type."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from core.inspector.fuzzy import fuzzy_filter
from ui.actions import ActionRegistry, Entry, label_of


class CommandPalette(QDialog):
    def __init__(self, registry: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command palette")
        self.registry = registry
        self.entries: list[Entry] = []
        self.query = QLineEdit(placeholderText="Type a command…")
        self.list = QListWidget()
        self.query.textChanged.connect(self.refilter)
        self.query.installEventFilter(self)
        self.list.itemActivated.connect(self._activate)
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        self.resize(560, 420)

    def popup(self) -> None:
        self.query.clear()
        self.refilter("")
        self.open()
        self.query.setFocus()

    def refilter(self, text: str) -> None:
        all_entries = self.registry.all()
        labels = [label_of(e) for e in all_entries]
        self.entries = [all_entries[i] for i in fuzzy_filter(text, labels)]
        self.list.clear()
        for e in self.entries:
            keys = e.action.shortcut().toString()
            label = label_of(e) + (f"    [{keys}]" if keys else "")
            if not e.action.isEnabled():
                label += f"    — {e.action.toolTip()}"
            item = QListWidgetItem(label)
            if not e.action.isEnabled():
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.list.addItem(item)
        self._select_first_enabled()

    def _select_first_enabled(self) -> None:
        for i, e in enumerate(self.entries):
            if e.action.isEnabled():
                self.list.setCurrentRow(i)
                return

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (
            obj is self.query
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
        ):
            if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                step = 1 if event.key() == Qt.Key.Key_Down else -1
                row = max(0, min(self.list.count() - 1, self.list.currentRow() + step))
                self.list.setCurrentRow(row)
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.trigger_current()
                return True
        return super().eventFilter(obj, event)

    def trigger_current(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.entries):
            self._run(self.entries[row])

    def _activate(self, item: QListWidgetItem) -> None:
        self._run(self.entries[self.list.row(item)])

    def _run(self, entry: Entry) -> None:
        if entry.action.isEnabled():
            self.accept()
            entry.action.trigger()
