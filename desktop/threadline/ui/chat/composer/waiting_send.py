"""A message that waits while its chat replies in another instance, and goes when that ends.

One turn runs in a chat at a time across windows, processes and machines (the session
lease). Refusing a send then, and handing the text back, makes the person watch the other
reply and press Send again. Instead the message waits in the box (still editable: what is
there when the other reply ends is what is sent), the strip says so with "Don't send", and
as soon as the chat is free here — the other instance's turn ended, was stopped, or its
holder died and the lease expired — the box is sent as if Send were pressed, so the turn
reads the history as it is then, the other reply included.

The end is learnt from the engine's ``SessionBusyElsewhere`` events (the change feed) and,
because an expired lease writes nothing to the feed, from asking the engine every few
seconds while a message waits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject, QTimer

from threadline.engine.events import SessionBusyElsewhere
from threadline.ui.chat.composer.busy_elsewhere_strip import BusyElsewhereStrip
from threadline.ui.common.announce import announce
from threadline.ui.common.tasks import LogOnly, spawn

CHECK_EVERY_MS = 2000
"""How often a waiting message asks whether the chat is free (a dead holder's lease expiring)."""

BusyElsewhere = Callable[[], Coroutine[Any, Any, str | None]]


class WaitingSend(QObject):
    """Holds the composer's message while the chat is busy elsewhere; ``send`` fires it later."""

    def __init__(
        self,
        strip: BusyElsewhereStrip,
        busy_elsewhere: BusyElsewhere,
        catch_up: Callable[[], Coroutine[Any, Any, None]],
        send: Callable[[], None],
    ) -> None:
        super().__init__(strip)
        self._strip = strip
        self._catch_up = catch_up
        self._busy_elsewhere = busy_elsewhere
        self._send = send
        self.waiting = False
        self._check = QTimer(self)
        self._check.setInterval(CHECK_EVERY_MS)
        self._check.timeout.connect(self._ask)
        strip.dontSend.connect(self.cancel)

    def hold(self) -> None:
        """The person pressed Send while the chat replies elsewhere: wait, and say so."""
        if not self.waiting:
            self.waiting = True
            self._strip.set_waiting(True)
            self._check.start()
            announce(self._strip, "Your message waits and is sent when the other reply ends.")

    def cancel(self) -> None:
        """ "Don't send": the message stays in the box, unsent."""
        if self.waiting:
            self.waiting = False
            self._check.stop()
            self._strip.set_waiting(False)

    def on_event(self, event: SessionBusyElsewhere) -> None:
        if not event.host:
            self._free()

    def _ask(self) -> None:
        spawn(
            self._busy_elsewhere(),
            tell=LogOnly("could not ask whether the chat is busy elsewhere"),
            on_done=lambda host: None if host else self._free(),
        )

    def _free(self) -> None:
        if self.waiting:
            self.waiting = False
            self._check.stop()
            self._strip.set_waiting(False)
            # The other turn's last writes may not have come through the feed yet: read the
            # chat first, so the message goes after them (sent even if that read fails).
            spawn(
                self._catch_up(),
                tell=LogOnly("could not catch up before sending", logging.INFO),
                on_done=lambda _none: self._send(),
                on_failed=lambda _err: self._send(),
            )
