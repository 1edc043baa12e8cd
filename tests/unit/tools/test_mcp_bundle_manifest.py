"""Reading an MCP bundle's manifest (versions 0.1–0.4 of the specification) and turning it into a
server record: what is refused and why, and how the variables are replaced."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.mcp_bundles import hello_manifest

from threadline.tools.mcp.bundle_launch import check_values, server_config
from threadline.tools.mcp.bundle_manifest import ManifestError, parse_manifest
from threadline.tools.mcp.bundle_runtimes import Version, runtime_problem, satisfies
from threadline.tools.mcp.bundles import BundleError, folder_name_for, server_name_for


def minimal(version: str = "0.4", **server: Any) -> dict[str, Any]:
    return {
        "manifest_version": version,
        "name": "tiny",
        "version": "0.1.0",
        "description": "Tiny",
        "author": {"name": "Ada"},
        "server": {
            "type": "node",
            "entry_point": "server/index.js",
            "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]},
        }
        | server,
    }


@pytest.mark.parametrize("version", ["0.1", "0.2", "0.3", "0.4"])
def test_every_published_version_is_read(version: str) -> None:
    manifest = parse_manifest(minimal(version))
    assert (manifest.manifest_version, manifest.server_type, manifest.launch.command) == (
        version,
        "node",
        "node",
    )


def test_the_older_dxt_version_key_is_read() -> None:
    data = minimal()
    data["dxt_version"] = data.pop("manifest_version")
    assert parse_manifest(data).manifest_version == "0.4"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"manifest_version": "1.0"}, "made for manifest version 1.0; Threadline reads versions 0.1 to 0.4"),
        ({"privacy_policies": []}, "keys manifest version 0.1 does not define: privacy_policies"),
        ({"author": {}}, "does not name its author"),
        ({"server": {"type": "deno", "entry_point": "a", "mcp_config": {"command": "x"}}}, "type 'deno'"),
        (
            {"server": {"type": "uv", "entry_point": "a", "mcp_config": {"command": "x"}}},
            "version 0.1 does not",
        ),
        ({"server": {"type": "node", "entry_point": "/etc/x", "mcp_config": {"command": "x"}}}, "outside"),
        ({"user_config": {"k": {"type": "color", "title": "K", "description": "d"}}}, "type 'color'"),
        ({"user_config": {"k": {"type": "string", "title": "K"}}}, "no setting 'k' description"),
        (
            {"user_config": {"k": {"type": "string", "title": "K", "description": "d", "secret": True}}},
            "secret",
        ),
    ],
)
def test_what_the_version_does_not_define_is_refused_by_name(change: dict[str, Any], message: str) -> None:
    data = minimal("0.1") | change
    with pytest.raises(ManifestError) as caught:
        parse_manifest(data)
    assert message in str(caught.value)


def test_the_platform_override_of_this_platform_applies() -> None:
    data = minimal()
    data["server"]["mcp_config"]["platform_overrides"] = {
        sys.platform: {"command": "${__dirname}/bin/tool", "env": {"MODE": "native"}},
        "other": {"command": "elsewhere"},
    }
    launch = parse_manifest(data).launch
    assert launch.command == "${__dirname}/bin/tool"
    assert launch.args == ("${__dirname}/server/index.js",)
    assert launch.env == {"MODE": "native"}


def test_variables_are_replaced_and_lists_become_arguments(tmp_path: Path) -> None:
    manifest = parse_manifest(hello_manifest())
    folder = tmp_path / "ext" / "1.0.0"
    values = check_values(manifest, {"api_key": "k", "flags": ["--loud", "--slow"], "notes": "${HOME}"})
    assert values == {"api_key": "k", "greeting": "Hello", "flags": ["--loud", "--slow"], "notes": "${HOME}",
                      "retries": 2, "verbose": False}  # fmt: skip
    config = server_config(manifest, folder, "hello-tools", values)
    assert config.command == "python"
    assert config.args == (str(folder / "server" / "main.py"), "--greeting", "Hello", "--loud", "--slow")
    assert config.env["HELLO_API_KEY"] == "k"
    assert config.public_env == ("HELLO_EXPECTED",)  # the one made of the secret goes to the keychain
    assert config.cwd == str(folder)


def test_an_optional_list_left_empty_adds_no_argument(tmp_path: Path) -> None:
    manifest = parse_manifest(hello_manifest())
    config = server_config(manifest, tmp_path, "hello-tools", check_values(manifest, {"api_key": "k"}))
    assert config.args[-2:] == ("--greeting", "Hello")


def test_answers_are_checked_against_their_settings() -> None:
    manifest = parse_manifest(hello_manifest())
    with pytest.raises(BundleError, match="API key is required"):
        check_values(manifest, {})
    with pytest.raises(BundleError, match="Retries must be between 0 and 5"):
        check_values(manifest, {"api_key": "k", "retries": 9})
    with pytest.raises(BundleError, match="Verbose must be on or off"):
        check_values(manifest, {"api_key": "k", "verbose": "yes"})


def test_a_secret_on_the_command_line_is_refused(tmp_path: Path) -> None:
    data = hello_manifest()
    data["server"]["mcp_config"]["args"].append("--key=${user_config.api_key}")
    manifest = parse_manifest(data)
    with pytest.raises(BundleError, match="passes a secret setting on its command line"):
        server_config(manifest, tmp_path, "hello-tools", check_values(manifest, {"api_key": "k"}))


def test_names_of_servers_and_folders_are_made_safe() -> None:
    assert server_name_for("@scope/My Server!") == "scope-My-Server"
    assert folder_name_for("../../1.0") == "1.0"
    with pytest.raises(BundleError):
        server_name_for("@@@")


def test_a_bundle_for_other_platforms_is_refused() -> None:
    others = [p for p in ("darwin", "win32", "linux") if p != sys.platform]
    data = minimal() | {"compatibility": {"platforms": others}}
    with pytest.raises(ManifestError, match=r"is made for .* only, not for this computer"):
        parse_manifest(data)
    assert parse_manifest(minimal() | {"compatibility": {"platforms": [sys.platform]}}).platforms == (
        sys.platform,
    )


def test_a_program_the_computer_lacks_is_named(tmp_path: Path) -> None:
    data = minimal()
    data["server"]["mcp_config"]["command"] = "surely-not-a-program-here"
    assert runtime_problem(parse_manifest(data)) == (
        "It needs surely-not-a-program-here, which is not found on this computer: "
        "install it before the server can start."
    )
    data["server"]["mcp_config"]["command"] = "${__dirname}/bin/tool"
    assert runtime_problem(parse_manifest(data)) == ""


@pytest.mark.parametrize(
    ("spec", "inside", "outside"),
    [
        (">=18.0.0", ["18.0.0", "22.23.5"], ["16.20.2", "17.9.9"]),
        (">=3.10 <4", ["3.10.0", "3.13.1"], ["3.9.18", "4.0.0"]),
        ("^18.2", ["18.2.0", "18.9.1"], ["18.1.9", "19.0.0"]),
        ("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0", "0.2.2"]),
        ("~3.11", ["3.11.0", "3.11.9"], ["3.12.0", "3.10.5"]),
        ("18.x || 20.x", ["18.19.0", "20.1.0"], ["19.0.0", "22.0.0"]),
        ("16 - 18", ["16.0.0", "18.99.0"], ["15.9.9", "19.0.0"]),
        (">20", ["21.0.0"], ["20.5.0"]),
        ("<=20", ["20.9.9"], ["21.0.0"]),
        ("*", ["1.0.0"], []),
        (">= 16.0.0", ["16.0.0"], ["15.0.0"]),
    ],
)
def test_npm_version_ranges(spec: str, inside: list[str], outside: list[str]) -> None:
    def version(text: str) -> Version:
        major, minor, patch = map(int, text.split("."))
        return major, minor, patch

    assert all(satisfies(version(v), spec) for v in inside), spec
    assert not any(satisfies(version(v), spec) for v in outside), spec


def test_a_runtime_too_old_for_the_bundle_is_named_with_both_versions() -> None:
    """The manifest's ``compatibility.runtimes`` against the runtime this computer has (the real
    ``python3 --version``, then versions given to the check)."""
    data = minimal()
    data["server"]["type"] = "python"
    data["server"]["mcp_config"]["command"] = "python3"
    data["compatibility"] = {"runtimes": {"python": ">=3.0 <4"}}
    manifest = parse_manifest(data)
    assert manifest.runtimes == {"python": ">=3.0 <4"}
    assert runtime_problem(manifest) == ""  # python3 here answers --version with a 3.x
    data["compatibility"] = {"runtimes": {"python": ">=3.10"}}
    assert runtime_problem(parse_manifest(data), lambda _program: (3, 8, 10)) == (
        "It needs Python >=3.10, and this computer has 3.8.10: update it before the server can start."
    )
    data["compatibility"] = {"runtimes": {"python": "latest"}}
    assert "a range Threadline cannot read" in runtime_problem(parse_manifest(data), lambda _p: (3, 11, 0))
    data["compatibility"] = {"runtimes": ["python"]}
    with pytest.raises(ManifestError, match=r"compatibility\.runtimes"):
        parse_manifest(data)


def test_an_executable_member_stays_executable_and_nothing_more(tmp_path: Path) -> None:
    import os
    import zipfile

    from tests.support.mcp_bundles import write_bundle

    from threadline.tools.mcp.bundles import open_bundle, unpack

    runnable = zipfile.ZipInfo("server/tool")
    runnable.create_system = 3
    runnable.external_attr = 0o4777 << 16  # setuid and world-writable asked for: not given
    bundle = write_bundle(tmp_path / "b.mcpb", extra=[(runnable, b"#!/bin/sh\n")])
    unpack(open_bundle(bundle), tmp_path / "out")
    mode = os.stat(tmp_path / "out" / "server" / "tool").st_mode & 0o7777
    assert mode == 0o755
    assert not os.access(tmp_path / "out" / "server" / "main.py", os.X_OK)


def test_versions_compare_by_their_numbers() -> None:
    from threadline.engine.extensions import version_key

    assert version_key("1.10.0") > version_key("1.9.2") > version_key("1.9")
    assert version_key("2.0.0") == version_key("2.0.0")
    assert version_key("1.0.0-beta") < version_key("1.0.1")


@pytest.mark.parametrize(
    ("arg", "inside"),
    [
        ("--config=${__dirname}/config.json", True),
        ("${__dirname}${/}server${/}main.py", True),
        ("PATH=${__dirname}/bin:${__dirname}/lib", True),
        ("--config=${__dirname}/../../etc/passwd", False),
        ("x:${__dirname}/lib:${__dirname}/../up", False),
        ("${__dirname}${/}..${/}..${/}bin${/}sh", False),
    ],
)
def test_every_dirname_path_must_stay_in_the_bundle(tmp_path: Path, arg: str, inside: bool) -> None:
    data = hello_manifest()
    data["server"]["mcp_config"]["args"] = [arg]
    manifest = parse_manifest(data)
    values = check_values(manifest, {"api_key": "k"})
    if inside:
        assert server_config(manifest, tmp_path, "hello-tools", values).args == (
            arg.replace("${__dirname}", str(tmp_path)).replace("${/}", "/"),
        )
    else:
        with pytest.raises(BundleError, match="points outside the bundle"):
            server_config(manifest, tmp_path, "hello-tools", values)
