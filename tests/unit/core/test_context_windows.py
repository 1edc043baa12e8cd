"""One answer for a model's context window: the user's figure, the server's, then the published one."""

from __future__ import annotations

from pathlib import Path

import pytest

from threadline.core.config import ModelInfo
from threadline.core.context_windows import known_window, user_window, window_from_listing
from threadline.engine.engine import Engine
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("gpt-4o", 128_000),
        ("gpt-4o-2024-08-06", 128_000),
        ("openai/gpt-4.1-mini", 1_047_576),
        ("claude-sonnet-4-20250514", 200_000),
        ("o3-pro", None),
        ("llama3.2:3b", None),
    ],
)
def test_published_windows_match_exact_ids_only(model: str, window: int | None) -> None:
    assert known_window(model) == window


def test_listing_fields_that_servers_use() -> None:
    assert window_from_listing({"id": "m", "context_length": 32768}) == 32768  # OpenRouter
    assert window_from_listing({"id": "m", "max_model_len": 8192}) == 8192  # vLLM
    assert window_from_listing({"id": "m", "meta": {"n_ctx_train": 4096}}) == 4096  # llama.cpp
    assert window_from_listing({"id": "m", "context_length": "big"}) is None
    assert window_from_listing({"id": "m", "context_window": True}) is None
    assert window_from_listing({"id": "m"}) is None


def test_user_windows_are_read_defensively() -> None:
    assert user_window({"local/llama": 4096}, "local", "llama") == 4096
    assert user_window({"local/llama": -1}, "local", "llama") is None
    assert user_window(["local/llama"], "local", "llama") is None


@pytest.mark.asyncio
async def test_the_engine_answers_in_order_and_follows_the_setting(tmp_path: Path) -> None:
    engine = await Engine.open(tmp_path)
    try:
        hub = engine.hub
        assert hub.context_window("local", "llama") is None
        assert hub.context_window("cloud", "gpt-4o") == 128_000
        hub.remember_models("local", [ModelInfo("llama", context_window=8192)])
        assert hub.context_window("local", "llama") == 8192
        await engine.settings.set_setting(
            CONTEXT_WINDOWS_SETTING, {"local/llama": 2048, "cloud/gpt-4o": 64_000}
        )
        assert hub.context_window("local", "llama") == 2048
        assert hub.context_window("cloud", "gpt-4o") == 64_000
    finally:
        await engine.aclose()
    reopened = await Engine.open(tmp_path)  # the user's figure is read back at start
    try:
        assert reopened.hub.context_window("local", "llama") == 2048
    finally:
        await reopened.aclose()
