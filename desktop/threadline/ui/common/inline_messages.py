"""A dialog that shows the bridge's messages in its own line while it is open.

A dialog that asks the engine for something (Settings, a project, an MCP server, a chat's
context) wants the answer where the person is looking, not in the status bar behind it.
It claims the window's bridge (``claim_while_open``): while it is visible, messages about
no particular chat show in its line; it lets go when it closes. Built without a window
(a test, a dialog of its own), it gets a bridge of its own, so the same route holds.
See docs/ui-layout.md, "Telling the user".
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QLabel

from threadline.ui.common.message_bridge import InlineSink, MessageBridge, UserMessage, bridge_of


def claim_while_open(dialog: QDialog, sink: InlineSink) -> MessageBridge:
    """Claim the bridge ``dialog`` reaches (or a new one of its own) for ``sink`` (usually the
    dialog itself) until the dialog finishes; the dialog keeps the result as its ``bridge``."""
    bridge = bridge_of(dialog) or MessageBridge(dialog)
    bridge.claim(sink)
    dialog.finished.connect(lambda _code: bridge.release(sink))
    return bridge


def show_in_label(label: QLabel, message: UserMessage) -> None:
    """The usual inline place: the dialog's message line, shown."""
    label.setText(message.text)
    label.show()
