"""The sidebar's place in the window, there from the first frame; the sidebar is built into it after.

The sidebar (filter, projects, the chat list and their models and delegates) is the
largest part of the window to import and build (docs/performance.md), and before the engine is
open it lists nothing. The window's first frame therefore shows this slot: the
sidebar's width and background colour (``#Sidebar`` in the style sheet), so the
layout the user sees never moves; ``MainWindow.build_sidebar`` fills it on the loop
turn after the first paint, before the engine is opened (docs/performance.md, "Window").
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget


class SidebarSlot(QWidget):
    """A sidebar-coloured frame the splitter holds; ``hold`` puts the real sidebar in it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)

    def hold(self, sidebar: QWidget) -> None:
        self._layout.addWidget(sidebar)
