"""A code block's Copy link says "Copied" for a moment after it copied.

The status bar's note is far from the pointer and easy to miss; the confirmation belongs
where the person clicked. The link is part of the message's rendered document, so its
text is changed in that document (its format, and so its link, kept) and changed back
when the moment is over. A document rendered again meanwhile simply shows "Copy".
"""

from __future__ import annotations

from PySide6.QtGui import QTextDocument

COPY_TEXT = "Copy"
COPIED_TEXT = "Copied"
COPIED_MS = 1500
"""How long "Copied" shows."""


def relabel_link(doc: QTextDocument, href: str, old: str, new: str) -> bool:
    """Replace the text ``old`` of the link to ``href`` in ``doc`` by ``new``; False if not found."""
    cursor = doc.find(old)
    while not cursor.isNull():
        if cursor.charFormat().anchorHref() == href:
            fmt = cursor.charFormat()
            cursor.insertText(new, fmt)
            return True
        cursor = doc.find(old, cursor)
    return False
