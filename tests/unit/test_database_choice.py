"""database.json: the server choice round-trips, the password never reaches the file, URLs carry
TLS options, and --database-url beats the file, which beats the local file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from tests.support.fixtures import memory_keyring, no_keyring  # noqa: F401  (fixtures)
from tests.support.memory_keyring import MemoryKeyring

from threadline.engine.database_choice import (
    CONFIG_FILENAME,
    KEYCHAIN_SERVICE,
    PASSWORD_VARIABLE,
    POSTGRESQL,
    SQLITE,
    DatabaseChoice,
    DatabaseChoiceError,
    ServerChoice,
    build_url,
    load_choice,
    masked_url,
    resolve_database_url,
    save_choice,
    store_password,
    stored_password,
    use_local_file,
)

PASSWORD = "s3cret p@ss/word"
SERVER = ServerChoice(host="db.example.org", port=6543, database="chats", user="ana", tls="require")


@pytest.fixture(autouse=True)
def no_password_variable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(PASSWORD_VARIABLE, raising=False)
    yield


def test_no_file_means_the_local_file(tmp_path: Path) -> None:
    assert load_choice(tmp_path) == DatabaseChoice()
    assert resolve_database_url(tmp_path, None) is None


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    choice = DatabaseChoice(POSTGRESQL, ServerChoice("h", 5433, "d", "u", "verify-full", "/etc/ca.pem"))
    save_choice(tmp_path, choice)
    assert load_choice(tmp_path) == choice
    use_local_file(tmp_path)
    back = load_choice(tmp_path)
    assert back.backend == SQLITE and not back.uses_server
    assert back.server == choice.server  # the form keeps the server's details


def test_password_goes_to_the_keychain_never_to_the_file(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    store_password(SERVER, PASSWORD)
    save_choice(tmp_path, DatabaseChoice(POSTGRESQL, SERVER))
    raw = (tmp_path / CONFIG_FILENAME).read_bytes()
    assert PASSWORD.encode() not in raw and b"s3cret" not in raw
    assert b"password" not in raw.lower()
    assert memory_keyring.entries == {(KEYCHAIN_SERVICE, "ana@db.example.org:6543/chats"): PASSWORD}
    url = sa.make_url(resolve_database_url(tmp_path, None) or "")
    assert url.password == PASSWORD
    assert (url.host, url.port, url.database, url.username) == ("db.example.org", 6543, "chats", "ana")


def test_url_carries_tls_options_and_quotes_odd_characters() -> None:
    server = ServerChoice("::1", 5432, "my db", "o'neil", "verify-full", "/etc/ssl/our ca.pem")
    url = sa.make_url(build_url(server, PASSWORD))
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.username, url.password, url.database) == ("::1", "o'neil", PASSWORD, "my db")
    assert url.query["sslmode"] == "verify-full"
    assert url.query["sslrootcert"] == "/etc/ssl/our ca.pem"
    assert url.query["connect_timeout"] == "10"
    shown = masked_url(server)
    assert "***" in shown and "s3cret" not in shown
    assert "sslrootcert" not in sa.make_url(build_url(SERVER, None)).query
    assert sa.make_url(build_url(SERVER, None)).password is None


def test_flag_wins_over_the_file(tmp_path: Path) -> None:
    save_choice(tmp_path, DatabaseChoice(POSTGRESQL, SERVER))
    flag = "sqlite:////tmp/elsewhere.db"
    assert resolve_database_url(tmp_path, flag) == flag
    assert sa.make_url(resolve_database_url(tmp_path, None) or "").host == "db.example.org"


def test_without_a_keychain_the_password_is_refused_and_the_variable_serves(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_keyring: None,  # noqa: F811
) -> None:
    with pytest.raises(DatabaseChoiceError) as caught:
        store_password(SERVER, PASSWORD)
    assert PASSWORD_VARIABLE in caught.value.user_message
    assert "plain text" in caught.value.user_message
    assert stored_password(SERVER) is None
    monkeypatch.setenv(PASSWORD_VARIABLE, "from-the-environment")
    save_choice(tmp_path, DatabaseChoice(POSTGRESQL, SERVER))
    assert sa.make_url(resolve_database_url(tmp_path, None) or "").password == "from-the-environment"


def test_keychain_password_comes_before_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    monkeypatch.setenv(PASSWORD_VARIABLE, "from-the-environment")
    assert stored_password(SERVER) == "from-the-environment"
    store_password(SERVER, PASSWORD)
    assert stored_password(SERVER) == PASSWORD


@pytest.mark.parametrize("content", ["{not json", json.dumps({"backend": "oracle"}), json.dumps([1])])
def test_a_damaged_file_is_explained(tmp_path: Path, content: str) -> None:
    (tmp_path / CONFIG_FILENAME).write_text(content)
    with pytest.raises(DatabaseChoiceError) as caught:
        resolve_database_url(tmp_path, None)
    assert "delete it to use the local file" in caught.value.user_message


def test_a_damaged_file_stops_a_command_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from threadline.__main__ import main

    (tmp_path / CONFIG_FILENAME).write_text("{not json")
    assert main(["list", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("threadline: ") and err.count("\n") == 1


def test_problems_name_what_is_missing(tmp_path: Path) -> None:
    assert SERVER.problems() == []
    missing = ServerChoice(host="", database="", user="", tls="verify-full").problems()
    assert len(missing) == 4
    assert ServerChoice("h", user="u", ca_file=str(tmp_path / "none.pem")).problems()
