"""Light and dark themes: one set of colour tokens feeding the palette, the stylesheet and the chat renderer.

The theme follows the system colour scheme (``QStyleHints.colorScheme``) unless the
user picked one. The widget style is Fusion behind a small proxy (:class:`ThemedStyle`)
that draws check boxes and radio buttons from the theme colours — Fusion derives their
outline from the window colour, which all but vanishes on a dark window — and underlines
mnemonics only while Alt is held, as Windows, GNOME and KDE do by default (Fusion would
underline them always). Everything that paints — the Qt palette for native widgets, the
application stylesheet, the Markdown HTML of messages and the Pygments colours of
code — reads the same :class:`ThemeColors`, so switching themes is one call that
re-polishes the widgets and drops the chat views' rendered-document caches.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QKeyEvent, QPalette, QWheelEvent
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QWidget

from threadline.ui.common.theme_colors import ThemeColors as ThemeColors
from threadline.ui.common.theme_colors import mix as mix

if TYPE_CHECKING:  # only named here: importing a Qt class makes all its enums (the first frame pays)
    from PySide6.QtGui import QFont, QPainter, QWindow
    from PySide6.QtWidgets import QStyleHintReturn, QStyleOption

log = logging.getLogger("threadline.ui.common.theme")


class ThemeChoice(StrEnum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"
    HIGH_CONTRAST = "high_contrast"
    """Black on white or white on black (following the system's light or dark scheme)."""


LIGHT = ThemeColors(
    name="light",
    dark=False,
    window="#f6f6f4",
    base="#ffffff",
    surface="#efefec",
    text="#1f2328",
    muted="#5c6168",  # ≥ 4.5:1 on every light surface it is drawn on (window, sidebar, hover)
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
    muted="#b0b5bc",  # ≥ 4.5:1 on the selected row's blue too
    border="#3a3d42",
    accent="#5b93f5",
    accent_text="#0b1526",  # white on this blue is 3.0:1; near-black is 6.0:1
    user_bubble="#2d3440",
    code_bg="#1a1c1f",
    code_border="#33363b",
    inline_code_bg="#34373d",
    link="#82aef8",
    selection="#2d4264",
    hover="#303338",
    error_bg="#3a2523",
    error_border="#6b3832",
    error_text="#f2b8b0",
    warning="#e0a54a",
    success="#6cc28a",
    pygments_style="github-dark",
)


HIGH_CONTRAST_LIGHT = ThemeColors(
    name="high-contrast-light",
    dark=False,
    window="#ffffff",
    base="#ffffff",
    surface="#f2f2f2",
    text="#000000",
    muted="#333333",
    border="#000000",
    accent="#0037a6",
    accent_text="#ffffff",
    user_bubble="#e8eefc",
    code_bg="#f5f5f5",
    code_border="#000000",
    inline_code_bg="#ebebeb",
    link="#0033a0",
    selection="#ffe14d",
    hover="#dcdcdc",
    error_bg="#ffffff",
    error_border="#a00000",
    error_text="#8b0000",
    warning="#7a4100",
    success="#00591f",
    pygments_style="bw",
    high_contrast=True,
)

HIGH_CONTRAST_DARK = ThemeColors(
    name="high-contrast-dark",
    dark=True,
    window="#000000",
    base="#000000",
    surface="#121212",
    text="#ffffff",
    muted="#d6d6d6",
    border="#ffffff",
    accent="#8cb8ff",
    accent_text="#000000",
    user_bubble="#14213a",
    code_bg="#0a0a0a",
    code_border="#ffffff",
    inline_code_bg="#262626",
    link="#9cc7ff",
    selection="#143a7a",
    hover="#2e2e2e",
    error_bg="#000000",
    error_border="#ff8080",
    error_text="#ffb3b3",
    warning="#ffc266",
    success="#8fe0a8",
    pygments_style="github-dark",
    high_contrast=True,
)


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def system_prefers_high_contrast() -> bool:
    """Whether the platform asks for high contrast (Qt 6.10+ reads it on Windows, macOS and GNOME)."""
    hints = QGuiApplication.styleHints()
    return hints.accessibility().contrastPreference() == Qt.ContrastPreference.HighContrast


def resolve(choice: ThemeChoice) -> ThemeColors:
    """The colours of a choice; "system" is high contrast when the platform asks for it."""
    if choice is ThemeChoice.DARK:
        return DARK
    if choice is ThemeChoice.LIGHT:
        return LIGHT
    dark = system_prefers_dark()
    if choice is ThemeChoice.HIGH_CONTRAST or system_prefers_high_contrast():
        return HIGH_CONTRAST_DARK if dark else HIGH_CONTRAST_LIGHT
    return DARK if dark else LIGHT


ContrastPair = tuple[str, str, str, float]
"""(what, foreground, background, least ratio): one pairing of colours that shows text."""

NORMAL_TEXT = 4.5
LARGE_OR_UI = 3.0
"""WCAG 2.x level AA: 4.5:1 for normal text, 3:1 for large text and for controls' boundaries."""


def text_pairs(c: ThemeColors) -> list[ContrastPair]:
    """Every pairing of theme colours this application draws text with, and the ratio each needs.

    The contrast test walks this list and the palette roles; a new colour used for text
    belongs here. Disabled controls (muted on a button face) are held to 3:1: WCAG exempts
    them, but they should still be readable.
    """
    warm = mix(c.warning, c.base, 0.10 if c.dark else 0.07).name()
    pairs: list[ContrastPair] = [
        ("text on the window", c.text, c.window, NORMAL_TEXT),
        ("text on a message / field", c.text, c.base, NORMAL_TEXT),
        ("text on the sidebar", c.text, c.surface, NORMAL_TEXT),
        ("text on a selected row", c.text, c.selection, NORMAL_TEXT),
        ("text on a hovered row", c.text, c.hover, NORMAL_TEXT),
        ("text in the user's bubble", c.text, c.user_bubble, NORMAL_TEXT),
        ("code", c.text, c.code_bg, NORMAL_TEXT),
        ("inline code", c.text, c.inline_code_bg, NORMAL_TEXT),
        ("muted (times, hints, unselected tabs) on the window", c.muted, c.window, NORMAL_TEXT),
        ("muted on a message / field", c.muted, c.base, NORMAL_TEXT),
        ("muted on the sidebar", c.muted, c.surface, NORMAL_TEXT),
        ("muted on a hovered row", c.muted, c.hover, NORMAL_TEXT),
        ("muted in the user's bubble", c.muted, c.user_bubble, NORMAL_TEXT),
        ("link on a message", c.link, c.base, NORMAL_TEXT),
        ("link in the user's bubble", c.link, c.user_bubble, NORMAL_TEXT),
        ("primary button label", c.accent_text, c.accent, NORMAL_TEXT),
        ("error banner text and the Stop button", c.error_text, c.error_bg, NORMAL_TEXT),
        ("denied outcome", c.error_text, c.base, NORMAL_TEXT),
        ("allowed outcome", c.success, c.base, NORMAL_TEXT),
        ("warning text", c.warning, c.base, NORMAL_TEXT),
        ("approval bar title", c.text, warm, NORMAL_TEXT),
        ("approval bar hint", c.muted, warm, NORMAL_TEXT),
        ("undo bar", undo_bar_colours(c)[1], undo_bar_colours(c)[0], NORMAL_TEXT),
        ("undo button on the undo bar", undo_button_colour(c), undo_bar_colours(c)[0], NORMAL_TEXT),
        ("muted on a selected row", c.muted, c.selection, NORMAL_TEXT),
        ("Stop button (inverted)", c.base, c.text, NORMAL_TEXT),
        ("disabled Send button", c.muted, c.surface, LARGE_OR_UI),
        ("focus border of a field", c.accent, c.base, LARGE_OR_UI),
    ]
    return pairs


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


def relative_luminance(colour: QColor) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (0 black … 1 white)."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.red()) + 0.7152 * channel(colour.green()) + 0.0722 * channel(colour.blue())


def contrast_ratio(a: str | QColor, b: str | QColor) -> float:
    """WCAG contrast ratio of two colours, 1 (same) to 21 (black on white)."""
    la, lb = relative_luminance(QColor(a)), relative_luminance(QColor(b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def readable_on(colour: str, background: str, least: float = 4.5) -> str:
    """``colour``, mixed toward black or white (away from ``background``) until it reaches ``least``."""
    toward = "#000000" if relative_luminance(QColor(background)) > 0.18 else "#ffffff"
    for step in range(21):
        candidate = mix(toward, colour, step / 20).name()
        if contrast_ratio(candidate, background) >= least:
            return candidate
    return toward


def undo_bar_colours(c: ThemeColors) -> tuple[str, str, str]:
    """The undo bar's background, text and border: inverted (dark on a light window), a raised
    surface on a dark one — the text colour there is a light grey, a glaring bar on dark."""
    if not c.dark:
        return c.text, c.base, c.text
    return mix(c.text, c.surface, 0.12).name(), c.text, mix(c.text, c.surface, 0.28).name()


def undo_button_colour(c: ThemeColors) -> str:
    """The Undo button's label on the undo bar."""
    return readable_on(c.accent, undo_bar_colours(c)[0], 7.0 if c.high_contrast else 4.5)


def halfway(a: str, b: str) -> str:
    """The colour midway between ``a`` and ``b``: a flat control's disabled text, between its
    muted text and the surface it sits on (muted alone is how it looks at rest)."""
    x, y = QColor(a), QColor(b)
    return QColor((x.red() + y.red()) // 2, (x.green() + y.green()) // 2, (x.blue() + y.blue()) // 2).name()


def build_stylesheet(c: ThemeColors) -> str:
    """The application stylesheet: flat, quiet surfaces, one accent colour."""
    return f"""
QMainWindow, QDialog {{ background: {c.window}; }}
QToolTip {{ background: {c.surface}; color: {c.text}; border: 1px solid {c.border}; padding: 4px 6px; }}
QSplitter::handle {{ background: {c.border}; }}
QSplitter::handle:horizontal {{ width: 1px; }}
QStatusBar {{ background: {c.window}; color: {c.muted}; border-top: 1px solid {c.border}; }}
QStatusBar QLabel {{ color: {c.muted}; padding: 1px 6px; }}
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
#UndoBar {{ background: {undo_bar_colours(c)[0]}; border: 1px solid {undo_bar_colours(c)[2]};
            border-radius: 6px; }}
#UndoBar QLabel {{ color: {undo_bar_colours(c)[1]}; }}
#UndoBar QPushButton {{ color: {undo_button_colour(c)};
                        background: transparent; border: none; font-weight: 600; padding: 2px 6px; }}

QTabWidget::pane {{ border: none; background: {c.base}; }}
QTabBar {{ background: {c.window}; }}
QTabBar::tab {{ background: transparent; color: {c.muted}; padding: 7px 12px; margin: 4px 0 0 4px;
               border: 1px solid transparent; border-bottom: none; border-top-left-radius: 6px;
               border-top-right-radius: 6px; min-width: 60px; max-width: 220px; }}
QTabBar::tab:selected {{ background: {c.base}; color: {c.text}; border-color: {c.border}; }}
QTabBar::tab:hover:!selected {{ background: {c.hover}; }}
QTabBar::tab:selected:focus {{ border: 2px solid {c.link}; border-bottom: none; padding: 6px 11px 7px 11px; }}
QTabBar::scroller {{ width: 52px; }}
#ScrollLeftButton, #ScrollRightButton {{ background: {c.window}; border: none; border-radius: 4px;
                                        margin: 6px 1px 2px 1px; }}
#ScrollLeftButton:hover, #ScrollRightButton:hover {{ background: {c.hover}; }}
#TabClose {{ border: none; border-radius: 4px; color: {c.muted}; padding: 0px 3px; font-size: 14px; }}
#TabClose:hover {{ background: {c.hover}; color: {c.text}; }}
#TabListButton {{ border: none; border-radius: 4px; color: {c.text}; padding: 2px 8px; margin: 4px 4px 0 0;
                  font-size: 15px; }}
#TabListButton:hover, #TabListButton:focus {{ background: {c.hover}; }}
#TabListButton::menu-indicator {{ image: none; width: 0; }}

ChatView {{ background: {c.base}; border: none; }}
#ChatTab {{ background: {c.base}; }}
#ComposerFrame {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 10px; }}
#ComposerFrame[focused="true"] {{ border-color: {c.accent}; }}
#ComposerEdit {{ background: transparent; border: none; color: {c.text};
                 selection-background-color: {c.selection}; }}
#ComposerHint {{ color: {c.muted}; }}
#SendButton {{ background: {c.accent}; color: {c.accent_text}; border: none; border-radius: 6px;
               padding: 5px 14px; font-weight: 600; }}
#SendButton:disabled {{ background: {c.surface}; color: {c.muted}; border: 1px solid {c.border}; }}
#SendButton[stop="true"] {{ background: {c.error_bg}; color: {c.error_text};
                            border: 1px solid {c.error_border}; }}
#FlatButton {{ background: transparent; border: none; color: {c.muted}; padding: 4px 8px;
               border-radius: 5px; }}
#FlatButton:hover {{ background: {c.hover}; color: {c.text}; }}
#ModelPicker, #AgentPicker {{ background: transparent; border: 1px solid transparent; border-radius: 5px;
                              color: {c.muted}; padding: 3px 6px; }}
#ModelPicker:hover, #AgentPicker:hover, #ModelPicker:focus, #AgentPicker:focus {{ border-color: {c.border};
                                                                               color: {c.text}; }}
#ModelPicker:disabled, #AgentPicker:disabled {{ color: {halfway(c.muted, c.base)}; }}
QToolButton#FlatButton[popupMode="2"] {{ padding-right: 18px; }}
QToolButton#FlatButton::menu-indicator {{ subcontrol-origin: padding; subcontrol-position: center right;
                                        right: 4px; }}
#AttachmentChip {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 10px; }}
#AttachmentChip QLabel {{ color: {c.text}; }}
#AttachmentChip QToolButton {{ border: none; color: {c.muted}; }}
#AttachmentChip[state="failed"] {{ background: {c.error_bg}; border-color: {c.error_border}; }}
#AttachmentChip[state="failed"] QLabel {{ color: {c.error_text}; }}
#AttachmentChip[state="reading"] QLabel {{ color: {c.muted}; }}
#AttachmentBadge {{ color: {c.accent}; }}
#AttachmentChip[state="failed"] #AttachmentBadge {{ color: {c.error_text}; }}

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
#ContextWarning {{ color: {c.warning}; }}
#ProviderList {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 6px; padding: 4px; }}
#ProviderList::item {{ padding: 6px 8px; border-radius: 4px; color: {c.text}; }}
#ProviderList::item:selected {{ background: {c.selection}; }}
#SlashCompleter {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 8px; }}
#SlashCommandList {{ background: {c.base}; border: none; outline: none; padding: 4px; }}
#SlashCommandList::item {{ border-radius: 5px; }}
#SlashCommandList::item:selected {{ background: {c.selection}; }}
#SlashCommandName {{ color: {c.text}; }}
QScrollBar:vertical {{ background: transparent; width: 10px; margin: 0; }}
QScrollBar::handle:vertical {{ background: {c.border}; border-radius: 4px; min-height: 30px; margin: 2px; }}
QScrollBar::handle:vertical:hover {{ background: {c.muted}; }}
QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical {{ height: 0; }}
QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical {{ background: transparent; }}
"""


PE = QStyle.PrimitiveElement


class ThemedStyle(QProxyStyle):
    """Fusion, with theme-coloured check and radio indicators and Alt-only mnemonic underlines."""

    def __init__(self, colors: ThemeColors, mnemonics: MnemonicState) -> None:
        super().__init__(QStyleFactory.create("Fusion"))
        self.colors = colors
        self._mnemonics = mnemonics

    def styleHint(
        self,
        hint: QStyle.StyleHint,
        option: QStyleOption | None = None,
        widget: QWidget | None = None,
        returnData: QStyleHintReturn | None = None,
    ) -> int:
        if hint == QStyle.StyleHint.SH_UnderlineShortcut:
            return int(self._mnemonics.shown)
        return super().styleHint(hint, option, widget, returnData)

    def drawPrimitive(
        self, element: PE, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        if element in (PE.PE_IndicatorCheckBox, PE.PE_IndicatorRadioButton):
            from threadline.ui.common.check_indicator import draw_check_indicator

            draw_check_indicator(self.colors, option, painter, radio=element == PE.PE_IndicatorRadioButton)
        else:
            super().drawPrimitive(element, option, painter, widget)


class MnemonicState(QObject):
    """Whether mnemonic underlines show: only while Alt is held (the platforms' default).

    It watches the Alt presses and releases, and on a change repaints the widgets that
    draw mnemonics. The shortcuts themselves always work.

    A key press reaches the window that has the focus (its ``QWindow``) before the focus
    widget, so the watch sits on each window as it takes the focus, not on the whole
    application: an application-wide Python filter is shown every event of every widget
    (paints, layouts, timers), and PySide6 wraps each one, making the enums of every class
    it meets, a cost before the sidebar's first paint and over every run (docs/performance.md,
    "Window"). When the application loses the focus, the
    underlines go (the Alt release may never come back to it).

    The window starts it only after its first paint (``listen=False``, then ``listen()``).
    """

    def __init__(self, app: QApplication, *, listen: bool = True) -> None:
        super().__init__(app)
        self.setObjectName("MnemonicState")
        self.shown = False
        self.listening = False
        if listen:
            self.listen()

    def listen(self) -> None:
        """Start watching Alt (once; later calls do nothing)."""
        if not self.listening:
            self.listening = True
            app = self.parent()
            assert isinstance(app, QApplication)
            app.focusWindowChanged.connect(self._focus_moved)
            app.applicationStateChanged.connect(self._application_state_changed)
            self._focus_moved(app.focusWindow())

    @classmethod
    def of(cls, app: QApplication, *, listen: bool = True) -> MnemonicState:
        """The application's one instance (every theme manager and style shares it)."""
        found = app.findChild(cls, "MnemonicState")
        if isinstance(found, cls):
            if listen:
                found.listen()
            return found
        return cls(app, listen=listen)

    def _focus_moved(self, window: QWindow | None) -> None:
        if window is None:
            self._set(False)
        else:
            window.installEventFilter(self)  # a window watched before is not watched twice

    def _application_state_changed(self, state: Qt.ApplicationState) -> None:
        if state != Qt.ApplicationState.ApplicationActive:
            self._set(False)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and isinstance(event, QKeyEvent):
            if event.key() == Qt.Key.Key_Alt:
                self._set(kind == QEvent.Type.KeyPress)
            elif self.shown and not event.modifiers() & Qt.KeyboardModifier.AltModifier:
                self._set(False)
        return False

    def _set(self, shown: bool) -> None:
        if shown == self.shown:
            return
        self.shown = shown
        from PySide6.QtWidgets import QAbstractButton, QLabel, QMenuBar

        for window in QApplication.topLevelWidgets():
            if not window.isVisible():
                continue
            window.update()
            for widget in (
                window.findChildren(QAbstractButton)
                + window.findChildren(QMenuBar)
                + window.findChildren(QLabel)
            ):
                widget.update()


class ThemeManager(QObject):
    """Owns the current theme; follows the system scheme while the choice is ``system``."""

    changed = Signal(object)  # ThemeColors

    def __init__(self, app: QApplication, choice: ThemeChoice = ThemeChoice.SYSTEM) -> None:
        super().__init__(app)
        self._app = app
        self._choice = choice
        self._colors = resolve(choice)
        self._hints = app.styleHints()  # kept: its accessibility() child dies with a dropped wrapper
        self._hints.colorSchemeChanged.connect(self._system_changed)
        self._hints.accessibility().contrastPreferenceChanged.connect(self._system_changed)

    @property
    def colors(self) -> ThemeColors:
        return self._colors

    @property
    def choice(self) -> ThemeChoice:
        return self._choice

    def apply(self, *, watch_alt: bool = True) -> None:
        """Style, palette and style sheet; ``watch_alt=False`` leaves the Alt watch for later
        (``MnemonicState.of(app).listen()``, after the first paint)."""
        self._app.setStyle(ThemedStyle(self._colors, MnemonicState.of(self._app, listen=watch_alt)))
        self._app.setPalette(build_palette(self._colors))
        self._app.setStyleSheet(build_stylesheet(self._colors))

    def set_choice(self, choice: ThemeChoice) -> None:
        self._choice = choice
        self._update()

    def _system_changed(self, _preference: object) -> None:
        if self._choice in (ThemeChoice.SYSTEM, ThemeChoice.HIGH_CONTRAST):
            self._update()

    def _update(self) -> None:
        colors = resolve(self._choice)
        if colors is self._colors:
            return
        log.info("theme -> %s", colors.name)
        self._colors = colors
        self.apply()
        self.changed.emit(colors)


ZOOM_KEY = "ui.text_zoom"
"""The setting that remembers the text size across restarts (points added to the base size)."""


class TextZoom(QObject):
    """The text size of the conversation: the chat views and composers follow one level.

    The level is a number of points added to the application's base font (0 = normal),
    kept between ``MIN_LEVEL`` and ``MAX_LEVEL``. Widgets are attached once (a tab's
    chat view and composer); they get the zoomed font now and at every change, and
    Ctrl+wheel over them zooms (the view re-lays out its messages on ``FontChange``).
    Saving the level is the window's job: it listens to ``changed``.
    """

    changed = Signal(int)
    MIN_LEVEL = -4
    MAX_LEVEL = 16

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._level = 0
        self._widgets: list[QWidget] = []
        self._wheel_targets: set[QObject] = set()

    @property
    def level(self) -> int:
        return self._level

    def set_level(self, level: int) -> None:
        level = max(self.MIN_LEVEL, min(self.MAX_LEVEL, int(level)))
        if level == self._level:
            return
        self._level = level
        for widget in self._widgets:
            self._apply(widget)
        self.changed.emit(level)

    def zoom_in(self) -> None:
        self.set_level(self._level + 1)

    def zoom_out(self) -> None:
        self.set_level(self._level - 1)

    def reset(self) -> None:
        self.set_level(0)

    def font(self) -> QFont:
        """The application font at the current level."""
        from PySide6.QtGui import QFont

        font = QFont(QApplication.font())
        base = font.pointSizeF() if font.pointSizeF() > 0 else 10.0
        font.setPointSizeF(max(6.0, base + self._level))
        return font

    def attach(self, *widgets: QWidget) -> None:
        """Give ``widgets`` the zoomed font from now on; Ctrl+wheel over them zooms."""
        from PySide6.QtWidgets import QAbstractScrollArea

        for widget in widgets:
            if widget in self._widgets:
                continue
            self._widgets.append(widget)
            target: QObject = widget.viewport() if isinstance(widget, QAbstractScrollArea) else widget
            target.installEventFilter(self)
            self._wheel_targets.add(target)
            widget.destroyed.connect(lambda _obj=None, w=widget, t=target: self._forget(w, t))
            self._apply(widget)

    def _forget(self, widget: QWidget, target: QObject) -> None:
        if widget in self._widgets:
            self._widgets.remove(widget)
        self._wheel_targets.discard(target)

    def _apply(self, widget: QWidget) -> None:
        widget.setFont(self.font())

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Wheel
            and isinstance(event, QWheelEvent)
            and obj in self._wheel_targets
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            delta = event.angleDelta().y()
            if delta > 0:
                self.zoom_in()
            elif delta < 0:
                self.zoom_out()
            event.accept()
            return True
        return False
