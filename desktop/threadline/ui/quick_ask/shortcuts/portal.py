"""The global shortcut on Wayland: the XDG Desktop Portal's ``org.freedesktop.portal.GlobalShortcuts``.

Wayland lets no client grab keys; the compositor binds them for an application through the
portal. The flow (the portal's specification, version 1 and 2):

1. ``CreateSession(a{sv} options) → o request``; the session handle arrives in the
   ``org.freedesktop.portal.Request.Response`` signal of that request
   (``session_handle``). The request's path is known in advance
   (``/org/freedesktop/portal/desktop/request/SENDER/TOKEN``), so the answer is listened
   for before the call, as the specification asks.
2. ``BindShortcuts(o session, a(sa{sv}) shortcuts, s parent_window, a{sv} options) → o
   request``: the compositor may ask the person (and may pick another trigger); the
   ``preferred_trigger`` follows the XDG shortcuts specification ("CTRL+ALT+space").
3. ``Activated(o session, s shortcut_id, t timestamp, a{sv} options)`` on each press.

The session lives as long as the D-Bus connection, so letting go is closing it.

Why jeepney and not QtDBus: PySide6's ``QDBusArgument`` cannot write an array of structures
(``a(sa{sv})``: ``beginArray`` takes only a registered element type, and writing a structure
into it aborts the process), so ``BindShortcuts`` cannot be called through it. jeepney is a
pure-Python D-Bus library already installed with ``keyring`` on Linux (docs/quick-ask.md).

This backend cannot be tried here (no portal on a virtual screen); it follows the
specification and is kept small.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QKeySequence

from threadline.ui.common.tasks import LogOnly, spawn
from threadline.ui.quick_ask.shortcuts.base import ShortcutError, cannot_use
from threadline.ui.quick_ask.shortcuts.keys import chord_of, portal_trigger

log = logging.getLogger("threadline.ui.quick_ask.portal")

SHORTCUT_ID = "quick-ask"
_PORTAL_PATH = "/org/freedesktop/portal/desktop"
_PORTAL_NAME = "org.freedesktop.portal.Desktop"
_INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
_tokens = itertools.count(1)


class PortalShortcut:
    """A shortcut bound through the desktop portal; ``failed`` hears a refusal that comes later."""

    name = "the desktop portal"
    local = False

    def __init__(self, failed: Callable[[str], None]) -> None:
        self._failed = failed
        self._task: asyncio.Task[None] | None = None

    def bind(self, sequence: QKeySequence, activated: Callable[[], None]) -> None:
        self.unbind()
        chord = chord_of(sequence)
        trigger = portal_trigger(chord) if chord is not None else None
        if trigger is None:
            raise cannot_use(sequence)
        self._task = spawn(self._run(trigger, activated), tell=LogOnly("the portal's shortcut ended"))

    def unbind(self) -> None:
        if self._task is not None:
            self._task.cancel()  # closing the connection ends the portal's session
            self._task = None

    async def _run(self, trigger: str, activated: Callable[[], None]) -> None:
        try:
            await self._session(trigger, activated)
        except asyncio.CancelledError:
            raise
        except ShortcutError as err:
            self._failed(err.user_message)
        except Exception as err:  # no session bus, no portal, a portal without the interface
            log.info("the portal's global shortcut is not available: %s", err)
            self._failed("The desktop portal did not take the shortcut.")

    async def _session(self, trigger: str, activated: Callable[[], None]) -> None:
        from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, message_bus, new_method_call
        from jeepney.io.asyncio import Proxy, open_dbus_router

        portal = DBusAddress(_PORTAL_PATH, bus_name=_PORTAL_NAME, interface=_INTERFACE)
        async with open_dbus_router(bus="SESSION") as router:
            bus = Proxy(message_bus, router)
            sender = str(router.unique_name).lstrip(":").replace(".", "_")

            async def request(
                method: str, signature: str, body: tuple[Any, ...], token: str
            ) -> dict[str, Any]:
                """Call ``method`` and wait for its ``Response``; its results, or ``ShortcutError``."""
                path = f"{_PORTAL_PATH}/request/{sender}/{token}"
                rule = MatchRule(
                    type="signal", interface="org.freedesktop.portal.Request", member="Response", path=path
                )
                await bus.AddMatch(rule)
                with router.filter(rule) as responses:
                    reply = await router.send_and_get_reply(new_method_call(portal, method, signature, body))
                    if reply.header.message_type == MessageType.error:
                        raise ShortcutError(
                            _refusal(str(reply.header.fields.get(HeaderFields.error_name, "")))
                        )
                    code, results = (await responses.get()).body
                if code != 0:  # 1: the person cancelled, 2: ended otherwise
                    raise ShortcutError("The shortcut was not accepted in the desktop's dialog.")
                return dict(results)

            token = f"threadline{next(_tokens)}"
            created = await request(
                "CreateSession",
                "a{sv}",
                ({"handle_token": ("s", token), "session_handle_token": ("s", token)},),
                token,
            )
            session = created["session_handle"][1]
            activations = MatchRule(
                type="signal", interface=_INTERFACE, member="Activated", path=_PORTAL_PATH
            )
            await bus.AddMatch(activations)
            with router.filter(activations, bufsize=16) as presses:
                token = f"threadline{next(_tokens)}"
                shortcuts = [
                    (
                        SHORTCUT_ID,
                        {"description": ("s", "Open Quick ask"), "preferred_trigger": ("s", trigger)},
                    )
                ]
                await request(
                    "BindShortcuts",
                    "oa(sa{sv})sa{sv}",
                    (session, shortcuts, "", {"handle_token": ("s", token)}),
                    token,
                )
                log.info("global shortcut bound through the desktop portal (%s)", trigger)
                while True:
                    message = await presses.get()
                    if message.body[0] == session and message.body[1] == SHORTCUT_ID:
                        activated()


def _refusal(error_name: str) -> str:
    """What a D-Bus error from the portal means to the person."""
    if error_name.endswith((".ServiceUnknown", ".NameHasNoOwner")):
        return "No desktop portal is running."
    if error_name.endswith((".UnknownMethod", ".UnknownInterface", ".UnknownObject")):
        return "This desktop's portal offers no global shortcuts."
    return "The desktop portal refused the shortcut."
