"""One MCP server connection through the official ``mcp`` SDK, and its tools as registry tools.

The SDK's transports and ``ClientSession`` are async context managers whose
task groups must be entered and exited in the same task, so each connection
lives in its own long-running asyncio task (``McpConnection._serve``): it
starts the transport, initialises, lists the tools, reports ready, then waits
for a stop request and leaves the context managers in order. Calls are made
from the turn's task on the live session (the SDK correlates responses), each
with the server's call timeout. A stopped call returns at once: its request
goes on in a task of its own just long enough for the SDK to send the server
``notifications/cancelled`` (over HTTP that is a request of its own).

A server that dies (the SDK answers "Connection closed") is marked failed with
its exit reason and the tail of its stderr (values Threadline injected masked:
``mcp_stderr``); the next call restarts it, up to
``MAX_RESTARTS`` times in a row. ``restart()`` from the settings UI starts
over.

A streamable-HTTP server that answers 401 is signed in to with OAuth (``mcp_oauth``);
a server's questions in the middle of a call (elicitation) go to the ``McpPerson`` the
caller set on the connection (``mcp_person``). While a person answers (a sign in, a
form), the start's and the call's time limits stop (``PersonClock``): they measure the
server, not the person. docs/mcp.md describes both.

``mcp`` is imported on first use (it is slow to import; docs/design.md §9, figures in
docs/performance.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib
import logging
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from threadline.core.request import ToolSpec
from threadline.files.private import open_private, private_folder
from threadline.tools import process_guard
from threadline.tools.mcp.calls import CallTracker
from threadline.tools.mcp.clock import PersonClock
from threadline.tools.mcp.config import McpServerConfig, Transport
from threadline.tools.mcp.person import Answer, FormRequest, McpPerson, UrlRequest
from threadline.tools.mcp.results import convert_result
from threadline.tools.mcp.secrets import SecretUnavailableError, resolve_secrets
from threadline.tools.mcp.server_log import ServerLog
from threadline.tools.mcp.state import (
    McpServerError,
    McpToolInfo,
    ServerState,
    ServerStatus,
    policy_name,
    wire_names,
)
from threadline.tools.mcp.stderr import Masker, StderrChannel, injected_values
from threadline.tools.registry import ToolOutput
from threadline.tools.tool_cache import ToolDescription

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.session import ClientSession

    from threadline.tools.mcp.oauth import LoopbackRedirect

log = logging.getLogger("threadline.tools.mcp")

T = TypeVar("T")

MAX_RESTARTS = 3
STDERR_TAIL_CHARS = 2000
STDERR_FINISH_WAIT = 2.0
"""At most this long, per step, for a stopped server's last stderr to be logged."""
STDERR_SETTLE_WAIT = 1.0
"""At most this long for a dead server's last stderr to be read before it is quoted."""


SDK_MODULES = (
    "anyio",
    "mcp_types",
    "mcp.client.auth",
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.shared._httpx_utils",
    "mcp.shared.exceptions",
)


async def import_sdk() -> None:
    """Import the ``mcp`` SDK on a worker thread (once): on the GUI thread its import would
    freeze the window whenever the first server starts (the first send, or the warm-up)."""
    if all(name in sys.modules for name in SDK_MODULES):
        return
    await asyncio.to_thread(lambda: [importlib.import_module(name) for name in SDK_MODULES])


class McpConnection:
    """One configured server: its task, session, status and tools.

    ``person`` answers the server's elicitations and opens its sign-in page; ``None``
    declines them and fails a needed sign in with a message (``mcp_person``).
    """

    def __init__(
        self,
        config: McpServerConfig,
        *,
        log_dir: Path | None = None,
        on_change: Callable[[McpConnection], None] | None = None,
        person: McpPerson | None = None,
        client_metadata_url: str | None = None,
    ) -> None:
        self.config = config
        self.person = person
        self.client_metadata_url = client_metadata_url
        """HTTPS address of Threadline's OAuth client ID metadata document, where one is published."""
        self.instructions = ""
        """The server's ``instructions`` from its initialize result (for the system prompt)."""
        self.protocol_version = ""
        self.capabilities: Any = None
        """The ``ServerCapabilities`` of the initialize result (``mcp_details``)."""
        self.status = ServerStatus.STOPPED
        self.error = ""
        self.tools: tuple[ToolDescription, ...] = ()
        """As the server last listed them (``tools/list`` at start and on ``tools/list_changed``)."""
        self.server_info = ""
        self.restarts = 0
        """Restarts since the last successful call (or manual restart)."""
        self._log_dir = log_dir
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stderr: StderrChannel | None = None
        self._masker = Masker(())
        """Masks the values Threadline injected into the running server (``mcp_stderr``)."""
        self._http_status = ""
        self._lock = asyncio.Lock()
        self._abandoned: set[asyncio.Future[Any]] = set()
        """Calls stopped by the user whose cancellation is still reaching the server."""
        self._relisting: set[asyncio.Task[None]] = set()
        self._clock = PersonClock()
        self.calls = CallTracker(config.name)
        self.log = ServerLog(lambda text: self._masker(text))
        """The server's ``notifications/message`` (Settings → MCP, ``mcp_server_log``)."""
        """The calls under way: whose question a server asks, and their progress (``mcp_calls``)."""
        self._interactive = True
        """Whether this start may open a sign-in page (a background warm-up may not)."""
        self.sign_in_failure: Any = None
        """The ``SignInError`` that ended the last start, if a sign in is what failed."""
        self.on_notice: Callable[[McpConnection, str, Any], None] | None = None
        """Told each server notification (method, params) besides the tool list's: the prompts
        and resources catalog follows list changes and subscriptions (``mcp_catalog``)."""

    @property
    def name(self) -> str:
        return self.config.name

    def state(self) -> ServerState:
        infos = tuple(
            McpToolInfo(
                name=t.name,
                policy_name=policy_name(self.name, t.name),
                wire_name=wire,
                description=t.description or "",
                input_schema=dict(t.input_schema),
            )
            for t, wire in zip(self.tools, self.wire_names(), strict=True)
        )
        return ServerState(
            self.name,
            self.status,
            self.error,
            infos,
            self.restarts,
            self.server_info,
            instructions=self.instructions,
            protocol_version=self.protocol_version,
        )

    @property
    def live_session(self) -> ClientSession | None:
        """The SDK session while the server runs (``mcp_details``: counts and the log level)."""
        return self._session

    def wire_names(self) -> list[str]:
        return wire_names(self.name, self.tools)

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, *, interactive: bool = True) -> None:
        """Start the server if it is not running; raises ``McpServerError`` when it cannot start.

        ``interactive=False`` (a background start): a server that needs a sign in fails
        instead of opening the sign-in page.
        """
        async with self._lock:
            self._interactive = interactive
            self.sign_in_failure = None
            if self.status is ServerStatus.READY and self._task is not None and not self._task.done():
                return
            await self._stop_task()
            try:
                resolved = resolve_secrets(self.config)
            except SecretUnavailableError as err:
                message = f"MCP server {self.name!r} could not start: {err}"
                log.warning("%s", message)
                self._set(ServerStatus.FAILED, message)
                raise McpServerError(message) from err
            await import_sdk()  # before any state changes: a stop meanwhile leaves nothing half-made
            loop = asyncio.get_running_loop()
            self._ready = loop.create_future()
            self._stop = asyncio.Event()
            self._set(ServerStatus.STARTING, "")
            self._task = asyncio.create_task(
                self._serve(self._ready, self._stop, resolved), name=f"mcp-{self.name}"
            )
            try:
                await asyncio.shield(self._ready)
            except asyncio.CancelledError:
                await self._stop_task()
                raise

    async def stop(self) -> None:
        async with self._lock:
            await self._stop_task()
            self._set(ServerStatus.STOPPED, "")

    async def restart(self) -> None:
        """A manual restart (settings UI): clears the failure count, then starts."""
        self.restarts = 0
        await self.stop()
        await self.start()

    async def _stop_task(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 10)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        except Exception:
            pass
        self._session = None
        await asyncio.gather(*self._abandoned, return_exceptions=True)  # ended with the session

    async def _serve(self, ready: asyncio.Future[None], stop: asyncio.Event, config: McpServerConfig) -> None:
        """The connection's own task: enter the SDK's context managers, wait, leave them here."""
        from mcp.client.session import ClientSession

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(config))
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        message_handler=self._on_server_message,
                        elicitation_callback=self._on_elicitation,
                        logging_callback=self.log.receive,
                        client_info=_client_info(),
                    )
                )
                with self._clock.limit(self.config.startup_timeout):
                    init = await session.initialize()
                    tools = await _list_all_tools(session)
                info = init.server_info
                self.server_info = f"{info.name} {info.version}".strip() if info else ""
                self.instructions = (init.instructions or "").strip()
                self.protocol_version = init.protocol_version
                self.capabilities = init.capabilities
                self.tools = tuple(ToolDescription.from_mcp(t) for t in tools)
                self._session = session
                self._set(ServerStatus.READY, "")
                if not ready.done():
                    ready.set_result(None)
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpServerError(f"MCP server {self.name!r} was stopped while starting."))
            raise
        except Exception as err:
            self.sign_in_failure = _sign_in_error(err)
            message = self._failure_message(err, starting=not ready.done())
            log.warning("MCP server %s: %s", self.name, message)
            self._set(ServerStatus.FAILED, message)
            if not ready.done():
                ready.set_exception(McpServerError(message))
        finally:
            self._session = None

    async def _on_server_message(self, message: object) -> None:
        """The SDK's message handler: ``notifications/tools/list_changed`` lists the tools again.

        Listed in a task of its own: a request awaited inside the handler would wait on
        the very loop that delivers its answer.
        """
        method = getattr(message, "method", None)
        if method != "notifications/tools/list_changed":
            if self.on_notice is not None and isinstance(method, str):
                try:
                    self.on_notice(self, method, getattr(message, "params", None))
                except Exception:
                    log.exception("MCP notice observer failed")
            return
        task = asyncio.ensure_future(self._list_tools_again())
        self._relisting.add(task)
        task.add_done_callback(self._relisting.discard)

    async def _on_elicitation(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """The SDK's elicitation callback: the question goes to ``person`` (form or URL mode).

        The call's time limit stops while the person answers. No person, or one that
        fails, declines: the server then goes on without the answer.
        """
        from mcp_types import ElicitRequestURLParams, ElicitResult

        person = self.person
        session_id, tool = self.calls.asker()
        if person is None:
            log.info("MCP server %s asked the user something; declined (no one to answer)", self.name)
            return ElicitResult(action="decline")
        url_mode = isinstance(params, ElicitRequestURLParams)
        try:
            with self._clock.paused():
                if isinstance(params, ElicitRequestURLParams):
                    answer = await person.answer_url(
                        UrlRequest(
                            self.name,
                            params.message,
                            params.url,
                            params.elicitation_id or "",
                            session_id,
                            tool,
                        )
                    )
                else:
                    answer = await person.answer_form(
                        FormRequest(
                            self.name, params.message, dict(params.requested_schema), session_id, tool
                        )
                    )
        except Exception as err:
            log.warning("MCP server %s: the question could not be answered (%s)", self.name, err)
            answer = Answer.declined()
        if answer.action == "accept" and not url_mode:
            return ElicitResult(action="accept", content=dict(answer.content))
        return ElicitResult(action=answer.action)

    async def _list_tools_again(self) -> None:
        session = self._session
        if session is None or self.status is not ServerStatus.READY:
            return
        try:
            tools = await _list_all_tools(session)
        except Exception as err:  # the server went away meanwhile: its next start lists them
            log.info("MCP server %s: listing its changed tools failed: %s", self.name, err)
            return
        if session is self._session:
            self.tools = tuple(ToolDescription.from_mcp(t) for t in tools)
            self._set(ServerStatus.READY, "")  # the manager registers them and refreshes its cache

    def _transport(self, config: McpServerConfig) -> contextlib.AbstractAsyncContextManager[Any]:
        """The SDK transport for ``config`` (with its secrets resolved: never logged, never stored)."""
        self._masker = Masker(injected_values(config))
        if config.transport is Transport.HTTP:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            redirect, auth = self._oauth(config)
            client = create_mcp_http_client(headers=dict(config.headers) or None, auth=auth)
            self._http_status = ""

            async def note_status(response: Any) -> None:  # the SDK reports a 401 as a generic error
                if response.status_code >= 400:
                    self._http_status = f"HTTP {response.status_code} {response.reason_phrase}".strip()

            client.event_hooks = {**client.event_hooks, "response": [note_status]}
            return _with_client(client, streamable_http_client(config.url, http_client=client), redirect)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command, args = config.command, list(config.args)
        if sys.platform != "win32":  # its process group dies with Threadline (``process_guard``)
            executable = _find_executable(command, config.env, config.cwd)
            command, *args = process_guard.guarded_argv([executable, *args], channel=2)
        parameters = StdioServerParameters(
            command=command, args=args, env=dict(config.env) or None, cwd=config.cwd or None
        )
        self._stderr = StderrChannel(self._open_errlog(), self._masker)
        return _with_stderr(self._stderr, stdio_client(parameters, errlog=self._stderr.child_file))

    def _oauth(self, config: McpServerConfig) -> tuple[LoopbackRedirect | None, Any]:
        """The SDK's OAuth provider for an HTTP server, unless its record sends its own
        ``Authorization`` header (a token the user pasted): then a 401 is just refused."""
        if any(name.lower() == "authorization" for name in config.headers):
            return None, None
        from threadline.tools.mcp.oauth import KeychainTokenStorage, LoopbackRedirect, build_provider

        storage = KeychainTokenStorage(config.url)
        redirect = LoopbackRedirect(self.name, port=storage.registered_port())
        provider = build_provider(
            self.name,
            config.url,
            person=self.person if self._interactive else None,
            redirect=redirect,
            storage=storage,
            client_metadata_url=self.client_metadata_url,
            pause=self._clock.paused,
        )
        return redirect, provider

    async def sign_in(self) -> None:
        """Connect now, signing in if the server asks (the settings' "Sign in" button, ``mcp login``).

        Raises ``SignInError`` (with a ``user_message``) when the sign in fails, times out or
        is declined; ``McpServerError`` when the server cannot be reached at all.
        """
        from threadline.tools.mcp.oauth import SignInError

        await self.stop()
        try:
            await self.start(interactive=True)
        except McpServerError as err:
            cause = self.sign_in_failure
            if cause is not None:
                raise SignInError(cause.user_message) from err
            raise

    async def sign_out(self) -> None:
        """Forget the server's tokens (keychain) and disconnect; its next start asks to sign in."""
        from threadline.tools.mcp.oauth import sign_out

        await self.stop()
        if self.config.transport is Transport.HTTP:
            sign_out(self.config.url)

    def signed_in(self) -> bool:
        from threadline.tools.mcp.oauth import signed_in

        return self.config.transport is Transport.HTTP and signed_in(self.config.url)

    # -- calls ----------------------------------------------------------------------------------------

    async def started_session(self) -> ClientSession:
        """The running session (the server started first, as a call would): for the prompts and
        resources requests of ``mcp_catalog``, which use the SDK's session directly."""
        await self.ensure_running()
        session = self._session
        if session is None:
            raise McpServerError(f"MCP server {self.name!r} is not running.")
        return session

    async def timed(self, request: Coroutine[Any, Any, T]) -> T:
        """``request`` within the server's call time limit (``TimeoutError`` past it)."""
        return await self._timed(request, self.config.call_timeout)

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        """Call ``tool``; a dead server is restarted first (up to ``MAX_RESTARTS`` in a row)."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        await self.ensure_running()
        session = self._session
        if session is not None and _session_closed(session):  # died while idle: restart, then call
            await self._died("while idle")
            await self.ensure_running()
            session = self._session
        if session is None:
            raise McpServerError(f"MCP server {self.name!r} is not running.")
        timeout = self.config.call_timeout
        try:
            with self.calls.running(tool) as progress:
                request = session.call_tool(tool, arguments, progress_callback=progress)
                result = await self._detachable(self._timed(request, timeout))
        except TimeoutError:
            return ToolOutput(
                f"MCP server {self.name!r} did not answer {tool!r} within {timeout:g} s; the call "
                "was abandoned.",
                is_error=True,
            )
        except MCPError as err:
            if err.code == REQUEST_TIMEOUT:
                return ToolOutput(
                    f"MCP server {self.name!r} did not answer {tool!r} within {timeout:g} s; the call "
                    "was abandoned.",
                    is_error=True,
                )
            if err.code == CONNECTION_CLOSED:
                return ToolOutput(await self._died(f"during the call to {tool!r}"), is_error=True)
            return ToolOutput(f"MCP server {self.name!r} refused {tool!r}: {err.message}", is_error=True)
        except Exception as err:  # a transport that broke some other way
            if self._task is None or self._task.done():
                return ToolOutput(await self._died(f"during the call to {tool!r}"), is_error=True)
            return ToolOutput(f"MCP server {self.name!r} failed on {tool!r}: {err}", is_error=True)
        self.restarts = 0
        return convert_result(result, self.name)

    async def _timed(self, request: Coroutine[Any, Any, T], seconds: float) -> T:
        """``request`` within ``seconds`` of the server's time (``PersonClock``)."""
        with self._clock.limit(seconds):
            return await request
        raise AssertionError("unreachable")  # pragma: no cover  (the limit raises TimeoutError)

    async def _detachable(self, request: Coroutine[Any, Any, T]) -> T:
        """Await ``request`` in a task of its own, so a Stop does not wait for the server.

        Cancelling the caller cancels the request's task and returns at once; in
        that task the SDK tells the server (``notifications/cancelled``) and stops
        waiting for its answer. The task is kept until it ends and awaited when
        the connection stops, so none is left pending.
        """
        task = asyncio.ensure_future(request)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            if not task.done():
                self._abandoned.add(task)
                task.add_done_callback(self._abandoned.discard)
            raise

    async def ensure_running(self, *, interactive: bool = True) -> None:
        """Start the server unless it runs; a failed one counts as a restart, up to ``MAX_RESTARTS``."""
        if self.status is ServerStatus.READY and self._task is not None and not self._task.done():
            return
        if self.status is ServerStatus.FAILED:
            if self.restarts >= MAX_RESTARTS:
                raise McpServerError(
                    f"MCP server {self.name!r} failed {self.restarts + 1} times in a row, so it is not "
                    f"restarted again. Last error: {self.error} Restart it in Settings."
                )
            self.restarts += 1
            log.info("restarting MCP server %s (attempt %d)", self.name, self.restarts)
        await self.start(interactive=interactive)

    async def _died(self, when: str) -> str:
        await self._stderr_settled()
        reason = self._stderr_tail()
        message = f"MCP server {self.name!r} stopped {when}." + (
            f" Its last output: {reason}" if reason else ""
        )
        message += " It will be restarted on the next call."
        self._set(ServerStatus.FAILED, message)
        if self._stop is not None:
            self._stop.set()  # let the connection's task leave the SDK's context managers
        return message

    # -- helpers ----------------------------------------------------------------------------------------

    def _set(self, status: ServerStatus, error: str) -> None:
        self.status, self.error = status, error
        if self._on_change is not None:
            try:
                self._on_change(self)
            except Exception:
                log.exception("MCP status observer failed")

    def _failure_message(self, err: BaseException, *, starting: bool) -> str:
        if self.sign_in_failure is not None:  # says what happened and what to do already
            return self._masker(str(self.sign_in_failure.user_message))
        leaves = _leaf_exceptions(err)
        detail = "; ".join(_describe(e) for e in leaves) or type(err).__name__
        tail = self._stderr_tail()
        when = "could not start" if starting else "stopped"
        if self._http_status:
            detail = f"{detail} ({self._http_status} from {self.config.url})"
        message = f"MCP server {self.name!r} {when}: {detail.rstrip('.')}."
        if tail:
            message += f" Its last output: {tail}"
        return self._masker(message)

    def _open_errlog(self) -> TextIO:
        """The file the server's stderr is logged to (masked, by ``StderrChannel``)."""
        if self._log_dir is not None:
            private_folder(self._log_dir)
            return open_private(
                self._log_dir / f"mcp-{self.name}.log", "w", encoding="utf-8", errors="replace"
            )
        return open(os.devnull, "w", encoding="utf-8")  # the channel closes it

    async def _stderr_settled(self) -> None:
        """Wait (briefly) until the stderr a dead server wrote last has been read and logged."""
        channel = self._stderr
        if channel is None:
            return
        for _ in range(int(STDERR_SETTLE_WAIT / 0.01)):  # the reader thread has no event to await
            if channel.caught_up():
                return
            await asyncio.sleep(0.01)

    def _stderr_tail(self) -> str:
        text = self._stderr.tail().strip() if self._stderr is not None else ""
        lines = [line for line in text.splitlines() if line.strip()]
        tail = "\n".join(lines[-8:])
        return tail[-STDERR_TAIL_CHARS:]


class McpTool:
    """A tool of an MCP server as the registry sees it (listed by the running server, or cached).

    ``needs_trust``: the server annotates it ``destructiveHint: true``, so it asks before
    running unless the user allowed it by name (``threadline.tools.policy``).
    """

    def __init__(self, connection: McpConnection, tool: ToolDescription, wire: str) -> None:
        self.connection = connection
        self.tool_name = tool.name
        self.needs_trust = tool.destructive
        self.reads_only = bool(tool.read_only_hint)
        """Annotated ``readOnlyHint``: its calls are not recorded (docs/workspace.md)."""
        self.ends_with_threadline = connection.config.transport is Transport.STDIO
        """A stdio server's process group dies with Threadline (``process_guard``); a remote one works on."""
        self.policy_name = policy_name(connection.name, tool.name)
        self.timeout = connection.config.call_timeout + connection.config.startup_timeout + 5
        description = tool.description or tool.title or tool.name
        self.spec = ToolSpec(
            wire, f"{description}\n(from MCP server {connection.name})", dict(tool.input_schema)
        )

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            return await self.connection.call(self.tool_name, arguments)
        except McpServerError as err:
            return ToolOutput(str(err), is_error=True)


def _session_closed(session: ClientSession) -> bool:
    """Whether the SDK already saw the connection end (best effort: a private flag of its dispatcher)."""
    return bool(getattr(getattr(session, "_dispatcher", None), "_closed", False))


async def _list_all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    from mcp_types import PaginatedRequestParams

    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


@contextlib.asynccontextmanager
async def _with_stderr(
    channel: StderrChannel, transport: contextlib.AbstractAsyncContextManager[Any]
) -> AsyncIterator[Any]:
    """``transport`` (a stdio server) with its stderr channel: ours dropped once the server has it,
    and finished (the server's group told to end, the rest logged) when the transport is left."""
    try:
        async with transport as streams:
            channel.spawned()
            yield streams
    finally:
        await asyncio.to_thread(channel.finish, STDERR_FINISH_WAIT)


def _find_executable(command: str, env: dict[str, str], cwd: str) -> str:
    """``command`` as the server's spawn would find it; ``FileNotFoundError`` when it would not.

    Looked up here because ``process_guard`` starts it through ``sh``, whose "not found"
    would otherwise arrive as a server that closed the connection.
    """
    if os.sep in command:
        if not os.path.exists(os.path.join(cwd or os.getcwd(), command)):
            raise FileNotFoundError(errno.ENOENT, "not found", command)
        return command
    found = shutil.which(command, path=env.get("PATH", os.environ.get("PATH", os.defpath)))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, "not found", command)
    return found


@contextlib.asynccontextmanager
async def _with_client(
    client: Any, transport: contextlib.AbstractAsyncContextManager[Any], redirect: LoopbackRedirect | None
) -> Any:
    try:
        async with client, transport as streams:
            yield streams
    finally:
        if redirect is not None:
            await redirect.aclose()


def _client_info() -> mcp_types.Implementation:
    from mcp_types import Implementation

    from threadline import __version__

    return Implementation(name="threadline", title="Threadline", version=__version__)


def _sign_in_error(err: BaseException) -> Any:
    """The ``SignInError`` behind a failed start, if a sign in is what failed."""
    from threadline.tools.mcp.oauth import SignInError

    seen: set[int] = set()
    pending: list[BaseException | None] = [err]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, SignInError):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend([current.__cause__, current.__context__])
    return None


def _leaf_exceptions(err: BaseException) -> list[BaseException]:
    if isinstance(err, BaseExceptionGroup):
        leaves: list[BaseException] = []
        for inner in err.exceptions:
            leaves.extend(_leaf_exceptions(inner))
        return leaves
    return [err]


def _describe(err: BaseException) -> str:
    from mcp.client.auth import OAuthFlowError

    from threadline.tools.mcp.oauth import SignInError

    if isinstance(err, SignInError):
        return err.user_message
    if isinstance(err, OAuthFlowError):
        return f"signing in failed ({err})"
    if isinstance(err, TimeoutError):
        return "it did not answer in time"
    if isinstance(err, FileNotFoundError):
        return f"the command was not found ({err.filename or err})"
    text = str(err) or type(err).__name__
    return text
