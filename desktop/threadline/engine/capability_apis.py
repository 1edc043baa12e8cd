"""The protocols of the engine's capability facets: what the tools changed on disk, MCP
prompts and resources, servers, people and bundles, local models and knowledge bases.

Kept apart from ``engine/api.py`` (the conversation facets and ``EngineApi``, which names
these too and re-exports them) so neither file grows with each capability; callers may import
them from either module.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from threadline.core.file_changes import ChangeSet, FileChange, FileDiff, RestorePlan, TurnChanges
from threadline.core.knowledge import AttachScope, KnowledgeBase
from threadline.core.mcp_catalog import (
    CatalogChange,
    PromptInfo,
    PromptTurn,
    ResourceInfo,
    ResourceTemplateInfo,
)
from threadline.core.memory import Memory, MemoryScope
from threadline.core.messages import ContextFile, ImageBlock, Message

if TYPE_CHECKING:
    from threadline.core.session import SearchHit
    from threadline.engine.extensions import ExtensionPreview, InstalledExtension
    from threadline.engine.memory import MemorySettings
    from threadline.engine.models import FileChoice
    from threadline.engine.voice import ReadingState
    from threadline.knowledge import FileProblem, IndexReport, Progress, SearchResult
    from threadline.models.download import DownloadJob
    from threadline.models.fit import Fit
    from threadline.models.hub import HubFile, HubModel
    from threadline.models.library import InstalledModel
    from threadline.models.machine import Machine
    from threadline.models.runtime import RuntimeSettings
    from threadline.tools.mcp.calls import CallProgress
    from threadline.tools.mcp.details import ServerDetails
    from threadline.tools.mcp.person import McpPerson
    from threadline.tools.mcp.server_log import LogEntry
    from threadline.tools.mcp.state import ServerState
    from threadline.voice.settings import VoiceSettings
    from threadline.voice.speechd import SystemVoiceInfo
    from threadline.web.config import WebConfig, WebProvider
    from threadline.workspace.blobs import SpaceUsed

Unsubscribe = Callable[[], None]


class WorkspaceApi(Protocol):
    """``engine.workspace`` (``engine/workspace.py``): what the tools changed on disk and the way
    back (docs/workspace.md). Plans raise ``WorkspaceError`` (an ``EngineError``) for a checkpoint
    or turn that is not there; ``FileChangesRecorded`` tells an open tab of each new change set."""

    @property
    def machine(self) -> str:
        """This computer's id: change sets of another machine are listed but cannot be restored."""
        ...

    async def change_sets(self, session_id: str) -> list[ChangeSet]:
        """Every change set of the session (tool calls and restores, all branches), oldest first."""
        ...

    async def turn_changes(self, session_id: str) -> list[TurnChanges]:
        """The turns of the shown path that changed files, numbered from 1 (restores left out)."""
        ...

    async def file_diff(self, change: FileChange) -> FileDiff: ...
    async def plan_checkpoint(self, session_id: str, name: str) -> RestorePlan:
        """Files as they were when the checkpoint's message was written."""
        ...

    async def plan_before_turn(self, session_id: str, number: int) -> RestorePlan:
        """Files as they were before turn ``number``'s tools ran."""
        ...

    async def plan_undo_turn(self, session_id: str, number: int) -> RestorePlan:
        """Undo that turn's file changes alone ("Undo this turn's file changes")."""
        ...

    async def plan_undo_restore(self, session_id: str, change_set_id: str) -> RestorePlan:
        """Undo a restore (its change set, restored)."""
        ...

    async def run_restore(self, plan: RestorePlan, forced: Collection[str] = ()) -> ChangeSet:
        """Apply the clean steps and the conflicts the user picked; the restore's own change set."""
        ...

    async def space_used(self) -> SpaceUsed:
        """The snapshots' size on this computer (Settings → Data)."""
        ...

    async def drop_snapshots_older_than(self, days: float) -> int:
        """Drop contents only older change sets refer to; how many blobs went."""
        ...


class McpCatalogApi(Protocol):
    """``engine.mcp`` (``engine/mcp_catalog.py``): the MCP servers' prompts and resources
    (docs/mcp.md, "Prompts and resources"). Failures raise ``McpCatalogError`` (an
    ``EngineError``) with a message for the user."""

    def known_prompts(self) -> list[PromptInfo]:
        """The prompts listed so far (the composer's ``/`` list shows them at once)."""
        ...

    def known_prompt(self, server: str, name: str) -> PromptInfo | None: ...
    async def servers(self) -> list[str]:
        """The enabled servers' names."""
        ...

    async def refresh_prompts(self) -> list[PromptInfo]:
        """List every enabled server's prompts again (no sign in is started for it)."""
        ...

    async def prompts(self, server: str) -> list[PromptInfo]: ...
    async def find_prompt(self, server: str, name: str) -> PromptInfo: ...
    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> PromptTurn:
        """The prompt's messages as the user's turn (text, images, embedded resources)."""
        ...

    async def complete_prompt(
        self, server: str, prompt: str, argument: str, value: str, context: dict[str, str] | None = None
    ) -> list[str]:
        """The server's suggestions for an argument as typed so far."""
        ...

    async def resources(self, server: str) -> list[ResourceInfo]: ...
    async def templates(self, server: str) -> list[ResourceTemplateInfo]: ...
    async def complete_template(
        self, server: str, template: str, variable: str, value: str, context: dict[str, str] | None = None
    ) -> list[str]: ...
    async def read(self, server: str, uri: str) -> list[ContextFile | ImageBlock]:
        """A resource as attachments (text as a context file, an image as an image)."""
        ...

    async def read_bytes(self, server: str, uri: str) -> bytes:
        """A resource's contents as bytes (text as UTF-8), to save to a file."""
        ...

    async def subscribe(self, server: str, uri: str, *, on: bool = True) -> bool:
        """Be told of changes to ``uri`` (``watch``); False when the server cannot tell."""
        ...

    def watch(self, callback: Callable[[CatalogChange], None]) -> Unsubscribe:
        """``callback(change)`` when a server's prompts, resources or a subscribed resource change."""
        ...


class ExtensionsApi(Protocol):
    """``engine.extensions`` (``engine/extensions.py``): MCP bundles (``.mcpb``) installed as MCP
    servers, updated and removed. Failures raise ``ExtensionError`` (an ``EngineError``) saying why."""

    async def installed(self) -> list[InstalledExtension]: ...
    async def preview(self, path: Path) -> ExtensionPreview:
        """The bundle's manifest and the command it will run; nothing is written."""
        ...

    async def install(self, path: Path, values: dict[str, Any] | None = None) -> InstalledExtension:
        """Install or update (a newer version replaces the old, answers kept unless given)."""
        ...

    async def remove(self, name: str) -> None:
        """Remove the MCP server; an extension's files and secret settings go too."""
        ...


class McpPeopleApi(Protocol):
    """``engine.mcp_people`` (``engine/mcp_people.py``): the window as the person behind the MCP
    servers (their questions, pages and sign ins), and the progress of their tool calls."""

    def set_person(self, person: McpPerson | None) -> None: ...
    def asking_session(self) -> str:
        """The conversation whose tool call needs this sign in ("" from Settings or a script)."""
        ...

    def subscribe_progress(self, callback: Callable[[CallProgress], None]) -> Unsubscribe: ...


class McpServersApi(Protocol):
    """``engine.mcp_servers`` (``engine/mcp_servers.py``): Settings → MCP's details of a server, its
    log and log level, and signing in and out (start, stop and edit stay on ``tool_servers``)."""

    async def details(self, name: str) -> ServerDetails | None: ...
    async def log(self, name: str) -> list[LogEntry]: ...
    async def subscribe_log(self, name: str, callback: Callable[[LogEntry], None]) -> Unsubscribe: ...
    async def set_log_level(self, name: str, level: str) -> None: ...
    async def sign_in(self, name: str) -> ServerState:
        """Raises ``SignInError`` (with a ``user_message``) when the sign in fails or times out."""
        ...

    async def sign_out(self, name: str) -> ServerState: ...


class ModelsApi(Protocol):
    """``engine.models`` (``engine/models.py``): local GGUF models (docs/local-models.md): the Hub
    search, a model's quantisations with their fit, the models folder and the download queue.
    Failures raise ``ModelError`` (with a ``user_message``)."""

    @property
    def folder(self) -> Path: ...
    @property
    def default_folder(self) -> Path: ...
    def set_folder(self, folder: Path) -> None:
        """This computer's models folder from now on (kept in the data folder)."""
        ...

    @property
    def endpoint(self) -> str: ...
    def machine(self, fresh: bool = False) -> Machine: ...
    async def search(self, text: str) -> list[HubModel]: ...
    async def files(self, repo: str, context: int = ...) -> list[FileChoice]:
        """The repository's GGUF files, each with its size and whether it fits at ``context``."""
        ...

    async def installed(self) -> list[InstalledModel]: ...
    def fit_of(self, model: InstalledModel, context: int = ...) -> Fit: ...
    async def import_file(self, path: Path) -> InstalledModel:
        """A GGUF the user has, checked (magic, version, architecture), into the folder."""
        ...

    async def remove(self, name: str) -> None: ...
    async def pull(self, repo: str, name: str) -> DownloadJob:
        """Queue a file of the Hub; a part of the same file on disk is resumed."""
        ...

    def download(self, file: HubFile) -> DownloadJob: ...
    def downloads(self) -> list[DownloadJob]: ...
    def pause(self, job_id: str) -> None: ...
    def resume(self, job_id: str) -> None: ...
    def cancel(self, job_id: str) -> None:
        """Stop and delete the partial file."""
        ...

    async def wait(self, job_id: str) -> DownloadJob:
        """Until the download is done, failed, paused or cancelled."""
        ...

    def subscribe(self, listener: Callable[[DownloadJob], None]) -> Callable[[], None]:
        """Called on the loop at each change (progress at most five times a second)."""
        ...

    def has_models(self) -> bool: ...
    def runtime_settings(self) -> RuntimeSettings:
        """Context size, GPU layers, idle minutes and the ``llama-server`` binary (this computer's)."""
        ...

    def set_runtime_settings(self, settings: RuntimeSettings) -> None: ...
    def runtime_installed(self) -> bool:
        """Whether a model can be run: ``threadline[local]`` installed or a ``llama-server`` chosen."""
        ...

    async def runtime_status(self) -> dict[str, Any] | None:
        """The running runtime's model, pid and port, or ``None``."""
        ...

    @property
    def runtime_log(self) -> Path:
        """The runtime's log file (what it printed while loading and serving)."""
        ...

    async def stop_runtime(self) -> None: ...


class KnowledgeApi(Protocol):
    """``engine.knowledge`` (``engine/knowledge.py``): knowledge bases, their local index and search
    (docs/knowledge.md). Failures raise ``KnowledgeError`` (an ``EngineError``) saying why."""

    async def bases(self) -> list[KnowledgeBase]: ...
    async def add(
        self, name: str, paths: Sequence[Path], *, embed_provider: str = "", embed_model: str = ""
    ) -> KnowledgeBase:
        """Define a base; nothing is read until ``index``."""
        ...

    async def remove(self, name: str) -> None:
        """The base and its index go; the user's files are not touched."""
        ...

    async def attach(
        self, name: str, scope: AttachScope, target: str, *, attached: bool = True
    ) -> KnowledgeBase:
        """Attach the base to a project, an agent or a chat (by id), or detach it."""
        ...

    async def index(
        self,
        name: str,
        on_progress: Callable[[Progress], None] | None = None,
        *,
        patience: float | None = None,
    ) -> IndexReport:
        """Bring the index up to date (only what changed); ``on_progress`` runs on the worker thread.
        ``patience``: seconds to wait for an embedding server that does not answer (``None``: until
        it answers or the run is paused)."""
        ...

    def cancel(self, name: str) -> bool:
        """Stop indexing after the current file and drop the wish to finish it (no resume at the
        next start; a later ``index`` still carries on from what is done)."""
        ...

    def indexing(self, name: str) -> bool: ...
    async def totals(self, name: str) -> tuple[int, int, int]:
        """(files, chunks, characters) indexed."""
        ...

    async def unembedded(self, name: str) -> int:
        """Chunks of the base that have no vector yet (the embedding server did not answer)."""
        ...

    async def drop_index(self, name: str) -> None:
        """Forget the base's index; the next ``index`` rebuilds it."""
        ...

    async def search(self, name: str, query: str, limit: int = 8) -> SearchResult:
        """Hybrid search; ``notice`` says when it was keyword-only and why."""
        ...

    async def set_pinned(self, session_id: str, message_id: str, position: int, pinned: bool) -> Message:
        """Pin or unpin a reply's source (by its position); a pinned source is sent with every turn."""
        ...

    def pause(self, name: str) -> bool:
        """Stop indexing after the current file, keeping the wish to finish: ``resume`` or the next
        start carries on. Whether one was running."""
        ...

    def resume(self, name: str) -> bool:
        """Carry on (or start) the base's indexing in the background; whether one was started."""
        ...

    def progress(self, name: str) -> Progress | None:
        """The running indexing's progress (also a background one), else ``None``."""
        ...

    def last_report(self, name: str) -> IndexReport | None:
        """The last indexing's report in this run of the app: problems per file, notices."""
        ...

    async def unfinished(self) -> list[str]:
        """Bases whose indexing was asked for and not finished (paused, or cut short by a close)."""
        ...

    def start(self) -> None:
        """Keep bases current in the background: resume unfinished indexings, watch attached
        bases' folders. The app's engine calls it; a command-line run does not."""
        ...

    async def edit(
        self,
        name: str,
        *,
        new_name: str | None = None,
        paths: Sequence[Path] | None = None,
        embed_provider: str | None = None,
        embed_model: str | None = None,
    ) -> KnowledgeBase:
        """Change a base's name, folders or embedding model (``None`` keeps a field); another
        embedding model drops the index, which the next ``index`` rebuilds."""
        ...

    async def problems(self, name: str) -> list[FileProblem]:
        """The files that could not be read at their last indexing, with the reason."""
        ...

    async def excluded(self, session_id: str) -> frozenset[str]:
        """The ``passage_key`` of each passage excluded from the chat."""
        ...

    async def set_excluded(
        self, session_id: str, message_id: str, position: int, excluded: bool
    ) -> frozenset[str]:
        """Leave a reply's source out of the chat's next turns (or take it back); the new set."""
        ...


class VoiceApi(Protocol):
    """``engine.voice`` (``engine/voice.py``): replies read aloud and recordings turned into text
    (docs/voice.md). Failures raise ``VoiceError`` (an ``EngineError``) saying why."""

    @property
    def settings(self) -> VoiceSettings: ...
    def save_settings(self, settings: VoiceSettings) -> None:
        """This computer's voice settings from now on (kept in the data folder)."""
        ...

    async def system_voices(self) -> list[SystemVoiceInfo]: ...
    @property
    def state(self) -> ReadingState: ...
    def watch(self, observer: Callable[[ReadingState], None]) -> Unsubscribe:
        """Every change of what the voice does, on the event loop's thread."""
        ...

    async def read_message(self, session_id: str, message_id: str) -> None:
        """Read a stored reply aloud (stopping what was read before)."""
        ...

    async def read_text(self, markdown: str) -> None:
        """Read ``markdown`` aloud (no chat's reply)."""
        ...

    async def read_streaming(self, session_id: str) -> None:
        """Read the reply streaming in the chat as its sentences complete, until the turn ends."""
        ...

    async def stop(self) -> None: ...
    async def pause(self) -> None: ...
    def resume(self) -> None: ...
    async def speech_file(self, markdown: str, path: Path) -> None:
        """``markdown`` as it is read aloud, written to the WAV file ``path``."""
        ...

    async def transcribe(self, recording: Path, *, provider: str = "", model: str = "") -> str:
        """The text spoken in the WAV file ``recording``."""
        ...

    async def input_devices(self) -> list[str]:
        """The microphones, the system's default first."""
        ...

    @property
    def dictating(self) -> bool: ...
    async def start_dictation(self, on_level: Callable[[float, float], None]) -> None:
        """Open the microphone; ``on_level(level, seconds)`` on the loop's thread until it ends."""
        ...

    def stop_dictation(self) -> None: ...
    async def finish_dictation(self) -> str:
        """Wait for the recording's end (stopped, or quiet after speech); its text."""
        ...


class MemoryApi(Protocol):
    """``engine.memory`` (``engine/memory.py``): saved memories, the memory switch and how far
    ``search_past_chats`` reaches (docs/memory.md). Changes raise ``MemoryChangeError`` (an
    ``EngineError``) for an empty or too long text or a memory deleted meanwhile."""

    @property
    def enabled(self) -> bool:
        """Memory is on: memories reach requests and the memory tools are offered."""
        ...

    async def settings(self) -> MemorySettings: ...
    async def set_settings(self, settings: MemorySettings) -> None: ...
    async def memories(self) -> list[Memory]:
        """Every memory, oldest first."""
        ...

    async def add(self, text: str, scope: MemoryScope = ..., target: str = "") -> Memory:
        """Save a new memory; ``target`` is the project's or agent's id for those scopes."""
        ...

    async def edit(
        self, memory_id: str, text: str, scope: MemoryScope | None = None, target: str | None = None
    ) -> Memory: ...
    async def delete(self, memory_id: str) -> None: ...
    async def for_turn(self, agent_id: str, project_id: str | None) -> list[Memory]:
        """The memories a turn of that agent in that project sends (none while memory is off)."""
        ...

    async def search_past_chats(self, session_id: str, query: str, limit: int) -> list[SearchHit]:
        """What ``search_past_chats`` finds from that chat (its scope applied, itself left out)."""
        ...


class WebApi(Protocol):
    """``engine.web`` (``engine/web.py``): the web search provider, its key and the local-address
    switch (docs/web.md). Failures raise ``WebSettingsError`` (an ``EngineError``) saying why."""

    async def config(self) -> WebConfig: ...
    async def use(
        self,
        provider: WebProvider,
        *,
        searxng_url: str = "",
        api_key: str | None = None,
        api_key_env: str | None = None,
    ) -> WebConfig:
        """Choose the provider; a typed ``api_key`` goes to the keychain only."""
        ...

    async def set_allow_local(self, allowed: bool) -> WebConfig: ...
    async def has_key(self, provider: WebProvider) -> bool:
        """Whether the keychain holds a key for ``provider``."""
        ...

    async def test(self, config: WebConfig, api_key: str | None = None) -> str:
        """One test search with ``config``; what happened, in a sentence."""
        ...
