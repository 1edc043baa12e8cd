"""A reply read aloud from the window, as a person does it: key A (or the message's menu) on a
reply, the reading bar in the status bar with Pause, Resume and Stop; and, with "Read new
replies aloud" on, a reply read as it streams.

The voice is a provider's ``/v1/audio/speech`` on loopback, whose request log says which
sentences were asked for; the WAVs it returns are played into a null sink of the test's own
sound session.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.audio_server import AudioServer
from tests.support.sound import SoundSession
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.ui.chat.view.message_actions import READ_ALOUD
from threadline.ui.chat.view.message_menu import offered_commands

REPLY = "Water the ferns twice a week. The cactus needs almost nothing. That is all."


def use_provider_voice(harness: Any, audio: AudioServer, **settings: Any) -> None:
    config = ProviderConfig("speaker", ProviderKind.OPENAI, base_url=audio.base_url)
    harness.run(harness.engine.providers.save_provider(config, "sk-audio"))
    voice = harness.engine.voice
    voice.save_settings(voice.settings.changed(speech_provider="speaker", **settings))


def test_a_reply_is_read_aloud_with_key_a_and_the_bar_pauses_resumes_and_stops(
    harness: Any, audio_server: AudioServer, sound_session: SoundSession
) -> None:
    harness.open()
    use_provider_voice(harness, audio_server)
    tab = new_tab(harness)
    harness.server.enqueue(sse_response(openai_text_stream(split_text(REPLY, 4))))
    type_and_send(harness.qtbot, tab, "How do I water my plants?")
    wait_idle(harness, tab)
    reply = tab.live.conversation.path()[-1]
    assert READ_ALOUD in offered_commands(reply, [], busy=False, versions=1)  # in its menu
    bar = harness.window.voice.bar
    assert not bar.isVisible()

    tab.view.setFocus()
    assert tab.view.set_current_message(reply.id)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_A)
    harness.qtbot.waitUntil(lambda: bar.isVisible(), timeout=WAIT_MS)
    assert bar.label.text().startswith("Reading aloud · sentence ")
    assert bar.label.text().endswith(" of 3")
    harness.qtbot.waitUntil(lambda: bool(audio_server.spoken()), timeout=WAIT_MS)  # the voice is asked
    harness.qtbot.mouseClick(bar.pause_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: bar.label.text().startswith("Paused"), timeout=WAIT_MS)
    assert bar.pause_button.text() == "Resume" and bar.pause_button.accessibleName() == "Resume reading aloud"
    harness.qtbot.mouseClick(bar.pause_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: bar.label.text().startswith("Reading aloud"), timeout=WAIT_MS)
    harness.qtbot.mouseClick(bar.stop_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not bar.isVisible(), timeout=WAIT_MS)
    assert not harness.engine.voice.state.active
    assert audio_server.spoken()[0] == "Water the ferns twice a week."


def test_read_new_replies_aloud_reads_a_reply_as_it_streams(
    harness: Any, audio_server: AudioServer, sound_session: SoundSession
) -> None:
    harness.open()
    use_provider_voice(harness, audio_server, read_new_replies=True)
    tab = new_tab(harness)
    harness.server.enqueue(sse_response(openai_text_stream(split_text(REPLY, 6)), chunk_delay=0.1))
    type_and_send(harness.qtbot, tab, "How do I water my plants?")
    wait_idle(harness, tab)
    bar = harness.window.voice.bar
    harness.qtbot.waitUntil(lambda: not harness.engine.voice.state.active, timeout=WAIT_MS)
    assert audio_server.spoken() == [
        "Water the ferns twice a week.",
        "The cactus needs almost nothing.",
        "That is all.",
    ]
    assert not bar.isVisible()


def test_a_voice_that_fails_says_so_in_the_status_bar(
    harness: Any, audio_server: AudioServer, sound_session: SoundSession
) -> None:
    harness.open()
    use_provider_voice(harness, audio_server)
    audio_server.fail_with = 503
    tab = new_tab(harness)
    harness.server.enqueue(sse_response(openai_text_stream([REPLY])))
    type_and_send(harness.qtbot, tab, "How do I water my plants?")
    wait_idle(harness, tab)
    tab.view.setFocus()
    assert tab.view.set_current_message(tab.live.conversation.path()[-1].id)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_A)
    status = harness.window.statusBar()
    harness.qtbot.waitUntil(lambda: "Reading aloud stopped." in status.currentMessage(), timeout=WAIT_MS)
    assert status.currentMessage() == (
        "Reading aloud stopped. speaker refused the speech request: The audio service is overloaded. "
        "(HTTP 503)."
    )
    assert not harness.window.voice.bar.isVisible()
