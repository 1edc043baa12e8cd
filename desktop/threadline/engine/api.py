"""The engine's interface as the UI and the command line use it.

Widgets never touch providers or the database (docs/design.md §2): everything they
need goes through these protocols. ``EngineApi`` is the engine's small core (the page
cache, the tools) and names its facets, each a small protocol of its own
(``SessionsApi``, ``TurnsApi``, ``LibraryApi``, ``AgentsApi``, ``ProjectsApi``,
``MessagesApi``, ``ControlsApi``, ``ProvidersApi``, ``SettingsApi``, ``DatabaseApi``; the
capability facets' protocols — workspace, MCP, models, knowledge — are in
``engine/capability_apis.py``), so a room's calls read as ``engine.turns.send(...)`` or
``engine.sessions.delete_session(...)``. The window and the command line type against the same protocols.
``threadline.engine.engine.Engine`` is the implementation; keeping the interface here
lets the UI be read (and type checked) against what it may call, not against the
engine's internals.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from threadline.core.compare import CompareTarget
from threadline.core.config import AgentConfig, ModelInfo, ProviderConfig
from threadline.core.conversation import Conversation, InterruptedTools
from threadline.core.gathered_context import GatheredContext
from threadline.core.messages import ContextFile, ImageBlock, Message
from threadline.core.meter import ContextMeter
from threadline.core.pricing import UserPrice
from threadline.core.project import Project
from threadline.core.session import SearchHit, SessionInfo
from threadline.core.sticky import StickyContext
from threadline.core.tree import ConversationTree
from threadline.engine.approval import ApprovalHandler
from threadline.engine.capability_apis import (  # EngineApi names them
    ExtensionsApi,
    KnowledgeApi,
    McpCatalogApi,
    McpPeopleApi,
    McpServersApi,
    MemoryApi,
    ModelsApi,
    VoiceApi,
    WorkspaceApi,
)
from threadline.engine.drafts import Draft
from threadline.engine.events import ConversationEvent, SessionEvent
from threadline.engine.exporting import ExportFormat, ExportProgress
from threadline.engine.usage_report import PriceBook, SessionUsage

if TYPE_CHECKING:
    from threadline.engine.agents import SessionAgent
    from threadline.engine.database_choice import DatabaseChoice, ServerChoice
    from threadline.engine.database_probe import ProbeResult
    from threadline.engine.database_setup import CopyResult
    from threadline.engine.knowledge import SentKnowledge
    from threadline.interchange.model import ImportProgress, ImportReport
    from threadline.tools.mcp.manager import McpServerManager
    from threadline.tools.registry import ToolRegistry

Unsubscribe = Callable[[], None]


class LiveConversationApi(Protocol):
    """The one live conversation of a session; tabs hold a reference, never a copy."""

    @property
    def session_id(self) -> str: ...

    @property
    def info(self) -> SessionInfo: ...

    @property
    def conversation(self) -> Conversation:
        """Read-only use: ``path()``, ``tree``, ``state``, ``ready_for_input``."""
        ...

    def subscribe(self, callback: Callable[[ConversationEvent], None]) -> Unsubscribe: ...

    @property
    def last_context(self) -> GatheredContext | None:
        """The sticky context of the latest request (``ContextGathered`` announces each)."""
        ...

    @property
    def last_knowledge(self) -> SentKnowledge | None:
        """The knowledge passages sent with the latest request (the reply keeps them as ``sources``)."""
        ...


class SessionsApi(Protocol):
    """``engine.sessions`` (``engine/registry.py``): one live conversation per session, and the
    lifecycle of sessions (open, close, create, list, archive, delete with undo, fork), told
    to every session observer."""

    async def open_session(self, session_id: str) -> LiveConversationApi: ...
    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session as stored now, or ``None`` when there is none."""
        ...

    async def stored_tree(self, session_id: str) -> ConversationTree:
        """The tree as the database holds it now (not an open conversation's memory)."""
        ...

    def live(self, session_id: str) -> LiveConversationApi | None: ...
    async def close_session(self, session_id: str) -> None: ...
    async def new_session(
        self, title: str = "", *, project_id: str | None = None, agent_id: str | None = None
    ) -> SessionInfo:
        """A session pinned to the agent, provider and model used last (in ``project_id`` if given);
        with ``agent_id``, that agent and its model when it names one."""
        ...

    async def list_sessions(
        self,
        *,
        archived: bool = False,
        limit: int = 500,
        offset: int = 0,
        after: SessionInfo | None = None,
        project_id: str | None = None,
    ) -> list[SessionInfo]:
        """A page in sidebar order (pinned, then recent); ``after`` continues past that session;
        ``project_id`` keeps to that project's chats."""
        ...

    async def search_sessions(
        self, query: str, *, limit: int = 50, archived: bool | None = None, project_id: str | None = None
    ) -> list[SessionInfo]:
        """Sessions whose title holds every word of ``query`` (``archived``: only that list)."""
        ...

    async def rename_session(self, session_id: str, title: str) -> None: ...
    async def pin_session(self, session_id: str, pinned: bool) -> None: ...
    async def archive_session(self, session_id: str, archived: bool) -> None:
        """Archiving stops a running turn (its text is kept) and closes the live conversation."""
        ...

    async def delete_session(self, session_id: str) -> None:
        """Remove now (``SessionRemoved``), delete from the store after the undo window."""
        ...

    async def restore_session(self, session_id: str) -> SessionInfo | None:
        """Undo a pending delete (``SessionRestored``); ``None`` when it is too late."""
        ...

    def pending_deletes(self) -> list[str]: ...
    async def purge_deleted(self) -> None:
        """Delete every session still waiting for its undo window (the app is closing)."""
        ...

    async def fork_session(self, session_id: str, leaf_id: str | None = None) -> SessionInfo:
        """A copy of the path to ``leaf_id`` as a new session (``SessionForked``)."""
        ...

    def subscribe_sessions(self, callback: Callable[[SessionEvent], None]) -> Unsubscribe: ...
    async def get_draft(self, session_id: str) -> Draft | None:
        """The session's unsent prompt (text and attachments), kept across restarts."""
        ...

    async def save_draft(self, session_id: str, draft: Draft | None) -> None: ...

    async def set_session_model(self, session_id: str, provider: str, model: str) -> None:
        """Pin a model to the session; new chats start with it too."""
        ...

    async def set_session_context(self, session_id: str, context: StickyContext) -> SessionInfo:
        """Store the session's own sticky context; the next request reads it."""
        ...


class ProvidersApi(Protocol):
    """``engine.providers`` (``engine/provider_settings.py``): providers, their keys (in the
    keychain) and their model lists."""

    async def list_providers(self) -> list[ProviderConfig]: ...
    async def get_provider(self, name: str) -> ProviderConfig | None: ...
    async def model_for(self, session: SessionInfo, agent: AgentConfig) -> str:
        """The model a turn of ``session`` would use with ``agent`` (``SetupError``: none named)."""
        ...

    async def save_provider(
        self, config: ProviderConfig, api_key: str | None = None, *, previous_name: str | None = None
    ) -> None: ...
    async def remove_provider(self, name: str) -> None: ...
    async def list_models(self, provider: str) -> list[ModelInfo]: ...
    def remember_models(self, provider: str, models: list[ModelInfo]) -> None:
        """A listing saved earlier (the window's model list): its context windows count at once."""

    async def detect_local_servers(self) -> list[ProviderConfig]: ...
    def has_api_key(self, provider: str) -> bool: ...


class SettingsApi(Protocol):
    """``engine.settings`` (``engine/provider_settings.py``): stored settings, and what an
    upgrade has to tell the user."""

    async def get_setting(self, key: str, default: Any = None) -> Any: ...
    async def set_setting(self, key: str, value: Any) -> None: ...
    async def take_notices(self) -> list[str]:
        """What an upgrade has to tell the user, once (the window shows each, then they are gone)."""
        ...


class AgentsApi(Protocol):
    """``engine.agents`` (``engine/agent_sessions.py``): the agent library, and where it meets
    open chats (a saved agent is offered to the tabs that pinned it; a deleted one's chats fall
    back to the default agent)."""

    async def get_agent(self, agent_id: str = "default") -> AgentConfig: ...
    async def find_agent(self, name_or_id: str) -> AgentConfig | None:
        """The agent with this id or name (case-insensitive), or ``None``: the command line's ``--agent``."""
        ...

    async def save_agent(self, agent: AgentConfig) -> None:
        """Store an edited agent (``AgentError``: a taken name); open chats are offered the change."""
        ...

    async def list_agents(self) -> list[AgentConfig]:
        """Every agent, the default one first."""
        ...

    async def create_agent(self, agent: AgentConfig) -> AgentConfig:
        """Store a new agent (its id is made here); ``AgentError`` when the name is taken."""
        ...

    async def duplicate_agent(self, agent_id: str) -> AgentConfig: ...
    async def delete_agent(self, agent_id: str) -> int:
        """Delete an agent; its chats fall back to the default one, marked. Returns how many."""
        ...

    async def export_agents(self, agent_ids: Sequence[str] | None = None) -> str:
        """The JSON text of an agent export (no secrets)."""
        ...

    async def import_agents(self, text: str) -> list[AgentConfig]:
        """Add the agents of an export file (``AgentFormatError`` names what is wrong)."""
        ...

    async def session_agent(self, session_id: str) -> SessionAgent:
        """The agent an open session runs with, and whether newer settings are on offer."""
        ...

    async def set_session_agent(self, session_id: str, agent_id: str) -> None:
        """Switch the agent (id or name) from the next request on; a marker records it."""
        ...

    async def use_agent_settings(self, session_id: str) -> None:
        """Take the agent's edited settings into the session (a new marker)."""
        ...


class ProjectsApi(Protocol):
    """``engine.projects`` (``engine/projects.py``): folders of chats with shared instructions
    and context."""

    async def list_projects(self) -> list[Project]:
        """Every project, by name."""
        ...

    async def project_chat_counts(self, *, archived: bool = False) -> dict[str, int]:
        """How many chats each project holds (project id → count)."""
        ...

    async def create_project(self, name: str, *, colour: str = "", instructions: str = "") -> Project:
        """A new project (``ProjectNameError`` for an empty or taken name); ``ProjectsChanged`` follows."""
        ...

    async def save_project(self, project: Project) -> Project:
        """Store an edited project: name, colour, instructions, context files."""
        ...

    async def delete_project(self, project_id: str) -> int:
        """Delete a project; its chats move out of it, nothing else is deleted. Returns how many."""
        ...

    async def set_session_project(self, session_id: str, project_id: str | None) -> None:
        """Move a chat into a project (``None``: out of any); ``SessionUpdated`` follows."""
        ...


class MessagesApi(Protocol):
    """``engine.messages`` (``engine/message_ops.py``): deleting messages undoably and editing
    replies; ``SessionBusyError`` while a turn runs."""

    async def delete_message(self, session_id: str, message_id: str) -> None:
        """Delete a message and everything below it, undoably.

        It leaves the chat at once (``MessagesRemoved``, then ``ActivePathChanged``: the
        path moves to the parent's newest remaining branch, or the parent); the stored
        rows are deleted after the undo window, when the chat closes, or at exit.
        ``SessionBusyError`` while a turn runs, ``MessageGoneError`` for an unknown id.
        """
        ...

    async def undo_delete_message(self, session_id: str, message_id: str) -> bool:
        """Bring a deleted message back exactly as it was (same ids, versions and active leaf;
        ``MessagesRestored``); False when it is too late."""
        ...

    async def edit_reply(self, session_id: str, message_id: str, text: str) -> Message:
        """Store ``text`` as a new version of a reply (complete, metadata marked ``edited``),
        make it the active one and return it; the original is kept and nothing is sent."""
        ...


class ControlsApi(Protocol):
    """``engine.controls`` (``engine/conversation_controls.py``): clear, tangents, checkpoints and
    which version of a branch shows; each raises an ``EngineError`` with the reason when refused."""

    async def clear_context(self, session_id: str) -> Message:
        """``/clear``: a marker after which requests start; nothing is deleted."""
        ...

    async def start_tangent(self, session_id: str, from_message_id: str | None = None) -> Message:
        """A side conversation below ``from_message_id`` (the active leaf); returns its marker."""
        ...

    async def end_tangent(self, session_id: str, *, bring_last_exchange: bool = False) -> None:
        """Back to the main line where it was left (optionally with the tangent's last exchange)."""
        ...

    async def set_checkpoint(self, session_id: str, name: str, message_id: str | None = None) -> None:
        """Name a point (the active leaf by default); ``CheckpointsChanged`` follows."""
        ...

    async def restore_checkpoint(self, session_id: str, name: str) -> None:
        """Show the path ending at the checkpoint's message; nothing is deleted."""
        ...

    async def remove_checkpoint(self, session_id: str, name: str) -> None: ...

    async def switch_version(self, session_id: str, message_id: str, offset: int) -> None:
        """Show the previous or next version (``offset``) of a message and the branch below it."""
        ...

    async def set_active_leaf(self, session_id: str, leaf_id: str) -> None:
        """Show another branch (a search hit on an older version, a checkpoint)."""
        ...


class TurnsApi(Protocol):
    """``engine.turns`` (``engine/turns.py``): running turns. Each call starts or stops an
    asyncio task; outcomes arrive as the live conversation's events. ``SessionBusyError``
    while a turn runs, ``SessionClosedError`` for a chat not open."""

    def send(
        self,
        session_id: str,
        text: str,
        *,
        images: Sequence[ImageBlock] = (),
        context: Sequence[ContextFile] = (),
    ) -> None: ...
    def cancel(self, session_id: str) -> None: ...
    async def stop_elsewhere(self, session_id: str) -> bool:
        """Ask the instance running a turn in this chat elsewhere to stop it (see ``engine.leases``)."""
        ...

    def send_compare(
        self,
        session_id: str,
        text: str,
        targets: Sequence[CompareTarget],
        *,
        images: Sequence[ImageBlock] = (),
        context: Sequence[ContextFile] = (),
    ) -> None:
        """One prompt to 2–4 models or agents at once (``engine/compare_runner.py``)."""
        ...

    def stop_compare_worker(self, session_id: str, index: int) -> None: ...
    async def pick_compare(self, session_id: str, reply_id: str) -> None:
        """Continue with one of a prompt's replies (during a compare, the others stop)."""
        ...

    def edit_and_resend(self, session_id: str, message_id: str, text: str) -> None: ...
    def regenerate(self, session_id: str, message_id: str) -> None: ...
    def resume(self, session_id: str, message_id: str) -> None: ...
    def retry(self, session_id: str) -> None: ...
    def rerun_interrupted_tools(self, session_id: str) -> None:
        """Run again the tool calls a crash stopped while they ran; the turn then goes on."""
        ...

    async def skip_interrupted_tools(self, session_id: str) -> None:
        """Leave the interrupted calls unrun (each is answered "interrupted")."""
        ...

    def interrupted_tools(self, session_id: str) -> InterruptedTools | None:
        """The calls a crash stopped while they ran, at the chat's last message."""
        ...

    def interrupted_tools_unsure(self, session_id: str) -> tuple[str, ...]:
        """Tools of those calls whose work may have gone on after the crash (a remote server)."""
        ...

    def running(self, session_id: str) -> bool:
        """Whether a turn (or compaction) of this session runs here now."""
        ...

    async def wait_idle(self, session_id: str) -> None:
        """Wait for the running turn, if any, to end and be stored (the command line, tests)."""
        ...

    async def compact(
        self, session_id: str, instructions: str = "", *, keep_turns: int = 2
    ) -> Message | None:
        """Summarise older messages (all of them with ``keep_turns=0``); ``None`` after a failure."""
        ...

    async def context_meter(self, session_id: str, prompt: str = "") -> ContextMeter:
        """The parts of the next request of an open session against the model's window (estimates)."""
        ...

    # -- elsewhere: another instance on the same database --------------------------------
    async def catch_up(self, session_id: str) -> None:
        """Read an open idle chat's stored tree now (a waiting message goes after the other reply)."""

    async def busy_elsewhere(self, session_id: str) -> str | None:
        """The host of another instance running a turn in this chat now, or ``None``."""

    # -- approval ----------------------------------------------------------------------------
    def set_approval_handler(self, handler: ApprovalHandler | None) -> None:
        """The inline approval prompt (Allow once / Always allow / Deny with a reason)."""
        ...


class LibraryApi(Protocol):
    """``engine.library`` (``engine/library.py``): the stored chats as a whole — search across
    them, export and import, and what their replies cost."""

    async def search(
        self, query: str, limit: int = 50, *, project_id: str | None = None
    ) -> list[SearchHit]: ...
    async def export_markdown(self, session_id: str) -> str: ...
    async def export(
        self,
        path: Path,
        fmt: ExportFormat,
        session_ids: Sequence[str] | None = None,
        progress: ExportProgress | None = None,
        *,
        include_thinking: bool = False,
    ) -> None:
        """Write the chats (``None``: all) to ``path`` as Markdown or Threadline JSON (``ExportError``);
        Markdown carries replies' reasoning only with ``include_thinking``, JSON always."""
        ...

    async def import_file(
        self, path: Path, progress: Callable[[ImportProgress], None] | None = None
    ) -> ImportReport:
        """Import an export file, each chat in its own transaction; never raises for a bad file
        (its problems are in the report); cancelling the task returns the report with ``cancelled``."""
        ...

    def export_chunks(
        self,
        fmt: ExportFormat,
        session_ids: Sequence[str] | None = None,
        progress: ExportProgress | None = None,
        *,
        include_thinking: bool = False,
    ) -> AsyncIterator[str]:
        """The text of an export a chat at a time (``export`` to standard output)."""
        ...

    async def set_price(self, price: UserPrice | None, *, provider: str, model: str) -> None:
        """Set (``None``: remove) the user's price for one provider's model."""
        ...

    async def price_book(self) -> PriceBook:
        """The prices replies are costed with."""
        ...

    async def usage(self, session_id: str, prices: PriceBook | None = None) -> SessionUsage:
        """Tokens, speed and cost of every reply of a session (all versions) and their sums."""
        ...


class DatabaseApi(Protocol):
    """``engine.database`` (``engine/database_setup.py``): which database the conversations live
    in — test a server, copy into it, choose it (or the local file) for the next start."""

    def in_use(self) -> str:
        """A sentence naming the database this window uses (no password in it)."""
        ...

    def load_choice(self) -> DatabaseChoice:
        """The choice saved for the next start (``DatabaseChoiceError``: unreadable)."""
        ...

    async def has_stored_password(self, server: ServerChoice) -> bool: ...
    async def probe(self, server: ServerChoice, password: str = "") -> ProbeResult:
        """One test connection (empty ``password``: the stored one)."""
        ...

    async def copy_to(
        self, server: ServerChoice, password: str = "", progress: Callable[[str, int], None] | None = None
    ) -> CopyResult:
        """Copy the conversations into the server's empty database and read them back."""
        ...

    async def save_server(self, server: ServerChoice, password: str = "") -> tuple[DatabaseChoice, bool]:
        """Choose the server for the next start; the choice and whether a password is stored."""
        ...

    def use_local_file(self) -> DatabaseChoice:
        """Choose the data folder's own file for the next start."""
        ...


class EngineApi(Protocol):
    """The engine as its callers hold it: the facets, the tools, and what belongs to the whole."""

    async def release_caches(self) -> None:
        """Give back the database's page cache (after a long chat was closed)."""
        ...

    async def aclose(self) -> None:
        """Stop running turns (their endings stored) and close the store, servers and clients."""
        ...

    # -- facets: helpers the engine holds, each with its own small protocol ------------------
    @property
    def sessions(self) -> SessionsApi: ...
    @property
    def turns(self) -> TurnsApi: ...
    @property
    def library(self) -> LibraryApi: ...
    @property
    def providers(self) -> ProvidersApi: ...
    @property
    def settings(self) -> SettingsApi: ...
    @property
    def agents(self) -> AgentsApi: ...
    @property
    def projects(self) -> ProjectsApi: ...
    @property
    def messages(self) -> MessagesApi: ...
    @property
    def controls(self) -> ControlsApi: ...
    @property
    def database(self) -> DatabaseApi: ...
    @property
    def workspace(self) -> WorkspaceApi: ...
    @property
    def mcp(self) -> McpCatalogApi: ...
    @property
    def extensions(self) -> ExtensionsApi: ...
    @property
    def mcp_people(self) -> McpPeopleApi: ...
    @property
    def mcp_servers(self) -> McpServersApi: ...
    @property
    def models(self) -> ModelsApi: ...
    @property
    def knowledge(self) -> KnowledgeApi: ...
    @property
    def voice(self) -> VoiceApi: ...
    @property
    def memory(self) -> MemoryApi: ...

    # -- tools ------------------------------------------------------------------------------
    @property
    def tools(self) -> ToolRegistry:
        """Read-only use in the UI: ``preview(call)`` (a diff for writes), ``needs_trust(name)``."""
        ...

    @property
    def tool_servers(self) -> McpServerManager:
        """MCP servers: list, states, save, remove, start, restart, stop, subscribe."""
        ...
