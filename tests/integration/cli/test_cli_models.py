"""``threadline models``: search, pull (killed mid-download, then resumed by a new process),
import (a file that is not GGUF refused by name), list --json, rm — against a fake Hub on
127.0.0.1 (``tests/support/fake_hub.py``) found through ``HF_ENDPOINT``."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.cli_process import ENV, threadline
from tests.support.fake_hub import FakeHub, running_hub
from tests.support.tiny_gguf import make_tiny_gguf

REPO = "tiny/Tiny-Llama-GGUF"
FILE = "tiny-llama.Q4_K_M.gguf"


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[FakeHub]:
    with running_hub() as fake:
        fake.add(REPO, FILE, make_tiny_gguf(tmp_path / "src.gguf").read_bytes())
        yield fake


def models(data_dir: Path, hub: FakeHub, *args: str) -> subprocess.CompletedProcess[str]:
    return threadline(data_dir, "models", *args, env={"HF_ENDPOINT": hub.url})


def test_search_then_pull_killed_midway_resumes_in_a_new_process(tmp_path: Path, hub: FakeHub) -> None:
    data = tmp_path / "data"
    found = models(data, hub, "search", "llama")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith(REPO + "\t")

    hub.delay, hub.hold_after = 0.05, 200_000  # held there until the kill: surely midway
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(data), "models", "pull", REPO, "--file", FILE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ENV, "HF_ENDPOINT": hub.url},
    )
    part = data / "models" / ".partial" / (FILE + ".part")
    deadline = time.monotonic() + 60
    while not (part.exists() and part.stat().st_size > 100_000) and time.monotonic() < deadline:
        time.sleep(0.02)
    process.kill()  # no chance to tidy up: as a crash or a power cut
    process.communicate(timeout=60)
    kept = part.stat().st_size
    assert 100_000 < kept < len(hub.files[REPO][FILE])

    hub.release()
    again = models(data, hub, "pull", REPO, "--file", FILE)
    assert again.returncode == 0, again.stderr
    assert f"Resuming {FILE} from " in again.stderr
    assert hub.ranges(FILE)[-1] == f"bytes={kept}-"
    assert again.stdout.strip().endswith("(SHA-256 checked)")
    assert (data / "models" / FILE).read_bytes() == hub.files[REPO][FILE]

    listed = models(data, hub, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)
    assert entry["name"] == FILE and entry["repo"] == REPO
    assert entry["sha256"] == hashlib.sha256(hub.files[REPO][FILE]).hexdigest()
    assert entry["architecture"] == "llama" and entry["context_length"] == 4096
    assert entry["has_chat_template"] is True

    removed = models(data, hub, "rm", FILE)
    assert removed.returncode == 0, removed.stderr
    assert not (data / "models" / FILE).exists()
    assert models(data, hub, "list").stdout.startswith("No models in ")


def test_import_checks_the_file_and_refuses_one_that_is_not_gguf(tmp_path: Path, hub: FakeHub) -> None:
    data = tmp_path / "data"
    notes = tmp_path / "notes.gguf"
    notes.write_text("just some text\n")
    refused = models(data, hub, "import", str(notes))
    assert refused.returncode == 1
    assert refused.stderr.startswith("threadline: notes.gguf is not a GGUF model file"), refused.stderr
    assert not (data / "models" / "notes.gguf").exists()

    mine = make_tiny_gguf(tmp_path / "mine.gguf", seed=3)
    done = models(data, hub, "import", str(mine))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Imported mine.gguf (llama) into ")
    assert (data / "models" / "mine.gguf").read_bytes() == mine.read_bytes()
    listed = models(data, hub, "list")
    assert listed.stdout.startswith("mine.gguf\t") and "4,096 tokens" in listed.stdout
    assert os.path.exists(mine)  # the user's own file is left where it was


def test_pull_of_a_corrupted_file_fails_and_keeps_nothing(tmp_path: Path, hub: FakeHub) -> None:
    hub.bad_sha.add(FILE)
    data = tmp_path / "data"
    failed = models(data, hub, "pull", REPO, "--file", FILE)
    assert failed.returncode == 1
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith(f"threadline: {FILE} did not match the checksum"), failed.stderr
    assert not (data / "models" / FILE).exists()
    assert not list((data / "models" / ".partial").iterdir())


def test_ctrl_c_during_pull_keeps_the_part(tmp_path: Path, hub: FakeHub) -> None:
    data = tmp_path / "data"
    hub.hold_after = 200_000
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(data), "models", "pull", REPO, "--file", FILE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ENV, "HF_ENDPOINT": hub.url},
    )
    part = data / "models" / ".partial" / (FILE + ".part")
    deadline = time.monotonic() + 60
    while not (part.exists() and part.stat().st_size >= 200_000) and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert err.decode().strip().endswith("threadline: interrupted")
    assert part.stat().st_size >= 200_000
    assert (part.parent / (FILE + ".part.json")).exists()  # the note that lets the next pull resume
