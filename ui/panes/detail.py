"""Message detail (UI-7): highlighted content, facts, tool call ↔ result links, raw record."""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QFont, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.inspector.detail import MessageDetail, message_detail
from core.store import Store
from ui.highlight import PygmentsHighlighter
from ui.panes.common import NO_TRACE
from ui.session import Session
from ui.tasks import TaskRunner
from ui.theme import is_dark
from ui.widgets import wrapped_label

MAX_BODY = 200_000
SELECT = "Select a message in the timeline."
FACT_PAIRS = 2
"""Facts per line: two fit the default dock width without clipping an id or a kind."""
WIDE_FACTS = frozenset({"usage"})
LONG_VALUE = 22
"""A value longer than this ("tool (str_replace_editor)") gets a line of its own, where it
stood: squeezed into half a line it wrapped and pushed the grid's last rows out of view."""
BREAK = "\u200b"
"""A zero-width space: where a wide fact's long names may break (after the ``.`` of
``cache_creation.ephemeral_1h_input_tokens``, which otherwise widened the table past the
pane and was cut; not after each ``_``: the names broke mid-word)."""
FACTS_SHARE = 0.5
"""The most of the pane the facts take before they scroll (the content keeps the rest)."""
MIN_CONTENT = 72
"""The content tabs' least height (a tab bar and three lines): at 1280×720 the pane is
about 207 px, and the facts of a tool result (six lines, 98 px) still fit beside it."""


def _read_detail(store: Store, trace_id: str, sequence: int) -> MessageDetail:
    with store.read() as r:
        return message_detail(r, trace_id, sequence)


def _code_view() -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setReadOnly(True)
    font = QFont("DejaVu Sans Mono")
    font.setStyleHint(QFont.StyleHint.Monospace)
    view.setFont(font)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    return view


class _FactsArea(QScrollArea):
    """Asks for the height its label needs at its width (a rich-text table wraps, so a
    width's height is known only once laid out), so the grid is shown whole when the pane
    has room; its minimum stays small, so the window never grows for a long fact."""

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        label = self.widget()
        if label is None:
            return hint
        width = self.viewport().width() if self.isVisible() else label.width()
        height = label.heightForWidth(width) if label.hasHeightForWidth() else -1
        if height < 0:
            height = label.sizeHint().height()
        return QSize(hint.width(), height + 2 * self.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # another width, another height


def _scrolling(label: QLabel) -> QScrollArea:
    """``label`` in a frameless scroll area: as tall as its text when there is room, and
    a long fact (usage) never raises the dock's minimum height (the window would grow)."""
    area = _FactsArea()
    area.setWidget(label)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setMinimumHeight(48)
    area.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    return area


class MessageDetailPane(QWidget):
    jump = Signal(int)
    """A link was clicked: select this message in the timeline."""

    def __init__(
        self, session: Session, runner: TaskRunner | None = None, parent: QWidget | None = None
    ) -> None:
        """With a ``runner`` the message is read off the UI thread (a long message's
        content and raw record can be megabytes)."""
        super().__init__(parent)
        self.setObjectName("detailPane")
        self.session = session
        self.runner = runner
        self.detail: MessageDetail | None = None
        self.facts = wrapped_label(self._nothing())
        self.facts.setTextFormat(self.facts.textFormat().RichText)
        # a long fact (usage, an id) is clipped rather than widening the dock and the window
        self.facts.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.facts.setMinimumWidth(200)
        # wrapped: one line of a reply's many tool calls widened the dock and the window
        # past the screen (1280 → 1584 px, screenshot review)
        self.links = wrapped_label("", "detailLinks")
        self.links.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.links.linkActivated.connect(lambda href: self.jump.emit(int(href.split(":", 1)[1])))
        self.body = _code_view()
        self.raw = _code_view()
        dark = is_dark(self.palette())
        self.body_highlighter = PygmentsHighlighter(self.body.document(), "text", dark)
        self.raw_highlighter = PygmentsHighlighter(self.raw.document(), "json", dark)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.body, "Content")
        self.tabs.addTab(self.raw, "Raw record")
        self.facts_area = _scrolling(self.facts)
        # the content takes what the facts leave: its own size hint must not squeeze them
        self.tabs.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        self.tabs.setMinimumHeight(MIN_CONTENT)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.facts_area)
        layout.addWidget(self.links)
        layout.addWidget(self.tabs, 1)
        session.changed.connect(self.clear)

    def _nothing(self) -> str:
        """What the facts say before a message is shown."""
        return SELECT if self.session.trace_id is not None else NO_TRACE

    def clear(self) -> None:
        self.detail = None
        self.facts.setText(self._nothing())
        self.facts.setToolTip("")
        self.links.setText("")
        self.body.setPlainText("")
        self.raw.setPlainText("")

    def show_message(self, sequence: int) -> None:
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            return
        if self.runner is None:
            self._show(_read_detail(store, trace_id, sequence))
            return
        if self.detail is None:  # nothing shown yet: not "Select a message" while it loads
            self.facts.setText(f"Loading message #{sequence}…")
        self.runner.submit(
            "message detail",
            lambda _c: _read_detail(store, trace_id, sequence),
            self._show,
            key="detail",
            priority=1,
        )

    def _show(self, detail: MessageDetail) -> None:
        if detail.message.trace_id != self.session.trace_id:
            return  # another trace was opened meanwhile
        self.detail = detail
        self._render(detail)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.facts_area.setMaximumHeight(max(48, int(event.size().height() * FACTS_SHARE)))

    def _render(self, d: MessageDetail) -> None:
        self.facts.setText(
            facts_table(d.facts, self.palette().color(QPalette.ColorRole.PlaceholderText).name())
        )
        self.facts.setToolTip(f"times: {d.time_note}" if d.time_note else "")
        self.facts_area.updateGeometry()
        links = " · ".join(
            f"<a href='seq:{ln.sequence}'>{html.escape(ln.label)}</a>" for ln in d.links
        )
        self.links.setText(links)
        self.links.setVisible(bool(links))
        body = d.body
        if len(body) > MAX_BODY:
            body = (
                body[:MAX_BODY]
                + f"\n\n… {len(d.body) - MAX_BODY:,} more characters (see Raw record)"
            )
        self.body_highlighter.set_format(d.format)
        self.body.setPlainText(body)
        self.raw.setPlainText(d.raw[: MAX_BODY * 2])

    def set_dark(self, dark: bool) -> None:
        for hl in (self.body_highlighter, self.raw_highlighter):
            hl.set_style(dark)
            hl.rehighlight()


def facts_table(facts: tuple[tuple[str, str], ...], dim: str) -> str:
    """The facts as a rich-text table, ``FACT_PAIRS`` to a line in their order; a long one
    (``WIDE_FACTS``, a value over ``LONG_VALUE`` characters) takes a line of its own where
    it stands, wrapping there, never clipped."""
    rows: list[str] = []
    line: list[str] = []

    def close() -> None:
        if line:
            rows.append("<tr>" + "".join(line) + "</tr>")
            line.clear()

    for k, v in facts:
        key = f"<td style='padding-right:6px;color:{dim}'>{html.escape(k)}</td>"
        if k in WIDE_FACTS or len(v) > LONG_VALUE:
            close()
            text = html.escape(v)
            if k in WIDE_FACTS:  # a field a line; a long nested name may break after a "."
                text = text.replace(".", "." + BREAK).replace("\n", "<br>")
            rows.append(f"<tr>{key}<td colspan='{2 * FACT_PAIRS - 1}'>{text}</td></tr>")
            continue
        line.append(f"{key}<td style='padding-right:14px'>{html.escape(v)}</td>")
        if len(line) == FACT_PAIRS:
            close()
    close()
    return "<table>" + "".join(rows) + "</table>"
