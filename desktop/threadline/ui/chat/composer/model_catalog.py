"""The models the user can pick, shared by every tab's model picker.

Listing a provider's models is a network call through the provider's SDK, and
importing an SDK costs 0.5–1.5 s and tens of MB. So the start never lists models:
``load`` builds the catalogue from the providers' default models and the list
saved by the last refresh (a setting), without touching an SDK.

``refresh`` asks the providers. The window runs it in the background every time a
model picker opens (``refresh_in_background``) and when providers change in
Settings, and saves what it found for the next start. There is no "fresh for ten
minutes": a model just loaded into a local server must show the next time the
picker opens. It stays cheap because each provider has at most one listing in
flight (a second request joins the running one), and the cached list shows
meanwhile; ``refreshing`` tells the picker to add its "Loading models…" entry.

``problem`` tells a tab when its session's model cannot be used: its provider was
removed. ``unlisted`` tells it when the provider's latest listing does not have the
model. One rule holds for a name the listing lacks, wherever it was given (the picker,
the agent editor, ``/model``, ``ask --model``): it is used as typed, with a warning —
servers serve models they do not list (aliases, models loaded on demand), and the
server's own answer says when it does not. Without a listing nothing is claimed, and
an empty listing is not trusted either (a server that lists nothing says nothing about
what it serves).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from threadline.ui.common.tasks import LogOnly, spawn

if TYPE_CHECKING:  # the engine's modules load after the first paint
    from threadline.core.config import ModelInfo, ProviderConfig
    from threadline.engine.api import EngineApi

log = logging.getLogger("threadline.ui.chat.composer.model_catalog")

LIST_TIMEOUT = 8.0
CACHE_KEY = "ui.model_catalog"


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


def not_listed(provider: str, model: str) -> str:
    """How a tab warns of a model its provider's listing does not have (it is sent anyway)."""
    return f"'{model}' is not in {provider}'s model list — it is sent as typed"


class ModelCatalog(QObject):
    changed = Signal()
    """The choices, the providers or ``refreshing`` changed: pickers show the catalogue again."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.providers: list[ProviderConfig] = []
        self._choices: list[ModelChoice] = []
        self._listed: dict[str, set[str]] = {}
        """Per provider, the model ids its last listing had (never listed, or listed nothing: absent)."""
        self._names: list[str] = []
        self.loaded = False
        self._refreshing: asyncio.Task[None] | None = None
        self._running = 0
        """How many ``refresh`` calls are under way (the picker's "Loading models…" entry)."""
        self._listing: dict[str, asyncio.Task[list[ModelInfo] | None]] = {}
        """The one listing in flight per provider; a second caller awaits the same task."""

    def choices(self) -> list[ModelChoice]:
        return list(self._choices)

    def find(self, provider: str, model: str) -> ModelChoice | None:
        return next((c for c in self._choices if c.provider == provider and c.model == model), None)

    def problem(self, provider: str, model: str) -> str:
        """Why a session's model cannot be used, as the tab says it; "" when it can."""
        if not self.loaded or not model:
            return ""
        if provider and provider not in {p.name for p in self.providers}:
            return f"Pick a model — '{provider}' was removed"
        return ""

    def unlisted(self, provider: str, model: str) -> str:
        """The warning for a model the provider's latest listing lacks; "" when it is listed
        (or nothing is known: no listing, or an empty one)."""
        listed = self._listed.get(provider) if self.loaded and model else None
        return not_listed(provider, model) if listed and model not in listed else ""

    @property
    def refreshing(self) -> bool:
        """A listing of the providers' models is under way."""
        return self._running > 0

    async def load(self, engine: EngineApi) -> None:
        """The catalogue from the providers' defaults and the saved list: no network, no SDK."""
        self.providers = await engine.providers.list_providers()
        cached = _parse_cache(await engine.settings.get_setting(CACHE_KEY, None))
        for provider in self.providers:  # windows the servers stated last time count from now
            if cached.get(provider.name):
                engine.providers.remember_models(provider.name, cached[provider.name])
        self._set(self._merge({p.name: cached.get(p.name, []) for p in self.providers}))

    def refresh_in_background(self, engine: EngineApi) -> None:
        """Ask the providers again (a picker opened, or "Refresh models"), unless that is under way.

        Always asks: the list a local server serves changes whenever a model is
        loaded, so no age makes a listing fresh. A request while one runs joins it.
        """
        if self._refreshing is not None and not self._refreshing.done():
            return
        self._refreshing = spawn(self.refresh(engine), tell=LogOnly("model refresh", logging.INFO))

    async def refresh(self, engine: EngineApi) -> None:
        """List every provider's models (network), update the catalogue and save it."""
        self._running += 1
        if self._running == 1:
            self.changed.emit()  # the pickers add "Loading models…"
        try:
            await self._refresh(engine)
        finally:
            self._running -= 1
            if self._running == 0:
                self.changed.emit()

    async def _refresh(self, engine: EngineApi) -> None:
        self.providers = await engine.providers.list_providers()
        results = await asyncio.gather(*(self._models_of(engine, p.name) for p in self.providers))
        cached = _parse_cache(await engine.settings.get_setting(CACHE_KEY, None))
        listed: dict[str, list[ModelInfo]] = {}
        for provider, models in zip(self.providers, results, strict=True):
            # A provider that could not be reached keeps what it listed last time.
            listed[provider.name] = models if models is not None else cached.get(provider.name, [])
        self._set(self._merge(listed))
        await engine.settings.set_setting(
            CACHE_KEY,
            {
                name: [
                    {"id": m.id, "context_window": m.context_window, "supports_images": m.supports_images}
                    for m in models
                ]
                for name, models in listed.items()
            },
        )

    async def _models_of(self, engine: EngineApi, provider: str) -> list[ModelInfo] | None:
        """The provider's listing, sharing the one in flight; ``None`` when it failed."""
        task = self._listing.get(provider)
        if task is None or task.done():
            task = asyncio.ensure_future(self._list(engine, provider))
            self._listing[provider] = task

            def forget(done: asyncio.Task[list[ModelInfo] | None]) -> None:
                if self._listing.get(provider) is done:
                    del self._listing[provider]

            task.add_done_callback(forget)
        return await asyncio.shield(task)

    @staticmethod
    async def _list(engine: EngineApi, provider: str) -> list[ModelInfo] | None:
        try:
            return await asyncio.wait_for(engine.providers.list_models(provider), LIST_TIMEOUT)
        except Exception as err:
            log.info("could not list models of %s: %s", provider, err)
            return None

    def _merge(self, listed: dict[str, list[ModelInfo]]) -> list[ModelChoice]:
        self._listed = {name: {m.id for m in models} for name, models in listed.items() if models}
        choices: list[ModelChoice] = []
        for provider in self.providers:
            models = listed.get(provider.name, [])
            seen: set[str] = set()
            default = provider.default_model
            # The default model is offered unless a listing shows the server no longer has it.
            if default and (not models or any(m.id == default for m in models)):
                info = next((m for m in models if m.id == default), None)
                choices.append(
                    ModelChoice(
                        provider.name,
                        default,
                        info.context_window if info else None,
                        info.supports_images if info else False,
                    )
                )
                seen.add(default)
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
    from threadline.core.config import ModelInfo

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
