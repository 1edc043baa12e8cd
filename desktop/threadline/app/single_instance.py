"""One window per user and data folder: a second start hands its words to the first and exits.

Two Qt pieces (docs/desktop.md, "One instance"):

* an OS lock on a file in the data folder says who runs (``instance_lock``): held for the
  life of the process and let go by the kernel however the process ends, so a crash never
  blocks the next start;
* a ``QLocalServer`` (a Unix socket in the temporary folder, a named pipe on Windows) named
  after the user and the data folder carries the words. The lock's holder removes a socket a
  crashed instance left behind (``removeServer``) before it listens.

A second start finds the lock held, connects (retrying while the first is still between
its lock and its listen), sends its words and waits for the first to say it has them, then
exits 0. The words are the start's own: ``--show``, ``--new-chat``, ``--quick-ask``, absolute
paths and ``threadline://`` links; what they do is ``ui/desktop/open_requests.py``'s.

Only QtCore and QtNetwork are imported here: a second start paints nothing and never builds
a ``QApplication``.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from threadline.app.instance_lock import LOCK_NAME, InstanceLock, take_lock

if TYPE_CHECKING:
    from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger("threadline.app.single_instance")

__all__ = [
    "LOCK_NAME",
    "InstanceLock",
    "InstanceServer",
    "activation_words",
    "claim",
    "hand_off",
    "serve",
    "take_lock",
]
MAGIC = b"threadline-open/1\n"
ACK = b"ok\n"
HAND_OFF_WAIT_S = 15.0
"""How long a second start waits for the first to listen and answer (a busy machine, a first
start still opening Qt); past it the second start says so and exits 1."""
_MAX_MESSAGE = 1 << 20

Words = list[str]


SHOW = "--show"
NEW_CHAT = "--new-chat"
QUICK_ASK = "--quick-ask"


def start_words(targets: Sequence[str], *, new_chat: bool = False, quick_ask: bool = False) -> Words:
    """What this start asks of the window, as words another instance understands.

    Paths are made absolute here: the running instance has another working folder.
    Always at least ``--show``, so a plain second start brings the window to the front.
    """
    words = [SHOW]
    if new_chat:
        words.append(NEW_CHAT)
    if quick_ask:
        words.append(QUICK_ASK)
    for target in targets:
        is_link = target.lower().startswith("threadline:")
        words.append(target if is_link else str(Path(target).expanduser().absolute()))
    return words


XDG_TOKEN_WORD = "--activation-token="
STARTUP_ID_WORD = "--startup-id="


def activation_words(environ: Mapping[str, str]) -> Words:
    """The launcher's activation token of this start, as words for the running window.

    A second start never shows a window, so the token its launcher gave it (Wayland's
    ``XDG_ACTIVATION_TOKEN``, X11's ``DESKTOP_STARTUP_ID``) goes to the window that comes to the
    front instead: the window manager lets a window the user asked for take the focus
    (``ui/common/activation.py``, docs/desktop.md). An older running instance ignores them.
    """
    words: Words = []
    if token := environ.get("XDG_ACTIVATION_TOKEN", "").strip():
        words.append(XDG_TOKEN_WORD + token)
    if startup_id := environ.get("DESKTOP_STARTUP_ID", "").strip():
        words.append(STARTUP_ID_WORD + startup_id)
    return words


def server_name(data_dir: Path) -> str:
    """The socket's name: the user and the data folder, hashed (a path may be long or odd)."""
    import getpass
    import hashlib

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = "unknown"
    folder = str(Path(data_dir).expanduser().resolve())
    digest = hashlib.sha256(f"{user}\0{folder}".encode()).hexdigest()[:20]
    return f"threadline-{digest}"


def encode(words: Sequence[str]) -> bytes:
    body = "\0".join(words).encode("utf-8")
    return MAGIC + struct.pack(">I", len(body)) + body


def decode(data: bytes) -> Words | None:
    """The words of a whole message, or ``None`` while more bytes are due (``ValueError``: not one)."""
    head = len(MAGIC) + 4
    if len(data) < head:
        if not MAGIC.startswith(data[: len(MAGIC)]):
            raise ValueError("not a Threadline message")
        return None
    if not data.startswith(MAGIC):
        raise ValueError("not a Threadline message")
    (size,) = struct.unpack(">I", data[len(MAGIC) : head])
    if size > _MAX_MESSAGE:
        raise ValueError("message too long")
    if len(data) < head + size:
        return None
    body = data[head : head + size].decode("utf-8")
    return body.split("\0") if body else []


class InstanceServer:
    """The first start's end: holds the lock, listens, and gives each message's words to ``handler``.

    Words that arrive before a handler is set (the window is still painting) are kept and
    given to it when it is set, in order.
    """

    def __init__(self, lock: InstanceLock, server: QLocalServer) -> None:
        self.lock = lock
        self.server = server
        self._handler: Callable[[Words], None] | None = None
        self._waiting: list[Words] = []
        self._buffers: dict[QLocalSocket, bytearray] = {}
        server.newConnection.connect(self._accept)

    def set_handler(self, handler: Callable[[Words], None]) -> None:
        self._handler = handler
        waiting, self._waiting = self._waiting, []
        for words in waiting:
            handler(words)

    def close(self) -> None:
        self.server.close()
        self.lock.unlock()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            if socket is None:
                return
            self._buffers[socket] = bytearray()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._gone(s))
            if socket.bytesAvailable():
                self._read(socket)

    def _gone(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()

    def _read(self, socket: QLocalSocket) -> None:
        buffer = self._buffers.get(socket)
        if buffer is None:
            return
        buffer += bytes(socket.readAll().data())
        try:
            words = decode(bytes(buffer))
        except ValueError as err:
            log.warning("ignored a connection to the instance socket: %s", err)
            self._buffers.pop(socket, None)
            socket.abort()
            return
        if words is None:
            return
        self._buffers.pop(socket, None)
        socket.write(ACK)
        socket.flush()
        socket.disconnectFromServer()
        log.info("another start handed over %d word(s)", len(words))
        if self._handler is None:
            self._waiting.append(words)
        else:
            self._handler(words)


class HandOffFailed(Exception):
    """Another instance holds the data folder but did not take the words."""


def serve(lock: InstanceLock, data_dir: Path) -> InstanceServer:
    """Listen for later starts (needs the ``QCoreApplication``: the server's socket notifier)."""
    return InstanceServer(lock, _listen(server_name(data_dir)))


def claim(data_dir: Path) -> InstanceServer | None:
    """``take_lock`` and ``serve`` at once: the server when this process is the first, else ``None``."""
    lock = take_lock(data_dir)
    return None if lock is None else serve(lock, data_dir)


def _listen(name: str) -> QLocalServer:
    from PySide6.QtNetwork import QLocalServer

    server = QLocalServer()
    server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
    if not server.listen(name):
        # The lock is ours, so a socket by that name is a crashed instance's: remove and listen again.
        QLocalServer.removeServer(name)
        if not server.listen(name):
            log.warning(
                "no instance socket (%s): later starts cannot hand their files to this window",
                server.errorString(),
            )
    return server


def hand_off(data_dir: Path, words: Sequence[str], wait_s: float = HAND_OFF_WAIT_S) -> None:
    """Give ``words`` to the instance that holds ``data_dir`` and wait for its answer.

    Raises ``HandOffFailed`` when it does not answer within ``wait_s``.
    """
    from PySide6.QtNetwork import QLocalSocket

    name = server_name(data_dir)
    deadline = time.monotonic() + wait_s
    message = encode(words)
    last_error = "no answer"
    while True:
        socket = QLocalSocket()
        socket.connectToServer(name)
        if socket.waitForConnected(max(1, int(_left(deadline) * 1000))):
            socket.write(message)
            socket.flush()
            got = b""
            while len(got) < len(ACK) and socket.waitForReadyRead(max(1, int(_left(deadline) * 1000))):
                got += bytes(socket.readAll().data())
            socket.abort()
            if got.startswith(ACK):
                return
            last_error = "the running Threadline did not answer"
        else:  # Qt says "Invalid name" for a socket nobody listens on
            last_error = "it is not listening"
        if _left(deadline) <= 0:
            raise HandOffFailed(last_error)
        time.sleep(0.05)  # the first start holds the lock but is not listening yet


def hand_off_or_say(data_dir: Path, words: Sequence[str]) -> int:
    """``hand_off`` for a start: 0 once the running window has the words, else 1 and why on stderr."""
    import sys

    try:
        hand_off(data_dir, words)
    except HandOffFailed as err:
        sys.stderr.write(
            f"threadline: Threadline is already running on {data_dir} but did not answer ({err}). "
            "Close it and start again, or use another --data-dir.\n"
        )
        return 1
    return 0


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def is_listening(data_dir: Path) -> bool:
    """Whether an instance answers on ``data_dir``'s socket now (tests and the bench wait on it)."""
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(server_name(data_dir))
    up = socket.waitForConnected(1000)
    socket.abort()
    return up
