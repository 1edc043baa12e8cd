"""Settings → Voice, clicked as a person does: pick the voice and the transcription provider,
test each for real (a sentence read by a loopback /v1/audio/speech and played into the test's
null sink; a sentence espeak-ng speaks into the microphone, recorded until the pause and
turned into text by a loopback /v1/audio/transcriptions)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.audio_server import AudioServer
from tests.support.sound import SoundSession
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.ui.settings.settings_voice_page import TEST_SENTENCE


def open_voice(harness: Any) -> Any:
    harness.window.open_settings("voice")
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    page = dialog.voice
    assert dialog.pages.currentWidget() is page
    return page


def choose(harness: Any, combo: Any, text: str) -> None:
    harness.qtbot.waitUntil(lambda: combo.findText(text) >= 0, timeout=WAIT_MS)
    combo.setFocus()
    combo.setCurrentIndex(combo.findText(text))  # as a pick from the open list does


def test_both_halves_are_chosen_and_tested_for_real(
    harness: Any, audio_server: AudioServer, sound_session: SoundSession, tmp_path: Path
) -> None:
    harness.open()
    config = ProviderConfig("audio", ProviderKind.OPENAI, base_url=audio_server.base_url)
    harness.run(harness.engine.providers.save_provider(config, "sk-audio"))
    page = open_voice(harness)
    qtbot = harness.qtbot
    assert page.speech_provider.currentText() == "This computer's voice"
    qtbot.waitUntil(lambda: page.system_voice.count() > 10, timeout=WAIT_MS)  # speech-dispatcher's voices

    choose(harness, page.speech_provider, "audio")
    assert not page.system_voice.isEnabled() and page.speech_voice.isEnabled()
    page.speech_voice.setFocus()
    page.speech_voice.selectAll()
    qtbot.keyClicks(page.speech_voice, "nova")
    qtbot.keyClick(page.speech_voice, Qt.Key.Key_Tab)
    page.rate.setValue(40)
    assert page.rate_label.text() == "+40"
    page.read_new.setFocus()
    qtbot.keyClick(page.read_new, Qt.Key.Key_Space)
    settings = harness.engine.voice.settings
    assert (settings.speech_provider, settings.speech_voice, settings.rate, settings.read_new_replies) == (
        "audio",
        "nova",
        40,
        True,
    )
    qtbot.mouseClick(page.test_speech, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.speech_result.text().startswith("Done."), timeout=WAIT_MS)
    (spoken,) = audio_server.requests
    assert spoken.fields["input"] == TEST_SENTENCE and spoken.fields["voice"] == "nova"
    assert spoken.fields["speed"] == 1.32

    choose(harness, page.transcription_provider, "audio")
    assert harness.engine.voice.settings.transcription_provider == "audio"
    qtbot.waitUntil(lambda: page.microphone.count() > 1, timeout=WAIT_MS)
    speech = tmp_path / "say.wav"
    subprocess.run(["espeak-ng", "-w", str(speech), "Remind me to water the plants"], check=True)
    qtbot.mouseClick(page.test_listen, Qt.MouseButton.LeftButton)
    assert page.listen_result.text().startswith("Listening")
    qtbot.waitUntil(lambda: harness.engine.voice.dictating, timeout=WAIT_MS)
    player = sound_session.play(speech)
    qtbot.waitUntil(lambda: page.listen_result.text().startswith("Heard"), timeout=WAIT_MS)
    player.wait(WAIT_MS / 1000)
    assert page.listen_result.text() == f"Heard: “{audio_server.text}”"
    assert page.test_listen.isEnabled()


def test_a_missing_transcription_provider_is_said_where_the_person_clicked(
    harness: Any, sound_session: SoundSession
) -> None:
    harness.open()
    page = open_voice(harness)
    harness.qtbot.mouseClick(page.test_listen, Qt.MouseButton.LeftButton)
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: page.test_listen.isEnabled(), timeout=WAIT_MS)
    assert page.listen_result.text() == ""
    shown = dialog.findChildren(type(page.listen_result))
    assert any("Choose where dictation is turned into text first" in label.text() for label in shown)
