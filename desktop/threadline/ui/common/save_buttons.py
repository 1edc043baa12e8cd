"""The foot of an editing dialog: a line for what went wrong, then Save and Cancel.

Three dialogs (a chat's sticky context, a project, an MCP server) save through the
engine and stay open when it refuses, showing why in ``message``; they share this
foot so its look (Save primary, no platform icons) and behaviour stay the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout


@dataclass(frozen=True, slots=True)
class SaveFoot:
    message: QLabel
    """Hidden until a save fails; then the reason, in the form's error style."""
    buttons: QDialogButtonBox
    save_button: QPushButton


def add_save_foot(dialog: QDialog, layout: QVBoxLayout, save: Callable[[], None]) -> SaveFoot:
    """Add the error line and Save/Cancel to ``layout``; Save calls ``save``, Cancel rejects.

    Save is not the default button: Enter in a field (a path to add, a name) must not save
    the whole dialog.
    """
    message = QLabel()
    message.setObjectName("FormError")
    message.setWordWrap(True)
    message.hide()
    layout.addWidget(message)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
    for button in buttons.buttons():
        button.setObjectName("SecondaryButton")
        button.setIcon(QIcon())
    save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
    save_button.setObjectName("PrimaryButton")
    save_button.setAutoDefault(False)
    buttons.accepted.connect(save)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    return SaveFoot(message, buttons, save_button)
