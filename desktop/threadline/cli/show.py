"""``threadline show SESSION [--follow] [--json]``: a chat's shown path, and its changes as they come.

Without ``--follow`` it prints the session's active path and exits. With it, it
keeps printing what any instance writes to the session — new messages, a reply's
text as it grows, its final status, a new version taking the path — until Ctrl+C
(exit 130) or until the chat is deleted. It reads the store's change feed (the same
one the window follows), opened *before* the path is read, so nothing written in
between is lost; it never reloads the session.

Text output gives each message a header line (``── assistant ──``) and appends
streamed text as it arrives. ``--json`` prints one JSON object per line instead:
``{"type": "message", ...}`` (a message, whole, when shown or changed),
``{"type": "text", "id", "delta"}``, ``{"type": "path", "leaf"}``,
``{"type": "session", "title"}`` and ``{"type": "deleted"}``.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.core.messages import Message
    from threadline.core.session import SessionInfo
    from threadline.core.tree import ConversationTree
    from threadline.store.change_feed import ChangeBatch

EXIT_INTERRUPTED = 130


class ShowError(Exception):
    """What to say in one ``threadline:`` line (an unknown chat, an unreadable database)."""


def add_show_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "show", parents=[common], help="print a chat; with --follow, its changes as they arrive"
    )
    parser.add_argument("session", metavar="SESSION", help="the chat's id (as `threadline list` shows it)")
    parser.add_argument(
        "--follow", action="store_true", help="keep printing new messages and text until Ctrl+C"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line (for scripts)")


def run(args: argparse.Namespace, url: str, out: TextIO = sys.stdout) -> int:
    """Entry from ``cli``: returns the exit code; Ctrl+C while following is a quiet 130."""
    import asyncio

    try:
        return asyncio.run(show(url, args.session, follow=args.follow, as_json=args.json, out=out))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def show(url: str, session_id: str, *, follow: bool, as_json: bool, out: TextIO) -> int:
    from threadline.store.change_feed import ChangeFeed
    from threadline.store.errors import StoreError
    from threadline.store.repository import Store

    try:
        store = await Store.open(url)
    except StoreError as err:
        raise ShowError(err.user_message) from err
    feed = None
    try:
        if follow:
            feed = await ChangeFeed.open(url)  # before the read: nothing between is missed
        info = await store.get_session(session_id)
        if info is None:
            raise ShowError(f"no chat {session_id!r}; `threadline list` shows the ids")
        printer = Printer(info, await store.load_tree(session_id), out, as_json=as_json)
        printer.start()
        if feed is None:
            printer.finish()
            return 0
        await store.close()  # the feed reads on its own connection
        while True:
            batch = await feed.next_batch((session_id,))
            if not printer.apply(batch):
                return 0
    except StoreError as err:
        raise ShowError(err.user_message) from err
    finally:
        if feed is not None:
            await feed.aclose()
        await store.close()


class Printer:
    """Prints the path once, then what each batch changed in it."""

    def __init__(self, info: SessionInfo, tree: ConversationTree, out: TextIO, *, as_json: bool) -> None:
        self._info = info
        self._tree = tree
        self._out = out
        self._json = as_json
        self._printed: list[str] = []
        """The ids of the path as printed, in order."""
        self._open_line = False

    def start(self) -> None:
        if self._json:
            self._emit({"type": "session", "id": self._info.id, "title": self._info.display_title})
        else:
            self._write(f"# {self._info.display_title}\n")
        self._print_path()

    def finish(self) -> None:
        self._end_line()

    def apply(self, batch: ChangeBatch) -> bool:
        """Print what changed; ``False`` once the chat is gone."""
        session_id = self._info.id
        if session_id not in batch.sessions:
            return True
        info = batch.sessions[session_id]
        if info is None:
            self._end_line()
            if self._json:
                self._emit({"type": "deleted"})
            else:
                self._write("(the chat was deleted)\n")
            return False
        last = self._printed[-1] if self._printed else None
        for stored in batch.messages:
            message = stored.message
            if message.id in self._tree:
                self._update(self._tree.editable(message.id), message, is_last=message.id == last)
            elif message.parent_id is None or message.parent_id in self._tree:
                self._tree.add(message, activate=False)
        if info.active_leaf in self._tree and info.active_leaf != self._tree.active_leaf:
            self._tree.set_active_leaf(info.active_leaf)
            if self._json:
                self._emit({"type": "path", "leaf": info.active_leaf})
        if info.display_title != self._info.display_title and self._json:
            self._emit({"type": "session", "id": info.id, "title": info.display_title})
        self._info = info
        self._print_path()
        return True

    def _update(self, mine: Message, stored: Message, *, is_last: bool) -> None:
        import dataclasses

        old_text, old_status = mine.text, mine.status
        for field in dataclasses.fields(stored):
            setattr(mine, field.name, getattr(stored, field.name))
        if mine.id not in self._printed:
            return
        grew = stored.text.startswith(old_text) and stored.text != old_text
        if self._json:
            if grew and old_status == stored.status:
                self._emit({"type": "text", "id": mine.id, "delta": stored.text[len(old_text) :]})
            elif stored.text != old_text or stored.status != old_status:
                self._emit(_message_json(mine))
            return
        if is_last and grew:
            self._write(stored.text[len(old_text) :])
            self._open_line = True
        elif stored.text != old_text:
            self._block(mine, note="changed")
        if is_last and stored.status != old_status and stored.status.value != "streaming":
            self._end_line()
            if stored.status.value != "complete":
                self._write(f"[{stored.status.value}]\n")

    def _print_path(self) -> None:
        path = self._tree.path()
        ids = [m.id for m in path]
        common = 0
        while common < min(len(ids), len(self._printed)) and ids[common] == self._printed[common]:
            common += 1
        if common < len(self._printed) and not self._json:
            self._end_line()
            self._write("── the shown path changed (another version) ──\n")
        for message in path[common:]:
            if self._json:
                self._emit(_message_json(message))
            else:
                self._block(message)
        self._printed = ids

    def _block(self, message: Message, note: str = "") -> None:
        self._end_line()
        label = message.role.value + (f", {note}" if note else "")
        self._write(f"\n── {label} ──\n{message.text}")
        self._open_line = bool(message.text)
        if message.status.value not in ("complete", "streaming"):
            self._end_line()
            self._write(f"[{message.status.value}]\n")

    def _end_line(self) -> None:
        if self._open_line:
            self._write("\n")
            self._open_line = False

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _emit(self, value: dict[str, Any]) -> None:
        self._write(json.dumps(value, ensure_ascii=False) + "\n")


def _message_json(message: Message) -> dict[str, Any]:
    return {
        "type": "message",
        "id": message.id,
        "parent_id": message.parent_id,
        "role": message.role.value,
        "status": message.status.value,
        "text": message.text,
    }


def database_url(data_dir: Path, database_url: str | None) -> str:
    """The URL ``show`` reads: the given one, or the data folder's SQLite file."""
    if database_url:
        return database_url
    from threadline.engine.engine import DATABASE_FILENAME
    from threadline.store.repository import Store

    return Store.sqlite_url(data_dir / DATABASE_FILENAME)
