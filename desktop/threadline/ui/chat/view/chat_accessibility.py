"""What assistive technology sees of the chat view: a list with one item per message.

The chat view paints its messages itself, so without this module a screen reader finds
one empty area. Qt asks a factory (``QAccessible.installFactory``) for the accessible
interface of each object; ours answers for the chat view with a ``List`` whose children
are the messages on the active path, and for each message with a ``ListItem`` that has a
name (who and when, and a status such as "Streaming…"), a description (the message's
text), states (focused, selected, off screen) and the message's actions.

How this is done in PySide6, and why:

* **One stand-in QObject per message** (:class:`MessageItem`, created only when an
  assistive tool asks for that message). Qt's accessibility cache owns every interface it
  has given an id to and deletes an interface only when its object is destroyed; an
  interface without an object would stay in the cache forever (and Python would free it
  underneath the cache). With a stand-in, the factory creates the message's interface, the
  cache owns it, and deleting the stand-in when the message leaves the view deletes the
  interface. The stand-ins are children of the view, so nothing outlives it.
* **Interfaces hold the view weakly.** PySide6 6.11 keeps the Python side of an interface
  the factory made alive after Qt's cache has deleted its C++ side, so a stand-in that held
  its view strongly kept a closed tab (view, model and the whole conversation) for the rest
  of the run once one reply had been announced. The stand-ins and the view's interface
  reach the view through weak references: what outlives the tab is a few small wrappers.
* **Actions through a separate object.** ``QAccessibleInterface.actionInterface()`` is a
  non-virtual C++ helper that calls the virtual ``interface_cast``. A Python subclass of
  both ``QAccessibleObject`` and ``QAccessibleActionInterface`` crashes there (Shiboken
  keeps one C++ object per wrapped base, so no pointer is both). What works: the message's
  interface keeps a plain ``QAccessibleActionInterface`` subclass (:class:`MessageActions`)
  and ``interface_cast`` returns ``shiboken6.VoidPtr(that object)`` — its C++ pointer — so
  Qt's AT-SPI bridge and ``actionInterface()`` in Python both reach it. Every other
  interface type must get ``VoidPtr(0)``, a null pointer: a plain ``0`` or ``None`` is
  passed to C++ as the address of that Python object, and the AT-SPI bridge, which asks
  for the table, value and text interfaces on every GetState, crashes.
* **The view's own interface subclasses ``QAccessibleWidget``**, so everything a widget
  reports (focus, geometry, the accessible name the window gives it) stays Qt's; only
  role, children and the focused child are ours.

Events: moving the current message sends ``Focus`` for that message's item (only while the
view has the keyboard focus, as a screen reader expects). A finished reply is announced
once with ``QAccessibleAnnouncementEvent`` (new in Qt 6.8, present in PySide6 6.11), never
per streamed token: the model coalesces tokens, but a screen reader would still read each
change, so nothing is sent while a reply streams.
"""

from __future__ import annotations

import logging
import weakref
from typing import Protocol

from PySide6.QtCore import QObject, QPoint, QRect
from PySide6.QtGui import (
    QAccessible,
    QAccessibleActionInterface,
    QAccessibleAnnouncementEvent,
    QAccessibleEvent,
    QAccessibleInterface,
    QAccessibleObject,
    QWindow,
)
from PySide6.QtWidgets import QAccessibleWidget, QWidget
from shiboken6 import VoidPtr

from threadline.core.messages import Message, MessageStatus
from threadline.ui.chat.view.message_keys import COMMANDS
from threadline.ui.chat.view.message_labels import speaker, status_text, time_label

log = logging.getLogger("threadline.ui.chat.view.chat_accessibility")

ANNOUNCE_MAX_CHARS = 4000
"""A finished reply is announced whole up to this length (longer ones: the start, then a note)."""


class MessageList(Protocol):
    """What the accessible interfaces need from the chat view (kept apart to avoid an import cycle)."""

    def accessible_message_count(self) -> int: ...
    def accessible_message_id(self, row: int) -> str | None: ...
    def accessible_row_of(self, message_id: str) -> int: ...
    def accessible_message(self, message_id: str) -> Message | None: ...
    def current_message_id(self) -> str | None: ...
    def set_current_message(self, message_id: str) -> bool: ...
    def message_screen_rect(self, message_id: str) -> QRect | None: ...
    def message_id_at(self, global_pos: QPoint) -> str | None: ...
    def offered_commands(self, message_id: str) -> list[str]: ...
    def run_command(self, action: str, message_id: str) -> None: ...
    def open_message_menu(self, message_id: str) -> None: ...
    def hasFocus(self) -> bool: ...
    def window(self) -> QWidget: ...


def message_name(message: Message) -> str:
    """What a screen reader says first about a message: who, when, and a status if not complete."""
    parts = [speaker(message), time_label(message)]
    status = status_text(message)
    if status:
        parts.append(status)
    return ", ".join(p for p in parts if p)


class MessageItem(QObject):
    """Stand-in object for one message (see the module docstring: the cache owns its interface)."""

    def __init__(self, view: MessageList, message_id: str, parent: QObject) -> None:
        super().__init__(parent)
        self._view = weakref.ref(view)
        self.message_id = message_id
        self.setObjectName(f"message-{message_id}")

    @property
    def view(self) -> MessageList:
        """The chat view, held weakly (see the module docstring: interfaces that outlive it)."""
        view = self._view()
        if view is None:
            raise RuntimeError(f"the chat view of message {self.message_id} is gone")
        return view


class MessageActions(QAccessibleActionInterface):
    """The actions of one message, named by their menu labels, with the keys that do them."""

    def __init__(self, item: MessageItem) -> None:
        super().__init__()
        self._item = item

    def _offered(self) -> dict[str, str]:
        """Label → action name of what the message offers now."""
        view, mid = self._item.view, self._item.message_id
        return {COMMANDS[a].label: a for a in view.offered_commands(mid) if a in COMMANDS}

    def actionNames(self) -> list[str]:
        names = list(self._offered())
        return [
            *names,
            QAccessibleActionInterface.setFocusAction(),
            QAccessibleActionInterface.showMenuAction(),
        ]

    def localizedActionName(self, name: str) -> str:
        if name == QAccessibleActionInterface.setFocusAction():
            return "Focus"
        if name == QAccessibleActionInterface.showMenuAction():
            return "Show menu"
        return name

    def localizedActionDescription(self, name: str) -> str:
        return self.localizedActionName(name)

    def keyBindingsForAction(self, name: str) -> list[str]:
        action = self._offered().get(name)
        if action is None:
            return ["Menu"] if name == QAccessibleActionInterface.showMenuAction() else []
        return [COMMANDS[action].shortcut.toString()]

    def doAction(self, name: str) -> None:
        view, mid = self._item.view, self._item.message_id
        if name == QAccessibleActionInterface.setFocusAction():
            view.set_current_message(mid)
        elif name == QAccessibleActionInterface.showMenuAction():
            view.set_current_message(mid)
            view.open_message_menu(mid)
        else:
            action = self._offered().get(name)
            if action is not None:
                view.run_command(action, mid)


class MessageAccessible(QAccessibleObject):
    """One message as a list item: name, text, states, place on screen and actions."""

    def __init__(self, item: MessageItem) -> None:
        super().__init__(item)
        self._item = item
        self._actions = MessageActions(item)

    def _message(self) -> Message | None:
        return self._item.view.accessible_message(self._item.message_id)

    def isValid(self) -> bool:
        return (
            QAccessibleObject.isValid(self) and self._item.view.accessible_row_of(self._item.message_id) >= 0
        )

    def role(self) -> QAccessible.Role:
        return QAccessible.Role.ListItem

    def text(self, t: QAccessible.Text) -> str:
        message = self._message()
        if message is None:
            return ""
        if t == QAccessible.Text.Name:
            return message_name(message)
        if t == QAccessible.Text.Description:
            return message.text
        return ""

    def setText(self, t: QAccessible.Text, text: str) -> None:
        return None  # messages are read-only here; Edit (E) edits a prompt in the composer

    def state(self) -> QAccessible.State:
        view, mid = self._item.view, self._item.message_id
        state = QAccessible.State()
        state.focusable = True
        state.selectable = True
        state.readOnly = True
        current = view.current_message_id() == mid
        state.selected = current
        state.focused = current and view.hasFocus()
        message = self._message()
        state.busy = message is not None and message.status is MessageStatus.STREAMING
        state.offscreen = view.message_screen_rect(mid) is None
        return state

    def rect(self) -> QRect:
        return self._item.view.message_screen_rect(self._item.message_id) or QRect()

    def parent(self) -> QAccessibleInterface:
        return QAccessible.queryAccessibleInterface(self._item.view)  # type: ignore[arg-type]

    def child(self, index: int) -> QAccessibleInterface | None:  # type: ignore[override]
        return None

    def childCount(self) -> int:
        return 0

    def indexOfChild(self, child: QAccessibleInterface) -> int:
        return -1

    def window(self) -> QWindow | None:  # type: ignore[override]
        return self._item.view.window().windowHandle()

    def interface_cast(self, t: QAccessible.InterfaceType) -> int:
        # A pointer as Shiboken's VoidPtr: of the action interface, else null (see the module
        # docstring; a plain 0 or None becomes the address of that Python object).
        if t == QAccessible.InterfaceType.ActionInterface:
            return VoidPtr(self._actions)  # type: ignore[arg-type, return-value]
        return VoidPtr(0)  # type: ignore[return-value]


class ChatViewAccessible(QAccessibleWidget):
    """The chat view as a list whose children are its messages."""

    def __init__(self, view: QWidget, messages: MessageItems) -> None:
        super().__init__(view, QAccessible.Role.List)
        self._items_of_view = weakref.ref(messages)

    @property
    def _items(self) -> MessageItems:
        """The view's stand-ins, held weakly (see the module docstring: interfaces that outlive it)."""
        items = self._items_of_view()
        if items is None:
            raise RuntimeError("the chat view's messages are gone")
        return items

    def childCount(self) -> int:
        return self._items.view.accessible_message_count()

    def child(self, index: int) -> QAccessibleInterface | None:  # type: ignore[override]
        mid = self._items.view.accessible_message_id(index)
        return self._items.interface(mid) if mid is not None else None

    def indexOfChild(self, child: QAccessibleInterface) -> int:
        item = child.object() if child is not None else None
        if isinstance(item, MessageItem):
            return self._items.view.accessible_row_of(item.message_id)
        return -1

    def focusChild(self) -> QAccessibleInterface | None:  # type: ignore[override]
        mid = self._items.view.current_message_id()
        if mid is None or not self._items.view.hasFocus():
            return None
        return self._items.interface(mid)

    def childAt(self, x: int, y: int) -> QAccessibleInterface | None:  # type: ignore[override]
        mid = self._items.view.message_id_at(QPoint(x, y))
        return self._items.interface(mid) if mid is not None else None


class MessageItems(QObject):
    """The stand-ins of the messages an assistive tool has asked about, and the events about them."""

    def __init__(self, view: MessageList, owner: QObject) -> None:
        super().__init__(owner)
        self.view = view
        self._items: dict[str, MessageItem] = {}

    def interface(self, message_id: str) -> QAccessibleInterface | None:
        """The accessible interface of a message in the view (made on first use)."""
        if self.view.accessible_row_of(message_id) < 0:
            return None
        item = self._items.get(message_id)
        if item is None:
            item = self._items[message_id] = MessageItem(self.view, message_id, self)
        return QAccessible.queryAccessibleInterface(item)

    def prune(self) -> None:
        """Let go of the stand-ins of messages no longer in the view (their interfaces go with them)."""
        for mid in [m for m in self._items if self.view.accessible_row_of(m) < 0]:
            item = self._items.pop(mid)
            item.setParent(None)
            item.deleteLater()

    def focus_moved(self, message_id: str) -> None:
        """Tell assistive tools the focused message changed (only while the view has the focus)."""
        if not self.view.hasFocus():
            return
        iface = self.interface(message_id)
        if iface is not None:
            QAccessible.updateAccessibility(QAccessibleEvent(iface, QAccessible.Event.Focus))

    def reply_finished(self, message_id: str) -> None:
        """Announce a reply that has just finished, once: its author and its text."""
        message = self.view.accessible_message(message_id)
        iface = self.interface(message_id)
        if message is None or iface is None:
            return
        text = message.text
        if len(text) > ANNOUNCE_MAX_CHARS:
            text = text[:ANNOUNCE_MAX_CHARS] + " … (the reply goes on; move to it to read the rest)"
        status = status_text(message)
        heading = f"{speaker(message)} replied" + (f" ({status})" if status else "")
        event = QAccessibleAnnouncementEvent(iface, f"{heading}: {text}" if text else heading)
        event.setPoliteness(QAccessible.AnnouncementPoliteness.Polite)
        QAccessible.updateAccessibility(event)
        # The item itself changed too (its name loses "Streaming…", its text is final): AT-SPI
        # clients cache both, and only these events refresh them.
        QAccessible.updateAccessibility(QAccessibleEvent(iface, QAccessible.Event.NameChanged))
        QAccessible.updateAccessibility(QAccessibleEvent(iface, QAccessible.Event.DescriptionChanged))


_installed_for: list[type[QWidget]] = []


def install(view_class: type[QWidget], items_of: str = "accessible_items") -> None:
    """Install the factory once per process for ``view_class`` (whose ``items_of`` attribute
    holds its :class:`MessageItems`)."""
    if view_class in _installed_for:
        return
    _installed_for.append(view_class)

    def factory(_key: str, obj: QObject) -> QAccessibleInterface | None:
        try:
            if isinstance(obj, MessageItem):
                return MessageAccessible(obj)
            if isinstance(obj, view_class):
                items = getattr(obj, items_of, None)
                if isinstance(items, MessageItems):
                    return ChatViewAccessible(obj, items)
        except Exception:  # Qt calls this from C++: an exception must not escape
            log.exception("could not create an accessible interface")
        return None

    QAccessible.installFactory(factory)
