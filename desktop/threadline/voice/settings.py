"""How this computer speaks and listens: kept in the data folder (``voice.json``), not in the
database, because voices and microphones belong to a machine, and a chat database may be
shared by several (docs/voice.md)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from threadline.files.private import open_private, private_folder

SETTINGS_FILE = "voice.json"
SYSTEM = ""
"""``speech_provider`` for the operating system's voices."""


@dataclass(frozen=True, slots=True)
class VoiceSettings:
    speech_provider: str = SYSTEM
    """The provider (by name) whose ``/v1/audio/speech`` reads aloud, or ``SYSTEM``."""
    speech_model: str = "gpt-4o-mini-tts"
    speech_voice: str = "alloy"
    system_voice: str = ""
    """The system voice by name (``""``: the desktop's default)."""
    rate: int = 0
    """-100 (slowest) to 100 (fastest); 0 is the voice's own pace."""
    pitch: int = 0
    read_new_replies: bool = False
    """Read each new reply aloud as it streams."""
    transcription_provider: str = ""
    """The provider whose ``/v1/audio/transcriptions`` turns dictation into text (``""``: none chosen)."""
    transcription_model: str = "whisper-1"
    input_device: str = ""
    """The microphone by name (``""``: the system's default)."""
    keep_recordings: bool = False
    """Keep each dictation's WAV in the data folder (off: deleted once transcribed)."""

    def changed(self, **values: Any) -> VoiceSettings:
        return replace(self, **values)


def read_settings(data_dir: Path) -> VoiceSettings:
    """The settings saved in ``data_dir``; defaults for a missing or unreadable file, or field."""
    try:
        raw = json.loads((data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return VoiceSettings()
    if not isinstance(raw, dict):
        return VoiceSettings()
    defaults = VoiceSettings()
    kept: dict[str, Any] = {}
    for field in fields(VoiceSettings):
        value = raw.get(field.name)
        if isinstance(value, type(getattr(defaults, field.name))):
            kept[field.name] = value
    return replace(defaults, **kept)


def write_settings(data_dir: Path, settings: VoiceSettings) -> None:
    """Save atomically: a crash leaves the old file or the new one."""
    path = data_dir / SETTINGS_FILE
    temporary = path.with_suffix(".json.tmp")
    private_folder(data_dir)
    with open_private(temporary, "w", encoding="utf-8") as out:  # the data folder is the user's alone
        out.write(json.dumps(asdict(settings), indent=2))
    temporary.replace(path)
