"""``threadline speak``, ``transcribe`` and ``ask --speak``, each a real process.

Speech goes through this machine's speech-dispatcher and espeak-ng (a sound session of the
test's own, heard on a null sink) or into a WAV file measured with sox; transcription goes to
a loopback ``/v1/audio/transcriptions`` that answers a known text.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider, stored_sessions
from tests.support.audio_server import AudioServer, tone
from tests.support.cli_process import threadline as run_cli
from tests.support.sound import SoundSession, loud_seconds, seconds
from tests.support.sse_server import ReplayServer, openai_text_stream, split_text, sse_response
from tests.support.waiting import WAIT

REPLY = "Water the ferns twice a week. The cactus needs almost nothing. That is all."


def threadline(data_dir: Path, *args: str, runtime: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI with its sound session's runtime folder, and time to speak on a busy machine."""
    env = {} if runtime is None else {"XDG_RUNTIME_DIR": str(runtime)}
    return run_cli(data_dir, *args, env=env, timeout=4 * WAIT)


def add_audio_provider(data_dir: Path, audio: AudioServer) -> subprocess.CompletedProcess[str]:
    return threadline(
        data_dir, "provider", "add", "whisper", "--kind", "openai", "--base-url", audio.base_url
    )


def chat_with_two_replies(data_dir: Path, server: ReplayServer) -> str:
    add_replay_provider(data_dir, server)
    server.enqueue(sse_response(openai_text_stream(["Hello."])), sse_response(openai_text_stream([REPLY])))
    first = threadline(data_dir, "ask", "Hi")
    assert first.returncode == 0, first.stderr
    session_id = first.stderr.split()[1]
    again = threadline(data_dir, "ask", "--session", session_id, "How do I water my plants?")
    assert again.returncode == 0, again.stderr
    return session_id


def test_speak_writes_the_last_reply_or_the_whole_chat_to_a_wav_file(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    session_id = chat_with_two_replies(tmp_path, replay_server)
    last, whole = tmp_path / "last.wav", tmp_path / "whole.wav"
    result = threadline(tmp_path, "speak", "--session", session_id, "--last", "--out", str(last))
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"Wrote {last}\n"
    assert threadline(tmp_path, "speak", "--session", session_id, "--out", str(whole)).returncode == 0
    assert 3.0 < seconds(last) < 15.0, seconds(last)  # three short sentences
    assert seconds(whole) > seconds(last) + 0.3  # and "Hello." before them


def test_speak_reads_the_reply_aloud_with_the_system_voice(
    tmp_path: Path, replay_server: ReplayServer, sound_session: SoundSession
) -> None:
    session_id = chat_with_two_replies(tmp_path, replay_server)
    with sound_session.recorder(tmp_path / "heard.wav"):
        result = threadline(
            tmp_path, "speak", "--session", session_id, "--last", runtime=sound_session.runtime
        )
    assert result.returncode == 0, result.stderr
    assert 2.0 < loud_seconds(tmp_path / "heard.wav") < 15.0


def test_speak_refuses_an_unknown_chat(tmp_path: Path) -> None:
    result = threadline(tmp_path, "speak", "--session", "nope")
    assert result.returncode == 1
    assert result.stderr == "threadline: no chat with id 'nope' (see `threadline list`)\n"


def test_ask_speak_prints_the_reply_and_reads_it_aloud(
    tmp_path: Path, replay_server: ReplayServer, sound_session: SoundSession
) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(sse_response(openai_text_stream(split_text(REPLY, 9)), chunk_delay=0.1))
    with sound_session.recorder(tmp_path / "heard.wav"):
        result = threadline(
            tmp_path, "ask", "--speak", "How do I water my plants?", runtime=sound_session.runtime
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == REPLY
    assert 2.0 < loud_seconds(tmp_path / "heard.wav") < 15.0
    assert stored_sessions(tmp_path)[0][-1].text.strip() == result.stdout.strip()


def test_transcribe_prints_the_text_of_a_recording(tmp_path: Path, audio_server: AudioServer) -> None:
    recording = tmp_path / "note.wav"
    recording.write_bytes(tone(0.5))
    added = threadline(
        tmp_path, "provider", "add", "whisper", "--kind", "openai", "--base-url", audio_server.base_url
    )
    assert added.returncode == 0, added.stderr
    result = threadline(
        tmp_path, "transcribe", str(recording), "--provider", "whisper", "--model", "whisper-large"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Remind me to water the plants on Friday.\n"
    (request,) = audio_server.requests
    assert request.path == "/v1/audio/transcriptions"
    assert request.fields["model"] == "whisper-large" and request.upload == recording.read_bytes()


def test_transcribe_without_a_provider_or_with_one_that_fails_says_why(
    tmp_path: Path, audio_server: AudioServer
) -> None:
    recording = tmp_path / "note.wav"
    recording.write_bytes(tone(0.2))
    result = threadline(tmp_path, "transcribe", str(recording))
    assert result.returncode == 1
    assert result.stderr.startswith(
        "threadline: No transcription provider is chosen. Pick one in Settings → Voice"
    )
    threadline(
        tmp_path, "provider", "add", "whisper", "--kind", "openai", "--base-url", audio_server.base_url
    )
    audio_server.fail_with = 500
    failed = threadline(tmp_path, "transcribe", str(recording), "--provider", "whisper")
    assert failed.returncode == 1
    assert failed.stderr == (
        "threadline: whisper refused the transcription request: The audio service is overloaded. "
        "(HTTP 500).\n"
    )
    assert os.path.exists(recording)  # the recording is the person's: never removed by a failure
