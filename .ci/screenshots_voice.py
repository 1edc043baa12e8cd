"""Screenshots of the voice, for review: ``python .ci/screenshots_voice.py [OUT_DIR]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder: a chat
with a reply, the composer with its microphone, the reading bar and the microphone while it
records (their states set directly: no sound is needed), and Settings → Voice; light and dark.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop


async def shoot(app: Any, out: Path) -> int:
    from PySide6.QtGui import QColor

    from threadline.core.config import ProviderConfig, ProviderKind
    from threadline.core.ids import new_id
    from threadline.core.messages import Message, MessageKind, MessageStatus, Role
    from threadline.engine.engine import Engine
    from threadline.engine.voice import ReadingState
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.voice.dictation import microphone_icon
    from threadline.ui.voice.window_voice import WindowVoice
    from threadline.ui.window.main_window import MainWindow

    def save(widget: Any, name: str) -> None:
        path = out / f"{name}.png"
        widget.grab().save(str(path))
        print(path)

    async def both(widget: Any, window: Any, name: str) -> None:
        for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK):
            window.set_theme(choice)
            await asyncio.sleep(0.3)
            save(widget, f"{name}-{choice.value}")
        window.set_theme(ThemeChoice.LIGHT)

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        engine = await Engine.open(data)
        await engine.providers.save_provider(
            ProviderConfig("kokoro", ProviderKind.OPENAI, base_url="http://10.255.255.1:9/v1")
        )
        engine.voice.save_settings(engine.voice.settings.changed(speech_provider="kokoro"))
        session = await engine.sessions.new_session()
        prompt = Message.prompt("How often should I water a fern?")
        reply = Message(
            id=new_id(),
            role=Role.ASSISTANT,
            kind=MessageKind.RESPONSE,
            text="Water a fern **twice a week**, more in summer. Keep the soil moist, never soaked.\n\n"
            "| Plant | Water |\n|---|---|\n| Fern | twice a week |\n| Cactus | once a month |\n",
            parent_id=prompt.id,
            status=MessageStatus.COMPLETE,
        )
        await engine.store.append_messages(session.id, [prompt, reply])
        window = MainWindow(theme, data)
        window.resize(1100, 700)
        window.show()
        await window.attach_engine(engine)
        tab = await window.session_tabs.open(session.id, focus=True)
        await asyncio.sleep(0.5)
        await both(window, window, "voice-composer")
        window.voice.bar.show_state(ReadingState(True, session.id, reply.id, 1, 3))  # as while it reads
        await both(window, window, "voice-reading")
        window.voice.bar.show_state(ReadingState(True, session.id, reply.id, 1, 3, paused=True))
        save(window.statusBar(), "voice-paused-light")
        window.voice.bar.show_state(ReadingState())
        control = WindowVoice.dictation(tab)
        control._started = lambda: None  # type: ignore[method-assign]
        control.recording = True
        control.button.setIcon(microphone_icon(QColor("#d93025")))
        control.time_label.setText("0:07")
        control.time_label.show()
        control.meter.show()
        control.meter.set_level(0.12)
        tab.composer.edit.setPlainText("Please remind me")
        await asyncio.sleep(0.3)
        await both(tab.composer, window, "voice-recording")
        control._show_idle()
        window.open_settings("voice")
        dialog = window._settings_dialog
        await dialog.loaded
        await asyncio.sleep(1.0)
        await both(dialog, window, "voice-settings")
        dialog.close()
        window.hide()
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
