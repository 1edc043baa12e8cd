"""A client of speech-dispatcher, the speech service of Linux desktops, over its SSIP socket.

Speech-dispatcher speaks with the voices the person installed and chose for the desktop
(espeak-ng, Festival, RHVoice, Piper…), and screen readers use it too, so Threadline's
speech queues with theirs rather than over them. Its Python binding (``speechd``) is not
published on PyPI, only as a Debian package tied to the system's Python; the protocol
(SSIP, a line protocol like SMTP) is small and stable, so the few commands Threadline needs
are spoken here directly. Qt's ``QtTextToSpeech`` speaks to the same service, but only from
the window, and it would add the 175 MB PySide6-Addons wheel to every install
(docs/voice.md has the figures).

Protocol: https://htmlpreview.github.io/?https://github.com/brailcom/speechd/blob/master/doc/ssip.html
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

CLIENT_NAME = "user:threadline:main"
EVENT_CODES = {"701": "begin", "702": "end", "703": "cancelled", "704": "paused", "705": "resumed"}


class SpeechServiceError(RuntimeError):
    """Speech-dispatcher is absent, does not start, or refused a command; the message says which."""


@dataclass(frozen=True, slots=True)
class SystemVoiceInfo:
    name: str
    language: str
    variant: str = ""


def socket_path() -> Path | None:
    """Where the service listens: ``SPEECHD_ADDRESS`` (``unix_socket:PATH``) or the runtime folder."""
    address = os.environ.get("SPEECHD_ADDRESS", "")
    if address.startswith("unix_socket:"):
        return Path(address.removeprefix("unix_socket:"))
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime:
        return None
    return Path(runtime) / "speech-dispatcher" / "speechd.sock"


async def _spawn() -> None:
    """Start the service the way its own clients do (``--spawn`` returns once it listens)."""
    program = shutil.which("speech-dispatcher")
    if program is None:
        raise SpeechServiceError(
            "Speech-dispatcher is not installed, so the system voice cannot speak. Install the "
            "speech-dispatcher package, or choose a speech provider in Settings → Voice."
        )
    process = await asyncio.create_subprocess_exec(
        program, "--spawn", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    await process.wait()


class SpeechDispatcher:
    """One connection to speech-dispatcher: speak, follow each message to its end, stop."""

    def __init__(self) -> None:
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._replies: asyncio.Queue[tuple[str, list[str]]] = asyncio.Queue()
        self._ended: dict[str, asyncio.Future[str]] = {}
        self._pump: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def connect(self) -> None:
        path = socket_path()
        if path is None:
            raise SpeechServiceError(
                "There is no session runtime folder (XDG_RUNTIME_DIR), so speech-dispatcher cannot be "
                "reached."
            )
        try:
            try:
                self._reader, self._writer = await asyncio.open_unix_connection(str(path))
            except (FileNotFoundError, ConnectionRefusedError):
                # Not running, or gone and its socket left behind (it exits when idle): start it.
                await _spawn()
                self._reader, self._writer = await asyncio.open_unix_connection(str(path))
        except OSError as err:
            raise SpeechServiceError(
                f"Speech-dispatcher did not answer ({err.strerror or err}). Check that it is installed and "
                "runs, or choose a speech provider in Settings → Voice."
            ) from err
        self._pump = asyncio.create_task(self._read_replies(), name="speechd replies")
        await self.command(f"SET SELF CLIENT_NAME {CLIENT_NAME}")
        await self.command("SET SELF NOTIFICATION ALL on")

    @property
    def connected(self) -> bool:
        return self._writer is not None and not self._writer.is_closing()

    async def command(self, line: str) -> list[str]:
        """Send one command; its reply's lines, or ``SpeechServiceError`` for a refusal."""
        async with self._lock:
            return await self._send(line)

    async def _send(self, line: str) -> list[str]:
        writer = self._writer
        if writer is None:
            raise SpeechServiceError("Speech-dispatcher is not connected.")
        writer.write(line.encode() + b"\r\n")
        await writer.drain()
        code, lines = await self._replies.get()
        if not code.startswith("2"):
            raise SpeechServiceError(f"Speech-dispatcher refused {line.split()[0]}: {code} {lines[-1]}")
        return lines

    async def speak(self, text: str) -> str:
        """Queue ``text``; its message id (``wait`` follows it to its end)."""
        escaped = "\r\n".join("." + part if part.startswith(".") else part for part in text.splitlines())
        async with self._lock:
            await self._send("SPEAK")
            writer = self._writer
            assert writer is not None
            writer.write(escaped.encode() + b"\r\n.\r\n")
            await writer.drain()
            code, lines = await self._replies.get()
            if not code.startswith("2"):
                raise SpeechServiceError(f"Speech-dispatcher refused the text: {code} {lines[-1]}")
            message_id = lines[0]
            self._ended.setdefault(message_id, asyncio.get_running_loop().create_future())
            return message_id

    async def wait(self, message_id: str) -> str:
        """``end`` once the message was spoken, ``cancelled`` when it was stopped."""
        future = self._ended.setdefault(message_id, asyncio.get_running_loop().create_future())
        try:
            return await future
        finally:
            self._ended.pop(message_id, None)

    async def cancel(self) -> None:
        """Stop speaking and drop what this client queued."""
        if self.connected:
            await self.command("CANCEL SELF")

    async def set_rate(self, rate: int) -> None:
        await self.command(f"SET SELF RATE {max(-100, min(100, rate))}")

    async def set_pitch(self, pitch: int) -> None:
        await self.command(f"SET SELF PITCH {max(-100, min(100, pitch))}")

    async def set_voice(self, name: str) -> None:
        if name:
            await self.command(f"SET SELF SYNTHESIS_VOICE {name}")

    async def voices(self) -> list[SystemVoiceInfo]:
        lines = await self.command("LIST SYNTHESIS_VOICES")
        found = []
        for line in lines[:-1]:
            name, _, rest = line.partition("\t")
            language, _, variant = rest.partition("\t")
            found.append(SystemVoiceInfo(name, language, variant if variant != "none" else ""))
        return found

    async def aclose(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(OSError, ConnectionError):
                writer.write(b"QUIT\r\n")
                await writer.drain()
            writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await writer.wait_closed()
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        for future in self._ended.values():
            if not future.done():
                future.set_result("cancelled")

    async def _read_replies(self) -> None:
        """Sort what arrives: events (7xx) settle the messages they name, the rest are replies."""
        reader = self._reader
        assert reader is not None
        lines: list[str] = []
        try:
            while True:
                raw = await reader.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                code, separator, text = line[:3], line[3:4], line[4:]
                lines.append(text)
                if separator == "-":
                    continue
                if code in EVENT_CODES:
                    self._event(EVENT_CODES[code], lines)
                elif not code.startswith("7"):
                    self._replies.put_nowait((code, lines))
                lines = []
        finally:
            for future in self._ended.values():
                if not future.done():
                    future.set_result("cancelled")
            self._replies.put_nowait(("599", ["the connection to speech-dispatcher closed"]))

    def _event(self, kind: str, lines: list[str]) -> None:
        if kind not in ("end", "cancelled") or not lines:
            return
        future = self._ended.setdefault(lines[0], asyncio.get_running_loop().create_future())
        if not future.done():
            future.set_result(kind)
