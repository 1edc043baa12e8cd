"""Agents as JSON: the export file, the import check, and the snapshot a marker carries.

One shape serves three uses. An export file holds agents a person may share, so
it has nothing secret in it: an agent names a provider, never its key or headers
(those stay in the keychain and the provider's settings). An import reads a file
from anywhere, so every field is checked and a bad one is named in plain words.
An agent marker keeps the agent's settings as they were when it was picked, so a
session follows its own history rather than later edits (docs/design.md §1,
"Agents").
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.reasoning import REASONING_EFFORTS
from threadline.core.sticky import DEFAULT_CONTEXT_SHARE, StickyContext

EXPORT_FORMAT = "threadline-agents"
EXPORT_VERSION = 1
MAX_IMPORT_BYTES = 5_000_000
"""A bigger file is not an agent export; refusing it early keeps a mistaken pick cheap."""
MAX_NAME_LENGTH = 200


class AgentFormatError(ValueError):
    """An agent file or snapshot that cannot be read; ``user_message`` says what is wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.user_message = message


def agent_to_json(agent: AgentConfig, *, with_id: bool = True) -> dict[str, Any]:
    """Every setting of ``agent`` as plain JSON values (no secrets: an agent holds none)."""
    data: dict[str, Any] = {"id": agent.id} if with_id else {}
    data.update(
        name=agent.name,
        system_prompt=agent.system_prompt,
        provider=agent.provider,
        model=agent.model,
        temperature=agent.temperature,
        top_p=agent.top_p,
        max_tokens=agent.max_tokens,
        enabled_tools=list(agent.enabled_tools),
        approval_rules=[
            {"pattern": r.pattern, "approval": r.approval.value, "argument_pattern": r.argument_pattern}
            for r in agent.approval_rules
        ],
        default_approval=agent.default_approval.value,
        allowed_folders=list(agent.allowed_folders),
        context=agent.context.to_json(),
        context_share=agent.context_share,
    )
    if agent.reasoning_effort:
        data["reasoning_effort"] = agent.reasoning_effort
    if agent.thinking_budget is not None:
        data["thinking_budget"] = agent.thinking_budget
    return data


def agent_from_json(data: Any, *, where: str = "the agent") -> AgentConfig:
    """Check and read one agent; ``AgentFormatError`` names the first field that is wrong."""
    if not isinstance(data, dict):
        raise AgentFormatError(f"{where} is not a JSON object.")
    name = _text(data, "name", where)
    if not name.strip():
        raise AgentFormatError(f"{where} has no name.")
    if len(name) > MAX_NAME_LENGTH:
        raise AgentFormatError(f"{where} has a name longer than {MAX_NAME_LENGTH} characters.")
    label = f"the agent {name.strip()!r}"
    try:
        context = StickyContext.from_json(_object(data, "context", label))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise AgentFormatError(f"The sticky context of {label} is not valid.") from None
    return AgentConfig(
        id=_text(data, "id", label),
        name=name.strip(),
        system_prompt=_text(data, "system_prompt", label),
        provider=_text(data, "provider", label),
        model=_text(data, "model", label),
        temperature=_number(data, "temperature", label, 0.0, 2.0),
        top_p=_number(data, "top_p", label, 0.0, 1.0),
        max_tokens=_count(data, "max_tokens", label),
        enabled_tools=_texts(data, "enabled_tools", label),
        approval_rules=_rules(data, label),
        default_approval=_approval(data.get("default_approval", Approval.ASK.value), label),
        allowed_folders=_texts(data, "allowed_folders", label),
        context=context,
        context_share=_number(data, "context_share", label, 0.05, 1.0) or DEFAULT_CONTEXT_SHARE,
        reasoning_effort=_effort(data, label),
        thinking_budget=_count(data, "thinking_budget", label),
    )


def _effort(data: dict[str, Any], label: str) -> str:
    value = _text(data, "reasoning_effort", label)
    if value and value not in REASONING_EFFORTS:
        levels = ", ".join(REASONING_EFFORTS)
        raise AgentFormatError(f"The reasoning effort of {label} must be one of {levels}.")
    return value


def export_text(agents: list[AgentConfig]) -> str:
    """The text of an export file holding ``agents`` (ids left out: an import makes new ones)."""
    document = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "agents": [agent_to_json(a, with_id=False) for a in agents],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def parse_export(text: str) -> list[AgentConfig]:
    """The agents of an export file (their ids empty); ``AgentFormatError`` when it is not one."""
    if len(text) > MAX_IMPORT_BYTES:
        raise AgentFormatError("The file is too large to be an agent export.")
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise AgentFormatError("The file is not valid JSON, so no agents were imported.") from None
    if isinstance(document, dict) and "agents" in document:
        if document.get("format", EXPORT_FORMAT) != EXPORT_FORMAT:
            raise AgentFormatError("The file is not a Threadline agent export.")
        version = document.get("version", EXPORT_VERSION)
        if not isinstance(version, int) or version > EXPORT_VERSION:
            raise AgentFormatError(
                "The file was written by a newer Threadline. Update Threadline to import it."
            )
        items = document["agents"]
    elif isinstance(document, dict):
        items = [document]  # a single agent object is accepted too
    else:
        items = document
    if not isinstance(items, list) or not items:
        raise AgentFormatError("The file holds no agents.")
    agents = [agent_from_json(item, where=f"Agent {n} of the file") for n, item in enumerate(items, 1)]
    return [replace(a, id="") for a in agents]


# -- field readers ----------------------------------------------------------------------------


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AgentFormatError(f"{where}: {key} must be text.")
    return value


def _texts(data: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AgentFormatError(f"{where}: {key} must be a list of text.")
    return tuple(value)


def _object(data: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise AgentFormatError(f"{where}: {key} must be an object.")
    return value


def _number(data: dict[str, Any], key: str, where: str, low: float, high: float) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise AgentFormatError(f"{where}: {key} must be a number.")
    if not low <= value <= high:
        raise AgentFormatError(f"{where}: {key} must be between {low:g} and {high:g}.")
    return float(value)


def _count(data: dict[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentFormatError(f"{where}: {key} must be a whole number of at least 1.")
    return value


def _approval(value: Any, where: str) -> Approval:
    try:
        return Approval(value)
    except ValueError:
        raise AgentFormatError(f"{where}: an approval must be allow, ask or deny.") from None


def _rules(data: dict[str, Any], where: str) -> tuple[ApprovalRule, ...]:
    value = data.get("approval_rules") or []
    if not isinstance(value, list):
        raise AgentFormatError(f"{where}: approval_rules must be a list.")
    rules: list[ApprovalRule] = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("pattern"), str):
            raise AgentFormatError(f"{where}: each approval rule needs a tool pattern.")
        rules.append(
            ApprovalRule(
                pattern=item["pattern"],
                approval=_approval(item.get("approval"), where),
                argument_pattern=_text(item, "argument_pattern", where),
            )
        )
    return tuple(rules)
