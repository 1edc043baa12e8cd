"""A message's menu (Menu key, Shift+F10, right click): its commands with the keys that do
them, in the order the footer offers them, then what the pointer was on (a link, a formula).

The view decides which commands a message offers (``offered_commands``) and runs the one
chosen; this only lists and lays them out.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from threadline.core.messages import Message
from threadline.ui.chat.view.markdown import is_safe_link
from threadline.ui.chat.view.math_render import formula_of_url
from threadline.ui.chat.view.message_actions import VERSION, menu_actions_for
from threadline.ui.chat.view.message_keys import COMMANDS, SELECT_TEXT

COPYING = ("copy", "copy_markdown", "copy_chat_markdown", SELECT_TEXT)
"""The menu's first group: what copies or selects a message's text."""


def offered_commands(message: Message, footer: list[str], *, busy: bool, versions: int) -> list[str]:
    """What can be done to a message now, in menu order: the footer's ``actions`` plus Select
    text, the version switcher as Previous/Next version, then what only the menu offers."""
    commands: list[str] = []
    for action in footer:
        if action == VERSION:
            commands += ["prev_version", "next_version"]
        else:
            commands.append(action)
            if action == "copy":
                commands.append(SELECT_TEXT)
    if SELECT_TEXT not in commands and message.text:
        commands.insert(0, SELECT_TEXT)
    return commands + menu_actions_for(message, busy=busy, versions=versions)


def message_menu(parent: QWidget, commands: list[str], href: str | None, run: Callable[[str], None]) -> QMenu:
    """The menu of a message offering ``commands``; choosing one calls ``run`` with its name."""
    menu = QMenu(parent)
    menu.setObjectName("MessageMenu")
    for action in COPYING:
        if action in commands or action in ("copy", SELECT_TEXT):
            _add_command(menu, action, run)
    if href and is_safe_link(href):
        menu.addAction("Copy link address", lambda: QGuiApplication.clipboard().setText(href))
    formula = formula_of_url(href) if href else None
    if formula is not None:
        copy_latex = menu.addAction("Copy LaTeX", lambda: QGuiApplication.clipboard().setText(formula[0]))
        copy_latex.setObjectName("message-action-copy-latex")
    others = [a for a in commands if a not in COPYING]
    if others:
        menu.addSeparator()
        for action in others:
            _add_command(menu, action, run)
    return menu


def _add_command(menu: QMenu, action: str, run: Callable[[str], None]) -> None:
    command = COMMANDS[action]
    entry = menu.addAction(command.label, _later(run, action))
    entry.setShortcut(command.shortcut)  # shown beside the label; the view's keys do the work
    entry.setObjectName(f"message-action-{action}")


def _later(run: Callable[[str], None], action: str) -> Callable[[], None]:
    """A menu callback that runs ``action`` (binds it now)."""

    def trigger() -> None:
        run(action)

    return trigger
