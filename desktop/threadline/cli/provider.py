"""``threadline provider add|list|remove|models``: the providers the engine stores.

Keys go to the system keychain (``--api-key-stdin``) or stay in an environment variable
(``--api-key-env``); ``list`` never shows a key or a header's value.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from threadline.cli.common import CommandError, open_engine
from threadline.core.config import ProviderConfig, ProviderKind


async def provider_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    from threadline.llm import credentials

    engine = await open_engine(data_dir, database_url)
    try:
        if args.provider_command == "add":
            key = sys.stdin.readline().strip() if args.api_key_stdin else None
            if args.api_key_stdin and not key:
                raise CommandError("--api-key-stdin was given but standard input held no key")
            config = _provider_from_args(args, await engine.providers.get_provider(args.name))
            try:
                await engine.providers.save_provider(config, key)
            except credentials.CredentialsError as err:
                raise CommandError(str(err)) from err
            print(f"provider {config.name} saved")
        elif args.provider_command == "list":
            for config in await engine.providers.list_providers():
                print(
                    "\t".join(
                        [
                            config.name,
                            config.kind.value,
                            config.base_url or "(default URL)",
                            config.default_model or "-",
                            _key_source(config),
                            _timeouts_shown(config),
                            *_headers_shown(config),
                        ]
                    )
                )
        elif args.provider_command == "remove":
            if await engine.providers.get_provider(args.name) is None:
                raise CommandError(f"no provider named {args.name!r}")
            await engine.providers.remove_provider(args.name)
            print(f"provider {args.name} removed")
        elif args.provider_command == "models":
            from threadline.engine.providers import SetupError
            from threadline.llm.errors import ProviderError

            try:
                models = await engine.providers.list_models(args.name)
            except KeyError as err:
                raise CommandError(f"no provider named {args.name!r}") from err
            except (ProviderError, SetupError) as err:  # SetupError: a header without its value
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
        headers=_headers_from_args(args, stored.headers),
    )


def _headers_from_args(
    args: argparse.Namespace, kept: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """``--header`` pairs replace the provider's headers; ``--no-headers`` clears them; else kept.

    Values go to the keychain when the engine saves (``${VAR}`` stays a reference).
    """
    given: list[tuple[str, str]] = list(getattr(args, "header", None) or [])
    if getattr(args, "no_headers", False):
        if given:
            raise CommandError("give --header or --no-headers, not both")
        return ()
    if not given:
        return kept
    names = [name.lower() for name, _ in given]
    repeated = next((n for n, _ in given if names.count(n.lower()) > 1), None)
    if repeated is not None:
        raise CommandError(f"--header {repeated} is given twice: keep one")
    if any(not value for _, value in given):
        raise CommandError("--header needs a value: KEY=VALUE, or KEY=${VAR} to read it from the environment")
    return tuple(given)


def _headers_shown(config: ProviderConfig) -> list[str]:
    """E.g. ``headers: X-Org (keychain), X-Team ($TEAM)`` for ``provider list``; never a value."""
    from threadline.core.config import env_reference

    if not config.headers:
        return []
    shown = [
        f"{name} (${env_reference(v)})" if env_reference(v) else f"{name} (keychain)"
        for name, v in config.headers
    ]
    return ["headers: " + ", ".join(shown)]


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
