"""Fixtures for the voice's tests: a real engine on the replay server, a sound session of the
test's own (PulseAudio null sink and speech-dispatcher), and OpenAI's audio endpoints."""

from __future__ import annotations

import pytest
from tests.support.audio_server import audio_server  # noqa: F401  (fixture)
from tests.support.engines import engine, keychain_in_memory  # noqa: F401  (fixtures)
from tests.support.fixtures import replay_server  # noqa: F401  (fixture)
from tests.support.sound import sound_session  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def memory_keyring(keychain_in_memory: None) -> None:  # noqa: F811
    """Every test here gets a keychain in memory."""
