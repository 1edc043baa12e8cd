"""Whether a chat's model can be used, and the status line that says so.

A session whose model cannot be used (none chosen, its provider or model removed) says so
in the banner, the picker and the status line, and Send asks for a model instead of
failing; a model the provider does not list is a warning only (docs/design.md).
"""

from __future__ import annotations

from typing import Protocol

from threadline.core.config import DEFAULT_AGENT_ID
from threadline.core.session import SessionInfo
from threadline.core.turn import TurnState
from threadline.engine.events import (
    ConversationEvent,
    ErrorAction,
    ModelLoading,
    TurnStateChanged,
    UserFacingError,
)
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.chat.composer.model_catalog import ModelCatalog, ModelChoice
from threadline.ui.common.error_banner import ErrorBanner


class ModelStatusHost(Protocol):
    """What the model status needs of its tab."""

    catalog: ModelCatalog
    composer: Composer
    banner: ErrorBanner

    @property
    def info(self) -> SessionInfo: ...


class ModelStatus:
    """The chat's model as the catalog knows it: ``problem`` blocks sending, ``note`` warns."""

    def __init__(self, host: ModelStatusHost) -> None:
        self._host = host
        self.problem = ""
        """Why this chat's model cannot be used (sending waits for another pick)."""
        self.note = ""
        """A warning about this chat's model that does not stop sending (not in the listing)."""
        self.loading = ""
        """The model being loaded before it can reply (the runtime "On this computer" starting)."""

    def loading_changed(self, event: ConversationEvent) -> bool:
        """Note the engine's word on the model loading (``ModelLoading``; other events are
        not about it); whether the status line changes."""
        if isinstance(event, TurnStateChanged) and event.state is not TurnState.STREAMING:
            loading = ""  # a turn stopped while its model loaded says no more about it
        elif isinstance(event, ModelLoading):
            loading = event.model if event.loading else ""
        else:
            return False
        changed, self.loading = loading != self.loading, loading
        return changed

    def refresh(self) -> None:
        """Give the picker the catalog's models and say (once) what is wrong with this chat's."""
        host = self._host
        info, catalog, banner = host.info, host.catalog, host.banner
        current = None
        if info.model:
            current = catalog.find(info.provider, info.model) or ModelChoice(info.provider, info.model)
        problem = catalog.problem(info.provider, info.model)
        note = "" if problem else catalog.unlisted(info.provider, info.model)
        host.composer.set_models(catalog.choices(), current, problem=problem, loading=catalog.refreshing)
        if note:
            host.composer.model_picker.setToolTip(note)
        told = problem or note  # blocking, or a warning: either is said once, where errors are
        if told != (self.problem or self.note):
            old = self.problem or self.note
            if told:
                banner.show_error(UserFacingError("local", told, (ErrorAction.PICK_MODEL,)))
            elif banner.error is not None and banner.error.message == old:
                banner.dismiss()
        self.problem, self.note = problem, note

    def says(self, message: str) -> bool:
        """Whether ``message`` is what this says about the chat's model."""
        return message in (self.problem, self.note)


def status_line(
    info: SessionInfo,
    models: ModelStatus,
    *,
    agent_id: str,
    agent_name: str,
    busy_with: tuple[str, ...],
    state: TurnState,
    awaiting_approval: bool,
) -> str:
    """The tab's status line: model (or why none), agent, what holds sending, the turn's state."""
    parts = []
    if models.problem:
        parts.append(models.problem)
    elif info.model:
        parts.append(f"{info.model} ({info.provider})" if info.provider else info.model)
        if models.note:
            parts.append(f"not in {info.provider}'s model list")
    else:
        parts.append("No model chosen")
    if agent_id != DEFAULT_AGENT_ID and agent_name:
        parts.append(f"Agent: {agent_name}")
    parts.extend(busy_with)
    if state is TurnState.STREAMING:
        parts.append(f"Loading {models.loading}…" if models.loading else "Replying…")
    elif state is TurnState.AWAITING_APPROVAL or awaiting_approval:
        parts.append("Waiting for your approval")
    elif state is TurnState.RUNNING_TOOLS:
        parts.append("Running tools…")
    elif state is TurnState.COMPARING:
        parts.append("Comparing replies…")
    elif state is TurnState.FAILED:
        parts.append("The last reply failed")
    return "  ·  ".join(parts)
