"""Configuration records the user edits: providers, agents, approval rules.

Plain data shared by the store (which persists them, never with secrets), the
providers (which read base URLs and key sources) and the engine (which applies
an agent's system prompt, parameters and approval policy to a turn).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from enum import StrEnum

from threadline.core.sticky import DEFAULT_CONTEXT_SHARE, StickyContext

STORED_IN_KEYCHAIN = "•••• stored in keychain"
"""A secret's place holder: what the store gives back (and the settings editors show) for a value
kept in the system keychain. Provider headers and MCP server values use the same one."""

_ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def env_reference(value: str) -> str | None:
    """``VAR`` for a value written as ``${VAR}`` (read from Threadline's environment), else ``None``."""
    match = _ENV_REFERENCE.match(value.strip())
    return match.group(1) if match else None


class ProviderKind(StrEnum):
    OPENAI = "openai"
    """Any OpenAI-compatible server: OpenAI, Ollama, LM Studio, llama.cpp, vLLM, OpenRouter…"""
    ANTHROPIC = "anthropic"


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """Where a provider lives and where its key comes from (the key itself is in the keychain)."""

    name: str
    kind: ProviderKind
    base_url: str = ""
    api_key_env: str = ""
    """Name of an environment variable holding the key, used when no keychain entry exists."""
    default_model: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    """Extra HTTP headers as (name, value). Read from the store, a value is ``STORED_IN_KEYCHAIN``
    or ``${VAR}``; a value typed by the user goes to the keychain when the engine saves it, and
    ``credentials.resolve_headers`` gives the real values just before a client is made."""
    connect_timeout: float | None = None
    """Seconds to open a connection; ``None`` is the app's default."""
    first_byte_timeout: float | None = None
    """Seconds to wait for the first byte of a reply; ``None`` is the app's default."""


class Approval(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """``pattern`` matches a tool name (``fnmatch`` wildcards, e.g. ``git/*``).

    For shell commands, ``argument_pattern`` additionally matches the command line.
    """

    pattern: str
    approval: Approval
    argument_pattern: str = ""

    def matches(self, tool_name: str, argument_text: str = "") -> bool:
        if not fnmatch.fnmatchcase(tool_name, self.pattern):
            return False
        return not self.argument_pattern or fnmatch.fnmatchcase(argument_text, self.argument_pattern)


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """What a session's model is told and allowed: prompt, parameters, tools, approvals."""

    id: str
    name: str
    system_prompt: str = ""
    provider: str = ""
    model: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    enabled_tools: tuple[str, ...] = ()
    """Patterns of tools offered to the model (built-ins are off unless listed)."""
    approval_rules: tuple[ApprovalRule, ...] = ()
    allowed_folders: tuple[str, ...] = ()
    default_approval: Approval = Approval.ASK
    top_p: float | None = None
    context: StickyContext = field(default_factory=StickyContext)
    """Files, folders, globs and hooks every session of this agent sees."""
    context_share: float = DEFAULT_CONTEXT_SHARE
    """Share of the model's context window sticky context may take (0–1)."""
    reasoning_effort: str = ""
    """OpenAI-style ``reasoning_effort`` ("low", "medium", "high") for models that take it;
    "" sends none (the model's default). Anthropic ignores it."""
    thinking_budget: int | None = None
    """Anthropic extended thinking: the ``budget_tokens`` of ``thinking`` (``None``: off)."""

    def approval_for(self, tool_name: str, argument_text: str = "") -> Approval:
        """The first matching rule wins; more specific rules are stored first."""
        for rule in self.approval_rules:
            if rule.matches(tool_name, argument_text):
                return rule.approval
        return self.default_approval

    def offers(self, tool_name: str) -> bool:
        return any(fnmatch.fnmatchcase(tool_name, p) for p in self.enabled_tools)


DEFAULT_AGENT_ID = "default"


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What is known of a model: its id and, when known, its context window and image support."""

    id: str
    context_window: int | None = None
    supports_images: bool = False
    owned_by: str = ""
    extra: dict[str, str] = field(default_factory=dict)
