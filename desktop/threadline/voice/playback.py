"""Playing a WAV file (speech from a provider) with the player the system ships.

``paplay`` (PulseAudio and PipeWire desktops) or ``aplay`` (ALSA) on Linux, ``afplay`` on
macOS, PowerShell's ``Media.SoundPlayer`` on Windows: each plays a file and ends when it is
done, and stopping is ending the process. No audio library is linked into Threadline for
this (docs/voice.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from pathlib import Path


class PlaybackError(RuntimeError):
    """No player, or the player failed (no audio device); the message says which."""


def player_command(path: Path) -> list[str]:
    if sys.platform == "darwin":
        return ["afplay", str(path)]
    if sys.platform == "win32":
        quoted = str(path).replace("'", "''")
        return [
            "powershell",
            "-NoProfile",
            "-Command",
            f"(New-Object Media.SoundPlayer '{quoted}').PlaySync()",
        ]
    for program in ("paplay", "aplay"):
        found = shutil.which(program)
        if found:
            return [found, str(path)] if program == "paplay" else [found, "-q", str(path)]
    raise PlaybackError(
        "No audio player was found (paplay or aplay), so the speech cannot be played. Install "
        "pulseaudio-utils or alsa-utils."
    )


async def play(path: Path) -> bool:
    """Play ``path`` to its end (``True``); cancelling stops it at once."""
    process = await asyncio.create_subprocess_exec(
        *player_command(path), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    try:
        _, error = await process.communicate()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    if process.returncode != 0:
        reason = error.decode("utf-8", "replace").strip().splitlines()[-1:] or [
            f"exit status {process.returncode}"
        ]
        raise PlaybackError(f"The speech could not be played: {reason[0]}")
    return True
