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


def test_provider_headers_are_kept_moved_on_rename_forgotten_and_resolved(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from threadline.core.config import STORED_IN_KEYCHAIN

    monkeypatch.setenv("TL_TEST_TEAM", "team-7")
    typed = ProviderConfig(
        "gw", ProviderKind.OPENAI, headers=(("X-Org", "org-1"), ("X-Team", "${TL_TEST_TEAM}"))
    )
    kept = credentials.store_headers(typed)
    assert kept.headers == (("X-Org", STORED_IN_KEYCHAIN), ("X-Team", "${TL_TEST_TEAM}"))
    assert memory_keyring.entries == {(credentials.HEADER_SERVICE, "gw/X-Org"): "org-1"}
    assert credentials.resolve_headers(kept).headers == (("X-Org", "org-1"), ("X-Team", "team-7"))

    renamed = credentials.store_headers(replace(kept, name="gw2"), kept)  # the marker's value moves along
    assert credentials.resolve_headers(renamed).headers[0] == ("X-Org", "org-1")
    credentials.forget_headers(kept, None)
    assert (credentials.HEADER_SERVICE, "gw/X-Org") not in memory_keyring.entries

    with pytest.raises(credentials.CredentialsError, match="header X-Org of provider gw has no value"):
        credentials.resolve_headers(kept)
    monkeypatch.delenv("TL_TEST_TEAM")
    with pytest.raises(credentials.CredentialsError, match=r"no variable TL_TEST_TEAM"):
        credentials.resolve_headers(replace(kept, headers=kept.headers[1:]))
    with pytest.raises(credentials.CredentialsError, match="not an HTTP header name"):
        credentials.store_headers(replace(typed, headers=(("X-Org: v", "x"),)))


def test_a_typed_header_value_without_a_keychain_is_refused_with_the_variable_way(no_keyring: None) -> None:
    typed = ProviderConfig("gw", ProviderKind.OPENAI, headers=(("X-Org", "org-1"),))
    with pytest.raises(credentials.CredentialsError) as caught:
        credentials.store_headers(typed)
    assert "--header 'X-Org=${X_ORG}'" in str(caught.value) and "org-1" not in str(caught.value)
    referenced = ProviderConfig("gw", ProviderKind.OPENAI, headers=(("X-Org", "${X_ORG}"),))
    assert credentials.store_headers(referenced) == referenced
