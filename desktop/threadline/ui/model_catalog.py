"""The models the user can pick, gathered once from the configured providers.

Listing a provider's models is a network call; the window asks once at start (after
the first paint) and again when providers change in Settings. Every tab's model
picker reads the same catalogue, so opening a tab never waits on the network.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject, Signal

from threadline.core.config import ModelInfo, ProviderConfig
from threadline.engine.api import EngineApi
from threadline.ui.composer import ModelChoice

log = logging.getLogger("threadline.ui.model_catalog")

LIST_TIMEOUT = 8.0


class ModelCatalog(QObject):
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.providers: list[ProviderConfig] = []
        self._choices: list[ModelChoice] = []
        self.loaded = False

    def choices(self) -> list[ModelChoice]:
        return list(self._choices)

    def find(self, provider: str, model: str) -> ModelChoice | None:
        return next((c for c in self._choices if c.provider == provider and c.model == model), None)

    async def load(self, engine: EngineApi) -> None:
        self.providers = await engine.list_providers()
        choices: list[ModelChoice] = []

        async def models_of(p: ProviderConfig) -> list[ModelInfo]:
            try:
                return await asyncio.wait_for(engine.list_models(p.name), LIST_TIMEOUT)
            except Exception as err:
                log.info("could not list models of %s: %s", p.name, err)
                return []

        results = await asyncio.gather(*(models_of(p) for p in self.providers))
        for provider, models in zip(self.providers, results, strict=True):
            seen: set[str] = set()
            if provider.default_model:
                info = next((m for m in models if m.id == provider.default_model), None)
                choices.append(ModelChoice(provider.name, provider.default_model,
                                           info.context_window if info else None,
                                           info.supports_images if info else False))
                seen.add(provider.default_model)
            for m in models:
                if m.id not in seen:
                    choices.append(ModelChoice(provider.name, m.id, m.context_window, m.supports_images))
                    seen.add(m.id)
        self._choices = choices
        self.loaded = True
        self.changed.emit()
