"""Dictating a prompt, as a person does: click the microphone beside Send (or hold
Ctrl+Shift+Space), speak, pause; the text lands in the message box, and nothing is sent.

The microphone is the monitor of the test's null sink, fed with speech espeak-ng wrote; the
text comes from a loopback ``/v1/audio/transcriptions``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.audio_server import AudioServer
from tests.support.sound import SoundSession
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.ui.voice.window_voice import WindowVoice


def with_transcription(harness: Any, audio: AudioServer) -> None:
    config = ProviderConfig("whisper", ProviderKind.OPENAI, base_url=audio.base_url)
    harness.run(harness.engine.providers.save_provider(config, "sk-audio"))
    voice = harness.engine.voice
    voice.save_settings(voice.settings.changed(transcription_provider="whisper"))


def test_the_microphone_records_until_the_pause_and_types_the_text(
    harness: Any, audio_server: AudioServer, sound_session: SoundSession, tmp_path: Path
) -> None:
    harness.open()
    with_transcription(harness, audio_server)
    tab = new_tab(harness)
    control = WindowVoice.dictation(tab)
    assert control.isVisible() and control.button.accessibleName() == "Dictate"
    assert not control.time_label.isVisible()
    qtbot = harness.qtbot
    qtbot.keyClicks(tab.composer.edit, "Please")
    speech = tmp_path / "say.wav"
    subprocess.run(["espeak-ng", "-w", str(speech), "Remind me to water the plants on Friday"], check=True)

    qtbot.mouseClick(control.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: control.recording, timeout=WAIT_MS)
    assert control.time_label.isVisible() and control.meter.isVisible()  # never open unseen
    assert control.button.accessibleName() == "Stop dictation"
    player = sound_session.play(speech)
    qtbot.waitUntil(lambda: control.meter.level > 0, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not control.recording and not control.working, timeout=WAIT_MS)
    player.wait(WAIT_MS / 1000)
    assert tab.composer.edit.toPlainText() == "Please Remind me to water the plants on Friday."
    assert not control.time_label.isVisible()
    assert [r for r in harness.server.requests if r.method == "POST"] == []  # never sent by itself


def test_push_to_talk_records_while_the_keys_are_held(
    harness: Any, audio_server: AudioServer, sound_session: SoundSession, tmp_path: Path
) -> None:
    harness.open()
    with_transcription(harness, audio_server)
    tab = new_tab(harness)
    control = WindowVoice.dictation(tab)
    edit, qtbot = tab.composer.edit, harness.qtbot
    speech = tmp_path / "say.wav"
    subprocess.run(["espeak-ng", "-w", str(speech), "Water the ferns"], check=True)
    held = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    edit.setFocus()
    qtbot.keyPress(edit, Qt.Key.Key_Space, held)
    qtbot.waitUntil(lambda: control.recording, timeout=WAIT_MS)
    player = sound_session.play(speech)
    player.wait(WAIT_MS / 1000)
    qtbot.keyRelease(edit, Qt.Key.Key_Space, held)
    qtbot.waitUntil(lambda: edit.toPlainText() == audio_server.text, timeout=WAIT_MS)
    assert not control.recording


def test_without_a_transcription_provider_the_microphone_says_what_to_do(
    harness: Any, sound_session: SoundSession
) -> None:
    harness.open()
    tab = new_tab(harness)
    control = WindowVoice.dictation(tab)
    harness.qtbot.mouseClick(control.button, Qt.MouseButton.LeftButton)
    status = harness.window.statusBar()
    harness.qtbot.waitUntil(lambda: "Choose where dictation" in status.currentMessage(), timeout=WAIT_MS)
    assert status.currentMessage() == (
        "Not recording: Choose where dictation is turned into text first: Settings → Voice, Transcribe with."
    )
    assert not control.recording and control.button.isEnabled()
