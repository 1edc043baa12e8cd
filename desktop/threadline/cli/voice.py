"""``threadline speak`` and ``threadline transcribe``: the voice on the command line.

``speak --session ID`` reads the chat's replies aloud (``--last``: only the last one) with the
voice chosen in Settings → Voice, or writes them to a WAV file with ``--out``;
``transcribe FILE`` prints the text spoken in a recording. ``ask --speak`` (``cli/ask.py``)
reads its reply as it streams. docs/voice.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi


def add_voice_parsers(commands: Any, common: argparse.ArgumentParser) -> None:
    speak = commands.add_parser(
        "speak", parents=[common], help="read a chat's replies aloud, or write them to a WAV file"
    )
    speak.add_argument("--session", required=True, metavar="ID", help="the chat (an id or its start)")
    speak.add_argument("--last", action="store_true", help="only the last reply")
    speak.add_argument("--out", type=Path, metavar="FILE.wav", help="write the speech to this file instead")
    transcribe = commands.add_parser(
        "transcribe", parents=[common], help="print the text spoken in a recording (WAV)"
    )
    transcribe.add_argument("file", type=Path)
    transcribe.add_argument(
        "--provider", default="", metavar="NAME", help="the provider (default: Settings → Voice)"
    )
    transcribe.add_argument("--model", default="", metavar="M", help="the model (default: Settings → Voice)")


class VoiceCommandError(Exception):
    """Bad arguments: reported in one line by the caller."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    if args.command == "transcribe":
        if not args.file.is_file():
            raise VoiceCommandError(f"{args.file} is not a file")
        out.write(await engine.voice.transcribe(args.file, provider=args.provider, model=args.model) + "\n")
        return 0
    text = await _replies(engine, args.session, last=args.last)
    if args.out is not None:
        await engine.voice.speech_file(text, args.out)
        sys.stderr.write(f"Wrote {args.out}\n")
        return 0
    return await speak_aloud(engine, text)


async def speak_aloud(engine: EngineApi, markdown: str) -> int:
    """Read ``markdown`` to its end (Ctrl+C stops the voice too)."""
    try:
        await engine.voice.read_text(markdown)
        error = await finish_reading(engine, stopped=False)
    finally:
        await engine.voice.stop()
    if error:
        raise VoiceCommandError(error)
    return 0


async def finish_reading(engine: EngineApi, *, stopped: bool) -> str:
    """Wait for the voice to finish the reply (at once when the turn was stopped); why it
    stopped early, or ``""``."""
    import asyncio

    from threadline.engine.voice import ReadingState

    if stopped or not engine.voice.state.active:
        error = engine.voice.state.error
        await engine.voice.stop()
        return error
    done: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def changed(state: ReadingState) -> None:
        if not state.active and not done.done():
            done.set_result(state.error)

    unsubscribe = engine.voice.watch(changed)
    try:
        return await done
    finally:
        unsubscribe()


async def _replies(engine: EngineApi, session: str, *, last: bool) -> str:
    from threadline.core.messages import ASSISTANT_KINDS

    if await engine.sessions.get_session(session) is None:
        raise VoiceCommandError(f"no chat with id {session!r} (see `threadline list`)")
    tree = await engine.sessions.stored_tree(session)
    replies = [m for m in tree.path() if m.kind in ASSISTANT_KINDS and m.text.strip()]
    if not replies:
        raise VoiceCommandError(f"the chat {session} has no reply to speak")
    return replies[-1].text if last else "\n\n".join(m.text for m in replies)


async def voice_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """Open the engine, run the command; a refusal is one ``threadline:`` line."""
    from threadline.cli.common import CommandError, open_engine
    from threadline.engine.errors import EngineError
    from threadline.store.errors import StoreError

    engine = await open_engine(data_dir, database_url)
    try:
        return await run(engine, args)
    except VoiceCommandError as err:
        raise CommandError(str(err)) from err
    except (EngineError, StoreError) as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()
