"""Provider headers set with ``threadline provider add NAME --header KEY=VALUE`` reach the server.

A value goes to the keychain (the database holds the header's name only); ``KEY=${VAR}``
is read from Threadline's environment, the way on a computer without a keychain. The
server is a real one on 127.0.0.1 that records every request's headers; both API kinds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli_process import threadline
from tests.support.fixtures import memory_keyring, replay_server  # noqa: F401  (fixtures)
from tests.support.legacy_databases import provider_with_headers
from tests.support.memory_keyring import MemoryKeyring
from tests.support.sse_server import ReplayServer, anthropic_text_stream, openai_text_stream, sse_response

from threadline.__main__ import main
from threadline.engine.engine import DATABASE_FILENAME
from threadline.llm.credentials import HEADER_SERVICE

SECRET = "org-secret-41d7e2"


def database_bytes(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data.glob(DATABASE_FILENAME + "*"))


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_headers_set_on_the_command_line_are_sent_and_kept_out_of_the_database(
    tmp_path: Path,
    kind: str,
    memory_keyring: MemoryKeyring,  # noqa: F811
    replay_server: ReplayServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TEAM_ID", "team-7")
    data = tmp_path / "data"
    url = replay_server.openai_base_url if kind == "openai" else replay_server.anthropic_base_url
    common = ["--data-dir", str(data)]
    headers = ["--header", f"X-Org={SECRET}", "--header", "X-Team=${TEAM_ID}"]
    added = main(
        ["provider", "add", "gw", *common, "--kind", kind, "--base-url", url, "--model", "m", *headers]
    )
    assert added == 0, capsys.readouterr().err
    assert memory_keyring.entries[(HEADER_SERVICE, "gw/X-Org")] == SECRET
    assert main(["provider", "list", *common]) == 0
    listed = capsys.readouterr().out
    assert "headers: X-Org (keychain), X-Team ($TEAM_ID)" in listed and SECRET not in listed
    # Another setting changed later keeps the headers (before, any `provider add` dropped them).
    assert main(["provider", "add", "gw", *common, "--timeout", "90"]) == 0
    capsys.readouterr()

    stream = openai_text_stream(["Hi."]) if kind == "openai" else anthropic_text_stream(["Hi."])
    replay_server.enqueue(sse_response(stream))
    assert main(["ask", *common, "Hello"]) == 0
    assert capsys.readouterr().out == "Hi.\n"
    (request,) = [r for r in replay_server.requests if r.method == "POST"]
    assert request.headers["x-org"] == SECRET
    assert request.headers["x-team"] == "team-7"
    assert SECRET.encode() not in database_bytes(data)

    assert main(["provider", "add", "gw", *common, "--no-headers"]) == 0
    assert (HEADER_SERVICE, "gw/X-Org") not in memory_keyring.entries  # no value left behind


def test_without_a_keychain_a_header_names_a_variable_as_api_keys_do(
    tmp_path: Path,
    replay_server: ReplayServer,  # noqa: F811
) -> None:
    data = tmp_path / "data"
    base = ["provider", "add", "gw", "--kind", "openai", "--base-url", replay_server.openai_base_url]
    refused = threadline(data, *base, "--model", "m", "--header", f"X-Org={SECRET}", env={})
    assert refused.returncode == 1
    assert "no system keychain" in refused.stderr and "--header 'X-Org=${X_ORG}'" in refused.stderr
    assert SECRET not in refused.stderr + refused.stdout
    assert SECRET.encode() not in database_bytes(data)

    added = threadline(data, *base, "--model", "m", "--header", "X-Org=${X_ORG}", env={})
    assert added.returncode == 0, added.stderr
    replay_server.enqueue(sse_response(openai_text_stream(["Hi."])))
    asked = threadline(data, "ask", "Hello", env={"X_ORG": SECRET})
    assert asked.returncode == 0, asked.stderr
    (request,) = [r for r in replay_server.requests if r.method == "POST"]
    assert request.headers["x-org"] == SECRET
    assert SECRET.encode() not in database_bytes(data)


def test_an_upgrade_without_a_keychain_tells_once_which_headers_to_set_again(
    tmp_path: Path,
    replay_server: ReplayServer,  # noqa: F811
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    provider_with_headers(data / DATABASE_FILENAME, [["X-Org", SECRET]])
    first = threadline(data, "provider", "list", env={})
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("Provider work") == 1
    assert "Provider work: the value of header X-Org" in first.stderr
    assert "threadline provider add work --header 'X-Org=${X_ORG}'" in first.stderr
    assert "headers: X-Org (keychain)" in first.stdout and SECRET not in first.stdout + first.stderr
    again = threadline(data, "provider", "list", env={})
    assert again.returncode == 0 and "Provider work" not in again.stderr  # told once

    replay_server.enqueue(sse_response(openai_text_stream(["Hi."])))  # not used: the request stops first
    asked = threadline(data, "ask", "--provider", "work", "Hello", env={})
    assert asked.returncode == 1
    assert "The header X-Org of provider work has no value" in asked.stderr
    assert not [r for r in replay_server.requests if r.method == "POST"]
