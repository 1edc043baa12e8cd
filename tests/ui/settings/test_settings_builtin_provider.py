"""Settings → Providers shows "On this computer" as what it is: Threadline's built-in provider,
not a form to edit or a provider to remove. Clicked in the list, it shows its runtime's state
and a button to the Models page, where it is managed; the form's name cannot take its name."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.fixtures import no_keyring  # noqa: F401  (fixture)
from tests.support.tiny_gguf import make_tiny_gguf
from tests.support.waiting import WAIT_MS
from tests.ui.settings.test_settings_providers import open_settings

from threadline.core.config import ProviderConfig, ProviderKind

LOCAL = "On this computer"


def click_item(harness: Any, page: Any, name: str) -> None:
    """Click the provider ``name`` in the list, as a person does."""
    items = [page.list.item(i) for i in range(page.list.count())]
    item = next(i for i in items if i.data(Qt.ItemDataRole.UserRole) == name)
    page.list.scrollToItem(item)
    centre = page.list.visualItemRect(item).center()
    harness.qtbot.mouseClick(page.list.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    harness.qtbot.waitUntil(lambda: page.list.currentItem() is item, timeout=WAIT_MS)


def listed(page: Any) -> dict[str, str]:
    """Each provider's name, and the text the list shows for it."""
    items = [page.list.item(i) for i in range(page.list.count())]
    return {i.data(Qt.ItemDataRole.UserRole): i.text() for i in items}


@pytest.fixture
def with_model(harness: Any) -> Any:
    (harness.data_dir / "models").mkdir(parents=True)
    make_tiny_gguf(harness.data_dir / "models" / "tiny.gguf")
    harness.open()  # the built-in provider listed, so no provider of the harness's own: one here
    stored = ProviderConfig("replay", ProviderKind.OPENAI, base_url=harness.server.openai_base_url)
    harness.run(harness.engine.providers.save_provider(stored))
    return harness


def test_the_builtin_provider_cannot_be_edited_or_removed_and_leads_to_the_models_page(
    with_model: Any,
) -> None:
    harness = with_model
    dialog = open_settings(harness, "providers")
    page = dialog.providers
    harness.qtbot.waitUntil(lambda: LOCAL in listed(page), timeout=WAIT_MS)
    assert listed(page) == {"replay": "replay", LOCAL: "On this computer (built in)"}

    click_item(harness, page, LOCAL)
    panel = page.builtin
    assert panel.isVisible() and panel.manage_button.isVisible()
    form = (page.name, page.base_url, page.api_key, page.save_button, page.remove_button, page.test_button)
    for control in form:
        assert not control.isVisible()  # nothing to edit, save or remove here
    assert "Built into Threadline" in panel.about.text() and "--provider threadline" in panel.about.text()
    harness.qtbot.waitUntil(lambda: "No model is loaded now" in panel.state.text(), timeout=WAIT_MS)
    assert panel.state.text().startswith("Runtime: ")

    click_item(harness, page, "replay")  # a stored provider: the form again, with Remove
    assert page.name.isVisible() and page.name.text() == "replay" and page.remove_button.isEnabled()
    assert not panel.isVisible()

    click_item(harness, page, LOCAL)
    harness.qtbot.mouseClick(panel.manage_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: getattr(harness.window, "models_page", None) is not None, timeout=WAIT_MS)
    models_page = harness.window.models_page
    harness.qtbot.waitUntil(lambda: models_page.isVisible(), timeout=WAIT_MS)
    models_page.close()


def test_the_runtime_missing_says_how_to_add_one(with_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in the Linux packages, which come without the runtime."""
    harness = with_model
    monkeypatch.setattr(harness.engine.models, "runtime_installed", lambda: False)
    page = open_settings(harness, "providers").providers
    harness.qtbot.waitUntil(lambda: LOCAL in listed(page), timeout=WAIT_MS)
    click_item(harness, page, LOCAL)
    text = page.builtin.state.text()
    assert "No runtime yet" in text and "pip install 'threadline[local]'" in text and "llama-server" in text


def test_a_packaged_build_without_the_runtime_gives_no_pip_advice(
    with_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package cannot be pip-installed into: it names the llama-server choice only."""
    harness = with_model
    monkeypatch.setattr(harness.engine.models, "runtime_installed", lambda: False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    page = open_settings(harness, "providers").providers
    harness.qtbot.waitUntil(lambda: LOCAL in listed(page), timeout=WAIT_MS)
    click_item(harness, page, LOCAL)
    text = page.builtin.state.text()
    assert "No runtime yet" in text and "choose a llama-server program" in text, text
    assert "pip" not in text and "threadline[local]" not in text, text


def test_a_provider_cannot_be_saved_under_the_builtin_name(with_model: Any) -> None:
    harness = with_model
    page = open_settings(harness, "providers").providers
    harness.qtbot.waitUntil(lambda: LOCAL in listed(page), timeout=WAIT_MS)
    harness.qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    assert page.name.isVisible() and not page.builtin.isVisible()
    harness.qtbot.keyClicks(page.name, LOCAL)
    harness.qtbot.keyClicks(page.base_url, "http://127.0.0.1:9/v1")
    harness.qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert page.message.text() == "“On this computer” is Threadline's built-in provider. Choose another name."
    assert harness.run(harness.engine.store.get_provider(LOCAL)) is None
