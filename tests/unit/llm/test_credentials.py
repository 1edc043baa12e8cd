"""API keys through keyring (in-memory backend), and the no-keychain path."""

from __future__ import annotations

import logging

import pytest
from tests.support.memory_keyring import MemoryKeyring

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.llm import credentials

CONFIG = ProviderConfig("OpenAI", ProviderKind.OPENAI, api_key_env="TL_TEST_OPENAI_KEY")


def test_set_get_delete(memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TL_TEST_OPENAI_KEY", raising=False)
    assert credentials.keychain_available()
    assert credentials.get_api_key(CONFIG) is None
    credentials.set_api_key("OpenAI", "sk-abc")
    assert memory_keyring.entries == {("threadline", "OpenAI"): "sk-abc"}
    assert credentials.get_api_key(CONFIG) == "sk-abc"
    assert credentials.has_keychain_entry("OpenAI")
    credentials.delete_api_key("OpenAI")
    assert credentials.get_api_key(CONFIG) is None
    credentials.delete_api_key("OpenAI")  # deleting nothing is fine
    assert not credentials.has_keychain_entry("OpenAI")


def test_keychain_wins_over_the_environment(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_TEST_OPENAI_KEY", "sk-env")
    assert credentials.get_api_key(CONFIG) == "sk-env"
    credentials.set_api_key("OpenAI", "sk-keychain")
    assert credentials.get_api_key(CONFIG) == "sk-keychain"


def test_without_a_keychain_setting_a_key_says_so(no_keyring: None) -> None:
    assert not credentials.keychain_available()
    with pytest.raises(credentials.KeychainUnavailableError) as caught:
        credentials.set_api_key("My Groq", "gsk-secret")
    message = caught.value.user_message
    assert "no system keychain" in message
    assert "--api-key-env MY_GROQ_API_KEY" in message
    assert "gsk-secret" not in message
    with pytest.raises(credentials.KeychainUnavailableError):
        credentials.delete_api_key("My Groq")
    assert not credentials.has_keychain_entry("My Groq")


def test_without_a_keychain_the_environment_variable_serves(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_TEST_OPENAI_KEY", "  sk-from-env \n")
    assert credentials.get_api_key(CONFIG) == "sk-from-env"
    monkeypatch.delenv("TL_TEST_OPENAI_KEY")
    assert credentials.get_api_key(CONFIG) is None


def test_the_null_backend_counts_as_no_keychain() -> None:
    import keyring
    from keyring.backends import null

    previous = keyring.get_keyring()
    keyring.set_keyring(null.Keyring())
    try:
        assert not credentials.keychain_available()
        with pytest.raises(credentials.KeychainUnavailableError):
            credentials.set_api_key("X", "k")
    finally:
        keyring.set_keyring(previous)


def test_keys_are_never_logged(memory_keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    credentials.set_api_key("OpenAI", "sk-never-logged")
    credentials.get_api_key(CONFIG)
    assert "sk-never-logged" not in caplog.text


def test_a_broken_keychain_read_falls_back_to_the_environment(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keyring.errors import KeyringLocked

    def locked(service: str, username: str) -> str | None:
        raise KeyringLocked("locked")

    monkeypatch.setattr(memory_keyring, "get_password", locked)
    monkeypatch.setenv("TL_TEST_OPENAI_KEY", "sk-env")
    assert credentials.get_api_key(CONFIG) == "sk-env"
