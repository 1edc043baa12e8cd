"""Dictation on real parts: the microphone is the monitor of the test's null sink, fed with
speech espeak-ng wrote to a WAV; PortAudio records it until the quiet after it, and the
recording goes to a loopback ``/v1/audio/transcriptions`` that answers a known text."""

from __future__ import annotations

import asyncio
import subprocess
import wave
from pathlib import Path

import pytest
from tests.support.audio_server import AudioServer
from tests.support.sound import SoundSession
from tests.support.waiting import WAIT

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.engine.voice import VoiceError
from threadline.voice import recorder

pytestmark = pytest.mark.asyncio


async def use_transcription(engine: Engine, audio: AudioServer, **settings: object) -> None:
    await engine.providers.save_provider(
        ProviderConfig("whisper", ProviderKind.OPENAI, base_url=audio.base_url), "sk-audio"
    )
    engine.voice.save_settings(engine.voice.settings.changed(transcription_provider="whisper", **settings))


def spoken_wav(path: Path, text: str) -> Path:
    subprocess.run(["espeak-ng", "-w", str(path), text], check=True)
    return path


async def test_a_dictation_ends_in_the_quiet_after_speech_and_becomes_text(
    engine: Engine, audio_server: AudioServer, sound_session: SoundSession, tmp_path: Path
) -> None:
    await use_transcription(engine, audio_server)
    levels: list[tuple[float, float]] = []
    await engine.voice.start_dictation(lambda level, seconds: levels.append((level, seconds)))
    assert engine.voice.dictating
    player = sound_session.play(spoken_wav(tmp_path / "say.wav", "Remind me to water the plants on Friday"))
    text = await asyncio.wait_for(engine.voice.finish_dictation(), WAIT)
    await asyncio.to_thread(player.wait, WAIT)
    assert text == "Remind me to water the plants on Friday."
    assert not engine.voice.dictating
    assert max(level for level, _ in levels) > recorder.SPEECH_LEVEL  # the level was reported
    (request,) = audio_server.requests
    assert request.fields["model"] == "whisper-1"
    (tmp_path / "sent.wav").write_bytes(request.upload)
    with wave.open(str(tmp_path / "sent.wav")) as sent:
        seconds = sent.getnframes() / sent.getframerate()
        assert sent.getframerate() == recorder.RATE and sent.getnchannels() == 1
    assert 2.0 < seconds < 2.0 + recorder.SILENCE_END + 10  # the speech, then the quiet that ended it
    assert not (tmp_path / "data" / "recordings").exists()  # not kept unless asked


async def test_a_kept_recording_stays_in_the_data_folder_and_stop_ends_it_at_once(
    engine: Engine, audio_server: AudioServer, sound_session: SoundSession, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    await use_transcription(engine, audio_server, keep_recordings=True)
    await engine.voice.start_dictation(lambda level, seconds: None)
    player = sound_session.play(spoken_wav(tmp_path / "say.wav", "Water the ferns twice a week"))
    await asyncio.to_thread(player.wait, WAIT)
    engine.voice.stop_dictation()
    assert await asyncio.wait_for(engine.voice.finish_dictation(), WAIT) == audio_server.text
    (kept,) = (data / "recordings").glob("dictation-*.wav")
    assert kept.read_bytes() == audio_server.requests[0].upload


async def test_nothing_said_and_no_provider_are_clear_messages(
    engine: Engine, audio_server: AudioServer, sound_session: SoundSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(VoiceError, match="Choose where dictation is turned into text first"):
        await engine.voice.start_dictation(lambda level, seconds: None)
    await use_transcription(engine, audio_server)
    monkeypatch.setattr(recorder, "NOTHING_SAID", 1.0)  # the quiet microphone gives up sooner
    await engine.voice.start_dictation(lambda level, seconds: None)
    with pytest.raises(VoiceError, match="Nothing was heard"):
        await asyncio.wait_for(engine.voice.finish_dictation(), WAIT)
    assert audio_server.requests == []  # silence is not sent anywhere
    assert not engine.voice.dictating
