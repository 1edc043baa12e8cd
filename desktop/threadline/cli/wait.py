"""``threadline ask --session ID`` into a chat that is replying elsewhere: wait, then run.

One turn per session runs at a time across windows, processes and machines (the
session lease). ``ask`` looks before it opens the chat: while another instance
holds the lease it prints one ``waiting: replying on <host>…`` line and asks
again every half second, up to ``--wait`` seconds. The chat is opened only once
it is free, so the prompt follows the reply it waited for. Still busy at the
bound, it stops with one ``threadline:`` line and nothing stored or sent.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

DEFAULT_WAIT = 120.0
"""Seconds ``ask --session`` waits for a turn running elsewhere in that chat."""
POLL_EVERY = 0.5


class StillBusy(Exception):
    """The chat was still replying elsewhere when the wait ended; ``str()`` is the sentence to print."""


async def wait_until_free(engine: EngineApi, session_id: str, bound: float) -> None:
    """Return once no other instance runs a turn in ``session_id``; ``StillBusy`` past ``bound``."""
    host = await engine.turns.busy_elsewhere(session_id)
    if host is None:
        return
    print(f"waiting: replying on {host}…", file=sys.stderr, flush=True)
    deadline = time.monotonic() + bound
    while host is not None:
        if time.monotonic() >= deadline:
            raise StillBusy(
                f"this chat is still replying on {host} after {bound:g} s, so nothing was sent; "
                "try again when that reply ends, or wait longer with --wait SECONDS"
            )
        await asyncio.sleep(min(POLL_EVERY, max(deadline - time.monotonic(), 0.0)))
        host = await engine.turns.busy_elsewhere(session_id)
