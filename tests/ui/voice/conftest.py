"""The voice's window tests: a sound session of the test's own and OpenAI's audio endpoints."""

from __future__ import annotations

from tests.support.audio_server import audio_server  # noqa: F401  (fixture)
from tests.support.sound import sound_session  # noqa: F401  (fixture)
