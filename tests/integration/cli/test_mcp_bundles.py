"""``threadline mcp install FILE.mcpb`` and ``mcp remove``: bundles built here, a real Python MCP
server inside, installed through the real command line (``main`` in this process, on the
in-memory keychain of this folder's conftest).

The secret setting ends in the keychain and in no file of the data folder (database, logs,
the unpacked bundle); the server starts and lists the tools that prove it got its answers;
an update keeps the answers and replaces the folder; remove takes files and secrets away;
a malicious bundle is refused with a sentence saying why, and nothing is written.
"""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

import keyring
import pytest
from tests.support.mcp_bundles import (
    HELLO_KEY,
    hello_manifest,
    python_on_path,
    symlink_member,
    write_bundle,
)
from tests.support.memory_keyring import MemoryKeyring

from threadline.__main__ import main
from threadline.tools.mcp import bundles


def threadline(data_dir: Path, *args: str) -> int:
    return main(["--data-dir", str(data_dir), *args])


def keychain() -> dict[tuple[str, str], str]:
    backend = keyring.get_keyring()
    assert isinstance(backend, MemoryKeyring)
    return dict(backend.entries)


def files_holding(data_dir: Path, secret: str) -> list[str]:
    return [str(p) for p in data_dir.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def tools_of(data_dir: Path, name: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    capsys.readouterr()
    assert threadline(data_dir, "mcp", "tools", name) == 0
    return {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()}


def test_a_bundle_installs_runs_updates_and_is_removed(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    python_on_path(monkeypatch)
    data = tmp_path / "data"
    monkeypatch.setenv("HELLO_KEY_FOR_TEST", HELLO_KEY)
    bundle = write_bundle(tmp_path / "hello.mcpb")

    installed = threadline(
        data, "mcp", "install", str(bundle), "--set-from", "api_key=HELLO_KEY_FOR_TEST",
        "--set", "flags=--loud", "--set", "greeting=Ahoy",
    )  # fmt: skip
    assert installed == 0
    out = capsys.readouterr().out
    assert "Hello Tools 1.0.0 by Ada Lovelace" in out
    assert f"runs: python {data / 'extensions/hello-tools/1.0.0/server/main.py'} --greeting" in out
    assert "with: HELLO_API_KEY=${user_config.api_key}\n" in out
    assert out.endswith("Hello Tools installed as MCP server hello-tools\n")
    folder = data / "extensions" / "hello-tools" / "1.0.0"
    assert (folder / "server" / "main.py").is_file()
    assert ("threadline-mcp-extension", "hello-tools/api_key") in keychain()
    assert ("threadline-mcp", "hello-tools/env/HELLO_API_KEY") in keychain()

    assert tools_of(data, "hello-tools", capsys) == {
        "hello-tools/greet",
        "hello-tools/key_ok",
        "hello-tools/loud",
    }
    assert files_holding(data, HELLO_KEY) == []
    assert HELLO_KEY not in caplog.text

    newer = write_bundle(tmp_path / "hello-2.mcpb", hello_manifest(version="1.1.0"))
    assert threadline(data, "mcp", "install", str(newer)) == 0  # the answers kept: key, flags
    assert capsys.readouterr().out.endswith("Hello Tools updated to 1.1.0\n")
    assert not folder.exists()
    assert (data / "extensions" / "hello-tools" / "1.1.0" / "server" / "main.py").is_file()
    assert tools_of(data, "hello-tools", capsys) == {
        "hello-tools/greet",
        "hello-tools/key_ok",
        "hello-tools/loud",
    }

    assert threadline(data, "mcp", "remove", "hello-tools") == 0
    assert capsys.readouterr().out == "MCP server hello-tools removed\n"
    assert not (data / "extensions" / "hello-tools").exists()
    assert not [k for k in keychain() if k[1].startswith("hello-tools/")]
    assert threadline(data, "mcp", "list") == 0
    assert "hello-tools" not in capsys.readouterr().out


def test_a_required_secret_missing_is_asked_for_and_nothing_is_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    data = tmp_path / "data"
    bundle = write_bundle(tmp_path / "hello.mcpb")
    assert threadline(data, "mcp", "install", str(bundle)) != 0
    assert "API key is a secret setting: give it with --set-from api_key=ENVVAR" in capsys.readouterr().err
    assert not (data / "extensions").exists() or not any((data / "extensions").rglob("*"))


def _oversized() -> list[tuple[zipfile.ZipInfo, bytes]]:
    return [(zipfile.ZipInfo("server/big.bin"), b"\0" * (2 * 1024 * 1024))]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("traversal", "'../evil.sh', which points outside its folder"),
        ("absolute", "'/tmp/evil.sh', which points outside its folder"),
        ("symlink", "symbolic link ('server/link')"),
        ("oversized", "Threadline installs bundles of at most 1 MB"),
        ("too many", "Threadline installs bundles of at most 5"),
        ("entry outside", "entry point '../server/main.py' points outside the bundle"),
        ("dirname outside", "points outside the bundle ('${__dirname}/../../bin/sh')"),
        ("newer version", "made for manifest version 9.0"),
        ("unknown server type", "of type 'uv', which manifest version 0.3 does not define"),
        ("secret on the command line", "passes a secret setting on its command line"),
    ],
)
def test_malicious_or_unknown_bundles_are_refused_and_nothing_is_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    expected: str,
) -> None:
    monkeypatch.setenv("HELLO_KEY_FOR_TEST", HELLO_KEY)
    monkeypatch.setattr(bundles, "MAX_TOTAL", 1024 * 1024)
    monkeypatch.setattr(bundles, "MAX_MEMBERS", 5)
    manifest = hello_manifest()
    extra: list[tuple[zipfile.ZipInfo, bytes]] = []
    if case == "traversal":
        extra = [(zipfile.ZipInfo("../evil.sh"), b"#!/bin/sh\n")]
    elif case == "absolute":
        extra = [(zipfile.ZipInfo("/tmp/evil.sh"), b"#!/bin/sh\n")]
    elif case == "symlink":
        extra = [symlink_member("server/link", "/etc/passwd")]
    elif case == "oversized":
        extra = _oversized()
    elif case == "too many":
        extra = [(zipfile.ZipInfo(f"server/f{n}.txt"), b"x") for n in range(5)]
    elif case == "entry outside":
        manifest["server"]["entry_point"] = "../server/main.py"
    elif case == "dirname outside":
        manifest["server"]["mcp_config"]["command"] = "${__dirname}/../../bin/sh"
    elif case == "newer version":
        manifest["manifest_version"] = "9.0"
    elif case == "unknown server type":
        manifest["server"]["type"] = "uv"
    elif case == "secret on the command line":
        manifest["server"]["mcp_config"]["args"].append("--key=${user_config.api_key}")
    bundle = write_bundle(tmp_path / "bad.mcpb", manifest, extra=extra)
    data = tmp_path / "data"
    code = threadline(data, "mcp", "install", str(bundle), "--set-from", "api_key=HELLO_KEY_FOR_TEST")
    assert code != 0
    assert expected in capsys.readouterr().err
    written = [p for p in (data / "extensions").rglob("*")] if (data / "extensions").exists() else []
    assert written == []
    assert not (tmp_path / "evil.sh").exists()
    assert not [k for k in keychain() if "hello-tools" in k[1]]
    assert threadline(data, "mcp", "list") == 0
    assert "hello-tools" not in capsys.readouterr().out


def test_a_member_whose_header_lies_about_its_size_is_stopped_and_the_folder_is_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory says 10 bytes; the member inflates to megabytes: stopped while unpacking."""
    monkeypatch.setenv("HELLO_KEY_FOR_TEST", HELLO_KEY)
    bundle = write_bundle(
        tmp_path / "lying.mcpb", extra=[(zipfile.ZipInfo("server/data.bin"), b"\0" * 3_000_000)]
    )
    raw = bytearray(bundle.read_bytes())
    at = raw.find(b"PK\x01\x02")
    while raw[at + 46 : at + 46 + int.from_bytes(raw[at + 28 : at + 30], "little")] != b"server/data.bin":
        at = raw.find(b"PK\x01\x02", at + 1)
        assert at > 0
    raw[at + 24 : at + 28] = (10).to_bytes(4, "little")  # the central directory's uncompressed size
    bundle.write_bytes(bytes(raw))
    data = tmp_path / "data"
    code = threadline(data, "mcp", "install", str(bundle), "--set-from", "api_key=HELLO_KEY_FOR_TEST")
    assert code != 0
    assert "'server/data.bin' cannot be unpacked" in capsys.readouterr().err
    assert list((data / "extensions").rglob("*")) == []


def test_a_binary_server_runs_from_the_bundle_with_its_execute_bit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``server.type: binary``: the command is a program inside the bundle (here a shell script
    starting the hello server), runnable once unpacked; a lower version afterwards replaces it."""
    python_on_path(monkeypatch)
    monkeypatch.setenv("HELLO_KEY_FOR_TEST", HELLO_KEY)
    manifest = hello_manifest(version="2.0.0")
    manifest["server"] = {
        "type": "binary",
        "entry_point": "server/run",
        "mcp_config": {
            "command": "${__dirname}${/}server${/}run",
            "args": ["--greeting", "${user_config.greeting}"],
            "env": {"HELLO_API_KEY": "${user_config.api_key}", "HELLO_EXPECTED": HELLO_KEY[::-1]},
        },
    }
    run = zipfile.ZipInfo("server/run")
    run.create_system = 3
    run.external_attr = 0o755 << 16
    script = b'#!/bin/sh\nexec python "$(dirname "$0")/main.py" "$@"\n'
    bundle = write_bundle(tmp_path / "binary.mcpb", manifest, extra=[(run, script)])
    data = tmp_path / "data"
    assert threadline(data, "mcp", "install", str(bundle), "--set-from", "api_key=HELLO_KEY_FOR_TEST") == 0
    assert tools_of(data, "hello-tools", capsys) == {"hello-tools/greet", "hello-tools/key_ok"}

    older = write_bundle(tmp_path / "older.mcpb", hello_manifest(version="1.0.0"))
    assert threadline(data, "mcp", "install", str(older)) == 0
    assert capsys.readouterr().out.endswith("Hello Tools changed back to 1.0.0\n")
    assert sorted(p.name for p in (data / "extensions" / "hello-tools").iterdir()) == ["1.0.0"]


def test_a_runtime_older_than_the_bundle_asks_for_is_said_before_installing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compatibility.runtimes`` against the real ``python --version`` of the interpreter the
    bundle will run with: a range it is in says nothing, one it is not in names both versions."""
    import sys

    python_on_path(monkeypatch)
    monkeypatch.setenv("HELLO_KEY_FOR_TEST", HELLO_KEY)
    here = ".".join(map(str, sys.version_info[:3]))
    fits = hello_manifest()
    fits["compatibility"] = {"runtimes": {"python": f">={sys.version_info.major}.{sys.version_info.minor}"}}
    data = tmp_path / "data"
    args = ("--set-from", "api_key=HELLO_KEY_FOR_TEST")
    assert threadline(data, "mcp", "install", str(write_bundle(tmp_path / "a.mcpb", fits)), *args) == 0
    assert "warning" not in capsys.readouterr().err

    too_new = hello_manifest(version="1.1.0")
    too_new["compatibility"] = {"runtimes": {"python": ">=99"}}
    assert threadline(data, "mcp", "install", str(write_bundle(tmp_path / "b.mcpb", too_new))) == 0
    assert capsys.readouterr().err == (
        f"threadline: warning: It needs Python >=99, and this computer has {here}: "
        "update it before the server can start.\n"
    )
