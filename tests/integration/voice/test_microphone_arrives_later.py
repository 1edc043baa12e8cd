"""A microphone that appears after Threadline first looked (a headset plugged in, the sound
server started later) is found: PortAudio's list is read anew for each recording. Looking
leaves the thread's signal mask as it was (a CI run caught `yes` reporting broken pipes in a
later shell test)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import pytest
from tests.support.audio_server import AudioServer
from tests.support.sound import SoundSession
from tests.support.waiting import WAIT

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.voice import recorder

pytestmark = pytest.mark.asyncio


async def test_a_recording_finds_a_sound_server_started_after_the_first_look(
    engine: Engine,
    audio_server: AudioServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # no sound server here yet
    try:
        before = recorder.input_devices()
    except recorder.RecordingError:
        before = []
    assert "pulse" not in before
    session: SoundSession = request.getfixturevalue("sound_session")  # now one starts
    assert "pulse" in recorder.input_devices()
    # PortAudio's ALSA-to-PulseAudio path blocks SIGPIPE in the thread that starts it; the
    # thread's mask is put back, or every process it starts later would inherit the block.
    assert signal.SIGPIPE not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    await engine.providers.save_provider(
        ProviderConfig("whisper", ProviderKind.OPENAI, base_url=audio_server.base_url), "sk-audio"
    )
    engine.voice.save_settings(engine.voice.settings.changed(transcription_provider="whisper"))
    await engine.voice.start_dictation(lambda level, seconds: None)
    speech = tmp_path / "say.wav"
    await asyncio.to_thread(subprocess.run, ["espeak-ng", "-w", str(speech), "Water the ferns"], check=True)
    player = session.play(speech)
    assert await asyncio.wait_for(engine.voice.finish_dictation(), WAIT) == audio_server.text
    await asyncio.to_thread(player.wait, WAIT)
