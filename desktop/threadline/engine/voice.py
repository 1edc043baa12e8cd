"""``engine.voice``: replies read aloud and dictation turned into text (docs/voice.md).

Reading is one queue for the whole app: a new reading stops the one before, as a person
expects of a single voice. A reply is read sentence by sentence (``voice/spoken.py``), by
the system's voices or by a provider's ``/v1/audio/speech``; a streaming reply is read as
its sentences complete. Pause stops the sentence being spoken and resume says it again from
its start; a 30-minute reply is only ever one sentence ahead of the voice, so nothing waits
on its length. Observers hear every change (``ReadingState``) on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from threadline.core.messages import MessageStatus
from threadline.engine.errors import EngineError
from threadline.engine.events import (
    ConversationEvent,
    MessageChanged,
    TextDelta,
    TurnFailed,
    TurnStateChanged,
)
from threadline.engine.registry import SessionRegistry
from threadline.llm import credentials
from threadline.store import Store
from threadline.voice.audio_service import AudioService, AudioServiceError
from threadline.voice.playback import PlaybackError, play
from threadline.voice.recorder import Recorder, RecordingError, input_devices
from threadline.voice.settings import SYSTEM, VoiceSettings, read_settings, write_settings
from threadline.voice.spoken import SpokenFeed, spoken_sentences
from threadline.voice.system_speech import (
    SpeechServiceError,
    SystemSpeaker,
    SystemVoiceInfo,
    system_speaker,
    write_system_wav,
)

log = logging.getLogger(__name__)


class VoiceError(EngineError):
    """Speaking or transcribing failed; ``user_message`` says why and what to do."""


@dataclass(frozen=True, slots=True)
class ReadingState:
    """What the voice is doing: nothing (``active`` false), reading, or paused."""

    active: bool = False
    session_id: str = ""
    message_id: str = ""
    sentence: int = 0
    """The sentence being read (0-based)."""
    sentences: int = 0
    """How many are known so far (a streaming reply's grow)."""
    paused: bool = False
    streaming: bool = False
    error: str = ""
    """Why the last reading stopped, when it failed."""


Observer = Callable[[ReadingState], None]


class _Reading:
    """One reply's sentences and how far the voice got."""

    def __init__(self, session_id: str, message_id: str, sentences: list[str], *, streaming: bool) -> None:
        self.session_id = session_id
        self.message_id = message_id
        self.sentences = sentences
        self.index = 0
        self.streaming = streaming
        self.paused = False
        self.more = asyncio.Event()
        self.unsubscribe: Callable[[], None] | None = None

    def add(self, sentences: list[str], *, final: bool = False) -> None:
        self.sentences.extend(sentences)
        if final:
            self.streaming = False
        self.more.set()


class Voice:
    def __init__(self, store: Store, data_dir: Path, sessions: SessionRegistry) -> None:
        self._store = store
        self._data_dir = data_dir
        self._sessions = sessions
        self._settings = read_settings(data_dir)
        self._speaker: SystemSpeaker | None = None
        self._reading: _Reading | None = None
        self._task: asyncio.Task[None] | None = None
        self._observers: list[Observer] = []
        self._state = ReadingState()
        self._services: dict[str, AudioService] = {}
        self._recorder: Recorder | None = None

    # -- settings ------------------------------------------------------------------------

    @property
    def settings(self) -> VoiceSettings:
        return self._settings

    def save_settings(self, settings: VoiceSettings) -> None:
        """This computer's voice settings from now on (kept in the data folder)."""
        write_settings(self._data_dir, settings)
        self._settings = settings

    async def system_voices(self) -> list[SystemVoiceInfo]:
        """The system's voices (on Linux, speech-dispatcher's); ``VoiceError`` when there is no service."""
        try:
            return await self._system().voices()
        except SpeechServiceError as err:
            raise VoiceError(str(err)) from err

    # -- reading aloud -------------------------------------------------------------------

    @property
    def state(self) -> ReadingState:
        return self._state

    def watch(self, observer: Observer) -> Callable[[], None]:
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    async def read_message(self, session_id: str, message_id: str) -> None:
        """Read a stored reply aloud from its start (stopping whatever was read before)."""
        live = self._sessions.live(session_id)
        tree = live.conversation.tree if live is not None else await self._store.load_tree(session_id)
        if message_id not in tree:
            raise VoiceError("That reply is no longer in the chat.")
        sentences = spoken_sentences(tree.get(message_id).text)
        if not sentences:
            raise VoiceError("That reply has no text to read aloud.")
        await self.stop()
        self._start(_Reading(session_id, message_id, sentences, streaming=False))

    async def read_text(self, markdown: str) -> None:
        """Read ``markdown`` aloud (text of no chat: the command line's ``speak``)."""
        sentences = spoken_sentences(markdown)
        if not sentences:
            raise VoiceError("There is no text to read aloud.")
        await self.stop()
        self._start(_Reading("", "", sentences, streaming=False))

    async def read_streaming(self, session_id: str) -> None:
        """Read the reply now streaming in ``session_id`` as its sentences complete, and the
        replies of its tool rounds after it, until the turn ends."""
        live = self._sessions.live(session_id)
        if live is None:
            raise VoiceError("That chat is not open.")
        await self.stop()
        reading = _Reading(session_id, "", [], streaming=True)
        feeds: dict[str, tuple[SpokenFeed, list[str]]] = {}

        def heard(event: ConversationEvent) -> None:
            if isinstance(event, TextDelta):
                feed, parts = feeds.setdefault(event.message_id, (SpokenFeed(), []))
                parts.append(event.delta)
                reading.message_id = reading.message_id or event.message_id
                reading.add(feed.update("".join(parts)))
            elif isinstance(event, MessageChanged) and event.message.id in feeds:
                if event.message.status is not MessageStatus.STREAMING:
                    feed, _ = feeds.pop(event.message.id)
                    reading.add(feed.update(event.message.text, final=True))
            elif isinstance(event, TurnFailed) or (
                isinstance(event, TurnStateChanged) and live.conversation.ready_for_input
            ):
                for feed, parts in feeds.values():
                    reading.add(feed.update("".join(parts), final=True))
                feeds.clear()
                reading.add([], final=True)
            else:
                return
            self._publish()

        reading.unsubscribe = live.subscribe(heard)
        self._start(reading)

    async def stop(self) -> None:
        """Stop reading (the voice falls silent at once)."""
        task, reading = self._task, self._reading
        self._task, self._reading = None, None
        if reading is not None and reading.unsubscribe is not None:
            reading.unsubscribe()
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._speaker is not None:
            await self._speaker.stop()
        self._set(ReadingState())

    async def pause(self) -> None:
        """Stop mid-sentence, keeping the place; ``resume`` says that sentence again."""
        reading, task = self._reading, self._task
        if reading is None or reading.paused:
            return
        reading.paused = True
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._task = None
        self._publish()

    def resume(self) -> None:
        reading = self._reading
        if reading is not None and reading.paused:
            reading.paused = False
            self._task = asyncio.create_task(self._read(reading), name="voice: reading")
            self._publish()

    def _start(self, reading: _Reading) -> None:
        self._reading = reading
        self._task = asyncio.create_task(self._read(reading), name="voice: reading")
        self._publish()

    async def _read(self, reading: _Reading) -> None:
        try:
            while True:
                if reading.index >= len(reading.sentences):
                    if not reading.streaming:
                        break
                    reading.more.clear()
                    await reading.more.wait()
                    continue
                self._publish()
                await self._say(reading.sentences[reading.index])
                reading.index += 1
        except (SpeechServiceError, AudioServiceError, PlaybackError, VoiceError) as err:
            log.info("Reading aloud stopped: %s", err)
            self._finish(reading, str(err))
            return
        self._finish(reading, "")

    def _finish(self, reading: _Reading, error: str) -> None:
        if self._reading is reading:
            if reading.unsubscribe is not None:
                reading.unsubscribe()
            self._reading, self._task = None, None
            self._set(ReadingState(error=error))

    async def _say(self, sentence: str) -> None:
        settings = self._settings
        if settings.speech_provider == SYSTEM:
            await self._system().say(sentence, settings)
            return
        wav = await self._provider_speech(sentence, settings)
        with tempfile.TemporaryDirectory(prefix="threadline-speech-") as folder:
            path = Path(folder) / "sentence.wav"
            path.write_bytes(wav)
            await play(path)

    def _system(self) -> SystemSpeaker:
        if self._speaker is None:
            self._speaker = system_speaker()
        return self._speaker

    def _publish(self) -> None:
        reading = self._reading
        if reading is None:
            return
        self._set(
            ReadingState(
                True,
                reading.session_id,
                reading.message_id,
                min(reading.index, max(len(reading.sentences) - 1, 0)),
                len(reading.sentences),
                paused=reading.paused,
                streaming=reading.streaming,
            )
        )

    def _set(self, state: ReadingState) -> None:
        if state == self._state:
            return
        self._state = state
        for observer in list(self._observers):
            observer(state)

    # -- speech as a file, and transcription ---------------------------------------------

    async def speech_file(self, markdown: str, path: Path) -> None:
        """``markdown`` read as it would be aloud, written to the WAV file ``path``."""
        text = " ".join(spoken_sentences(markdown))
        if not text:
            raise VoiceError("There is no text to speak.")
        settings = self._settings
        try:
            if settings.speech_provider == SYSTEM:
                await write_system_wav(text, path, settings)
            else:
                wav = await self._provider_speech(text, settings)
                await asyncio.to_thread(path.write_bytes, wav)
        except (SpeechServiceError, AudioServiceError) as err:
            raise VoiceError(str(err)) from err

    async def transcribe(self, recording: Path, *, provider: str = "", model: str = "") -> str:
        """The text spoken in the WAV file ``recording``, by the transcription provider."""
        settings = self._settings
        name = provider or settings.transcription_provider
        if not name:
            raise VoiceError(
                "No transcription provider is chosen. Pick one in Settings → Voice (any provider that "
                "serves /v1/audio/transcriptions: OpenAI, Groq, a local whisper server)."
            )
        service = await self._service(name)
        try:
            return await service.transcription(recording, model=model or settings.transcription_model)
        except AudioServiceError as err:
            raise VoiceError(str(err)) from err

    # -- dictation -----------------------------------------------------------------------

    async def input_devices(self) -> list[str]:
        """The microphones, the system's default first."""
        try:
            return await asyncio.to_thread(input_devices)
        except RecordingError as err:
            raise VoiceError(str(err)) from err

    @property
    def dictating(self) -> bool:
        return self._recorder is not None

    async def start_dictation(self, on_level: Callable[[float, float], None]) -> None:
        """Open the microphone; ``on_level(level, seconds)`` runs on the event loop's thread
        about twenty times a second until the recording ends."""
        if self._recorder is not None:
            raise VoiceError("A dictation is already being recorded.")
        if not self._settings.transcription_provider:
            raise VoiceError(
                "Choose where dictation is turned into text first: Settings → Voice, Transcribe with."
            )
        loop = asyncio.get_running_loop()
        folder = self._data_dir / "recordings" if self._settings.keep_recordings else Path(tempfile.mkdtemp())
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"dictation-{int(loop.time() * 1000)}.wav"

        def level(value: float, seconds: float) -> None:
            with contextlib.suppress(RuntimeError):  # the app closed while recording
                loop.call_soon_threadsafe(on_level, value, seconds)

        recorder = Recorder(path, device=self._settings.input_device, on_level=level)
        try:
            await recorder.start()
        except RecordingError as err:
            raise VoiceError(str(err)) from err
        self._recorder = recorder

    def stop_dictation(self) -> None:
        """End the recording now (the microphone closes); ``finish_dictation`` gives the text."""
        if self._recorder is not None:
            self._recorder.stop()

    async def finish_dictation(self) -> str:
        """Wait for the recording to end (stopped, or quiet after speech) and return its text.

        The recording is deleted once transcribed unless Settings → Voice keeps recordings.
        """
        recorder = self._recorder
        if recorder is None:
            raise VoiceError("No dictation is being recorded.")
        try:
            recorded = await recorder.wait()
        except RecordingError as err:
            raise VoiceError(str(err)) from err
        finally:
            self._recorder = None
        try:
            if not recorded.heard_speech:
                raise VoiceError("Nothing was heard. Check the microphone in Settings → Voice and try again.")
            return await self.transcribe(recorded.path)
        finally:
            if not self._settings.keep_recordings:
                await asyncio.to_thread(_remove_recording, recorded.path)

    async def _provider_speech(self, text: str, settings: VoiceSettings) -> bytes:
        service = await self._service(settings.speech_provider)
        speed = round(2 ** (settings.rate / 100), 2)  # -100…100 as 0.5×…2×
        return await service.speech(
            text, model=settings.speech_model, voice=settings.speech_voice, speed=speed
        )

    async def _service(self, name: str) -> AudioService:
        if name not in self._services:
            config = await self._store.get_provider(name)
            if config is None:
                raise VoiceError(f"The provider {name!r} no longer exists. Pick another in Settings → Voice.")
            try:
                resolved = await asyncio.to_thread(credentials.resolve_headers, config)
                api_key = await asyncio.to_thread(credentials.get_api_key, config)
            except credentials.CredentialsError as err:
                raise VoiceError(err.user_message) from err
            self._services[name] = AudioService(resolved, api_key)
        return self._services[name]

    async def aclose(self) -> None:
        self.stop_dictation()
        await self.stop()
        if self._speaker is not None:
            await self._speaker.aclose()
        for service in self._services.values():
            await service.aclose()
        self._services.clear()


def _remove_recording(path: Path) -> None:
    path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        path.parent.rmdir()  # the temporary folder it was made in; a kept-recordings folder stays
