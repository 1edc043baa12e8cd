"""A freedesktop notification server on a private session bus, for the notification tests.

``session_bus()`` starts a real ``dbus-daemon --session`` and yields its address (the test
skips, naming why, only when ``dbus-daemon`` is not installed; ``.ci/setup --dev`` installs it).
``NotificationDaemon`` runs this file as a separate process: it registers
``org.freedesktop.Notifications`` on that bus with QtDBus, prints each ``Notify`` it gets as a
JSON line, and emits ``ActionInvoked`` when the test asks (a line on its stdin), with the
``ActivationToken`` before it that a version 1.2 server sends when the test gives one. A separate
process, because a QtDBus call blocks the caller's thread: a server in the test's own thread
could never answer.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.waiting import WAIT

DBUS_DAEMON = shutil.which("dbus-daemon")


def session_bus() -> Iterator[str]:
    """A private session bus for one test: its address (the ``dbus_bus`` fixture's body)."""
    if DBUS_DAEMON is None:
        pytest.skip("dbus-daemon is not installed (.ci/setup --dev installs the dbus package)")
    process = subprocess.Popen(
        [DBUS_DAEMON, "--session", "--nofork", "--print-address"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    address = process.stdout.readline().strip()
    try:
        assert address, "dbus-daemon printed no address"
        yield address
    finally:
        process.terminate()
        process.wait(timeout=WAIT)
        process.stdout.close()


class NotificationDaemon:
    def __init__(self, address: str) -> None:
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address, "QT_QPA_PLATFORM": "offscreen"}
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")]
        )
        self.process = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        ready = self.lines.get(timeout=WAIT)
        assert ready == {"ready": True}, ready

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def notifications(self) -> list[dict[str, Any]]:
        """Every ``Notify`` seen until now."""
        while True:
            try:
                self.seen.append(self.lines.get_nowait())
            except queue.Empty:
                return list(self.seen)

    def invoke(self, notification_id: int, action: str, token: str = "") -> None:
        """The user clicks ``action`` of the notification: the server emits ``ActionInvoked``,
        and first ``ActivationToken`` with ``token`` when one is given (no spaces)."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{notification_id} {action} {token}".rstrip() + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=WAIT)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def _serve() -> None:
    """The server process: Notify prints, a stdin line ``ID ACTION [TOKEN]`` emits
    ActivationToken (with a token) and then ActionInvoked."""
    from PySide6.QtCore import ClassInfo, QCoreApplication, QObject, QSocketNotifier, Signal, Slot
    from PySide6.QtDBus import QDBusConnection

    app = QCoreApplication([])
    bus = QDBusConnection.sessionBus()

    @ClassInfo({"D-Bus Interface": "org.freedesktop.Notifications"})
    class Server(QObject):
        ActionInvoked = Signal("uint", str)
        NotificationClosed = Signal("uint", "uint")
        ActivationToken = Signal("uint", str)

        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        # The spec's signature exactly (susssasa{sv}i): a caller that sends int32 for the id
        # finds no such method, as with GNOME Shell.
        @Slot(str, "uint", str, str, str, "QStringList", "QVariantMap", int, result="uint")
        def Notify(
            self, app_name: str, replaces: int, icon: str, summary: str, body: str,
            actions: list[str], hints: dict[str, Any], timeout: int,
        ) -> int:  # fmt: skip
            self.count += 1
            nid = replaces or self.count
            record = {"id": nid, "app": app_name, "replaces": replaces, "summary": summary, "body": body}
            print(json.dumps({**record, "actions": actions}), flush=True)
            return nid

        @Slot(result="QStringList")
        def GetCapabilities(self) -> list[str]:
            return ["actions", "body"]

    server = Server()
    options = QDBusConnection.RegisterOption.ExportAllSlots | QDBusConnection.RegisterOption.ExportAllSignals
    if not bus.registerObject("/org/freedesktop/Notifications", server, options):
        raise SystemExit("could not register the object")
    if not bus.registerService("org.freedesktop.Notifications"):
        raise SystemExit("could not take the name org.freedesktop.Notifications")

    def line() -> None:
        text = sys.stdin.readline()
        if not text:
            app.quit()
            return
        nid, action, *token = text.split()
        if token:
            server.ActivationToken.emit(int(nid), token[0])
        server.ActionInvoked.emit(int(nid), action)

    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(line)
    print(json.dumps({"ready": True}), flush=True)
    app.exec()


if __name__ == "__main__":
    _serve()
