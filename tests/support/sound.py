"""A sound session of a test's own: PulseAudio with a null sink, and speech-dispatcher on it.

``sound_session`` starts a PulseAudio daemon in a private runtime folder (``XDG_RUNTIME_DIR``
points there for the test, so speech-dispatcher, which Threadline starts on demand, lives
there too) whose default output is a null sink. ``Recorder`` records that sink's monitor to
a WAV file with ``parecord``, so a test hears what was spoken: ``seconds`` (sox's ``soxi``)
says how long it was, ``loud_seconds`` how much of it was not silence. The sink's monitor is
also the session's default microphone, so ``play`` speaks into a dictation. Nothing of this
touches the machine's own sound.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support.waiting import WAIT, until_sync

PROGRAMS = ("pulseaudio", "pactl", "parecord", "speech-dispatcher", "espeak-ng", "sox", "soxi")


def need_programs() -> None:
    missing = [p for p in PROGRAMS if shutil.which(p) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: run .ci/setup --dev (it installs the sound packages)")


@dataclass
class SoundSession:
    runtime: Path
    sink: str = "threadline_test"

    def recorder(self, path: Path) -> Recorder:
        return Recorder(self, path)

    def play(self, wav: Path) -> subprocess.Popen[bytes]:
        """Play ``wav`` into the null sink, whose monitor is the session's microphone."""
        env = {**os.environ, "XDG_RUNTIME_DIR": str(self.runtime)}
        return subprocess.Popen(["paplay", "-d", self.sink, str(wav)], env=env)


class Recorder:
    """``parecord`` of the null sink's monitor into ``path`` while the ``with`` block runs."""

    def __init__(self, session: SoundSession, path: Path) -> None:
        self.session, self.path = session, path
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Recorder:
        self._process = subprocess.Popen(
            ["parecord", "-d", f"{self.session.sink}.monitor", "--file-format=wav", str(self.path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        until_sync(lambda: self.path.exists() and self.path.stat().st_size > 44, "parecord started")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGINT)  # parecord finishes the WAV header on SIGINT
        self._process.wait(WAIT)


def seconds(path: Path) -> float:
    return float(subprocess.run(["soxi", "-D", str(path)], capture_output=True, text=True, check=True).stdout)


def loud_seconds(path: Path) -> float:
    """How long ``path`` sounds, its silences (below 1% for 0.1 s) taken out."""
    trimmed = path.with_name(path.stem + "-loud.wav")
    subprocess.run(
        ["sox", str(path), str(trimmed), "silence", "1", "0.05", "1%", "-1", "0.1", "1%"],
        check=True,
        capture_output=True,
    )
    return seconds(trimmed)


@pytest.fixture
def sound_session(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SoundSession]:
    need_programs()
    runtime = tmp_path_factory.mktemp("runtime")
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("SPEECHD_ADDRESS", raising=False)
    monkeypatch.delenv("PULSE_SERVER", raising=False)
    session = SoundSession(runtime)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    subprocess.run(
        [
            "pulseaudio", "--daemonize=yes", "--exit-idle-time=-1", "-n",
            f"--load=module-null-sink sink_name={session.sink}", "--load=module-native-protocol-unix",
        ],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    until_sync(
        lambda: subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode == 0, "PulseAudio"
    )
    subprocess.run(["pactl", "set-default-sink", session.sink], env=env, check=True)
    subprocess.run(["pactl", "set-default-source", f"{session.sink}.monitor"], env=env, check=True)
    try:
        yield session
    finally:
        pid_file = runtime / "speech-dispatcher" / "pid" / "speech-dispatcher.pid"
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        subprocess.run(["pulseaudio", "--kill"], env=env, capture_output=True)
