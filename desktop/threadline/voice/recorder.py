"""Recording a dictation from the microphone into a WAV file, with its level as it goes.

Capture goes through PortAudio by way of ``sounddevice`` (a small, well-kept binding: its
wheels for Windows and macOS carry PortAudio, Linux uses the system's ``libportaudio2``,
which reaches PulseAudio and PipeWire through ALSA). Qt's QtMultimedia would do it too, but
only from the window and at the cost of the 175 MB PySide6-Addons wheel (docs/voice.md).

A recording ends when the person stops it, after ``SILENCE_END`` seconds of quiet once they
have spoken, when nothing was said for ``NOTHING_SAID``, or at ``LONGEST``. The level is
reported about twenty times a second, so the window can show that the microphone is open.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import math
import signal
import threading
import time
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RATE = 16000
"""Samples a second: what speech recognisers expect, and a small file to send."""
BLOCK = 800
"""Samples per level report (50 ms)."""
SPEECH_LEVEL = 0.02
"""A block louder than this (RMS, full scale 1.0) counts as speech."""
SILENCE_END = 2.0
NOTHING_SAID = 15.0
LONGEST = 600.0


class RecordingError(RuntimeError):
    """No microphone, no audio system, or the device refused; the message says which."""


@dataclass(frozen=True, slots=True)
class RecordedAudio:
    path: Path
    seconds: float
    reason: str
    """``stopped``, ``silence`` (quiet after speech), ``nothing`` (nothing was said) or ``limit``."""
    heard_speech: bool


_PORTAUDIO = threading.Lock()
"""PortAudio is started and stopped by one thread at a time (listing, opening a stream)."""
_open_streams = 0
"""Streams open now (under ``_PORTAUDIO``): PortAudio is only restarted while there are none."""


def _sounddevice() -> Any:
    """``sounddevice`` with PortAudio's device list read anew.

    PortAudio reads the devices once, when it starts, so a microphone plugged in (or a sound
    server started) after that is not seen; restarting it while no stream is open, as
    sounddevice's own documentation advises, lists what is there now. Only one recording
    runs at a time (``engine.voice``); the list is only read anew while none is open.
    """
    try:
        import sounddevice
    except OSError as err:  # the PortAudio library itself is missing
        raise RecordingError(
            "Recording needs the PortAudio library, which is not installed (on Debian and Ubuntu: "
            "the libportaudio2 package)."
        ) from err
    if _open_streams == 0:
        sounddevice._terminate()
        sounddevice._initialize()
    return sounddevice


@contextlib.contextmanager
def _signal_mask_kept() -> Iterator[None]:
    """Put the calling thread's signal mask back after PortAudio starts: its ALSA-to-PulseAudio
    path blocks SIGPIPE in the thread that starts it, and a process that thread starts later
    (a shell command, a server) would inherit the block and report broken pipes it should die of.
    PulseAudio's own threads, made meanwhile, keep theirs."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows
        yield
        return
    kept = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, kept)


def input_devices() -> list[str]:
    """The names of the devices that can record, the system's default first."""
    with _PORTAUDIO, _signal_mask_kept():
        return _input_devices()


def _input_devices() -> list[str]:
    sd = _sounddevice()
    try:
        devices = sd.query_devices()
        default = sd.default.device[0]
    except Exception as err:  # PortAudio's own errors are plain exceptions
        raise RecordingError(f"The audio system could not list the microphones: {err}") from err
    names = [d["name"] for d in devices if d["max_input_channels"] > 0]
    if isinstance(default, int) and 0 <= default < len(devices):
        first = devices[default]["name"]
        names = [first, *[n for n in names if n != first]]
    return names


def level_of(block: bytes) -> float:
    samples = array.array("h", block)
    if not samples:
        return 0.0
    return math.sqrt(sum(s * s for s in samples) / len(samples)) / 32768


class Recorder:
    """One recording: ``start`` opens the microphone, ``stop`` (or quiet) ends it, ``wait`` gives
    the file. ``on_level(level, seconds)`` runs on the recording's thread."""

    def __init__(
        self, path: Path, *, device: str = "", on_level: Callable[[float, float], None] | None = None
    ) -> None:
        self.path = path
        self._device = device
        self._on_level = on_level
        self._stop = threading.Event()
        self._reason = "stopped"
        self._done: asyncio.Future[RecordedAudio] | None = None

    async def start(self) -> None:
        """Open the microphone (``RecordingError`` when it cannot be)."""
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        opened: asyncio.Future[None] = loop.create_future()
        threading.Thread(target=self._capture, args=(loop, opened), name="dictation", daemon=True).start()
        await opened

    def stop(self) -> None:
        self._reason = "stopped"
        self._stop.set()

    async def wait(self) -> RecordedAudio:
        assert self._done is not None, "start() first"
        return await self._done

    def _capture(self, loop: asyncio.AbstractEventLoop, opened: asyncio.Future[None]) -> None:
        global _open_streams

        def settle(
            future: asyncio.Future[Any], value: Any = None, error: BaseException | None = None
        ) -> None:
            def apply() -> None:
                if future.done():
                    return
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(value)

            with contextlib.suppress(RuntimeError):  # the app closed meanwhile: nobody waits
                loop.call_soon_threadsafe(apply)

        try:
            with _PORTAUDIO, _signal_mask_kept():
                sd = _sounddevice()
                stream = sd.RawInputStream(
                    samplerate=RATE, channels=1, dtype="int16", blocksize=BLOCK, device=self._device or None
                )
                stream.start()
                _open_streams += 1
        except RecordingError as err:
            settle(opened, error=err)
            return
        except Exception as err:  # PortAudio's errors: no device, busy, refused
            settle(opened, error=RecordingError(f"The microphone could not be opened: {err}"))
            return
        settle(opened)
        assert self._done is not None
        try:
            settle(self._done, self._record(stream))
        except Exception as err:
            settle(self._done, error=RecordingError(f"The recording stopped: {err}"))
        finally:
            with _PORTAUDIO:
                with contextlib.suppress(Exception):
                    stream.stop()
                    stream.close()
                _open_streams -= 1

    def _record(self, stream: Any) -> RecordedAudio:
        started = time.monotonic()
        frames = 0
        heard = False
        quiet_since = started
        with wave.open(str(self.path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            while not self._stop.is_set():
                block, _overflowed = stream.read(BLOCK)
                data = bytes(block)
                out.writeframes(data)
                frames += len(data) // 2
                level = level_of(data)
                seconds = frames / RATE
                if self._on_level is not None:
                    self._on_level(level, seconds)
                now = time.monotonic()
                if level >= SPEECH_LEVEL:
                    heard, quiet_since = True, now
                elif heard and now - quiet_since >= SILENCE_END:
                    self._reason = "silence"
                    break
                if not heard and seconds >= NOTHING_SAID:
                    self._reason = "nothing"
                    break
                if seconds >= LONGEST:
                    self._reason = "limit"
                    break
        return RecordedAudio(self.path, frames / RATE, self._reason, heard)
