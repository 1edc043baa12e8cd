"""Headless commands: ``threadline ask`` and ``threadline provider …``.

``ask`` runs one turn through the same engine and store as the window, printing
the reply as it streams: for scripting, and for testing the engine without a
window. Failures print one line to standard error and exit non-zero.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import MessageKind, ToolCall
from threadline.engine.approval import Decision
from threadline.engine.events import (
    ConversationEvent,
    MessageAdded,
    RetryScheduled,
    TextDelta,
    TurnFailed,
    UserFacingError,
)

if TYPE_CHECKING:
    from threadline.engine.engine import Engine

EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """A problem to report in one line (bad arguments, unknown session, no keychain…)."""


def run_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    try:
        if args.command == "ask":
            return asyncio.run(ask(args, data_dir, database_url))
        return asyncio.run(provider_command(args, data_dir, database_url))
    except KeyboardInterrupt:
        print("threadline: interrupted; the partial reply was kept", file=sys.stderr)
        return EXIT_INTERRUPTED
    except CommandError as err:
        print(f"threadline: {err}", file=sys.stderr)
        return EXIT_FAILURE


async def _open_engine(data_dir: Path, database_url: str | None) -> Engine:
    from threadline.engine.engine import Engine
    from threadline.store.errors import StoreError

    try:
        return await Engine.open(data_dir, database_url=database_url)
    except StoreError as err:
        raise CommandError(err.user_message) from err


async def ask(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    prompt = args.prompt if args.prompt is not None else sys.stdin.read()
    if not prompt.strip():
        raise CommandError("no prompt given (pass it as an argument or on standard input)")
    engine = await _open_engine(data_dir, database_url)
    try:
        if args.session:
            if await engine.store.get_session(args.session) is None:
                raise CommandError(f"no session {args.session!r}")
            session_id = args.session
        else:
            session_id = (await engine.new_session()).id
        if args.provider or args.model:
            info = await engine.store.get_session(session_id)
            assert info is not None
            provider = args.provider or info.provider
            if provider and await engine.store.get_provider(provider) is None:
                raise CommandError(f"no provider named {provider!r} (see `threadline provider list`)")
            await engine.set_session_model(session_id, provider, args.model or "")
        if args.yes:
            engine.set_approval_handler(_allow_all)
        live = await engine.open_session(session_id)
        printer = _StreamPrinter(sys.stdout, sys.stderr)
        live.subscribe(printer)
        print(f"session {session_id}", file=sys.stderr)
        engine.send(session_id, prompt)
        await engine.wait_idle(session_id)
        printer.end()
        if printer.error is not None:
            print(f"threadline: {printer.error.message}", file=sys.stderr)
            return EXIT_FAILURE
        return 0
    finally:
        await engine.aclose()


async def _allow_all(session_id: str, calls: tuple[ToolCall, ...]) -> list[Decision]:
    return [Decision(c.id, allow=True) for c in calls]


class _StreamPrinter:
    """Writes reply text to stdout as it streams; tool activity and retries go to stderr."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self._out = out
        self._err = err
        self._at_line_start = True
        self.error: UserFacingError | None = None

    def __call__(self, event: ConversationEvent) -> None:
        if isinstance(event, TextDelta):
            self._out.write(event.delta)
            self._out.flush()
            self._at_line_start = event.delta.endswith("\n")
        elif isinstance(event, MessageAdded) and event.message.kind in (
            MessageKind.TOOL_RESULTS,
            MessageKind.CANCELLED_TOOL_USES,
        ):
            self.end()
            for result in event.message.tool_results:
                state = "error" if result.is_error else "ok"
                self._err.write(f"[tool {result.tool_name or result.call_id}: {state}]\n")
        elif isinstance(event, RetryScheduled):
            self._err.write(f"[{event.describe()}]\n")
        elif isinstance(event, TurnFailed):
            self.error = event.error

    def end(self) -> None:
        if not self._at_line_start:
            self._out.write("\n")
            self._out.flush()
            self._at_line_start = True


async def provider_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    from threadline.llm import credentials

    engine = await _open_engine(data_dir, database_url)
    try:
        if args.provider_command == "add":
            key = sys.stdin.readline().strip() if args.api_key_stdin else None
            if args.api_key_stdin and not key:
                raise CommandError("--api-key-stdin was given but standard input held no key")
            config = _provider_from_args(args, await engine.store.get_provider(args.name))
            try:
                await engine.save_provider(config, key)
            except credentials.KeychainUnavailableError as err:
                raise CommandError(str(err)) from err
            print(f"provider {config.name} saved")
        elif args.provider_command == "list":
            for config in await engine.list_providers():
                print(
                    "\t".join(
                        [
                            config.name,
                            config.kind.value,
                            config.base_url or "(default URL)",
                            config.default_model or "-",
                            _key_source(config),
                            _timeouts_shown(config),
                        ]
                    )
                )
        elif args.provider_command == "remove":
            if await engine.store.get_provider(args.name) is None:
                raise CommandError(f"no provider named {args.name!r}")
            await engine.remove_provider(args.name)
            print(f"provider {args.name} removed")
        elif args.provider_command == "models":
            from threadline.llm.errors import ProviderError

            try:
                models = await engine.list_models(args.name)
            except KeyError as err:
                raise CommandError(f"no provider named {args.name!r}") from err
            except ProviderError as err:
                raise CommandError(err.user_message) from err
            for model in models:
                print(model.id)
        return 0
    finally:
        await engine.aclose()


def _provider_from_args(args: argparse.Namespace, stored: ProviderConfig | None) -> ProviderConfig:
    """The provider ``provider add`` saves: the options given, over the stored provider's values.

    So ``provider add NAME --timeout 120`` changes one setting of an existing
    provider (the timeout messages point at that command). A timeout of 0 goes
    back to the app's default.
    """
    if stored is None:
        if args.kind is None:
            raise CommandError(f"--kind is required to add the new provider {args.name!r}")
        stored = ProviderConfig(name=args.name, kind=ProviderKind(args.kind))

    def timeout(given: float | None, kept: float | None) -> float | None:
        return kept if given is None else (given or None)

    return replace(
        stored,
        kind=stored.kind if args.kind is None else ProviderKind(args.kind),
        base_url=stored.base_url if args.base_url is None else args.base_url,
        api_key_env=stored.api_key_env if args.api_key_env is None else args.api_key_env,
        default_model=stored.default_model if args.model is None else args.model,
        first_byte_timeout=timeout(args.timeout, stored.first_byte_timeout),
        connect_timeout=timeout(args.connect_timeout, stored.connect_timeout),
    )


def _timeouts_shown(config: ProviderConfig) -> str:
    """E.g. "timeouts: connect 10 s (default), first byte 45 s" for ``provider list``."""
    from threadline.llm.timeouts import Timeouts

    effective = Timeouts.for_provider(config)

    def shown(own: float | None, value: float) -> str:
        return f"{value:g} s" + ("" if own else " (default)")

    return (
        f"timeouts: connect {shown(config.connect_timeout, effective.connect)}, "
        f"first byte {shown(config.first_byte_timeout, effective.first_byte)}"
    )


def _key_source(config: ProviderConfig) -> str:
    from threadline.llm import credentials

    if credentials.has_keychain_entry(config.name):
        return "key: keychain"
    if config.api_key_env:
        return f"key: ${config.api_key_env}"
    return "key: none"
