"""``engine.knowledge``: knowledge bases, their indexing, search, and the passages sent with a turn.

Definitions (name, folders, embedding model, where attached) are kept with the settings;
the index is a local file in the data folder, also when chats live on PostgreSQL
(docs/knowledge.md, "Derived local data stays local"). Nothing reads a folder until the
user asks for an index; indexing runs on a worker thread, reports progress and can be
stopped (``cancel``) and taken up again (``index`` carries on with what is not done).

At send time (``sources_for``) the bases attached to the chat, its agent or its project
are sent whole when they fit the room left in the agent's context share, otherwise as
the passages that best match the prompt; sources pinned on earlier replies of the path
are sent again. The passages become the reply's ``sources`` (``core/sources.py``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from threadline.core.ids import new_id
from threadline.core.knowledge import AttachScope, KnowledgeBase
from threadline.core.messages import Message, MessageKind
from threadline.core.sources import Source, SourceKind, SourceLocator, passage_key, quote_sources
from threadline.engine.errors import EngineError, MessageGoneError, SessionClosedError
from threadline.engine.events import KnowledgeNotice, MessageChanged
from threadline.engine.knowledge_upkeep import KnowledgeUpkeep
from threadline.knowledge import (
    Embedder,
    FileProblem,
    IndexReport,
    KnowledgeIndex,
    Progress,
    SearchResult,
    StoredChunk,
    search,
)
from threadline.knowledge.changes import refresh_changed
from threadline.knowledge.driver import errors as database_errors
from threadline.knowledge.embedding import OpenAIEmbedder, WithinDeadline
from threadline.knowledge.indexer import index_base
from threadline.llm import credentials
from threadline.store import Store

if TYPE_CHECKING:
    from threadline.core.config import AgentConfig
    from threadline.core.gathered_context import GatheredContext
    from threadline.engine.live import LiveConversation

log = logging.getLogger("threadline.engine")

BASES_SETTING = "knowledge_bases"
INDEX_FILENAME = "knowledge.sqlite3"
EXCLUDED_SETTING = "knowledge_excluded:"
"""Followed by a chat's id: the passages the user excluded from that chat (``set_excluded``)."""
PASSAGES = 6
"""Passages sent with a prompt when the attached bases do not fit whole."""
CHARS_PER_TOKEN = 4
EMBED_PATIENCE = math.inf
"""Seconds an indexing waits for an embedding server that is down before leaving the vectors to
the next run (its wish to finish is kept): in the app, until it answers or the user pauses, so the
vectors come by themselves when the server is back (docs/knowledge.md)."""
QUERY_EMBED_DEADLINE = 5.0
"""Seconds a send (or a search) waits for the embedding server, after which it goes on with keywords
and says so: a query is one short text, embedded in well under a second when the server is well
(docs/knowledge.md, "At send time")."""


class KnowledgeError(EngineError):
    default_message = "The knowledge base could not be used."


@dataclass(frozen=True, slots=True)
class SentKnowledge:
    """What a request carries from knowledge bases: the sources, their block, and any notice."""

    sources: tuple[Source, ...] = ()
    notice: str = ""

    @property
    def block(self) -> str:
        return quote_sources(self.sources)

    @property
    def tokens(self) -> int:
        return -(-len(self.block) // CHARS_PER_TOKEN)


class KnowledgeService:
    def __init__(
        self, store: Store, data_dir: Path, live: Callable[[str], LiveConversation | None] = lambda _id: None
    ) -> None:
        self._store = store
        self._live = live
        self.index_path = data_dir / INDEX_FILENAME
        self._embedders: dict[tuple[str, str], OpenAIEmbedder] = {}
        self._index: KnowledgeIndex | None = None
        self._running: dict[str, threading.Event] = {}
        self._stops: dict[str, str] = {}
        """Why a running indexing was asked to stop: "pause" keeps the wish to finish, "cancel" not."""
        self._progress: dict[str, Progress] = {}
        self._reports: dict[str, IndexReport] = {}
        self._ids: dict[str, str] = {}
        self._workers: set[asyncio.Future[IndexReport]] = set()
        self._lock = asyncio.Lock()
        self.embed_patience = EMBED_PATIENCE
        self.query_deadline = QUERY_EMBED_DEADLINE
        self.upkeep = KnowledgeUpkeep(self)

    # -- definitions -------------------------------------------------------------------

    async def bases(self) -> list[KnowledgeBase]:
        stored = await self._store.get_setting(BASES_SETTING, [])
        out = []
        for item in stored if isinstance(stored, list) else []:
            try:
                out.append(KnowledgeBase.from_json(item))
                self._ids[out[-1].name] = out[-1].id
            except (KeyError, TypeError, ValueError):
                log.warning("A stored knowledge base could not be read; it is left out.")
        return out

    async def base(self, name: str) -> KnowledgeBase:
        for base in await self.bases():
            if base.name == name:
                self._ids[name] = base.id
                return base
        raise KnowledgeError(
            f"There is no knowledge base named “{name}”. See them with `threadline kb list`."
        )

    async def add(
        self, name: str, paths: Sequence[Path], *, embed_provider: str = "", embed_model: str = ""
    ) -> KnowledgeBase:
        name = name.strip()
        if not name:
            raise KnowledgeError("Give the knowledge base a name.")
        if not paths:
            raise KnowledgeError("Name at least one folder or file for the knowledge base.")
        if embed_provider and await self._store.get_provider(embed_provider) is None:
            raise KnowledgeError(f"There is no provider named “{embed_provider}” for embeddings.")
        async with self._lock:
            bases = await self.bases()
            if any(base.name == name for base in bases):
                raise KnowledgeError(f"A knowledge base named “{name}” exists already. Choose another name.")
            base = KnowledgeBase(
                new_id(),
                name,
                await asyncio.to_thread(_absolute, paths),
                embed_provider,
                embed_model,
            )
            await self._save([*bases, base])
        self.upkeep.bases_changed()
        return base

    async def remove(self, name: str) -> None:
        """The base and its index go; the user's files are not touched."""
        async with self._lock:
            base = await self.base(name)
            self.cancel(name)
            await self._save([b for b in await self.bases() if b.id != base.id])
        await asyncio.to_thread(self._open().drop_base, base.id)
        self.upkeep.bases_changed()

    async def attach(
        self, name: str, scope: AttachScope, target: str, *, attached: bool = True
    ) -> KnowledgeBase:
        async with self._lock:
            base = await self.base(name)
            pairs = [pair for pair in base.attached if pair != (scope, target)]
            if attached:
                pairs.append((scope, target))
            changed = replace(base, attached=tuple(pairs))
            await self._save([changed if b.id == base.id else b for b in await self.bases()])
        self.upkeep.bases_changed()
        return changed

    async def _save(self, bases: list[KnowledgeBase]) -> None:
        await self._store.set_setting(BASES_SETTING, [base.to_json() for base in bases])

    # -- indexing ----------------------------------------------------------------------

    def _open(self) -> KnowledgeIndex:
        if self._index is None:
            self._index = KnowledgeIndex(self.index_path)
        return self._index

    async def opened(self) -> KnowledgeIndex:
        return await asyncio.to_thread(self._open)

    def start(self) -> None:
        """Keep the bases current in the background: carry on unfinished indexings, watch folders."""
        self.upkeep.start()

    def indexing(self, name: str) -> bool:
        return name in self._running

    def progress(self, name: str) -> Progress | None:
        """The running indexing's progress (also one started in the background), else ``None``."""
        return self._progress.get(name) if name in self._running else None

    def last_report(self, name: str) -> IndexReport | None:
        """The report of the base's last indexing in this run of the app (problems, notices)."""
        return self._reports.get(name)

    def cancel(self, name: str) -> bool:
        """Stop the base's indexing after the file it is reading, and drop the wish to finish it
        (it does not resume at the next start); whether one was running."""
        return self._stop(name, "cancel")

    def pause(self, name: str) -> bool:
        """Stop the base's indexing after the file it is reading, keeping the wish to finish it:
        ``resume`` or the next start carries on. Whether one was running."""
        return self._stop(name, "pause")

    def _stop(self, name: str, why: str) -> bool:
        event = self._running.get(name)
        if event is not None:
            self._stops[name] = why
            event.set()
        elif why == "cancel" and name in self._ids:
            self._open().want_index(self._ids[name], False)  # a paused one: it stays stopped
        return event is not None

    def resume(self, name: str) -> bool:
        """Carry on the base's indexing in the background (``progress``, ``last_report`` follow it);
        whether one was started (not when one runs already)."""
        if name in self._running:
            return False
        self.upkeep.spawn(self.index(name))
        return True

    async def unfinished(self) -> list[str]:
        """Names of the bases whose indexing was asked for and not finished (paused, or cut short)."""
        if self._index is None and not await asyncio.to_thread(self.index_path.exists):
            return []  # nothing was ever indexed here: the file is not made for asking
        wanted = set(await asyncio.to_thread(self._open().wanted))
        return [base.name for base in await self.bases() if base.id in wanted]

    async def index(
        self,
        name: str,
        on_progress: Callable[[Progress], None] | None = None,
        *,
        patience: float | None = None,
    ) -> IndexReport:
        """Bring the base's index up to date; ``on_progress`` is called on the worker thread;
        ``patience`` (default ``embed_patience``) bounds the wait for the embedding server.

        The wish to finish is written to the index file first, so an indexing cut short by the app
        closing or being killed carries on at the next start; it is dropped when the run ends,
        unless it was paused.
        """
        base = await self.base(name)
        if name in self._running:
            raise KnowledgeError(f"“{name}” is being indexed already.")
        cancel = threading.Event()
        self._running[name] = cancel
        self._stops.pop(name, None)

        def progress(state: Progress) -> None:
            self._progress[name] = state
            if on_progress is not None:
                on_progress(state)

        try:
            embedder = await self._embedder(base)
            index = await asyncio.to_thread(self._open)
            await asyncio.to_thread(index.want_index, base.id)
            worker = asyncio.ensure_future(
                asyncio.to_thread(
                    index_base,
                    index,
                    base.id,
                    [Path(p) for p in base.paths],
                    embedder=embedder,
                    cancel=cancel,
                    on_progress=progress,
                    patience=self.embed_patience if patience is None else patience,
                )
            )
            self._workers.add(worker)
            worker.add_done_callback(self._workers.discard)
            report = await asyncio.shield(worker)
            why = self._stops.get(name)
            vectors_missing = (
                embedder is not None
                and index.has_vectors
                and bool(await asyncio.to_thread(index.chunks_to_embed, base.id, 1))
            )  # the embedding server was down too long: the next start tries again
            if (not report.cancelled and not vectors_missing) or why == "cancel":
                await asyncio.to_thread(index.want_index, base.id, False)
            self._reports[name] = report
            return report
        except asyncio.CancelledError:
            cancel.set()  # the engine closing: like a pause, the next start carries on
            raise
        finally:
            self._running.pop(name, None)
            self._stops.pop(name, None)
            self._progress.pop(name, None)

    async def embedder_of(self, base: KnowledgeBase) -> Embedder | None:
        return await self._embedder(base)

    async def _embedder(self, base: KnowledgeBase) -> OpenAIEmbedder | None:
        """The base's embedding client, made once per provider and model; ``None`` without a model.

        A provider that is gone or whose key cannot be read gives ``None``: search is
        keyword-only then, and the result says so.
        """
        if not base.embeds:
            return None
        key = _server(base)
        if key not in self._embedders:
            config = await self._store.get_provider(base.embed_provider)
            if config is None:
                return None
            try:
                resolved = await asyncio.to_thread(credentials.resolve_headers, config)
                api_key = await asyncio.to_thread(credentials.get_api_key, config)
            except credentials.CredentialsError as err:
                log.warning("Embeddings for %s: %s", base.name, err.user_message)
                return None
            self._embedders[key] = OpenAIEmbedder(resolved, base.embed_model, api_key)
        return self._embedders[key]

    async def totals(self, name: str) -> tuple[int, int, int]:
        """(files, chunks, characters) indexed for the base."""
        base = await self.base(name)
        return await asyncio.to_thread(self._open().totals, base.id)

    async def unembedded(self, name: str) -> int:
        """Chunks of the base without a vector yet; 0 for a base without an embedding model."""
        base = await self.base(name)
        if not base.embeds or (self._index is None and not await asyncio.to_thread(self.index_path.exists)):
            return 0
        return await asyncio.to_thread(self._open().unembedded, base.id)

    async def drop_index(self, name: str) -> None:
        """Forget the base's index (it is rebuilt by the next ``index``)."""
        base = await self.base(name)
        await asyncio.to_thread(self._open().drop_base, base.id)

    # -- search ------------------------------------------------------------------------

    async def search(self, name: str, query: str, limit: int = 8) -> SearchResult:
        base = await self.base(name)
        return await self._search(base, query, limit)

    async def _within_deadline(self, base: KnowledgeBase) -> Embedder | None:
        """The base's embedder for one send or search: it waits ``query_deadline`` at most."""
        embedder = await self._embedder(base)
        return None if embedder is None else WithinDeadline(embedder, self.query_deadline)

    async def _search(
        self, base: KnowledgeBase, query: str, limit: int, embedder: Embedder | None = None
    ) -> SearchResult:
        embedder = embedder or await self._within_deadline(base)
        index = await asyncio.to_thread(self._open)
        return await asyncio.to_thread(search, index, base.id, query, limit=limit, embedder=embedder)

    async def attached(
        self, *, session_id: str, agent_id: str, project_id: str | None
    ) -> list[KnowledgeBase]:
        return [
            base
            for base in await self.bases()
            if base.attached_to(session_id=session_id, agent_id=agent_id, project_id=project_id or "")
        ]

    async def sources_for(
        self,
        path: Sequence[Message],
        *,
        session_id: str,
        agent_id: str,
        project_id: str | None,
        budget_tokens: int,
        extra: Sequence[str] = (),
    ) -> SentKnowledge:
        """The sources to send with the newest prompt of ``path`` (see the module docstring).

        ``extra`` names bases to use besides the attached ones (``threadline ask --kb``).
        """
        bases = await self.attached(session_id=session_id, agent_id=agent_id, project_id=project_id)
        for name in extra:
            base = await self.base(name)
            if all(b.id != base.id for b in bases):
                bases.append(base)
        left_out = await self.excluded(session_id)
        pinned = tuple(s for s in _pinned(path) if passage_key(s) not in left_out)
        if not bases:
            return SentKnowledge(pinned)
        prompt = next((m.text for m in reversed(path) if m.kind is MessageKind.PROMPT), "")
        room = max(0, budget_tokens * CHARS_PER_TOKEN - sum(len(s.text) for s in pinned))
        index = await asyncio.to_thread(self._open)
        embedders: dict[tuple[str, str], Embedder | None] = {}  # one wait per server and send
        for base in bases:
            if _server(base) not in embedders:
                embedders[_server(base)] = await self._within_deadline(base)
        for base in bases:  # a file edited since it was indexed is sent as it is now
            if not self.indexing(base.name):
                await asyncio.to_thread(refresh_changed, index, base.id, embedder=embedders[_server(base)])
        whole: list[Source] = []
        for base in bases:
            chunks = await asyncio.to_thread(
                index.all_chunks, base.id, room - sum(len(s.text) for s in whole)
            )
            if chunks is None:
                whole = []
                break
            whole.extend(s for c in chunks if passage_key(s := source_of(base, c, None)) not in left_out)
        if whole:
            return SentKnowledge((*pinned, *_without(whole, pinned)))
        found: list[tuple[float, Source]] = []
        notices: list[str] = []
        for base in bases:
            result = await self._search(base, prompt, PASSAGES, embedders[_server(base)])
            if result.notice and base.embeds:
                notices.append(result.notice)
            found.extend((hit.score, source_of(base, hit.chunk, hit.score)) for hit in result.hits)
        found = [pair for pair in found if passage_key(pair[1]) not in left_out]
        found.sort(key=lambda pair: -pair[0])
        chosen: list[Source] = []
        used = 0
        for _score, source in found[:PASSAGES]:
            if used + len(source.text) > room:
                continue
            chosen.append(source)
            used += len(source.text)
        return SentKnowledge((*pinned, *_without(chosen, pinned)), " ".join(dict.fromkeys(notices)))

    async def set_pinned(self, session_id: str, message_id: str, position: int, pinned: bool) -> Message:
        """Pin (or unpin) the reply's source at ``position``: a pinned one is sent with every turn.

        The flag is stored on the reply, so the pin lasts across restarts and follows an export.
        """
        live = self._live(session_id)
        if live is None:
            raise SessionClosedError()
        tree = live.conversation.tree
        if message_id not in tree:
            raise MessageGoneError()
        message = tree.get(message_id)
        if not 0 <= position < len(message.sources):
            raise KnowledgeError("That source is no longer on this reply.")
        sources = list(message.sources)
        sources[position] = replace(sources[position], pinned=pinned)
        before = message.sources
        message.sources = tuple(sources)
        try:
            await self._store.update_message(message)
        except BaseException:
            message.sources = before
            raise
        live.emit(MessageChanged(session_id, message))
        return message

    # -- excluded passages (the chat's Sources list, docs/knowledge.md "In the chat") -------

    async def excluded(self, session_id: str) -> frozenset[str]:
        """The ``passage_key`` of every passage the user excluded from this chat."""
        stored = await self._store.get_setting(EXCLUDED_SETTING + session_id, [])
        return frozenset(str(key) for key in stored) if isinstance(stored, list) else frozenset()

    async def set_excluded(
        self, session_id: str, message_id: str, position: int, excluded: bool
    ) -> frozenset[str]:
        """Leave the reply's source at ``position`` out of this chat's next turns (or take it back).

        Kept as a setting of the chat, not on the reply: the reply records what was sent
        and may have children, and history is not rewritten. Returns the chat's new set.
        """
        live = self._live(session_id)
        if live is None:
            raise SessionClosedError()
        tree = live.conversation.tree
        if message_id not in tree:
            raise MessageGoneError()
        sources = tree.get(message_id).sources
        if not 0 <= position < len(sources):
            raise KnowledgeError("That source is no longer on this reply.")
        key = passage_key(sources[position])
        async with self._lock:
            keys = set(await self.excluded(session_id))
            keys = keys | {key} if excluded else keys - {key}
            await self._store.set_setting(EXCLUDED_SETTING + session_id, sorted(keys))
        return frozenset(keys)

    async def aclose(self) -> None:
        """Stop watching and indexing (a running indexing carries on at the next start), then close."""
        await self.upkeep.aclose()
        for name in list(self._running):
            self.pause(name)
        while self._workers:
            await asyncio.gather(*list(self._workers), return_exceptions=True)
        for embedder in self._embedders.values():
            embedder.close()
        self._embedders.clear()
        if self._index is not None:
            index, self._index = self._index, None
            await asyncio.to_thread(index.close)

    # -- for the window's Settings → Knowledge (docs/knowledge.md, "In the window") -----------

    async def edit(
        self,
        name: str,
        *,
        new_name: str | None = None,
        paths: Sequence[Path] | None = None,
        embed_provider: str | None = None,
        embed_model: str | None = None,
    ) -> KnowledgeBase:
        """Change a base's name, folders or embedding model; ``None`` keeps a field.

        Files no longer under the folders leave the index at the next ``index``. Vectors of
        another embedding model cannot be compared with the new one's, so changing the model
        drops the base's index now and the next ``index`` builds it again.
        """
        if name in self._running:
            raise KnowledgeError(f"“{name}” is being indexed. Pause it first, then edit it.")
        if embed_provider and await self._store.get_provider(embed_provider) is None:
            raise KnowledgeError(f"There is no provider named “{embed_provider}” for embeddings.")
        async with self._lock:
            bases = await self.bases()
            base = await self.base(name)
            changed = replace(
                base,
                name=base.name if new_name is None else new_name.strip(),
                paths=base.paths if paths is None else await asyncio.to_thread(_absolute, paths),
                embed_provider=base.embed_provider if embed_provider is None else embed_provider,
                embed_model=base.embed_model if embed_model is None else embed_model.strip(),
            )
            if not changed.name:
                raise KnowledgeError("Give the knowledge base a name.")
            if not changed.paths:
                raise KnowledgeError("Name at least one folder or file for the knowledge base.")
            if changed.name != base.name and any(b.name == changed.name for b in bases):
                raise KnowledgeError(
                    f"A knowledge base named “{changed.name}” exists already. Choose another name."
                )
            await self._save([changed if b.id == base.id else b for b in bases])
        if (changed.embed_provider, changed.embed_model) != (base.embed_provider, base.embed_model):
            await asyncio.to_thread(self._open().drop_base, base.id)
        if changed.name != base.name:
            self._ids.pop(base.name, None)
            self._ids[changed.name] = changed.id
        self.upkeep.bases_changed()  # other folders to watch
        return changed

    async def problems(self, name: str) -> list[FileProblem]:
        """The files of the base that could not be read at their last indexing, with the reason."""
        base = await self.base(name)
        rows = await asyncio.to_thread(self._open().problems, base.id)
        return [FileProblem(path, reason) for path, reason in rows]


async def knowledge_for_turn(
    service: KnowledgeService | None, live: LiveConversation, agent: AgentConfig, gathered: GatheredContext
) -> SentKnowledge:
    """The passages for the request being built, kept on ``live`` for the reply and the meter.

    The room is what the agent's context share leaves after the sticky context. A knowledge
    base that cannot be read (its index damaged, a base removed meanwhile) is logged and the
    request goes without it: a chat never fails for want of passages.
    """
    if service is None:
        return SentKnowledge()
    room = max(0, gathered.budget_tokens - gathered.tokens)
    try:
        sent = await service.sources_for(
            live.conversation.path(),
            session_id=live.session_id,
            agent_id=agent.id,
            project_id=live.info.project_id,
            budget_tokens=room,
        )
    except (EngineError, OSError) as err:
        log.warning("Knowledge left out of this request: %s", getattr(err, "user_message", err))
        sent = SentKnowledge()
    except database_errors() as err:  # the index file damaged or locked
        log.warning("Knowledge left out of this request: %s", err)
        sent = SentKnowledge()
    live.last_knowledge = sent
    if sent.notice:  # keyword-only this time: the tab says so (docs/knowledge.md, "Keyword-only")
        live.emit(KnowledgeNotice(live.session_id, sent.notice))
    return sent


def _server(base: KnowledgeBase) -> tuple[str, str]:
    """Which embedding client the base uses: its provider and model."""
    return (base.embed_provider, base.embed_model)


def _absolute(paths: Sequence[Path]) -> tuple[str, ...]:
    return tuple(os.path.abspath(os.path.expanduser(p)) for p in paths)


def source_of(base: KnowledgeBase, chunk: StoredChunk, score: float | None) -> Source:
    locator = SourceLocator(
        path=chunk.path,
        page=chunk.page,
        heading=chunk.heading,
        line_start=None if chunk.page is not None else chunk.line_start,
        line_end=None if chunk.page is not None else chunk.line_end,
    )
    return Source(SourceKind.KNOWLEDGE, base.name, locator, chunk.text, score=score)


def _pinned(path: Sequence[Message]) -> tuple[Source, ...]:
    """Sources pinned on replies of the path, each passage once.

    The pin stays on the reply where the user set it: the copy sent again is recorded on the
    new reply unpinned, so unpinning that one reply stops it.
    """
    seen: dict[tuple[SourceLocator, str], Source] = {}
    for message in path:
        for source in message.sources:
            if source.pinned:
                seen[(source.locator, source.text)] = replace(source, pinned=False)
    return tuple(seen.values())


def _without(sources: Sequence[Source], pinned: Sequence[Source]) -> list[Source]:
    taken = {(s.locator, s.text) for s in pinned}
    return [s for s in sources if (s.locator, s.text) not in taken]
