"""`threadline web …`: the real commands in their own processes (no keychain there, as on a
headless machine: keys come from an environment variable)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_process import threadline
from tests.support.web_servers import WebServer


def test_use_show_and_allow_local(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shown = threadline(data, "web", "show")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "provider\tNone\nallow local addresses\toff\n"

    no_url = threadline(data, "web", "use", "searxng")
    assert no_url.returncode == 1
    assert no_url.stderr.strip() == "threadline: searxng needs --url, e.g. --url http://localhost:8888"
    used = threadline(data, "web", "use", "searxng", "--url", "http://127.0.0.1:8888")
    assert used.returncode == 0 and used.stdout == "Web search: SearXNG at http://127.0.0.1:8888.\n"

    no_key = threadline(data, "web", "use", "brave")
    assert no_key.returncode == 1 and "Brave Search needs an API key" in no_key.stderr
    assert "--api-key-env VAR" in no_key.stderr
    brave = threadline(data, "web", "use", "brave", "--api-key-env", "MY_BRAVE_KEY")
    assert brave.returncode == 0, brave.stderr
    assert "$MY_BRAVE_KEY is not set here" in brave.stdout
    assert threadline(data, "web", "allow-local", "on").stdout.startswith("fetch_page may now open")

    settings = json.loads(threadline(data, "web", "show", "--json").stdout)
    assert settings == {
        "provider": "brave",
        "searxng_url": "",
        "api_key_env": "MY_BRAVE_KEY",
        "allow_local": True,
        "key": "$MY_BRAVE_KEY (not set here)",
    }
    plain = threadline(data, "web", "show").stdout
    assert plain == "provider\tBrave Search\nkey\t$MY_BRAVE_KEY (not set here)\nallow local addresses\ton\n"
    assert threadline(data, "web", "allow-local", "off").returncode == 0
    assert json.loads(threadline(data, "web", "show", "--json").stdout)["allow_local"] is False


def test_test_searches_the_chosen_provider(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "pdf").mkdir()
    with WebServer(tmp_path / "pdf") as web:
        assert threadline(data, "web", "use", "searxng", "--url", web.base_url).returncode == 0
        tested = threadline(data, "web", "test")
        assert tested.returncode == 0, tested.stderr
        assert tested.stdout == "SearXNG works: 2 results for a test search.\n"
        assert web.paths() == ["/search?q=Threadline&format=json"]


def test_duckduckgo_is_offered_and_fails_clearly_without_network(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert threadline(data, "web", "use", "duckduckgo").stdout == "Web search: DuckDuckGo (best-effort).\n"
    tested = threadline(data, "web", "test")
    assert tested.returncode == 1
    (line,) = tested.stderr.strip().splitlines()
    assert line.startswith("threadline: DuckDuckGo could not be searched (")
    assert "best-effort" in line
