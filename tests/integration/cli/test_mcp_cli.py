"""``threadline mcp add|list|remove|tools``: values go to the keychain, never to the database or a log.

The keychain cases run ``main`` in this process, on the in-memory keychain of the tools'
conftest; the case without a keychain runs ``python -m threadline`` as a separate process with
keyring's fail backend, as a headless Linux has. ``mcp tools`` starts the real
``mcp-server-time`` from PyPI.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import keyring
import pytest
from tests.support.memory_keyring import MemoryKeyring

from threadline.__main__ import main
from threadline.tools.mcp.secrets import MASK, SERVICE

TOKEN = "ghp_x0123456789abcdefNotARealToken"
TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


def threadline(data_dir: Path, *args: str) -> int:
    return main(["--data-dir", str(data_dir), *args])


def keychain() -> dict[tuple[str, str], str]:
    backend = keyring.get_keyring()
    assert isinstance(backend, MemoryKeyring)
    return {k: v for k, v in backend.entries.items() if k[0] == SERVICE}


def files_holding(data_dir: Path, secret: str) -> list[str]:
    """Every file under ``data_dir`` (database, its WAL, logs) whose raw bytes contain ``secret``."""
    return [str(p) for p in data_dir.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_gh_pat_added_on_the_command_line_is_kept_in_the_keychain_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    added = threadline(
        tmp_path, "mcp", "add", "gh", "--env", f"GH_PAT={TOKEN}", "--public-env", "LOG_LEVEL=debug",
        "--", *TIME_SERVER,
    )  # fmt: skip
    assert added == 0
    assert capsys.readouterr().out == "MCP server gh added\n"
    assert keychain() == {(SERVICE, "gh/env/GH_PAT"): TOKEN}
    assert files_holding(tmp_path, TOKEN) == []
    assert files_holding(tmp_path, "LOG_LEVEL") != []  # the record itself is in the database

    assert threadline(tmp_path, "mcp", "list") == 0
    listed = capsys.readouterr().out
    assert listed.split("\t") == ["gh", "stdio", " ".join(TIME_SERVER), f"GH_PAT={MASK} LOG_LEVEL=debug\n"]

    assert threadline(tmp_path, "mcp", "tools", "gh") == 0  # the server starts with the value read back
    tools = capsys.readouterr().out.splitlines()
    assert {line.split("\t")[0] for line in tools} == {"gh/get_current_time", "gh/convert_time"}

    assert TOKEN not in caplog.text
    assert files_holding(tmp_path, TOKEN) == []  # nor in the server's own log file


def test_remove_forgets_the_server_and_its_keychain_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    added = threadline(
        tmp_path, "mcp", "add", "web", "--url", "https://mcp.example.test/mcp",
        "--header", f"Authorization=Bearer {TOKEN}", "--public-header", "Accept=text/event-stream",
    )  # fmt: skip
    assert added == 0
    assert keychain() == {(SERVICE, "web/header/Authorization"): f"Bearer {TOKEN}"}
    assert threadline(tmp_path, "mcp", "list") == 0
    assert capsys.readouterr().out.endswith(
        f"web\thttp\thttps://mcp.example.test/mcp\tAuthorization: {MASK} Accept: text/event-stream\n"
    )

    assert threadline(tmp_path, "mcp", "remove", "web") == 0
    assert keychain() == {}
    assert threadline(tmp_path, "mcp", "list") == 0
    assert capsys.readouterr().out == "MCP server web removed\n"
    assert threadline(tmp_path, "mcp", "remove", "web") == 1
    assert "no MCP server named 'web'" in capsys.readouterr().err


def test_a_command_and_a_url_together_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert threadline(tmp_path, "mcp", "add", "x", "--url", "https://h/mcp", "--", "prog") == 1
    assert "either a command after -- " in capsys.readouterr().err
    assert threadline(tmp_path, "mcp", "add", "x") == 1


def test_the_command_after_dashes_keeps_its_own_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--`` right after NAME, and a command whose options look like Threadline's own
    (``--url``, ``--cwd``, another ``--``): every word after the first ``--`` is the server's.
    The first case used to stop with "unrecognized arguments: --local-timezone UTC"."""
    assert threadline(tmp_path, "mcp", "add", "time", "--", *TIME_SERVER) == 0
    assert (
        threadline(
            tmp_path, "mcp", "add", "odd", "--cwd", str(tmp_path), "--", "prog", "--url", "u", "--", "x"
        )
        == 0
    )
    capsys.readouterr()
    assert threadline(tmp_path, "mcp", "list") == 0
    assert sorted(capsys.readouterr().out.splitlines()) == [
        "odd\tstdio\tprog --url u -- x",
        f"time\tstdio\t{' '.join(TIME_SERVER)}",
    ]
    assert threadline(tmp_path, "mcp", "tools", "time") == 0  # the server starts with its options
    assert "time/get_current_time" in capsys.readouterr().out


def run_headless(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "threadline", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", **env},
        timeout=120,
    )


def test_without_a_keychain_a_literal_is_refused_and_env_from_works(tmp_path: Path) -> None:
    refused = run_headless(tmp_path, "mcp", "add", "gh", "--env", f"GH_PAT={TOKEN}", "--", *TIME_SERVER)
    assert refused.returncode == 1
    assert "no system keychain" in refused.stderr and "--env-from GH_PAT=GH_PAT" in refused.stderr
    assert TOKEN not in refused.stderr + refused.stdout
    assert files_holding(tmp_path, TOKEN) == []

    added = run_headless(
        tmp_path, "mcp", "add", "gh", "--env-from", "GH_PAT=MY_GITHUB_PAT", "--", *TIME_SERVER
    )
    assert added.returncode == 0, added.stderr
    listed = run_headless(tmp_path, "mcp", "list")
    assert "GH_PAT=${MY_GITHUB_PAT}" in listed.stdout

    missing = run_headless(tmp_path, "mcp", "tools", "gh")
    assert missing.returncode == 1 and "no variable MY_GITHUB_PAT" in missing.stderr
    tools = run_headless(tmp_path, "mcp", "tools", "gh", MY_GITHUB_PAT=TOKEN)
    assert tools.returncode == 0, tools.stderr
    assert "gh/get_current_time" in tools.stdout
    assert files_holding(tmp_path, TOKEN) == []
