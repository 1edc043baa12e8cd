"""Replies read aloud through the real speech services of this machine, heard on a null sink.

The system voice is speech-dispatcher with espeak-ng (``sound_session`` starts them for the
test); a provider's voice is ``/v1/audio/speech`` on a loopback server whose request log says
which sentences were asked for, in which order. What reaches the sound card is recorded from
the null sink's monitor and measured with sox.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.support.audio_server import AudioServer
from tests.support.sound import SoundSession, loud_seconds
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import WAIT, until

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.engine.voice import ReadingState, VoiceError

pytestmark = pytest.mark.asyncio

REPLY = (
    "Water the ferns twice a week. The cactus needs almost nothing.\n\n"
    "```python\nschedule = {'fern': 2, 'cactus': 0}\nprint(schedule)\n```\n\n"
    "That is all."
)


async def reply_in_chat(engine: Engine, server: ReplayServer, text: str) -> tuple[str, str]:
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    server.enqueue(sse_response(openai_text_stream([text])))
    engine.turns.send(session.id, "How do I water my plants?")
    await asyncio.wait_for(engine.turns.wait_idle(session.id), WAIT)
    return session.id, live.conversation.tree.path()[-1].id


async def ended(engine: Engine) -> ReadingState:
    states: list[ReadingState] = []
    unsubscribe = engine.voice.watch(states.append)
    try:
        await until(lambda: not engine.voice.state.active, "the reading's end")
    finally:
        unsubscribe()
    return engine.voice.state


async def use_provider_voice(engine: Engine, audio: AudioServer) -> None:
    await engine.providers.save_provider(
        ProviderConfig("speaker", ProviderKind.OPENAI, base_url=audio.base_url), "sk-audio"
    )
    engine.voice.save_settings(engine.voice.settings.changed(speech_provider="speaker", speech_voice="nova"))


async def test_a_reply_is_heard_from_the_system_voice(
    engine: Engine, replay_server: ReplayServer, sound_session: SoundSession, tmp_path: Path
) -> None:
    session_id, reply_id = await reply_in_chat(engine, replay_server, REPLY)
    with sound_session.recorder(tmp_path / "heard.wav"):
        await engine.voice.read_message(session_id, reply_id)
        assert engine.voice.state.active and engine.voice.state.sentences == 4
        state = await ended(engine)
    assert state.error == ""
    heard = loud_seconds(tmp_path / "heard.wav")
    assert 2.0 < heard < 20.0, heard  # four short sentences, not the code spelled out


async def test_stop_silences_the_voice_at_once(
    engine: Engine, replay_server: ReplayServer, sound_session: SoundSession, tmp_path: Path
) -> None:
    long_reply = " ".join(f"This is sentence number {n} of a very long reply." for n in range(60))
    session_id, reply_id = await reply_in_chat(engine, replay_server, long_reply)
    with sound_session.recorder(tmp_path / "stopped.wav"):
        await engine.voice.read_message(session_id, reply_id)
        await until(lambda: engine.voice.state.sentence >= 1, "the second sentence")
        await engine.voice.stop()
        assert not engine.voice.state.active
    assert loud_seconds(tmp_path / "stopped.wav") < 30.0  # the whole reply would take minutes


async def test_pause_and_resume_say_the_interrupted_sentence_again(
    engine: Engine, replay_server: ReplayServer, audio_server: AudioServer, sound_session: SoundSession
) -> None:
    await use_provider_voice(engine, audio_server)
    session_id, reply_id = await reply_in_chat(
        engine, replay_server, "One is first. Two follows. Three ends it."
    )
    await engine.voice.read_message(session_id, reply_id)
    await until(lambda: audio_server.spoken() == ["One is first."], "the first sentence asked for")
    await engine.voice.pause()
    assert engine.voice.state.paused and engine.voice.state.active
    engine.voice.resume()
    state = await ended(engine)
    assert state.error == ""
    spoken = audio_server.spoken()
    assert spoken[-3:] == ["One is first.", "Two follows.", "Three ends it."] or spoken[-2:] == [
        "Two follows.",
        "Three ends it.",
    ]  # paused during the first sentence, or just after it
    assert audio_server.requests[0].fields["voice"] == "nova"
    assert audio_server.requests[0].authorization == "Bearer sk-audio"


async def test_a_streaming_reply_is_read_sentence_by_sentence_as_it_arrives(
    engine: Engine, replay_server: ReplayServer, audio_server: AudioServer, sound_session: SoundSession
) -> None:
    await use_provider_voice(engine, audio_server)
    session = await engine.sessions.new_session()
    await engine.sessions.open_session(session.id)
    pieces = ["Water the ferns", " twice a week. The cac", "tus needs almost nothing.\n\n```python\n",
              "schedule = {}\n", "```\n\nThat is all."]  # fmt: skip
    replay_server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.2))
    await engine.voice.read_streaming(session.id)
    engine.turns.send(session.id, "How do I water my plants?")
    state = await ended(engine)
    assert state.error == ""
    assert audio_server.spoken() == [
        "Water the ferns twice a week.",
        "The cactus needs almost nothing.",
        "Python code block, 1 line.",
        "That is all.",
    ]


async def test_a_speech_service_that_fails_ends_the_reading_with_its_reason(
    engine: Engine, replay_server: ReplayServer, audio_server: AudioServer, sound_session: SoundSession
) -> None:
    await use_provider_voice(engine, audio_server)
    audio_server.fail_with = 503
    session_id, reply_id = await reply_in_chat(engine, replay_server, "Hello there.")
    await engine.voice.read_message(session_id, reply_id)
    state = await ended(engine)
    assert state.error == "speaker refused the speech request: The audio service is overloaded. (HTTP 503)."


async def test_no_speech_dispatcher_is_a_clear_message(
    engine: Engine, replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no speech-dispatcher to start
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    session_id, reply_id = await reply_in_chat(engine, replay_server, "Hello there.")
    await engine.voice.read_message(session_id, reply_id)
    state = await ended(engine)
    assert state.error.startswith("Speech-dispatcher is not installed, so the system voice cannot speak.")
    with pytest.raises(VoiceError, match="Speech-dispatcher is not installed"):
        await engine.voice.system_voices()
