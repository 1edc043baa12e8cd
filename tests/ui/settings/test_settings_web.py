"""Settings → Web, clicked and typed with the real Engine: the provider with its address or key,
Test, Save, the local-address switch, and the web tools on the Tools page. Searches go to a
loopback fake (SearXNG and Brave in their JSON), keys to the keychain (in memory here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtCore import Qt
from tests.support.waiting import WAIT_MS
from tests.support.web_servers import BRAVE_KEY, WebServer
from tests.ui.settings.test_settings_tools import agent, click, open_settings

from threadline.ui.settings.settings_web_page import KEY_KEPT, WebPage
from threadline.web import Endpoints, WebConfig, WebProvider


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebServer]:
    (tmp_path / "pdf").mkdir()
    with WebServer(tmp_path / "pdf") as server:
        yield server


def stored(harness: Any) -> WebConfig:
    config: WebConfig = harness.run(harness.engine.web.config())
    return config


def choose(harness: Any, page: WebPage, provider: WebProvider) -> None:
    """Arrow keys on the provider list, as a keyboard user picks one."""
    page.provider.setFocus()
    while page.chosen() is not provider:
        harness.qtbot.keyClick(page.provider, Qt.Key.Key_Down)


def says(harness: Any, page: WebPage, text: str) -> None:
    harness.qtbot.waitUntil(lambda: text in page.message.text(), timeout=WAIT_MS)


def test_searxng_tested_saved_and_local_addresses_allowed(harness: Any, web: WebServer) -> None:
    harness.open()
    dialog = open_settings(harness, "web")
    page = dialog.web
    assert dialog.pages.currentWidget() is page and page.chosen() is WebProvider.NONE
    assert not page.url.isEnabled() and not page.test_button.isEnabled()
    assert not page.allow_local.isChecked()

    choose(harness, page, WebProvider.SEARXNG)
    assert page.url.isEnabled() and not page.api_key.isEnabled()
    harness.qtbot.keyClicks(page.url, web.base_url)
    click(harness, page.test_button)
    says(harness, page, "SearXNG works: 2 results for a test search.")
    assert stored(harness).provider is WebProvider.NONE, "a test saves nothing"

    click(harness, page.save_button)
    says(harness, page, "Saved: web search through SearXNG.")
    assert stored(harness) == WebConfig(WebProvider.SEARXNG, searxng_url=web.base_url)

    click(harness, page.allow_local)
    harness.qtbot.waitUntil(lambda: stored(harness).allow_local, timeout=WAIT_MS)
    says(harness, page, "fetch_page may open addresses on this computer")

    dialog.close_and_save()
    again = open_settings(harness, "web").web
    assert again.chosen() is WebProvider.SEARXNG and again.url.text() == web.base_url
    assert again.allow_local.isChecked()


def test_a_brave_key_typed_goes_to_the_keychain_and_a_wrong_one_is_said(harness: Any, web: WebServer) -> None:
    harness.open()
    harness.engine.web.endpoints = Endpoints(brave=f"{web.base_url}/res/v1")
    page = open_settings(harness, "web").web
    choose(harness, page, WebProvider.BRAVE)
    assert page.api_key.isEnabled() and not page.url.isEnabled()
    click(harness, page.save_button)
    says(harness, page, "Brave Search needs an API key")

    harness.qtbot.keyClicks(page.api_key, "wrong-key")
    click(harness, page.test_button)
    says(harness, page, "Brave Search refused the request (HTTP 401): check the API key")
    page.api_key.clear()
    harness.qtbot.keyClicks(page.api_key, BRAVE_KEY)
    click(harness, page.test_button)
    says(harness, page, "Brave Search works: 2 results")
    click(harness, page.save_button)
    says(harness, page, "Saved: web search through Brave Search.")
    assert keyring.get_password("threadline-web", "brave") == BRAVE_KEY
    assert page.api_key.text() == "" and page.api_key.placeholderText() == KEY_KEPT
    assert BRAVE_KEY not in str(stored(harness).to_json())


def test_duckduckgo_is_offered_as_best_effort_and_its_failure_is_said(harness: Any) -> None:
    harness.open()
    page = open_settings(harness, "web").web
    choose(harness, page, WebProvider.DUCKDUCKGO)
    assert page.provider.currentText() == "DuckDuckGo (best-effort)"
    assert "best-effort" in page.provider_hint.text()
    click(harness, page.test_button)
    says(harness, page, "DuckDuckGo could not be searched")
    assert page.test_button.isEnabled()


def test_the_web_tools_are_enabled_on_the_tools_page(harness: Any) -> None:
    harness.open()
    page = open_settings(harness, "tools").tools
    harness.qtbot.waitUntil(lambda: "web_search" in page.builtin, timeout=WAIT_MS)
    click(harness, page.builtin["web_search"])
    click(harness, page.builtin["fetch_page"])
    harness.qtbot.waitUntil(
        lambda: {"web_search", "fetch_page"} <= set(agent(harness).enabled_tools), timeout=WAIT_MS
    )
