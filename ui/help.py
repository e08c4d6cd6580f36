"""The Help menu: every keyboard shortcut (read from the action registry, so the list is
never stale), a short tour of the window, and what the words in it mean."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMainWindow, QTextBrowser, QVBoxLayout

from ui.actions import ActionRegistry
from ui.one_dialog import show_one

TOUR = [
    ("Traces (left)", "Every trace in the store. Ctrl+click a second one, then Compare…"),
    (
        "Goals (left)",
        "The agent's goal tree as of the head. Click a goal to show only its "
        "messages in the timeline.",
    ),
    (
        "Timeline (centre)",
        "Every message on the main path, oldest first. Greyed rows are no "
        "longer in the model's context; a blue band marks a compaction. Search with Ctrl+F "
        "(plain text, or role:, tool:, goal:). Home/End/Page Up/Page Down move the selection.",
    ),
    (
        "Playback (under the timeline)",
        "Drag the slider to see every pane as of one model "
        "call; Live returns to the current state.",
    ),
    ("Message (right)", "The selected message: content, raw record, tokens, usage."),
    (
        "Context (right)",
        "Exactly what the model received at a call (or will receive next), "
        "by component, against the window and the budgets.",
    ),
    (
        "Skills, Grants, Budget (bottom)",
        "When skills were injected or compacted away, which "
        "references were granted, and the token budget over time.",
    ),
    (
        "Run menu",
        "Run, pause, step or stop the demo agent; rewind to a message; preview and "
        "apply a compaction; re-run with other settings and compare the two runs.",
    ),
]

GLOSSARY = [
    ("window", "the most tokens the model accepts in one call"),
    ("compaction threshold", "share of the window above which the runtime compacts"),
    ("soft budget", "above this the agent is nudged to wrap up or compact"),
    ("hard budget", "the runtime compacts before sending more than this"),
    ("compaction", "older messages replaced by a summary or dropped; nothing is deleted"),
    ("in / out of context", "whether a message was part of what the model received"),
]


def shortcut_rows(registry: ActionRegistry) -> list[tuple[str, str, str]]:
    """(menu, command, key) for every action with a shortcut, in menu order."""
    rows = []
    for entry in registry.all():
        key = entry.action.shortcut().toString()
        if key:
            rows.append((entry.category, entry.action.text().replace("&", ""), key))
    return rows


def _page(title: str, body: str) -> str:
    return f"<h3>{html.escape(title)}</h3>{body}"


def shortcuts_html(registry: ActionRegistry) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(m)}</td><td>{html.escape(c)}</td><td><b>{html.escape(k)}</b></td></tr>"
        for m, c, k in shortcut_rows(registry)
    )
    extra = (
        "<p>In the timeline: ↑/↓ one row, Page Up/Page Down one page, Home/End the first "
        "and last row. Esc or Ctrl+W closes the comparison and re-run windows.</p>"
    )
    head = "<tr><th>Menu</th><th>Command</th><th>Key</th></tr>"
    table = f"<table cellpadding='3'>{head}{rows}</table>"
    return _page("Keyboard shortcuts", table + extra)


def tour_html() -> str:
    parts = "".join(f"<p><b>{html.escape(t)}</b>: {html.escape(d)}</p>" for t, d in TOUR)
    words = "".join(f"<li><b>{html.escape(t)}</b>: {html.escape(d)}</li>" for t, d in GLOSSARY)
    return _page("A short tour", parts) + _page("Words", f"<ul>{words}</ul>")


class HelpDialog(QDialog):
    def __init__(self, title: str, body: str, parent: QMainWindow) -> None:
        super().__init__(parent)
        self.setObjectName("helpDialog")
        self.setWindowTitle(title)
        self.text = QTextBrowser()
        self.text.setHtml(body)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(640, 560)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)


class HelpMenu:
    """Registers Help → Keyboard shortcuts (F1), A short tour."""

    def __init__(self, window: QMainWindow, registry: ActionRegistry) -> None:
        self.window, self.registry = window, registry
        self.dialog: HelpDialog | None = None
        registry.add("help.shortcuts", "&Keyboard shortcuts", self.show_shortcuts, "F1",
                     category="Help")  # fmt: skip
        registry.add("help.tour", "A short &tour", self.show_tour, "Shift+F1", category="Help")

    def _show(self, title: str, body: str) -> HelpDialog:
        shown = lambda d: False  # noqa: E731 (the other help text may be asked for)
        self.dialog = show_one(self.dialog, lambda: HelpDialog(title, body, self.window), shown)
        return self.dialog

    def show_shortcuts(self) -> HelpDialog:
        return self._show("Keyboard shortcuts", shortcuts_html(self.registry))

    def show_tour(self) -> HelpDialog:
        return self._show("A short tour", tour_html())
