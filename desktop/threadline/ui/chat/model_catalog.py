"""The models the user can pick, shared by every tab's model picker.

Listing a provider's models is a network call through the provider's SDK, and
importing an SDK costs 0.5–1.5 s and tens of MB (DESIGN.md §9). So the start never
lists models: ``load`` builds the catalogue from the providers' default models and
the list saved by the last refresh (a setting), without touching an SDK.
``refresh`` asks the providers; the window calls it when a model picker opens
(at most once per ``REFRESH_AFTER`` seconds) and when providers change in Settings,
and saves what it found for the next start.

``problem`` tells a tab when its session's model can no longer be used: the
provider was removed, or the provider's listing no longer has the model. Without a
listing nothing is claimed (a model may exist that was never listed here).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from threadline.core.config import ModelInfo, ProviderConfig
from threadline.engine.api import EngineApi
from threadline.ui.common.tasks import spawn

log = logging.getLogger("threadline.ui.chat.model_catalog")

LIST_TIMEOUT = 8.0
CACHE_KEY = "ui.model_catalog"
REFRESH_AFTER = 600.0
"""Seconds a refreshed list stays fresh before opening a picker asks the providers again."""


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One entry of a model picker: a provider's model and what it can take."""

    provider: str
    model: str
    context_window: int | None = None
    supports_images: bool = False

    @property
    def label(self) -> str:
        return f"{self.model}  ·  {self.provider}" if self.provider else self.model


class ModelCatalog(QObject):
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.providers: list[ProviderConfig] = []
        self._choices: list[ModelChoice] = []
        self._listed: dict[str, set[str]] = {}
        self._names: list[str] = []
        """Per provider, the model ids its last listing had (providers never listed: absent)."""
        self.loaded = False
        self.refreshed_at: float | None = None
        """``time.monotonic()`` of the last listing from the providers (None: not this run)."""
        self._refreshing: asyncio.Task[None] | None = None

    def choices(self) -> list[ModelChoice]:
        return list(self._choices)

    def find(self, provider: str, model: str) -> ModelChoice | None:
        return next((c for c in self._choices if c.provider == provider and c.model == model), None)

    def problem(self, provider: str, model: str) -> str:
        """What is wrong with a session's model, as the tab says it; "" when it looks usable."""
        if not self.loaded or not model:
            return ""
        if provider and provider not in {p.name for p in self.providers}:
            return f"Pick a model — '{provider}' was removed"
        listed = self._listed.get(provider)
        if listed and model not in listed and self.find(provider, model) is None:
            return f"Pick a model — '{model}' was removed"
        return ""

    @property
    def refreshing(self) -> bool:
        return self._refreshing is not None and not self._refreshing.done()

    async def load(self, engine: EngineApi) -> None:
        """The catalogue from the providers' defaults and the saved list: no network, no SDK."""
        self.providers = await engine.list_providers()
        cached = _parse_cache(await engine.get_setting(CACHE_KEY, None))
        self._set(self._merge({p.name: cached.get(p.name, []) for p in self.providers}))

    def refresh_if_stale(self, engine: EngineApi) -> None:
        """Ask the providers again unless that happened in the last ``REFRESH_AFTER`` seconds."""
        if self.refreshing:
            return
        if self.refreshed_at is not None and time.monotonic() - self.refreshed_at < REFRESH_AFTER:
            return
        self._refreshing = spawn(
            self.refresh(engine), on_error=lambda err: log.info("model refresh: %s", err)
        )

    async def refresh(self, engine: EngineApi) -> None:
        """List every provider's models (network), update the catalogue and save it."""
        self.providers = await engine.list_providers()

        async def models_of(p: ProviderConfig) -> list[ModelInfo] | None:
            try:
                return await asyncio.wait_for(engine.list_models(p.name), LIST_TIMEOUT)
            except Exception as err:
                log.info("could not list models of %s: %s", p.name, err)
                return None

        results = await asyncio.gather(*(models_of(p) for p in self.providers))
        cached = _parse_cache(await engine.get_setting(CACHE_KEY, None))
        listed: dict[str, list[ModelInfo]] = {}
        for provider, models in zip(self.providers, results, strict=True):
            # A provider that could not be reached keeps what it listed last time.
            listed[provider.name] = models if models is not None else cached.get(provider.name, [])
        self.refreshed_at = time.monotonic()
        self._set(self._merge(listed))
        await engine.set_setting(
            CACHE_KEY,
            {
                name: [
                    {"id": m.id, "context_window": m.context_window, "supports_images": m.supports_images}
                    for m in models
                ]
                for name, models in listed.items()
            },
        )

    def _merge(self, listed: dict[str, list[ModelInfo]]) -> list[ModelChoice]:
        self._listed = {name: {m.id for m in models} for name, models in listed.items() if models}
        choices: list[ModelChoice] = []
        for provider in self.providers:
            models = listed.get(provider.name, [])
            seen: set[str] = set()
            if provider.default_model:
                info = next((m for m in models if m.id == provider.default_model), None)
                choices.append(
                    ModelChoice(
                        provider.name,
                        provider.default_model,
                        info.context_window if info else None,
                        info.supports_images if info else False,
                    )
                )
                seen.add(provider.default_model)
            for m in models:
                if m.id not in seen:
                    choices.append(ModelChoice(provider.name, m.id, m.context_window, m.supports_images))
                    seen.add(m.id)
        return choices

    def _set(self, choices: list[ModelChoice]) -> None:
        names = [p.name for p in self.providers]
        changed = choices != self._choices or not self.loaded or names != self._names
        self._names = names  # a removed provider that offered no model still changes what tabs say
        self._choices = choices
        self.loaded = True
        if changed:
            self.changed.emit()


def _parse_cache(value: Any) -> dict[str, list[ModelInfo]]:
    """The saved lists, skipping anything malformed (settings are user-editable data)."""
    out: dict[str, list[ModelInfo]] = {}
    if not isinstance(value, dict):
        return out
    for name, models in value.items():
        if not isinstance(name, str) or not isinstance(models, list):
            continue
        infos: list[ModelInfo] = []
        for m in models:
            if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"]:
                window = m.get("context_window")
                infos.append(
                    ModelInfo(
                        m["id"],
                        context_window=window if isinstance(window, int) else None,
                        supports_images=bool(m.get("supports_images")),
                    )
                )
        out[name] = infos
    return out
