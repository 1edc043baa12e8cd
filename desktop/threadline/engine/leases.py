"""One turn per session across instances, for the engine: taking, beating and giving up leases.

Every turn start (send, edit, regenerate, resume, retry, compare, compaction)
takes the session's lease (``threadline.store.leases``) before it writes
anything. While the turn runs, a heartbeat task refreshes the lease at the
streaming heartbeat's cadence and reads ``stop_requested``: another instance's
"Stop it" stops the turn here as Stop does. Once the turn's writes are saved the
lease is given up, so "idle means saved" holds across instances too.

A turn start that finds the session busy elsewhere either waits (``wait``
seconds, asking again at each heartbeat) or is refused; the engine then takes
the staged prompt back out and hands it to the tab.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from datetime import timedelta
from typing import Any

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.engine.events import (
    ActivePathChanged,
    MessageChanged,
    SaveStateChanged,
    SessionBusyElsewhere,
    TurnFailed,
    UserFacingError,
)
from threadline.engine.live import LiveConversation
from threadline.engine.store_trouble import awaiting, prompt_waiting
from threadline.engine.turn_runner import unsent_prompt_error
from threadline.store import lease_types
from threadline.store.errors import StoreError
from threadline.store.lease_types import Acquired, Lease
from threadline.store.repository import Store
from threadline.store.writers import HEARTBEAT_EVERY

log = logging.getLogger("threadline.engine.leases")

MISSED_HEARTBEATS = 4
"""A lease whose holder missed this many heartbeats in a row is taken to be dead."""


class SessionLeases:
    """The leases this engine holds; one heartbeat task per session running a turn."""

    def __init__(
        self,
        store: Store,
        *,
        on_stop_requested: Callable[[str], None],
        on_taken_over: Callable[[str, str], None] | None = None,
        heartbeat_every: float = HEARTBEAT_EVERY.total_seconds(),
        missed_heartbeats: int = MISSED_HEARTBEATS,
    ) -> None:
        self._store = store
        self.store = store
        """The store the leases live in (its ``trouble`` says why a call is slow)."""
        self._on_stop_requested = on_stop_requested
        self._on_taken_over = on_taken_over
        """Told ``(session_id, host)`` when a heartbeat finds another instance holds the lease now."""
        self.heartbeat_every = heartbeat_every
        self.expires_after = timedelta(seconds=heartbeat_every * missed_heartbeats)
        """Silence after which another instance takes a lease over (a dead holder)."""
        self.holder = lease_types.new_holder()
        self._beats: dict[str, asyncio.Task[None]] = {}

    async def acquire(
        self, session_id: str, *, wait: float = 0.0, on_busy: Callable[[Lease], None]
    ) -> Acquired:
        """Take the lease, waiting up to ``wait`` seconds for another instance's turn to end.

        ``on_busy`` is told once, when the session is first found busy elsewhere. On
        success the heartbeat starts; the result then has ``held is None``.
        """
        deadline = time.monotonic() + wait
        told = False
        while True:
            acquired = await self._store.acquire_lease(session_id, self.holder, self.expires_after)
            if acquired.ok:
                self._start_beating(session_id)
                return acquired
            assert acquired.held is not None
            if not told:
                on_busy(acquired.held)
                told = True
            left = deadline - time.monotonic()
            if left <= 0:
                return acquired
            await asyncio.sleep(min(self.heartbeat_every, left, 1.0))

    async def release(self, session_id: str) -> None:
        """The turn's writes are saved: stop beating and give the lease up (failures only logged)."""
        beat = self._beats.pop(session_id, None)
        if beat is not None:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        try:
            await self._store.release_lease(session_id, self.holder)
        except StoreError as err:  # it expires by itself once the heartbeat is gone
            log.warning("session %s: the lease could not be given up: %s", session_id, err)

    async def request_stop(self, session_id: str) -> Lease | None:
        """Ask the instance running a turn in ``session_id`` to stop it; its lease, or ``None``."""
        return await self._store.request_lease_stop(session_id)

    async def current(self, session_id: str) -> Lease | None:
        """The session's lease as stored (ours, another instance's, or none)."""
        return await self._store.get_lease(session_id)

    async def elsewhere(self, session_id: str) -> Lease | None:
        """The lease of another instance that is still running a turn in the session, or ``None``.

        ``None`` when the chat is free, busy here, or held by a dead holder: a process
        killed mid-turn (or a machine that went away) leaves its row behind, and nobody
        deletes it until a turn start takes it over. Counted as gone once ``expired``
        says so (its process on this host has ended, or — for a holder whose process
        cannot be checked — no heartbeat for ``expires_after``; a live process on this
        host is busy however late its heartbeat), so a tab stops showing "Replying on
        <host>" and a message waiting for
        that reply is sent; its turn start then takes the lease over. Its age is judged
        by the database's clock as read with the lease (``Lease.read_at``), the clock
        that wrote its heartbeat, never by this machine's.
        """
        lease = await self._store.get_lease(session_id)
        if lease is None or lease.holder == self.holder:
            return None
        if lease_types.expired(lease, lease.read_at, self.expires_after):
            return None
        return lease

    def holds(self, session_id: str) -> bool:
        return session_id in self._beats

    async def aclose(self) -> None:
        """Stop every heartbeat and release what is still held; this engine's holder is retired."""
        for session_id in list(self._beats):
            await self.release(session_id)
        lease_types.retire_holder(self.holder)

    def _start_beating(self, session_id: str) -> None:
        old = self._beats.pop(session_id, None)
        if old is not None:
            old.cancel()
        self._beats[session_id] = asyncio.create_task(self._beat(session_id), name=f"lease-{session_id}")

    async def _beat(self, session_id: str) -> None:
        asked = False
        while True:
            await asyncio.sleep(self.heartbeat_every)
            try:
                beat = await self._store.lease_heartbeat(session_id, self.holder)
            except StoreError as err:  # the turn's own writes say what is wrong; keep beating
                log.info("session %s: lease heartbeat failed: %s", session_id, err)
                continue
            if not beat.held:  # silent too long (cut off, or a stalled machine): the other instance runs now
                log.warning("session %s: another instance took this turn's lease over; stopping", session_id)
                if self._on_taken_over is not None:
                    self._on_taken_over(session_id, await self._new_holder_host(session_id))
                self._on_stop_requested(session_id)
                return
            if beat.stop_requested and not asked:
                asked = True
                log.info("session %s: another instance asked this turn to stop", session_id)
                self._on_stop_requested(session_id)

    async def _new_holder_host(self, session_id: str) -> str:
        try:
            lease = await self._store.get_lease(session_id)
        except StoreError:
            return ""
        return lease.host if lease is not None else ""


def taken_over_error(host: str) -> UserFacingError:
    """Why a turn stopped that the user did not stop: its lease went to another instance."""
    where = host or "another computer or window"
    return UserFacingError(
        "busy_elsewhere",
        f"This reply stopped because this window could not reach the database for a while, and "
        f"meanwhile the chat was taken over on {where}. What arrived of the reply is saved; "
        "send again once that turn ends.",
        actions=(),
    )


def busy_error(host: str) -> UserFacingError:
    """The refusal the tab shows: where the chat is busy, that nothing was sent, what to do."""
    return UserFacingError(
        "busy_elsewhere",
        f"This chat is replying on {host}, so your message was not sent; it is back in the message box. "
        "Send it again when that reply ends, or stop it with “Stop it”.",
        actions=(),
    )


def stopped_error() -> UserFacingError:
    return UserFacingError(
        "cancelled", "You stopped it before it was sent; your message is back in the message box.", actions=()
    )


def waiting_stopped_error() -> UserFacingError:
    return UserFacingError(
        "busy_elsewhere",
        "You stopped waiting for the reply running elsewhere, so your message was not sent; "
        "it is back in the message box.",
        actions=(),
    )


async def start_turn(
    leases_: SessionLeases,
    live: LiveConversation,
    stored_first: Sequence[Message],
    leaf_before: str | None,
    *,
    wait: float = 0.0,
) -> bool:
    """Take the lease for the turn ``live`` just staged; ``False`` (turn taken back) when refused.

    Refused, stopped while waiting, or unable to ask the store: the staged turn is
    undone in memory (nothing of it was stored yet), the tab gets ``TurnFailed`` with
    the prompt to put back in the composer, and the caller runs nothing.
    """
    session_id = live.session_id
    told: list[Lease] = []

    def busy(lease: Lease) -> None:
        told.append(lease)
        live.emit(SessionBusyElsewhere(session_id, lease.host, lease.stop_requested))

    waited: list[Exception] = []

    def unreachable(trouble: Exception) -> None:  # the store is retrying: say so while it does
        waited.append(trouble)
        live.emit(prompt_waiting(session_id, trouble))

    error: UserFacingError | None = None
    try:
        acquired = await awaiting(
            leases_.acquire(session_id, wait=wait, on_busy=busy), leases_.store, unreachable
        )
    except asyncio.CancelledError:
        _give_back(live, stored_first, leaf_before, waiting_stopped_error() if told else stopped_error())
        raise
    except StoreError as err:
        error = unsent_prompt_error(err)
    else:
        if acquired.held is not None:
            error = busy_error(acquired.held.host)
    finally:
        if waited:
            live.emit(SaveStateChanged(session_id, saving=False))
    if error is not None:
        _give_back(live, stored_first, leaf_before, error)
        return False
    if told:
        live.emit(SessionBusyElsewhere(session_id, ""))  # the other turn ended; this one runs
    _mark_interrupted(live, acquired.interrupted)
    return True


def _give_back(
    live: LiveConversation, stored_first: Sequence[Message], leaf_before: str | None, error: UserFacingError
) -> None:
    """Undo a staged turn that never started: the prompt leaves the tree and returns to the composer."""
    conversation = live.conversation
    tree = conversation.tree
    for message in reversed(stored_first):
        if message.id in tree and not tree.children(message.id):
            tree.remove_leaf(message.id)
    for changed in conversation.cancel():
        live.emit(MessageChanged(live.session_id, changed))
    if leaf_before is not None and leaf_before in tree:
        tree.set_active_leaf(leaf_before)
    live.emit(ActivePathChanged(live.session_id, tree.active_leaf))
    prompt = next((m for m in stored_first if m.kind is MessageKind.PROMPT), None)
    live.emit(TurnFailed(live.session_id, error, unsent_prompt=prompt))


def _mark_interrupted(live: LiveConversation, ids: Sequence[str]) -> None:
    """Replies of a dead holder, marked ``interrupted`` in the store as its lease was taken over."""
    tree = live.conversation.tree
    for message_id in ids:
        if message_id in tree and tree.get(message_id).status is MessageStatus.STREAMING:
            message = tree.get(message_id)
            message.status = MessageStatus.INTERRUPTED
            live.emit(MessageChanged(live.session_id, message))


class ElsewhereWatch:
    """Tells open tabs where their chat's turn runs, as the change feed reports leases moving.

    The lease triggers log a ``session_changed`` entry when a lease is taken, handed
    over, asked to stop or given up; the change watch passes those sessions here, and
    the lease is read once per batch (again, if an entry came while it was being read).
    Opening a chat reads it too: a turn that started elsewhere before the tab opened
    wrote its entry before anyone here was listening for that chat. A tab hears
    ``SessionBusyElsewhere`` only when what it shows changes (host, or a stop asked):
    "Replying on <host>" appears when another instance starts a turn and goes when it
    ends.

    A holder that dies mid-turn gives nothing up, so no entry says it ended. While a
    tab shows its chat busy elsewhere the lease is therefore read again every
    heartbeat; once the holder counts as gone (``SessionLeases.elsewhere``) the strip
    goes, and a message waiting for that reply is sent.
    """

    def __init__(
        self,
        leases_: SessionLeases,
        live: Callable[[str], LiveConversation | None],
        spawn: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        self._leases = leases_
        self._live = live
        self._spawn = spawn
        self._following: dict[str, asyncio.Event] = {}
        """Sessions whose lease is being read (or re-read while busy elsewhere); set wakes it."""
        self._shown: dict[str, tuple[str, bool]] = {}
        self._repeat: set[str] = set()
        """Sessions whose next read says "busy elsewhere" again even if unchanged (a new tab)."""

    def opened(self, session_id: str, *, first: bool) -> None:
        """A tab opened the chat: read its lease now, so a turn running elsewhere shows.

        The first open reads it; a later one (another tab on the live conversation)
        reads it only if it shows busy elsewhere, and is told so again.
        """
        if first:
            self.touched(session_id)
        elif self._shown.get(session_id, ("", False))[0]:
            self._repeat.add(session_id)
            self.touched(session_id)

    def touched(self, session_id: str) -> None:
        """The session's lease may have moved: read it (again, at once, if already following)."""
        wake = self._following.get(session_id)
        if wake is not None:
            wake.set()
            return
        self._following[session_id] = asyncio.Event()
        self._spawn(self._follow(session_id))

    async def _follow(self, session_id: str) -> None:
        """Read the lease, and keep reading it each heartbeat while it shows busy elsewhere."""
        wake = self._following[session_id]
        try:
            while True:
                wake.clear()
                busy = await self._read(session_id)
                if wake.is_set():  # touched while reading: that read may predate the change
                    continue
                if not busy:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), self._leases.heartbeat_every)
        finally:
            self._following.pop(session_id, None)

    async def _read(self, session_id: str) -> bool:
        """Tell the tab what changed; whether the session shows busy elsewhere now."""
        try:
            lease = await self._leases.elsewhere(session_id)
        except StoreError as err:  # read again at the next heartbeat or entry
            log.info("session %s: reading its lease failed: %s", session_id, err)
            return bool(self._shown.get(session_id, ("", False))[0]) and self._live(session_id) is not None
        live = self._live(session_id)
        if live is None:
            self._shown.pop(session_id, None)
            return False
        shown = (lease.host, lease.stop_requested) if lease is not None else ("", False)
        repeat = session_id in self._repeat and bool(shown[0])
        self._repeat.discard(session_id)
        if self._shown.get(session_id, ("", False)) != shown or repeat:
            self._shown[session_id] = shown
            live.emit(SessionBusyElsewhere(session_id, *shown))
        return lease is not None
