"""Noticing, while a store call is still waiting, that the store is riding out a lost connection.

The store retries a transient failure (a dropped server connection, a busy SQLite
file) on its own thread for up to its retry window (about 30 s) before it raises,
and every later call waits in line behind it. Waiting for the error would leave the
tab silent for that long; instead a caller awaits the call through ``awaiting``,
which looks at ``Store.trouble`` while the call is slow and reports it at once, so
the tab can say "the connection to the database server was lost" within a second
or so, and the call itself goes on (it usually lands once the server is back).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from threadline.engine.events import SaveStateChanged, UserFacingError
from threadline.store.errors import StoreError

T = TypeVar("T")

TROUBLE_AFTER = 1.0
"""A call still waiting after this long, while the store retries a transient error, is reported."""
TROUBLE_POLL = 0.25
"""How often a slow call looks at the store's trouble."""


def current_trouble(store: object) -> Exception | None:
    """The transient error ``store`` is retrying right now (``Store.trouble``), if it tells."""
    trouble = getattr(store, "trouble", None)
    return trouble if isinstance(trouble, Exception) else None


async def awaiting(
    call: Awaitable[T],
    store: object,
    on_trouble: Callable[[Exception], None],
    *,
    after: float = TROUBLE_AFTER,
) -> T:
    """Await ``call``; if it is still waiting after ``after`` s while the store reports trouble,
    ``on_trouble`` is told (once). Cancelling cancels the call."""
    started = time.monotonic()
    pending = asyncio.ensure_future(call)
    told = False
    try:
        while not (await asyncio.wait({pending}, timeout=TROUBLE_POLL))[0]:
            trouble = current_trouble(store)
            if not told and trouble is not None and time.monotonic() - started >= after:
                told = True
                on_trouble(trouble)
    except asyncio.CancelledError:
        pending.cancel()
        raise
    return pending.result()


def prompt_waiting(session_id: str, trouble: Exception) -> SaveStateChanged:
    """What the tab is told while a new message waits for the database (before anything is sent)."""
    what = (
        trouble.user_message
        if isinstance(trouble, StoreError)
        else "The conversation database is not answering."
    )
    return SaveStateChanged(
        session_id,
        saving=True,
        error=UserFacingError(
            "storage",
            f"{what} Your message waits, and is sent once the database accepts it; if it cannot "
            "be saved, nothing is sent and you get it back.",
            actions=(),
        ),
    )
