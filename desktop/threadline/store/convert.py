"""Converters between core types and rows: the only place that knows both shapes.

Message content that is never queried by column (images, attached context, tool
calls and results, what a summary replaces) goes into one JSON object; keys with
empty values are left out so ordinary messages stay small. Request metadata is a
second JSON object with ISO 8601 timestamps.

Readers take ``MessageRecord`` rather than ``MessageRow`` so that the hot path
(loading a 10,000-message tree) can hand in plain result rows without building
ORM objects first. The other readers take a row class or a Core result row
(``core_reads``) alike: both have the columns as attributes. The row classes
(``tables``, hence the ORM and SQLModel) are imported only by the writers that
build them, so the start's Core reads do not load them.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from sys import intern
from typing import TYPE_CHECKING, Any, Protocol

from threadline.core.config import (
    STORED_IN_KEYCHAIN,
    AgentConfig,
    Approval,
    ApprovalRule,
    ProviderConfig,
    ProviderKind,
    env_reference,
)
from threadline.core.messages import (
    ContextFile,
    ImageBlock,
    Marker,
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    ResourceRef,
    Role,
    ToolCall,
    ToolResult,
)
from threadline.core.packed_history import MetadataFields
from threadline.core.project import Project
from threadline.core.reasoning import Reasoning
from threadline.core.session import SessionInfo
from threadline.core.sources import source_from_json, source_to_json
from threadline.core.sticky import DEFAULT_CONTEXT_SHARE, StickyContext

if TYPE_CHECKING:
    import sqlalchemy as sa

    from threadline.store.tables import AgentRow, MessageRow, ProjectRow, ProviderRow, SessionRow


PREVIEW_LIMIT = 120


class MessageRecord(Protocol):
    """The columns a message is rebuilt from (a ``MessageRow`` or a result row)."""

    @property
    def id(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def role(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def content(self) -> dict[str, Any]: ...
    @property
    def status(self) -> str: ...
    @property
    def meta(self) -> dict[str, Any] | None: ...
    @property
    def created_at(self) -> datetime: ...


# -- messages -----------------------------------------------------------------------


def message_values(message: Message, *, session_id: str, ordinal: int) -> dict[str, Any]:
    """The ``messages`` columns of a new row, by column name (for a Core insert)."""
    return {
        "id": message.id,
        "session_id": session_id,
        "parent_id": message.parent_id,
        "ordinal": ordinal,
        "role": message.role.value,
        "kind": message.kind.value,
        "text": message.text,
        "content": content_to_json(message),
        "status": message.status.value,
        "metadata": metadata_to_json(message.metadata),
        "created_at": as_utc(message.created_at),
        "writer": None,
        "heartbeat_at": None,
    }


def message_to_row(message: Message, *, session_id: str, ordinal: int) -> MessageRow:
    from threadline.store.tables import MessageRow

    values = message_values(message, session_id=session_id, ordinal=ordinal)
    values["meta"] = values.pop("metadata")
    return MessageRow(**values)


def message_from_row(row: MessageRecord) -> Message:
    # Written for speed: this runs 10,000 times when a long session opens.
    content = row.content or {}
    meta = row.meta
    return Message(
        id=row.id,
        parent_id=row.parent_id,
        role=ROLES[row.role],
        kind=KINDS[row.kind],
        text=row.text,
        images=tuple(map(_image, images)) if (images := content.get("images")) else (),
        context=tuple(map(ContextFile.from_json, context)) if (context := content.get("context")) else (),
        tool_calls=tuple(ToolCall(c["id"], c["name"], c.get("arguments", "{}")) for c in calls)
        if (calls := content.get("tool_calls"))
        else (),
        tool_results=tuple(map(_tool_result, results)) if (results := content.get("tool_results")) else (),
        status=STATUSES[row.status],
        metadata=None if meta is None else metadata_from_json(meta),
        created_at=as_utc(row.created_at),
        summarised_through=content.get("summarised_through"),
        marker=Marker.from_json(marker) if (marker := content.get("marker")) else None,
        reasoning=tuple(map(Reasoning.from_json, reasoning))
        if (reasoning := content.get("reasoning"))
        else (),
        sources=tuple(map(source_from_json, sources)) if (sources := content.get("sources")) else (),
    )


ROLES = {r.value: r for r in Role}
KINDS = {k.value: k for k in MessageKind}
STATUSES = {s.value: s for s in MessageStatus}
"""Each enum's members by their stored value."""


def content_to_json(message: Message) -> dict[str, Any]:
    """The JSON ``content`` column: everything but the text, empty parts omitted."""
    content: dict[str, Any] = {}
    if message.images:
        content["images"] = [_image_json(i) for i in message.images]
    if message.context:
        content["context"] = [c.to_json() for c in message.context]
    if message.tool_calls:
        content["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
    if message.tool_results:
        content["tool_results"] = [_tool_result_json(r) for r in message.tool_results]
    if message.summarised_through is not None:
        content["summarised_through"] = message.summarised_through
    if message.marker is not None:
        content["marker"] = message.marker.to_json()
    if message.reasoning:
        content["reasoning"] = [r.to_json() for r in message.reasoning]
    if message.sources:
        content["sources"] = [source_to_json(s) for s in message.sources]
    return content


def metadata_to_json(meta: RequestMetadata | None) -> dict[str, Any] | None:
    if meta is None:
        return None
    return {
        "provider": meta.provider,
        "model": meta.model,
        "request_id": meta.request_id,
        "started_at": _iso(meta.started_at),
        "ended_at": _iso(meta.ended_at),
        "time_to_first_token_ms": meta.time_to_first_token_ms,
        "input_tokens": meta.input_tokens,
        "output_tokens": meta.output_tokens,
        "stop_reason": meta.stop_reason,
        "error": meta.error,
        **({"edited": True} if meta.edited else {}),  # only on rewritten replies
        **({"brought_from": meta.brought_from} if meta.brought_from else {}),  # tangent copies
    }


def metadata_from_json(data: dict[str, Any] | None) -> RequestMetadata | None:
    if data is None:
        return None
    return RequestMetadata(*metadata_fields_from_json(data))


def metadata_fields_from_json(data: dict[str, Any]) -> MetadataFields:
    """``RequestMetadata``'s fields, in its order, as read from the JSON column (the values as
    stored: a foreign writer's odd types are kept, and such metadata is not packed)."""
    # The provider, model and stop reason repeat across a chat's replies: interned, a
    # 10,000-message tree holds one string of each instead of one per reply.
    return (
        _shared(data.get("provider", "")),
        _shared(data.get("model", "")),
        data.get("request_id", ""),
        _from_iso(data.get("started_at")),
        _from_iso(data.get("ended_at")),
        data.get("time_to_first_token_ms"),
        data.get("input_tokens"),
        data.get("output_tokens"),
        _shared(data.get("stop_reason", "")),
        data.get("error", ""),
        bool(data.get("edited", False)),
        str(data.get("brought_from", "")),
    )


def _shared(value: Any) -> Any:
    """One string object for a value that repeats across many rows (``sys.intern``); others as they are."""
    return intern(value) if type(value) is str else value


def preview_of(text: str) -> str:
    """The sidebar preview: the first non-blank line, at most ``PREVIEW_LIMIT`` characters.

    A code fence's own line (```` ```python ````) is not shown by the chat, so the preview
    starts at the code under it instead."""
    line = next((s for ln in text.splitlines() if (s := ln.strip()) and not _FENCE.match(s)), "")
    return line[:PREVIEW_LIMIT]


_FENCE = re.compile(r"(`{3,}|~{3,})[^`]*$")


PREVIEW_KINDS = frozenset({MessageKind.PROMPT, MessageKind.RESPONSE, MessageKind.TOOL_CALLS})
"""Kinds whose text is something a person wrote or a model said. A compaction summary,
tool results and the reason of cancelled tool calls are records, not conversation: a
summary in the sidebar reads as if the model had just said it."""


def message_preview(message: Message) -> str:
    """The preview ``message`` gives the sidebar; "" (keep the current one) for a record."""
    return preview_of(message.text) if message.kind in PREVIEW_KINDS else ""


# -- sessions -----------------------------------------------------------------------


def session_from_row(row: SessionRow | sa.Row[Any]) -> SessionInfo:
    return SessionInfo(
        id=row.id,
        title=row.title,
        title_set_by_user=row.title_set_by_user,
        pinned=row.pinned,
        archived=row.archived,
        folder=row.folder,
        agent_id=row.agent_id,
        provider=row.provider,
        model=row.model,
        active_leaf=row.active_leaf,
        preview=row.preview,
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
        checkpoints=dict(row.checkpoints or {}),
        context=StickyContext.from_json(row.context),
        project_id=row.project_id,
    )


def project_from_row(row: ProjectRow | sa.Row[Any]) -> Project:
    return Project(
        id=row.id,
        name=row.name,
        colour=row.colour,
        instructions=row.instructions,
        context=StickyContext.from_json(row.context),
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
    )


def project_to_row(project: Project) -> ProjectRow:
    from threadline.store.tables import ProjectRow

    return ProjectRow(
        id=project.id,
        name=project.name,
        colour=project.colour,
        instructions=project.instructions,
        context=project.context.to_json(),
        created_at=project.created_at,
        updated_at=project.updated_at,
    )


# -- configuration --------------------------------------------------------------------


def provider_to_row(config: ProviderConfig) -> ProviderRow:
    from threadline.store.tables import ProviderRow

    return ProviderRow(
        name=config.name,
        kind=config.kind.value,
        base_url=config.base_url,
        api_key_env=config.api_key_env,
        default_model=config.default_model,
        headers=header_sources(config.headers),
        connect_timeout=config.connect_timeout,
        first_byte_timeout=config.first_byte_timeout,
    )


def provider_from_row(row: ProviderRow | sa.Row[Any]) -> ProviderConfig:
    return ProviderConfig(
        name=row.name,
        kind=ProviderKind(row.kind),
        base_url=row.base_url,
        api_key_env=row.api_key_env,
        default_model=row.default_model,
        headers=headers_from_sources(row.headers),
        connect_timeout=row.connect_timeout,
        first_byte_timeout=row.first_byte_timeout,
    )


def header_sources(headers: tuple[tuple[str, str], ...]) -> list[list[str]]:
    """What a provider row keeps of its headers: each name, and where its value comes from.

    ``[name, ""]``: the value is in the system keychain; ``[name, "${VAR}"]``: it is read from
    that environment variable. Never a value: a header's name does not tell whether it is a
    credential (``X-Org``, ``GH_PAT`` ...). The engine puts typed values in the keychain before
    it saves (``credentials.store_headers``); a value that reaches here anyway is not written.
    """
    return [[name, value if env_reference(value) is not None else ""] for name, value in headers]


def stored_header_sources(stored: Any) -> list[list[str]]:
    """``header_sources`` of a ``headers`` column as any version wrote it: pairs, or a mapping.

    Versions before migration 0010 could leave values there; those are dropped here (the
    migration moved them to the keychain first).
    """
    if isinstance(stored, dict):
        pairs = [(str(k), "" if v is None else str(v)) for k, v in stored.items()]
    else:
        pairs = [
            (str(e[0]), "" if len(e) < 2 or e[1] is None else str(e[1]))
            for e in stored or ()
            if isinstance(e, list | tuple) and e
        ]
    return header_sources(tuple(pairs))


def headers_from_sources(sources: Any) -> tuple[tuple[str, str], ...]:
    """The headers of a provider row: ``STORED_IN_KEYCHAIN`` or ``${VAR}`` as each value."""
    return tuple(
        (name, source if env_reference(source) is not None else STORED_IN_KEYCHAIN)
        for name, source in stored_header_sources(sources)
    )


def agent_to_row(agent: AgentConfig) -> AgentRow:
    from threadline.store.tables import AgentRow

    return AgentRow(
        id=agent.id,
        name=agent.name,
        system_prompt=agent.system_prompt,
        provider=agent.provider,
        model=agent.model,
        temperature=agent.temperature,
        max_tokens=agent.max_tokens,
        enabled_tools=list(agent.enabled_tools),
        approval_rules=[
            {"pattern": r.pattern, "approval": r.approval.value, "argument_pattern": r.argument_pattern}
            for r in agent.approval_rules
        ],
        allowed_folders=list(agent.allowed_folders),
        default_approval=agent.default_approval.value,
        top_p=agent.top_p,
        context={**agent.context.to_json(), **_reasoning_settings(agent)},
        context_share=None if agent.context_share == DEFAULT_CONTEXT_SHARE else agent.context_share,
    )


def _reasoning_settings(agent: AgentConfig) -> dict[str, Any]:
    """An agent's thinking switches, kept beside its sticky context in the ``context`` JSON
    column (a column of their own would need a migration; StickyContext ignores the key)."""
    settings: dict[str, Any] = {}
    if agent.reasoning_effort:
        settings["reasoning_effort"] = agent.reasoning_effort
    if agent.thinking_budget is not None:
        settings["thinking_budget"] = agent.thinking_budget
    return {"reasoning": settings} if settings else {}


def agent_from_row(row: AgentRow | sa.Row[Any]) -> AgentConfig:
    reasoning = (row.context or {}).get("reasoning") or {}
    return AgentConfig(
        id=row.id,
        name=row.name,
        system_prompt=row.system_prompt,
        provider=row.provider,
        model=row.model,
        temperature=row.temperature,
        max_tokens=row.max_tokens,
        enabled_tools=tuple(row.enabled_tools),
        approval_rules=tuple(
            ApprovalRule(
                pattern=r["pattern"],
                approval=Approval(r["approval"]),
                argument_pattern=r.get("argument_pattern", ""),
            )
            for r in row.approval_rules
        ),
        allowed_folders=tuple(row.allowed_folders),
        default_approval=Approval(row.default_approval),
        top_p=row.top_p,
        context=StickyContext.from_json(row.context),
        context_share=DEFAULT_CONTEXT_SHARE if row.context_share is None else row.context_share,
        reasoning_effort=str(reasoning.get("reasoning_effort") or ""),
        thinking_budget=budget if isinstance(budget := reasoning.get("thinking_budget"), int) else None,
    )


# -- helpers --------------------------------------------------------------------------


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime (naive values are taken to be UTC already)."""
    tz = value.tzinfo
    if tz is UTC:
        return value
    return value.replace(tzinfo=UTC) if tz is None else value.astimezone(UTC)


def json_value(value: Any) -> Any:
    """A JSON column fetched raw: text on SQLite, already decoded by psycopg on PostgreSQL."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def datetime_value(value: datetime | str) -> datetime:
    """A timestamp column fetched raw: ISO text (naive UTC) on SQLite, a datetime elsewhere."""
    return as_utc(datetime.fromisoformat(value) if isinstance(value, str) else value)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else as_utc(value).isoformat()


def _from_iso(value: str | None) -> datetime | None:
    return None if not value else as_utc(datetime.fromisoformat(value))


def _image_json(image: ImageBlock) -> dict[str, str]:
    data = {"media_type": image.media_type, "data": image.data}
    if image.name:
        data["name"] = image.name
    return data


def _image(data: dict[str, str]) -> ImageBlock:
    return ImageBlock(media_type=data["media_type"], data=data["data"], name=data.get("name", ""))


def _tool_result_json(result: ToolResult) -> dict[str, Any]:
    data: dict[str, Any] = {"call_id": result.call_id, "text": result.text}
    if result.images:
        data["images"] = [_image_json(i) for i in result.images]
    if result.is_error:
        data["is_error"] = True
    if result.tool_name:
        data["tool_name"] = result.tool_name
    if result.resources:
        data["resources"] = [_resource_json(r) for r in result.resources]
    return data


def _resource_json(ref: ResourceRef) -> dict[str, Any]:
    data: dict[str, Any] = {"server": ref.server, "uri": ref.uri}
    for key in ("name", "mime_type", "text", "size"):
        if (value := getattr(ref, key)) not in ("", None):
            data[key] = value
    if ref.embedded:
        data["embedded"] = True
    return data


def _resource(data: dict[str, Any]) -> ResourceRef:
    return ResourceRef(
        server=data.get("server", ""),
        uri=data.get("uri", ""),
        name=data.get("name", ""),
        mime_type=data.get("mime_type", ""),
        embedded=bool(data.get("embedded", False)),
        text=data.get("text"),
        size=data.get("size"),
    )


def _tool_result(data: dict[str, Any]) -> ToolResult:
    return ToolResult(
        call_id=data["call_id"],
        text=data.get("text", ""),
        images=tuple(_image(i) for i in data.get("images", ())),
        is_error=bool(data.get("is_error", False)),
        tool_name=data.get("tool_name", ""),
        resources=tuple(_resource(r) for r in data.get("resources", ())),
    )
