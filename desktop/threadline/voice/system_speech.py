"""The operating system's voices: speak a sentence, stop, list the voices, write a WAV file.

Linux speaks through speech-dispatcher (``voice/speechd.py``), so the desktop's chosen
synthesizer and its queue with screen readers are respected. macOS has ``say`` and Windows
the ``System.Speech`` synthesizer, both reached through the programs that ship with the
system, one process per sentence (stopping is ending that process). Those two cannot be run
on the Linux machines Threadline is tested on; they are kept to the few documented command
lines below (docs/voice.md).

Writing speech to a file (``threadline speak --out``): speech-dispatcher cannot, so on Linux
``espeak-ng`` (its default synthesizer) writes the WAV itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from pathlib import Path
from typing import Protocol

from threadline.voice.settings import VoiceSettings
from threadline.voice.speechd import SpeechDispatcher, SpeechServiceError, SystemVoiceInfo

__all__ = ["SpeechServiceError", "SystemSpeaker", "SystemVoiceInfo", "system_speaker", "write_system_wav"]


class SystemSpeaker(Protocol):
    async def say(self, sentence: str, settings: VoiceSettings) -> bool:
        """Speak ``sentence``; ``True`` once it was spoken to its end, ``False`` when stopped."""
        ...

    async def stop(self) -> None: ...
    async def voices(self) -> list[SystemVoiceInfo]: ...
    async def aclose(self) -> None: ...


class SpeechdSpeaker:
    """Linux: one speech-dispatcher connection, opened on the first sentence."""

    def __init__(self) -> None:
        self._service: SpeechDispatcher | None = None
        self._applied: tuple[int, int, str] | None = None
        self._opening = asyncio.Lock()

    async def _connected(self) -> SpeechDispatcher:
        async with self._opening:
            if self._service is None or not self._service.connected:
                service = SpeechDispatcher()
                await service.connect()
                self._service, self._applied = service, None
            return self._service

    async def say(self, sentence: str, settings: VoiceSettings) -> bool:
        service = await self._connected()
        wanted = (settings.rate, settings.pitch, settings.system_voice)
        if wanted != self._applied:
            await service.set_rate(settings.rate)
            await service.set_pitch(settings.pitch)
            await service.set_voice(settings.system_voice)
            self._applied = wanted
        message = await service.speak(sentence)
        try:
            return await service.wait(message) == "end"
        except asyncio.CancelledError:
            with contextlib.suppress(SpeechServiceError, OSError):
                await asyncio.shield(service.cancel())
            raise

    async def stop(self) -> None:
        if self._service is not None:
            with contextlib.suppress(SpeechServiceError, OSError):
                await self._service.cancel()

    async def voices(self) -> list[SystemVoiceInfo]:
        return await (await self._connected()).voices()

    async def aclose(self) -> None:
        if self._service is not None:
            await self._service.aclose()
            self._service = None


class ProcessSpeaker:
    """macOS (``say``) and Windows (PowerShell's ``System.Speech``): a process per sentence."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None

    async def say(self, sentence: str, settings: VoiceSettings) -> bool:
        process = await asyncio.create_subprocess_exec(
            *_speak_command(sentence, settings),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        self._process = process
        try:
            await process.communicate(sentence.encode() if sys.platform == "win32" else None)
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            raise
        finally:
            self._process = None
        return process.returncode == 0

    async def stop(self) -> None:
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    async def voices(self) -> list[SystemVoiceInfo]:
        return []  # the system's own settings choose; the default voice is used

    async def aclose(self) -> None:
        await self.stop()


def _words_per_minute(rate: int) -> int:
    """-100…100 around a voice's usual 175 words a minute: 80 at the slowest, 390 at the fastest."""
    return round(175 + rate * (215 if rate > 0 else 95) / 100)


_WINDOWS_SPEAK = (
    "Add-Type -AssemblyName System.Speech; $s = New-Object System.Speech.Synthesis.SpeechSynthesizer; "
    "$s.Rate = {rate}; {voice}{output}$s.Speak([Console]::In.ReadToEnd())"
)


def _speak_command(sentence: str, settings: VoiceSettings, wav: Path | None = None) -> list[str]:
    if sys.platform == "darwin":
        command = ["say", "-r", str(_words_per_minute(settings.rate))]
        if settings.system_voice:
            command += ["-v", settings.system_voice]
        if wav is not None:
            command += ["-o", str(wav), "--data-format=LEI16@22050"]
        return [*command, "--", sentence]
    rate = max(-10, min(10, round(settings.rate / 10)))  # System.Speech's rate is -10…10
    voice = (
        f"$s.SelectVoice('{settings.system_voice.replace(chr(39), '')}'); " if settings.system_voice else ""
    )
    output = f"$s.SetOutputToWaveFile('{str(wav).replace(chr(39), '')}'); " if wav is not None else ""
    script = _WINDOWS_SPEAK.format(rate=rate, voice=voice, output=output)
    return ["powershell", "-NoProfile", "-NonInteractive", "-Command", script]


def system_speaker() -> SystemSpeaker:
    return ProcessSpeaker() if sys.platform in ("darwin", "win32") else SpeechdSpeaker()


async def write_system_wav(text: str, path: Path, settings: VoiceSettings) -> None:
    """``text`` spoken by a system voice into the WAV file ``path``."""
    if sys.platform in ("darwin", "win32"):
        command = _speak_command(text, settings, wav=path)
        feed = text.encode() if sys.platform == "win32" else None
    else:
        program = shutil.which("espeak-ng") or shutil.which("espeak")
        if program is None:
            raise SpeechServiceError(
                "Writing speech to a file needs espeak-ng, which is not installed. Install the "
                "espeak-ng package, or choose a speech provider in Settings → Voice."
            )
        command = [program, "-s", str(_words_per_minute(settings.rate)), "-p", str(50 + settings.pitch // 2)]
        if settings.system_voice and " " not in settings.system_voice:
            command += ["-v", settings.system_voice]  # speech-dispatcher's long names are not espeak-ng's
        command += ["-w", str(path), "--stdin"]
        feed = text.encode()
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, error = await process.communicate(feed)
    if process.returncode != 0 or not await asyncio.to_thread(path.exists):
        reason = error.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no reason given"]
        raise SpeechServiceError(f"The system voice could not write {path.name}: {reason[0]}")
