"""Light and dark themes: one set of colour tokens feeding the palette, the stylesheet and the chat renderer.

The theme follows the system colour scheme (``QStyleHints.colorScheme``) unless the
user picked one. Everything that paints — the Qt palette for native widgets, the
application stylesheet, the Markdown HTML of messages and the Pygments colours of
code — reads the same :class:`ThemeColors`, so switching themes is one call that
re-polishes the widgets and drops the chat views' rendered-document caches.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

log = logging.getLogger("threadline.ui.theme")


class ThemeChoice(StrEnum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


@dataclass(frozen=True, slots=True)
class ThemeColors:
    name: str
    dark: bool
    window: str
    base: str
    surface: str
    """Slightly raised areas: sidebar, composer box."""
    text: str
    muted: str
    border: str
    accent: str
    accent_text: str
    user_bubble: str
    code_bg: str
    code_border: str
    inline_code_bg: str
    link: str
    selection: str
    hover: str
    error_bg: str
    error_border: str
    error_text: str
    warning: str
    success: str
    pygments_style: str


LIGHT = ThemeColors(
    name="light",
    dark=False,
    window="#f6f6f4",
    base="#ffffff",
    surface="#efefec",
    text="#1f2328",
    muted="#6b7078",
    border="#d9dadc",
    accent="#2f6fdf",
    accent_text="#ffffff",
    user_bubble="#eef2f8",
    code_bg="#f5f6f8",
    code_border="#e1e4e8",
    inline_code_bg="#eef0f3",
    link="#1f5fcf",
    selection="#cfe0fb",
    hover="#e6e7e4",
    error_bg="#fdf0ef",
    error_border="#f0c4c0",
    error_text="#9b2c22",
    warning="#a86400",
    success="#1f7a3a",
    pygments_style="default",
)

DARK = ThemeColors(
    name="dark",
    dark=True,
    window="#1d1f22",
    base="#232529",
    surface="#2a2d31",
    text="#e4e6e9",
    muted="#9aa0a8",
    border="#3a3d42",
    accent="#5b93f5",
    accent_text="#ffffff",
    user_bubble="#2d3440",
    code_bg="#1a1c1f",
    code_border="#33363b",
    inline_code_bg="#34373d",
    link="#82aef8",
    selection="#31476b",
    hover="#303338",
    error_bg="#3a2523",
    error_border="#6b3832",
    error_text="#f2b8b0",
    warning="#e0a54a",
    success="#6cc28a",
    pygments_style="github-dark",
)


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def resolve(choice: ThemeChoice) -> ThemeColors:
    if choice is ThemeChoice.DARK:
        return DARK
    if choice is ThemeChoice.LIGHT:
        return LIGHT
    return DARK if system_prefers_dark() else LIGHT


def build_palette(c: ThemeColors) -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: c.window,
        QPalette.ColorRole.WindowText: c.text,
        QPalette.ColorRole.Base: c.base,
        QPalette.ColorRole.AlternateBase: c.surface,
        QPalette.ColorRole.Text: c.text,
        QPalette.ColorRole.Button: c.surface,
        QPalette.ColorRole.ButtonText: c.text,
        QPalette.ColorRole.Highlight: c.selection,
        QPalette.ColorRole.HighlightedText: c.text,
        QPalette.ColorRole.Link: c.link,
        QPalette.ColorRole.ToolTipBase: c.surface,
        QPalette.ColorRole.ToolTipText: c.text,
        QPalette.ColorRole.PlaceholderText: c.muted,
        QPalette.ColorRole.Mid: c.border,
        QPalette.ColorRole.Midlight: c.hover,
        QPalette.ColorRole.Accent: c.accent,
    }
    for role, colour in roles.items():
        pal.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(c.muted))
    return pal


def build_stylesheet(c: ThemeColors) -> str:
    """The application stylesheet: flat, quiet surfaces, one accent colour."""
    return f"""
QMainWindow, QDialog {{ background: {c.window}; }}
QToolTip {{ background: {c.surface}; color: {c.text}; border: 1px solid {c.border}; padding: 4px 6px; }}
QSplitter::handle {{ background: {c.border}; }}
QSplitter::handle:horizontal {{ width: 1px; }}
QStatusBar {{ background: {c.window}; color: {c.muted}; border-top: 1px solid {c.border}; }}
QStatusBar QLabel {{ color: {c.muted}; }}
QMenuBar {{ background: {c.window}; color: {c.text}; }}
QMenuBar::item:selected {{ background: {c.hover}; border-radius: 4px; }}
QMenu {{ background: {c.base}; color: {c.text}; border: 1px solid {c.border}; padding: 4px; }}
QMenu::item {{ padding: 5px 22px 5px 18px; border-radius: 4px; }}
QMenu::item:selected {{ background: {c.selection}; }}
QMenu::separator {{ height: 1px; background: {c.border}; margin: 4px 6px; }}

#Sidebar {{ background: {c.surface}; }}
#Sidebar QListView {{ background: {c.surface}; border: none; outline: none; }}
#SidebarFilter {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 6px;
                  padding: 5px 8px; color: {c.text}; selection-background-color: {c.selection}; }}
#SidebarFilter:focus {{ border-color: {c.accent}; }}
#NewChatButton {{ background: {c.accent}; color: {c.accent_text}; border: none; border-radius: 6px;
                  padding: 6px 12px; font-weight: 600; }}
#NewChatButton:hover {{ background: {QColor(c.accent).lighter(110).name()}; }}
#UndoBar {{ background: {c.text}; border-radius: 6px; }}
#UndoBar QLabel {{ color: {c.base}; }}
#UndoBar QPushButton {{ color: {c.accent if c.dark else QColor(c.accent).lighter(160).name()};
                        background: transparent; border: none; font-weight: 600; padding: 2px 6px; }}

QTabWidget::pane {{ border: none; background: {c.base}; }}
QTabBar {{ background: {c.window}; }}
QTabBar::tab {{ background: transparent; color: {c.muted}; padding: 7px 12px; margin: 4px 0 0 4px;
               border: 1px solid transparent; border-bottom: none; border-top-left-radius: 6px;
               border-top-right-radius: 6px; min-width: 60px; max-width: 220px; }}
QTabBar::tab:selected {{ background: {c.base}; color: {c.text}; border-color: {c.border}; }}
QTabBar::tab:hover:!selected {{ background: {c.hover}; }}
#TabClose {{ border: none; border-radius: 4px; color: {c.muted}; padding: 0px 3px; font-size: 14px; }}
#TabClose:hover {{ background: {c.hover}; color: {c.text}; }}

ChatView {{ background: {c.base}; border: none; }}
#ChatTab {{ background: {c.base}; }}
#ComposerFrame {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 10px; }}
#ComposerFrame[focused="true"] {{ border-color: {c.accent}; }}
#ComposerEdit {{ background: transparent; border: none; color: {c.text};
                 selection-background-color: {c.selection}; }}
#ComposerHint {{ color: {c.muted}; }}
#SendButton {{ background: {c.accent}; color: {c.accent_text}; border: none; border-radius: 6px;
               padding: 5px 14px; font-weight: 600; }}
#SendButton:disabled {{ background: {c.border}; color: {c.muted}; }}
#SendButton[stop="true"] {{ background: {c.text}; color: {c.base}; }}
#FlatButton {{ background: transparent; border: none; color: {c.muted}; padding: 4px 8px;
               border-radius: 5px; }}
#FlatButton:hover {{ background: {c.hover}; color: {c.text}; }}
#ModelPicker {{ background: transparent; border: 1px solid transparent; border-radius: 5px; color: {c.muted};
                padding: 3px 6px; }}
#ModelPicker:hover {{ border-color: {c.border}; color: {c.text}; }}
#AttachmentChip {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 10px; }}
#AttachmentChip QLabel {{ color: {c.text}; }}
#AttachmentChip QToolButton {{ border: none; color: {c.muted}; }}

#ErrorBanner {{ background: {c.error_bg}; border: 1px solid {c.error_border}; border-radius: 8px; }}
#ErrorBanner QLabel {{ color: {c.error_text}; }}
#ErrorBanner QPushButton {{ background: {c.base}; color: {c.text}; border: 1px solid {c.error_border};
                           border-radius: 5px; padding: 4px 10px; }}
#ErrorBanner QPushButton:hover {{ background: {c.hover}; }}
#InfoBanner {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 8px; }}
#InfoBanner QLabel {{ color: {c.text}; }}

#EmptyState {{ background: {c.base}; }}
#EmptyTitle {{ color: {c.text}; font-size: 20px; font-weight: 600; }}
#EmptyText {{ color: {c.muted}; }}
#PrimaryButton {{ background: {c.accent}; color: {c.accent_text}; border: none; border-radius: 6px;
                  padding: 7px 16px; font-weight: 600; }}
#SecondaryButton {{ background: {c.base}; color: {c.text}; border: 1px solid {c.border}; border-radius: 6px;
                    padding: 6px 14px; }}
#SecondaryButton:hover {{ background: {c.hover}; }}
#SectionTitle {{ color: {c.text}; font-weight: 600; font-size: 14px; }}
#Hint {{ color: {c.muted}; }}
#ProviderList {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 6px; padding: 4px; }}
#ProviderList::item {{ padding: 6px 8px; border-radius: 4px; color: {c.text}; }}
#ProviderList::item:selected {{ background: {c.selection}; }}
QScrollBar:vertical {{ background: transparent; width: 10px; margin: 0; }}
QScrollBar::handle:vertical {{ background: {c.border}; border-radius: 4px; min-height: 30px; margin: 2px; }}
QScrollBar::handle:vertical:hover {{ background: {c.muted}; }}
QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical {{ height: 0; }}
QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical {{ background: transparent; }}
"""


class ThemeManager(QObject):
    """Owns the current theme; follows the system scheme while the choice is ``system``."""

    changed = Signal(object)  # ThemeColors

    def __init__(self, app: QApplication, choice: ThemeChoice = ThemeChoice.SYSTEM) -> None:
        super().__init__(app)
        self._app = app
        self._choice = choice
        self._colors = resolve(choice)
        app.styleHints().colorSchemeChanged.connect(self._system_changed)

    @property
    def colors(self) -> ThemeColors:
        return self._colors

    @property
    def choice(self) -> ThemeChoice:
        return self._choice

    def apply(self) -> None:
        self._app.setStyle("Fusion")
        self._app.setPalette(build_palette(self._colors))
        self._app.setStyleSheet(build_stylesheet(self._colors))

    def set_choice(self, choice: ThemeChoice) -> None:
        self._choice = choice
        self._update()

    def _system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self._choice is ThemeChoice.SYSTEM:
            self._update()

    def _update(self) -> None:
        colors = resolve(self._choice)
        if colors is self._colors:
            return
        log.info("theme -> %s", colors.name)
        self._colors = colors
        self.apply()
        self.changed.emit(colors)
