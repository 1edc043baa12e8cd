"""A Hub that cannot be reached (nothing listens on its port) fails the search at once with a
sentence that says so, instead of the library's five retries (about 23 s of silence); a Hub
that answers is searched as before."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.support.cli_process import threadline
from tests.support.embedding_server import closed_port
from tests.support.fake_hub import REPO, FakeHub

from threadline.models.errors import HubError
from threadline.models.hub import Hub

FAST = 8.0
"""Seconds: far below the old ~23 s of retries, generous for a busy machine."""


def refusal(endpoint: str) -> str:
    return (
        f"Could not reach the model hub at {endpoint}: connection refused. "
        "Check your connection or the hub address in Settings."
    )


def test_a_refused_search_fails_fast_saying_why() -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(HubError) as failed:
        Hub(endpoint).search("llama")
    took = time.monotonic() - started
    assert failed.value.user_message == refusal(endpoint)
    assert took < FAST, f"the search took {took:.1f} s to fail"


def test_a_reachable_hub_is_still_searched(hub: FakeHub) -> None:
    assert [m.repo for m in Hub(hub.url).search("tiny")] == [REPO]


def test_the_command_line_says_the_hub_could_not_be_reached(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    done = threadline(tmp_path / "data", "models", "search", "llama", env={"HF_ENDPOINT": endpoint})
    assert done.returncode != 0
    assert refusal(endpoint) in done.stderr
    assert "Traceback" not in done.stderr
