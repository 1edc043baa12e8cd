"""The frame every long settings page shares: a scrolling body, section titles and hints.

The dialog's style sheet styles these by object name (``SettingsPageBody``,
``SectionTitle``, ``Hint``), so pages build them here rather than each its own way.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget


def scrolling_page(page: QWidget, accessible_name: str) -> QVBoxLayout:
    """Fill ``page`` with a frameless scroll area; returns the layout of its body."""
    outer = QVBoxLayout(page)
    outer.setContentsMargins(0, 0, 0, 0)
    scroll = QScrollArea()
    scroll.setAccessibleName(accessible_name)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.viewport().setAutoFillBackground(False)
    outer.addWidget(scroll)
    body = QWidget()
    body.setObjectName("SettingsPageBody")
    scroll.setWidget(body)
    layout = QVBoxLayout(body)
    layout.setContentsMargins(16, 14, 16, 16)
    layout.setSpacing(8)
    return layout


def section_title(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("SectionTitle")
    return label


def hint_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("Hint")
    label.setWordWrap(True)
    return label


def section(title: str, hint: str = "") -> tuple[QLabel, QLabel | None]:
    """A section's title and, when there is one, its hint below it."""
    return section_title(title), hint_label(hint) if hint else None
