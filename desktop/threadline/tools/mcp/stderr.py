"""A stdio MCP server's stderr: read by Threadline, the values it injected masked, then logged.

A server may print its environment or echo a header (a debug dump, a crash
report), and Threadline put secrets there itself (keychain values, ``${VAR}``
values). So the server never writes the log file directly: its stderr goes to
a channel Threadline reads on a thread of its own, which replaces every
injected value with ``MASK`` before a line reaches ``logs/mcp-NAME.log`` or the
tail quoted in error messages (docs/tools.md).

On POSIX the channel is a socket pair rather than a pipe: the server's end is
also the ``process_guard`` watcher's channel (the watcher reads it and gets
end-of-file when Threadline's end closes, so the server's process group dies
with Threadline). Windows uses a plain pipe; the SDK's job object covers the
server's lifetime there.
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import os
import select
import socket
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TextIO

from threadline.tools.mcp.config import McpServerConfig

MASK = "••••••"
MIN_MASKED_LENGTH = 4
"""Shorter values (``1``, ``on``) are not masked: they would blank every line and hide nothing."""
MAX_PENDING = 64 * 1024
"""Characters of an unfinished line held back before they are masked and written anyway."""
TAIL_LINES = 50


def injected_values(config: McpServerConfig) -> list[str]:
    """The values of ``config`` (resolved) to mask: env and header values not marked "not a secret".

    A value spanning several lines is masked line by line as well, since the log is
    written line by line. Longest first, so a value containing another is masked whole.
    """
    values: set[str] = set()
    for pairs, public in ((config.env, config.public_env), (config.headers, config.public_headers)):
        for name, value in pairs.items():
            if name in public:
                continue
            for part in (value, *value.splitlines()):
                part = part.strip("\r\n")
                if len(part) >= MIN_MASKED_LENGTH:
                    values.add(part)
    return sorted(values, key=len, reverse=True)


class Masker:
    """Replaces each of ``values`` in a text with ``MASK``."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = tuple(values)
        self.longest = max((len(v) for v in self.values), default=0)

    def __call__(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        return text


class StderrChannel:
    """The server's stderr: ``child_file`` goes to the SDK as ``errlog``; a thread logs it masked.

    ``finish()`` closes Threadline's end for writing (the watcher's signal to end the
    server's group) and waits for the reader to log what is left.
    """

    def __init__(self, log: TextIO, masker: Masker) -> None:
        self._log = log
        self._mask = masker
        self._lock = threading.Lock()
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._busy = False
        self._socket: socket.socket | None = None
        if sys.platform == "win32":  # pragma: no cover
            read_fd, write_fd = os.pipe()
            self._read: Callable[[int], bytes] = lambda size: os.read(read_fd, size)
            self._read_fd = read_fd
        else:
            mine, theirs = socket.socketpair()
            self._socket = mine
            self._read = mine.recv
            self._read_fd = mine.fileno()
            write_fd = theirs.detach()
        self.child_file: TextIO = os.fdopen(write_fd, "w", encoding="utf-8")
        self._thread = threading.Thread(target=self._pump, name="mcp-stderr", daemon=True)
        self._thread.start()

    def spawned(self) -> None:
        """The server has its copy of ``child_file``: drop ours, so its end is the server's alone."""
        with contextlib.suppress(OSError):
            self.child_file.close()

    def finish(self, timeout: float) -> None:
        """Signal the watcher, then wait (at most ``timeout``) for the reader to log the rest."""
        self.spawned()
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_WR)
        self._thread.join(timeout)
        if self._thread.is_alive() and self._socket is not None:
            with contextlib.suppress(OSError):  # a process that left the group holds the server's end
                self._socket.shutdown(socket.SHUT_RDWR)
            self._thread.join(timeout)

    def caught_up(self) -> bool:
        """Whether everything the server wrote so far has been logged."""
        with self._lock:
            if self._busy:
                return False
        if not self._thread.is_alive() or sys.platform == "win32":
            return True
        try:
            readable, _, _ = select.select([self._read_fd], [], [], 0)
        except (OSError, ValueError):
            return True
        return not readable

    def tail(self) -> str:
        with self._lock:
            return "".join(self._tail)

    def _pump(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        try:
            while True:
                try:
                    if sys.platform != "win32":  # busy from before the read, for ``caught_up``
                        select.select([self._read_fd], [], [])
                    with self._lock:
                        self._busy = True
                    chunk = self._read(65536)
                except (OSError, ValueError):
                    chunk = b""
                if not chunk:
                    break
                pending = self._write(pending + decoder.decode(chunk), final=False)
                with self._lock:
                    self._busy = False
            self._write(pending + decoder.decode(b"", final=True), final=True)
        finally:
            with contextlib.suppress(OSError, ValueError):
                self._log.close()
            if self._socket is not None:
                self._socket.close()
            else:  # pragma: no cover
                with contextlib.suppress(OSError):
                    os.close(self._read_fd)
            with self._lock:
                self._busy = False

    def _write(self, text: str, *, final: bool) -> str:
        """Log ``text``'s complete lines masked; return the unfinished rest to wait for.

        An unfinished line longer than ``MAX_PENDING`` is logged too, all but its last
        characters: those could be the start of a value the next read completes.
        """
        cut = len(text) if final else text.rfind("\n") + 1
        ready, rest = self._mask(text[:cut]), text[cut:]
        if len(rest) > MAX_PENDING:
            rest = self._mask(rest)
            keep = max(self._mask.longest - 1, 0)
            ready, rest = ready + rest[: len(rest) - keep], rest[len(rest) - keep :]
        if ready:
            with self._lock:
                self._tail.extend(ready.splitlines(keepends=True))
            with contextlib.suppress(OSError, ValueError):
                self._log.write(ready)
                self._log.flush()
        return rest
