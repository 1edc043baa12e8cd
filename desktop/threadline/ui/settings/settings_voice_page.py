"""Settings → Voice: how replies are read aloud and where dictation is turned into text.

Every change is kept at once (``engine.voice.save_settings``, in the data folder: voices and
microphones are this computer's). Each half has a test button that does the real thing —
reads a sentence aloud, or records until the quiet after speech and shows what was heard —
and says what went wrong beside it (docs/voice.md).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QWidget,
)

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.api import EngineApi
from threadline.engine.voice import ReadingState
from threadline.ui.common.tasks import LogOnly, spawn
from threadline.ui.settings.page_layout import hint_label, scrolling_page, section_title
from threadline.voice.settings import SYSTEM, VoiceSettings
from threadline.voice.speechd import SystemVoiceInfo

TEST_SENTENCE = "This is how Threadline reads replies aloud."
DEFAULTS = VoiceSettings()
LABEL_WIDTH = 120


def _pace(value: int) -> str:
    return "normal" if value == 0 else f"{value:+d}"


class VoicePage(QWidget):
    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self._loading = True
        self._system_problem = ""
        """Why this computer's voice cannot speak (no speech service), said while it is chosen."""
        layout = scrolling_page(self, "Voice settings")

        layout.addWidget(section_title("Reading aloud"))
        layout.addWidget(
            hint_label(
                "A reply's menu (or the key A on it) reads it aloud; code, tables and formulas are "
                "summarised, not spelled out. This computer's voice needs speech-dispatcher on Linux; "
                "a provider's voice uses its /v1/audio/speech (OpenAI, or a local Kokoro or Piper server)."
            )
        )
        speech = QFormLayout()
        self.speech_provider = QComboBox(self)
        self.speech_provider.setAccessibleName("Read with")
        self._row(speech, "Read with", self.speech_provider)
        self.system_voice = QComboBox(self)
        self.system_voice.setAccessibleName("System voice")
        self._row(speech, "Voice", self.system_voice)
        self.speech_model = QLineEdit(self)
        self.speech_model.setAccessibleName("Speech model")
        self._row(speech, "Model", self.speech_model)
        self.speech_voice = QLineEdit(self)
        self.speech_voice.setAccessibleName("Provider voice")
        self.speech_voice.setPlaceholderText("alloy, nova, af_heart…")
        self._row(speech, "Provider voice", self.speech_voice)
        self.rate, self.rate_label = self._slider("Speed")
        self._row(speech, "Speed", self._with_label(self.rate, self.rate_label))
        self.pitch, self.pitch_label = self._slider("Pitch")
        self._row(speech, "Pitch", self._with_label(self.pitch, self.pitch_label))
        layout.addLayout(speech)
        self.read_new = QCheckBox("Read new replies aloud as they arrive", self)
        layout.addWidget(self.read_new)
        row = QHBoxLayout()
        self.test_speech = QPushButton("Test voice", self)
        self.test_speech.setObjectName("SecondaryButton")
        row.addWidget(self.test_speech)
        self.speech_result = QLabel(self)
        self.speech_result.setObjectName("Hint")
        self.speech_result.setWordWrap(True)
        row.addWidget(self.speech_result, 1)
        layout.addLayout(row)

        layout.addSpacing(12)
        layout.addWidget(section_title("Dictation"))
        layout.addWidget(
            hint_label(
                "The microphone beside Send (or Ctrl+Shift+Space held in the message box) records until "
                "you stop or pause; the text goes to the message box for you to read, never sent by "
                "itself. The recording goes to a provider's /v1/audio/transcriptions (OpenAI, Groq, a "
                "local whisper server)."
            )
        )
        listen = QFormLayout()
        self.transcription_provider = QComboBox(self)
        self.transcription_provider.setAccessibleName("Transcribe with")
        self._row(listen, "Transcribe with", self.transcription_provider)
        self.transcription_model = QLineEdit(self)
        self.transcription_model.setAccessibleName("Transcription model")
        self._row(listen, "Model", self.transcription_model)
        self.microphone = QComboBox(self)
        self.microphone.setAccessibleName("Microphone")
        self._row(listen, "Microphone", self.microphone)
        layout.addLayout(listen)
        self.keep = QCheckBox("Keep each recording in the data folder", self)
        layout.addWidget(self.keep)
        row = QHBoxLayout()
        self.test_listen = QPushButton("Test microphone", self)
        self.test_listen.setObjectName("SecondaryButton")
        self.test_listen.setToolTip("Records until you pause, then shows what was heard")
        row.addWidget(self.test_listen)
        self.listen_result = QLabel(self)
        self.listen_result.setObjectName("Hint")
        self.listen_result.setWordWrap(True)
        self.listen_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.listen_result, 1)
        layout.addLayout(row)
        layout.addStretch(1)

        for combo in (self.speech_provider, self.system_voice, self.transcription_provider, self.microphone):
            combo.currentIndexChanged.connect(self._save)
        for edit in (self.speech_model, self.speech_voice, self.transcription_model):
            edit.editingFinished.connect(self._save)
        for slider in (self.rate, self.pitch):
            slider.valueChanged.connect(self._save)
        for box in (self.read_new, self.keep):
            box.toggled.connect(self._save)
        self.test_speech.clicked.connect(self._test_speech)
        self.test_listen.clicked.connect(self._test_listen)
        self._unwatch = engine.voice.watch(self._reading)
        self.destroyed.connect(lambda: self._unwatch())
        self._show(engine.voice.settings)
        spawn(engine.providers.list_providers(), tell=self, on_done=self._providers)
        # What this computer lacks (no speech service, no audio system) is said beside the test
        # buttons, as the state of the page, rather than as an error on opening it.
        quiet = LogOnly("Voice settings: not listed", logging.INFO)
        spawn(engine.voice.system_voices(), tell=quiet, on_done=self._voices, on_failed=self._no_voices)
        spawn(
            engine.voice.input_devices(),
            tell=quiet,
            on_done=self._microphones,
            on_failed=self._no_microphones,
        )

    # -- building -----------------------------------------------------------------------

    def _row(self, form: QFormLayout, text: str, field: QWidget) -> None:
        """A labelled row; both sections' labels are one width, so their fields line up."""
        label = QLabel(text, self)
        label.setMinimumWidth(LABEL_WIDTH)
        label.setBuddy(field)
        form.addRow(label, field)

    def _slider(self, name: str) -> tuple[QSlider, QLabel]:
        slider = QSlider(Qt.Orientation.Horizontal, self)
        slider.setRange(-100, 100)
        slider.setSingleStep(10)
        slider.setPageStep(25)
        slider.setAccessibleName(name)
        label = QLabel("normal", self)
        label.setMinimumWidth(48)
        slider.valueChanged.connect(lambda value: label.setText(_pace(value)))
        return slider, label

    @staticmethod
    def _with_label(slider: QSlider, label: QLabel) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(slider, 1)
        row.addWidget(label)
        return box

    def _show(self, settings: VoiceSettings) -> None:
        self._loading = True
        self.speech_model.setText(settings.speech_model)
        self.speech_voice.setText(settings.speech_voice)
        self.rate.setValue(settings.rate)
        self.pitch.setValue(settings.pitch)
        self.read_new.setChecked(settings.read_new_replies)
        self.transcription_model.setText(settings.transcription_model)
        self.keep.setChecked(settings.keep_recordings)
        self._fill(self.speech_provider, [("This computer's voice", SYSTEM)], settings.speech_provider)
        self._fill(self.transcription_provider, [("Not chosen", "")], settings.transcription_provider)
        self._fill(self.system_voice, [("The desktop's default", "")], settings.system_voice)
        self._fill(self.microphone, [("The system's default", "")], settings.input_device)
        self._loading = False
        self._show_kind()

    @staticmethod
    def _fill(combo: QComboBox, entries: list[tuple[str, str]], current: str) -> None:
        combo.blockSignals(True)
        combo.clear()
        for text, data in entries:
            combo.addItem(text, data)
        if current and combo.findData(current) < 0:
            combo.addItem(current, current)  # kept as chosen, though not listed now
        combo.setCurrentIndex(max(combo.findData(current), 0))
        combo.blockSignals(False)

    def _show_kind(self) -> None:
        system = self.speech_provider.currentData() == SYSTEM
        self.system_voice.setEnabled(system)
        self.pitch.setEnabled(system)
        self.speech_model.setEnabled(not system)
        self.speech_voice.setEnabled(not system)
        if self.speech_result.text() in ("", self._system_problem):
            self.speech_result.setText(self._system_problem if system else "")

    def _providers(self, providers: list[ProviderConfig]) -> None:
        names = [p.name for p in providers if p.kind is ProviderKind.OPENAI]
        settings = self.engine.voice.settings
        self._fill(
            self.speech_provider,
            [("This computer's voice", SYSTEM), *((n, n) for n in names)],
            settings.speech_provider,
        )
        self._fill(
            self.transcription_provider,
            [("Not chosen", ""), *((n, n) for n in names)],
            settings.transcription_provider,
        )
        self._show_kind()

    def _voices(self, voices: list[SystemVoiceInfo]) -> None:
        base = sorted({v.name for v in voices if not v.variant})  # espeak lists each voice many times over
        entries = [("The desktop's default", ""), *((n, n) for n in base)]
        self._fill(self.system_voice, entries, self.engine.voice.settings.system_voice)

    def _no_voices(self, err: BaseException) -> None:
        self._system_problem = getattr(err, "user_message", str(err))
        self._show_kind()

    def _microphones(self, names: list[str]) -> None:
        entries = [("The system's default", ""), *((n, n) for n in names)]
        self._fill(self.microphone, entries, self.engine.voice.settings.input_device)

    def _no_microphones(self, err: BaseException) -> None:
        self.listen_result.setText(getattr(err, "user_message", str(err)))

    # -- acting -------------------------------------------------------------------------

    def _save(self) -> None:
        if self._loading:
            return
        self._show_kind()
        settings = self.engine.voice.settings.changed(
            speech_provider=str(self.speech_provider.currentData() or ""),
            system_voice=str(self.system_voice.currentData() or ""),
            speech_model=self.speech_model.text().strip() or DEFAULTS.speech_model,
            speech_voice=self.speech_voice.text().strip() or DEFAULTS.speech_voice,
            rate=self.rate.value(),
            pitch=self.pitch.value(),
            read_new_replies=self.read_new.isChecked(),
            transcription_provider=str(self.transcription_provider.currentData() or ""),
            transcription_model=self.transcription_model.text().strip() or DEFAULTS.transcription_model,
            input_device=str(self.microphone.currentData() or ""),
            keep_recordings=self.keep.isChecked(),
        )
        if settings != self.engine.voice.settings:
            self.engine.voice.save_settings(settings)

    def _test_speech(self) -> None:
        self._save()
        self.speech_result.setText("Reading…")
        spawn(
            self.engine.voice.read_text(TEST_SENTENCE),
            tell=self,
            context="Not read aloud",
            on_failed=self._speech_test_failed,
        )

    def _speech_test_failed(self, _err: BaseException) -> None:
        """The bridge says why (in the dialog's line); the "Reading…" placeholder goes."""
        self.speech_result.clear()

    def _reading(self, state: ReadingState) -> None:
        if self.speech_result.text() == "Reading…" and not state.active:
            self.speech_result.setText(state.error or "Done. If you heard nothing, check the sound output.")

    def _test_listen(self) -> None:
        self._save()
        self.test_listen.setEnabled(False)
        self.listen_result.setText("Listening… say a sentence, then pause.")

        async def listen() -> str:
            await self.engine.voice.start_dictation(lambda level, seconds: None)
            return await self.engine.voice.finish_dictation()

        def heard(text: str) -> None:
            self.test_listen.setEnabled(True)
            self.listen_result.setText(f"Heard: “{text}”")

        def failed(_err: BaseException) -> None:
            self.test_listen.setEnabled(True)
            self.listen_result.setText("")

        spawn(listen(), tell=self, context="Nothing heard", on_done=heard, on_failed=failed)
