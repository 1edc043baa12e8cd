"""The text to ask about: the X11 primary selection where the system has one, else the clipboard.

The primary selection is what is highlighted in any application right now, without a
copy; Windows, macOS and most Wayland compositors have none, so the clipboard stands in
(docs/quick-ask.md).
"""

from __future__ import annotations

from PySide6.QtGui import QClipboard, QGuiApplication

MAX_QUOTE_CHARS = 20_000
"""A selection longer than this is cut: the quote is for a question, not a whole document."""


def selected_text() -> str:
    """The primary selection if supported and not empty, else the clipboard's text."""
    clipboard = QGuiApplication.clipboard()
    if clipboard.supportsSelection():
        text = clipboard.text(QClipboard.Mode.Selection)
        if text.strip():
            return text
    return clipboard.text(QClipboard.Mode.Clipboard)


def as_quote(text: str) -> str:
    """``text`` as a Markdown block quote followed by an empty line for the question."""
    text = text.strip("\n")
    if not text.strip():
        return ""
    if len(text) > MAX_QUOTE_CHARS:
        text = text[:MAX_QUOTE_CHARS] + "…"
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())
    return f"{quoted}\n\n"
