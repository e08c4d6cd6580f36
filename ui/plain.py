"""Trace content shown as typed, never as HTML.

Qt renders a tooltip (and a ``QLabel`` in its default ``AutoText`` format) as rich text
whenever it *looks* like HTML, so an imported goal title with ``<img>`` or ``<style>``
would show an image icon or hide text. Tooltips of trace content go through
``plain_tip``; labels showing it use ``plain_label``.
"""

from __future__ import annotations

import html

from PySide6 import QtGui
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def plain_tip(text: str) -> str:
    """``text`` for a tooltip: unchanged unless Qt would take it for HTML, then escaped
    (line breaks and spaces kept)."""
    if not QtGui.Qt.mightBeRichText(text):  # QtGui's Qt namespace has it, QtCore's not
        return text
    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


def plain_label(label: QLabel) -> QLabel:
    """``label`` set to show its text literally."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label
