"""``threadline ask``: one turn without a window.

``ask`` runs one turn through the same engine and store as the window, printing
the reply as it streams: for scripting, and for testing the engine without a
window. Failures print one line to standard error and exit non-zero.

``ask`` exits 0 only once the reply is stored. When the database refuses the
writes it keeps trying (as the window does) for ``ASK_SAVE_PATIENCE`` seconds,
then says so in one ``threadline:`` line (with how much of the reply the database
keeps) and exits 1; a prompt that could not be stored is never sent. Ctrl+C stops
the turn the way the Stop button does: the partial reply and cancelled tool results
are stored, and ``ask`` exits 130 (a second Ctrl+C gives up waiting for the store).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import re
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from threadline.cli.common import EXIT_FAILURE, EXIT_INTERRUPTED, CommandError, open_engine
from threadline.core.messages import (
    NOT_ASKED_RESULT_TEXT,
    ContextFile,
    ImageBlock,
    MessageKind,
    ToolCall,
    ToolResult,
)
from threadline.engine.approval import Decision
from threadline.engine.events import (
    ConversationEvent,
    MessageAdded,
    ModelLoading,
    ReasoningDelta,
    RetryScheduled,
    SaveStateChanged,
    TextDelta,
    TurnFailed,
    UserFacingError,
)
from threadline.store.errors import StoreError

if TYPE_CHECKING:
    from threadline.core.compare import CompareTarget
    from threadline.engine.api import EngineApi
    from threadline.engine.knowledge import SentKnowledge

ASK_SAVE_PATIENCE = 20.0
"""Seconds ``ask`` keeps waiting for a database that refuses the reply's writes before giving up."""


async def _use_agent(engine: EngineApi, session_id: str, name: str) -> None:
    """``ask --agent NAME``: the session switches to that agent (a marker in its history) first."""
    from threadline.cli.agent import AgentCommandError, find

    try:
        agent = await find(engine, name)
    except AgentCommandError as err:
        raise CommandError(str(err)) from err
    await engine.sessions.open_session(session_id)
    if (await engine.agents.session_agent(session_id)).agent.id != agent.id:
        await engine.agents.set_session_agent(session_id, agent.id)


async def _new_chat_agent(engine: EngineApi, args: argparse.Namespace) -> str:
    """The agent a new chat of ``ask`` runs with: ``--agent``'s, else the default agent.

    Looked up before the chat is made, so an unknown name stores nothing.
    """
    from threadline.cli.agent import AgentCommandError, find
    from threadline.core.config import DEFAULT_AGENT_ID

    if not getattr(args, "agent", None):
        return DEFAULT_AGENT_ID
    try:
        return (await find(engine, args.agent)).id
    except AgentCommandError as err:
        raise CommandError(str(err)) from err


async def _agent_named(engine: EngineApi, session_id: str) -> str:
    """The words " (agent NAME)" when an open chat runs with an agent other than the default.

    Its instructions and tools shape the reply (and with ``--yes`` run commands), so the
    line that names the chat names the agent too.
    """
    from threadline.core.config import DEFAULT_AGENT_ID

    agent = (await engine.agents.session_agent(session_id)).agent
    return "" if agent.id == DEFAULT_AGENT_ID else f" (agent {agent.name})"


async def _model_used(engine: EngineApi, session_id: str, provider: str) -> str:
    """The model a turn of ``session_id`` would use with ``provider`` (``--provider`` without ``--model``).

    Stored with the chat, so the window shows the model that answered instead of asking
    for one; "" when nothing names a model (the turn then says so).
    """
    from threadline.engine.providers import SetupError

    info = await engine.sessions.get_session(session_id)
    assert info is not None
    await engine.sessions.open_session(session_id)
    agent = (await engine.agents.session_agent(session_id)).agent
    try:
        return await engine.providers.model_for(replace(info, provider=provider, model=""), agent)
    except SetupError:
        return ""


async def ask(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    files, prompt_argument = split_attach_prompt(getattr(args, "attach", None) or [], args.prompt)
    prompt = prompt_argument if prompt_argument is not None else sys.stdin.read()
    if not prompt.strip():
        raise CommandError("no prompt given (pass it as an argument or on standard input)")
    context = await _read_attachments(files)
    engine = await open_engine(data_dir, database_url)
    from threadline.cli.mcp_person import TerminalPerson

    # MCP servers' questions are answered on the terminal, or declined with a line without one.
    person = TerminalPerson.for_stdio(stdin_used=prompt_argument is None)
    engine.tool_servers.set_person(person)
    from threadline.cli.memory_ask import TerminalMemoryAsk

    # A memory proposal is asked on the terminal (or declined); other calls need --yes.
    others = _allow_all if getattr(args, "yes", False) else None
    engine.turns.set_approval_handler(TerminalMemoryAsk(interactive=person.interactive, others=others))
    told = _ToldOfSaveTrouble()
    try:
        with told.installed():
            return await _ask(engine, args, prompt, context, told)
    except StoreError as err:  # creating or reading the session, the prompt's own write
        raise CommandError(err.user_message) from err
    finally:
        with told.installed():
            await engine.aclose()


_FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,8}")


async def _attach_knowledge(engine: EngineApi, session_id: str, names: list[str]) -> None:
    """``ask --kb NAME``: the base is attached to the chat, so its later turns use it too."""
    from threadline.core.knowledge import AttachScope
    from threadline.engine.errors import EngineError

    for name in names:
        try:
            await engine.knowledge.attach(name, AttachScope.SESSION, session_id)
        except EngineError as err:
            raise CommandError(err.user_message) from err


def _print_sources(sent: SentKnowledge | None) -> None:
    """The passages sent with the prompt, numbered as the model was told to cite them."""
    if sent is None or not sent.sources:
        return
    for number, source in enumerate(sent.sources, start=1):
        print(f"[{number}] {source.label}: {source.locator.describe()}", file=sys.stderr)
    if sent.notice:
        print(sent.notice, file=sys.stderr)


def split_attach_prompt(values: list[str], prompt: str | None) -> tuple[list[str], str | None]:
    """The files of ``ask --attach`` and the prompt.

    ``--attach`` takes every value up to the next option (``--attach a.pdf b.pdf``), so in
    ``ask --attach a.pdf b.pdf "Compare them"`` argparse hands the prompt over as a third
    file. When no prompt came otherwise (before ``--attach``, or after ``--``), the last of
    two or more values is the prompt — unless it is an existing file or looks like one (a
    name with a document's suffix and no spaces), so ``ask --attach a.pdf b.pdf`` with the
    prompt on standard input attaches both, and a mistyped file name is reported, never sent
    as the prompt.
    """
    if prompt is not None or len(values) < 2 or _names_a_file(values[-1]):
        return list(values), prompt
    return list(values[:-1]), values[-1]


def _names_a_file(value: str) -> bool:
    """An existing path, or a file name: no spaces and a suffix such as ``.pdf`` or ``.rs``."""
    path = Path(value)
    if path.exists():
        return True
    return not any(c.isspace() for c in value) and _FILE_SUFFIX.fullmatch(path.suffix) is not None


async def _read_attachments(files: list[str]) -> tuple[ContextFile, ...]:
    """``ask --attach FILE``: each file's text, read before anything is stored or sent.

    A file that cannot be attached (damaged, password-protected, too large, a scan
    without text) ends the command with its reason; the prompt is not sent without it.
    """
    if not files:
        return ()
    from threadline.documents import DocumentError, describe_context_file, extract_in_thread

    context: list[ContextFile] = []
    for name in files:
        try:
            document = await extract_in_thread(Path(name))
        except DocumentError as err:
            raise CommandError(f"{err.user_message} Nothing was sent.") from err
        context.append(document.to_context())
        print(f"attached {describe_context_file(context[-1])}", file=sys.stderr)
        for note in document.notes:
            print(f"  {note}", file=sys.stderr)
    return tuple(context)


async def _ask(
    engine: EngineApi,
    args: argparse.Namespace,
    prompt: str,
    context: tuple[ContextFile, ...] = (),
    told: _ToldOfSaveTrouble | None = None,
) -> int:
    from threadline.cli import slash as cli_slash
    from threadline.core.slash_commands import PlainText, SlashCommand, parse

    parsed = parse(prompt)  # a slash command runs here and is never sent (cli.slash)
    try:
        if cli_slash.answered_without_engine(parsed, args.session):
            return 0
    except cli_slash.SlashCommandFailed as err:
        raise CommandError(str(err)) from err
    if isinstance(parsed, SlashCommand) and (context or getattr(args, "resource", None)):
        # A command is never sent to a model, so files attached to it would go nowhere:
        # refuse rather than run it and drop them without a word.
        raise CommandError(
            f"{'--attach' if context else '--resource'} goes with a prompt, not with /{parsed.name}; "
            "nothing was done "
            "(start the prompt with // to send a leading slash)"
        )
    images: tuple[ImageBlock, ...] = ()
    if isinstance(parsed, PlainText):  # before any session is made: a refused prompt leaves none
        from threadline.cli.mcp_catalog import expand

        # A /server:prompt of a configured MCP server sends its messages; --resource is attached.
        # "//server:prompt" was escaped: its text is sent as written.
        resources = getattr(args, "resource", None) or []
        text, images, context = await expand(
            engine, parsed.text, resources, context, prompt_command=not prompt.startswith("//")
        )
        parsed = PlainText(text)
    if args.session:
        if await engine.sessions.get_session(args.session) is None:
            raise CommandError(f"no session {args.session!r}")
        session_id = args.session
        if getattr(args, "agent", None):
            await _use_agent(engine, session_id, args.agent)
    else:  # the default agent unless --agent names one: never the agent a window picked last
        session_id = (await engine.sessions.new_session(agent_id=await _new_chat_agent(engine, args))).id
    await _attach_knowledge(engine, session_id, getattr(args, "kb", None) or [])
    models = _compare_targets(args)
    if (args.provider or args.model) and not models:
        info = await engine.sessions.get_session(session_id)
        assert info is not None
        provider = args.provider or info.provider
        config = await engine.providers.get_provider(provider) if provider else None
        if provider and config is None:
            raise CommandError(f"no provider named {provider!r} (see `threadline provider list`)")
        provider = config.name if config is not None else provider  # `threadline`: "On this computer"
        model = args.model or await _model_used(engine, session_id, provider)
        await engine.sessions.set_session_model(session_id, provider, model)
    if models:
        from threadline.cli.compare import resolve_bare_models

        try:
            models = await resolve_bare_models(engine, session_id, models)
        except ValueError as err:
            raise CommandError(str(err)) from err
    if isinstance(parsed, SlashCommand):
        try:
            await cli_slash.run(engine, session_id, parsed)
        except cli_slash.SlashCommandFailed as err:
            raise CommandError(str(err)) from err
        return 0
    assert isinstance(parsed, PlainText)  # problems were refused above
    prompt = parsed.text  # "//…" sends "/…"
    if images and models:
        raise CommandError("an MCP prompt's or resource's images cannot go to --models; nothing was sent")
    if args.session:  # a compare (--models) waits for a reply elsewhere too
        from threadline.cli import wait as cli_wait

        try:
            await cli_wait.wait_until_free(engine, session_id, getattr(args, "wait", cli_wait.DEFAULT_WAIT))
        except cli_wait.StillBusy as err:
            raise CommandError(str(err)) from err
    if models:
        from threadline.cli import compare as cli_compare

        return await cli_compare.run(engine, session_id, prompt, models, context=context)
    live = await engine.sessions.open_session(session_id)
    printer = _StreamPrinter(sys.stdout, sys.stderr, told)
    live.subscribe(printer)
    print(f"session {session_id}{await _agent_named(engine, session_id)}", file=sys.stderr)
    speaking = getattr(args, "speak", False)
    if speaking:  # read as it streams (cli/voice.py)
        await engine.voice.read_streaming(session_id)
    with _StopOnInterrupt(engine, session_id) as stop:
        engine.turns.send(session_id, prompt, images=images, context=context)
        saved = await _wait_until_saved(engine, session_id, printer, stop)
        if speaking:
            from threadline.cli.voice import finish_reading

            spoken = await finish_reading(engine, stopped=stop.interrupted)
            if spoken:
                print(f"threadline: the reply was not read aloud: {spoken}", file=sys.stderr)
    printer.end()
    _print_sources(live.last_knowledge)
    if not saved:
        if stop.gave_up:
            print("threadline: interrupted before the reply was saved", file=sys.stderr)
            return EXIT_INTERRUPTED
        from threadline.engine.turn_runner import KEPT_IN_MEMORY

        assert printer.save_error is not None
        what = printer.save_error.message.removesuffix(KEPT_IN_MEMORY).strip()
        kept = await _stored_length(engine, session_id, printer.reply_id)
        print(f"threadline: {what} {_what_was_kept(kept, printer.printed)}", file=sys.stderr)
        return EXIT_FAILURE
    if printer.error is not None:
        print(f"threadline: {printer.error.message}", file=sys.stderr)
        return EXIT_FAILURE
    if stop.interrupted:
        print("threadline: stopped; the partial reply is saved", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


STORED_READ_PATIENCE = 5.0
"""Seconds ``ask`` waits, after giving up on the reply's writes, to read how much of it is stored."""


async def _stored_length(engine: EngineApi, session_id: str, reply_id: str | None) -> int | None:
    """How many characters of the reply the database holds (0: no row), ``None`` if it cannot tell."""
    if reply_id is None:
        return 0
    try:
        tree = await asyncio.wait_for(engine.sessions.stored_tree(session_id), STORED_READ_PATIENCE)
    except (StoreError, TimeoutError):
        return None
    return len(tree.get(reply_id).text) if reply_id in tree else 0


def _what_was_kept(kept: int | None, printed: int) -> str:
    """The end of ``ask``'s last line once it gave up on the reply's writes: what the database keeps.

    The reply's row holds the text of its last write that went through, and the next start
    marks it interrupted (its writer is gone).
    """
    if kept is None:
        return "Part of the reply may be saved, as interrupted; all of it was printed."
    if kept == 0:
        return "The reply was not saved (only printed)."
    if kept >= printed:
        return f"The reply's {kept:,} characters are saved, marked interrupted."
    return (
        f"The reply is saved up to {kept:,} of {printed:,} characters, as interrupted; "
        "the rest was only printed."
    )


class _ToldOfSaveTrouble(logging.Filter):
    """Keeps threadline's own warnings off standard error once ``ask`` has said the database
    refuses the reply's writes: the turn writer's retries, the engine giving the writes up and
    the lease it could not release all repeat that one trouble, which the last line sums up.

    Those warnings reach standard error through logging's last-resort handler (a command has
    no log file); before the trouble, and for any other logger, they pass as before.
    """

    def __init__(self) -> None:
        super().__init__()
        self.told = False

    def filter(self, record: logging.LogRecord) -> bool:
        ours = record.name == "threadline" or record.name.startswith("threadline.")
        return not (self.told and ours)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        handler = logging.lastResort
        if handler is None:
            yield
            return
        handler.addFilter(self)
        try:
            yield
        finally:
            handler.removeFilter(self)


def _compare_targets(args: argparse.Namespace) -> tuple[CompareTarget, ...]:
    """``--models``, checked before anything is stored (``()`` without it)."""
    spec = getattr(args, "models", None)
    if not spec:
        return ()
    if args.provider or args.model:
        raise CommandError("--models names each model itself; leave out --provider and --model")
    from threadline.cli.compare import parse_models

    try:
        return parse_models(spec)
    except ValueError as err:
        raise CommandError(str(err)) from err


async def _wait_until_saved(
    engine: EngineApi, session_id: str, printer: _StreamPrinter, stop: _StopOnInterrupt
) -> bool:
    """Wait for the turn to end and be stored; ``False`` when giving up on a refusing store."""
    idle = asyncio.ensure_future(engine.turns.wait_idle(session_id))
    try:
        while not idle.done():
            await asyncio.wait({idle}, timeout=0.2)
            printer.tell_if_waiting()
            failing_for = printer.save_failing_for()
            if stop.gave_up or (failing_for is not None and failing_for > ASK_SAVE_PATIENCE):
                return False  # ``aclose`` gives the unsaved writes up (and logs it)
        idle.result()  # an unexpected failure of the turn is raised, never taken for success
        return True
    finally:
        idle.cancel()


class _StopOnInterrupt:
    """Ctrl+C stops the turn (partial reply stored); a second one stops waiting for the store."""

    def __init__(self, engine: EngineApi, session_id: str) -> None:
        self._engine = engine
        self._session_id = session_id
        self.interrupted = False
        self.gave_up = False
        self._stopping_voice: asyncio.Future[None] | None = None

    def __enter__(self) -> _StopOnInterrupt:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_interrupt)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)

    def _on_interrupt(self) -> None:
        if self.interrupted:
            self.gave_up = True
        self.interrupted = True
        self._engine.turns.cancel(self._session_id)
        if self._engine.voice.state.active:  # ask --speak: the voice stops with the reply
            self._stopping_voice = asyncio.ensure_future(self._engine.voice.stop())


async def _allow_all(session_id: str, calls: tuple[ToolCall, ...]) -> list[Decision]:
    return [Decision(c.id, allow=True) for c in calls]


FIRST_BYTE_NOTICE = 3.0
"""Seconds without a byte of the reply before ``ask`` says on stderr that it is still waiting."""
NEEDS_YES_HINT = (
    "[a tool call that needs approval was not run: nobody can approve it here; "
    "ask again with --yes to allow such calls]"
)


def _tool_state(result: ToolResult) -> str:
    if NOT_ASKED_RESULT_TEXT in result.text:
        return "not run, it needs approval"
    return "error" if result.is_error else "ok"


class _StreamPrinter:
    """Writes reply text to stdout as it streams; tool activity and retries go to stderr.

    While the runtime "On this computer" loads the turn's model (``ModelLoading``, which can
    take many seconds) stderr says "Loading MODEL…": on a terminal as a status line that is
    wiped before anything else is written, otherwise as one plain line.
    """

    def __init__(self, out: TextIO, err: TextIO, told: _ToldOfSaveTrouble | None = None) -> None:
        from threadline.core.unicode_text import scrub

        self._printable = scrub
        """A lone surrogate (which stdout cannot encode) prints as U+FFFD, as it is stored."""
        self._out = out
        self._err = err
        self._told = told
        self._at_line_start = True
        self.reply_id: str | None = None
        """The reply being printed (the last one, after tool rounds)."""
        self.printed = 0
        """Characters of that reply printed so far."""
        self.error: UserFacingError | None = None
        self.save_error: UserFacingError | None = None
        self._save_failing_since: float | None = None
        self._hinted = False
        self._waiting_since: float | None = time.monotonic()
        """Since when a request has had no answer yet (``None``: the reply is arriving)."""
        self._waiting_told = False
        self._status_shown = False
        """A transient "Loading MODEL…" is on the terminal's last line (stderr is a terminal)."""

    def __call__(self, event: ConversationEvent) -> None:
        if isinstance(event, ModelLoading):
            self._loading(event)
            return
        if isinstance(event, TextDelta | ReasoningDelta) or (
            isinstance(event, MessageAdded) and event.message.is_assistant
        ):
            self._waiting_since = None
        if isinstance(event, TextDelta):
            if event.message_id != self.reply_id:
                self.reply_id, self.printed = event.message_id, 0
            self.printed += len(event.delta)
            self._clear_status()
            self._out.write(self._printable(event.delta)[0])
            self._out.flush()
            self._at_line_start = event.delta.endswith("\n")
        elif isinstance(event, MessageAdded) and event.message.kind in (
            MessageKind.TOOL_RESULTS,
            MessageKind.CANCELLED_TOOL_USES,
        ):
            self.end()
            for result in event.message.tool_results:
                self._err.write(f"[tool {result.tool_name or result.call_id}: {_tool_state(result)}]\n")
                if NOT_ASKED_RESULT_TEXT in result.text and not self._hinted:
                    self._hinted = True
                    self._err.write(NEEDS_YES_HINT + "\n")
            self._waiting_since = time.monotonic()  # the next round's request
            self._waiting_told = False
        elif isinstance(event, RetryScheduled):
            self._clear_status()
            self._err.write(f"[{event.describe()}]\n")
            self._waiting_since = time.monotonic() + event.delay  # the next attempt's wait
            self._waiting_told = False
        elif isinstance(event, TurnFailed):
            self.error = event.error
        elif isinstance(event, SaveStateChanged):
            self._saving(event)

    def _loading(self, event: ModelLoading) -> None:
        """Say the model is loading; the wait for its first byte starts once it is loaded."""
        if event.loading:
            self._waiting_since = None  # "waiting for the first byte" would only repeat it
            if self._err.isatty():
                self._err.write(f"\r\x1b[KLoading {event.model}…")
                self._status_shown = True
            else:
                self.end()
                self._err.write(f"Loading {event.model}…\n")
            self._err.flush()
        else:
            self._clear_status()
            self._waiting_since = time.monotonic()
            self._waiting_told = False

    def _clear_status(self) -> None:
        if self._status_shown:
            self._status_shown = False
            self._err.write("\r\x1b[K")
            self._err.flush()

    def _saving(self, event: SaveStateChanged) -> None:
        if event.saving and event.error is not None:
            if self._save_failing_since is None:
                self._save_failing_since = time.monotonic()
                self.end()
                self._err.write(f"[not saved yet: {event.error.message} Still trying.]\n")
                if self._told is not None:
                    self._told.told = True
            self.save_error = event.error
        elif not event.saving:
            self._save_failing_since = None
            self._clear_status()
            self._err.write("[saved]\n")
            if self._told is not None:
                self._told.told = False

    def tell_if_waiting(self) -> None:
        """After ``FIRST_BYTE_NOTICE`` s of silence, say once per attempt that the request is out.

        A server that accepts the connection and answers nothing would otherwise leave
        the terminal blank until the first-byte timeout (a minute by default).
        """
        since = self._waiting_since
        if since is None or self._waiting_told or time.monotonic() - since < FIRST_BYTE_NOTICE:
            return
        self._waiting_told = True
        self.end()
        self._err.write("[waiting for the first byte of the reply…]\n")
        self._err.flush()

    def save_failing_for(self) -> float | None:
        """Seconds the store has been refusing the turn's writes, or ``None`` while they go through."""
        return None if self._save_failing_since is None else time.monotonic() - self._save_failing_since

    def end(self) -> None:
        """Finish the reply's line on stdout (and wipe a status line off the terminal)."""
        self._clear_status()
        if not self._at_line_start:
            self._out.write("\n")
            self._out.flush()
            self._at_line_start = True
