"""The app's log: the root logger to a rotating file in the data folder, with secrets masked.

Started first thing in ``app.run_gui``, before Qt and the window: records are held in
memory (``hold_records``) until the window, once it has painted whole, opens the file
(``setup_logging(held=…)``) and writes them first. So everything that follows — Qt's own
messages (routed here by ``ui.common.qt_messages``), exceptions in
threads (``threading.excepthook``), errors the asyncio loop could not hand to anyone
(its exception handler) and the crash handler's tracebacks — lands in one file the user
can send: ``<data dir>/logs/threadline.log``, rotated at ``MAX_BYTES`` with
``BACKUP_COUNT`` older files kept.

Secrets: nothing in the app formats an API key into a log message on purpose, but an
exception text or a URL may carry one (``Authorization: Bearer …``, ``?api_key=…``,
``sk-…``). The formatter masks those in the final line, tracebacks included, so the
file is safe to attach to a bug report.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from threadline.files.private import open_private, private_folder

log = logging.getLogger("threadline.app.logging_setup")
asyncio_log = logging.getLogger("threadline.asyncio")

LOG_DIR_NAME = "logs"
LOG_FILE_NAME = "threadline.log"
MAX_BYTES = 2 * 1024 * 1024
BACKUP_COUNT = 4
FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

_SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    # "Authorization: Bearer abc", "x-api-key: abc", "api_key=abc", '"api_key": "abc"'
    (
        (
            r"""(?i)((?:authorization|proxy-authorization|x-api-key|api[_-]?key|access[_-]?token|"""
            r"""secret|password|token)["']?\s*[:=]\s*["']?)(?:bearer\s+|basic\s+)?[^\s"',;&}]+"""
        ),
        r"\1***",
    ),
    (r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1***"),
    # "?key=…" in a URL (Google-style APIs), whatever the parameter's spelling.
    (r"(?i)([?&](?:key|apikey|api_key|token|access_token|auth)=)[^&\s\"']+", r"\1***"),
    # Vendor key shapes: OpenAI / Anthropic "sk-…", OpenRouter "sk-or-…", Groq "gsk_…", Google "AIza…".
    (r"\b(?:sk|gsk|xai)[-_][A-Za-z0-9_-]{8,}", "***"),
    (r"\bAIza[A-Za-z0-9_-]{20,}", "***"),
    # user:password@ in URLs (PostgreSQL addresses).
    (r"(://[^/\s:@]+:)[^@\s/]+@", r"\1***@"),
)


@functools.cache
def _secret_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Compiled on the first line written, not at import: the window imports this module
    before its first paint and opens the log after it (docs/performance.md, "Window")."""
    return tuple((re.compile(pattern), replacement) for pattern, replacement in _SECRET_PATTERNS)


def mask_secrets(text: str) -> str:
    """``text`` with anything shaped like a credential replaced by ``***``."""
    for pattern, replacement in _secret_patterns():
        text = pattern.sub(replacement, text)
    return text


class SecretMaskingFormatter(logging.Formatter):
    """A formatter whose output (message, arguments and traceback alike) has secrets masked."""

    def format(self, record: logging.LogRecord) -> str:
        return mask_secrets(super().format(record))


class LoggingSetup:
    """What ``setup_logging`` installed, so it can be undone (tests, a second window in-process).

    A plain class, not a dataclass: the window imports this module before its first paint,
    and ``dataclasses`` is not otherwise imported by then (docs/performance.md, "Window").
    """

    def __init__(
        self,
        log_path: Path | None,
        handler: logging.Handler,
        previous_level: int,
        previous_thread_hook: Callable[[threading.ExceptHookArgs], Any],
    ) -> None:
        self.log_path = log_path
        self.handler = handler
        self.previous_level = previous_level
        self.previous_thread_hook = previous_thread_hook
        self.extras: list[Callable[[], None]] = []
        """Further undo steps, run in reverse order by ``close``."""

    def close(self) -> None:
        root = logging.getLogger()
        root.removeHandler(self.handler)
        root.setLevel(self.previous_level)
        self.handler.close()
        if threading.excepthook is _thread_exception:
            threading.excepthook = self.previous_thread_hook
        for undo in reversed(self.extras):
            undo()


def log_dir(data_dir: Path) -> Path:
    return data_dir / LOG_DIR_NAME


def log_file(data_dir: Path) -> Path:
    """Where ``setup_logging`` writes the log (it falls back to stderr if it cannot)."""
    return log_dir(data_dir) / LOG_FILE_NAME


class HeldRecords(logging.Handler):
    """Log records made before the log file is open, kept in memory until ``setup_logging`` writes them.

    The window opens its log only once it has painted whole: creating the rotating file
    handler (``logging.handlers`` and what it imports), the folder and the file, and
    formatting the first line with the secret patterns was a measurable part of the first
    frame. Until
    then this handler keeps every record, with its own time, and ``setup_logging(held=…)``
    writes them first, in order, so nothing is lost (docs/performance.md, "Window").
    """

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        root = logging.getLogger()
        self.previous_level = root.level
        self.previous_thread_hook = threading.excepthook

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def hold_records(*, level: int = logging.INFO) -> HeldRecords:
    """Log into memory from now on (and route threads' exceptions), until ``setup_logging(held=…)``."""
    held = HeldRecords()
    root = logging.getLogger()
    root.addHandler(held)
    root.setLevel(level)
    threading.excepthook = _thread_exception
    return held


def setup_logging(
    data_dir: Path, *, level: int = logging.INFO, held: HeldRecords | None = None
) -> LoggingSetup:
    """Send the root logger to ``<data_dir>/logs/threadline.log`` (stderr if that cannot be written).

    ``held``: the records ``hold_records`` kept meanwhile are written first, and its handler goes.
    """
    path: Path | None = log_file(data_dir)
    handler: logging.Handler
    try:
        assert path is not None
        private_folder(path.parent)
        handler = _private_rotating_handler(path)
    except OSError as err:
        path = None
        handler = logging.StreamHandler(sys.stderr)
        sys.stderr.write(f"threadline: cannot write the log in {data_dir}: {err.strerror or err}\n")
    handler.setFormatter(SecretMaskingFormatter(FORMAT))
    root = logging.getLogger()
    if held is not None:
        setup = LoggingSetup(path, handler, held.previous_level, held.previous_thread_hook)
    else:
        setup = LoggingSetup(path, handler, root.level, threading.excepthook)
    root.addHandler(handler)
    root.setLevel(level)
    threading.excepthook = _thread_exception
    if held is not None:
        root.removeHandler(held)
        for record in held.records:
            handler.handle(record)
        held.records.clear()
    log.info("log started (%s)", path or "stderr")
    return setup


def _private_rotating_handler(path: Path) -> logging.Handler:
    """A ``RotatingFileHandler`` whose files (the first, and each one after a rotation) are
    created readable by the user alone (docs/storage.md, "Who can read the files")."""
    import logging.handlers

    class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
        def _open(self) -> io.TextIOWrapper:  # "a": the mode of a handler that rotates
            return open_private(self.baseFilename, "a", encoding=self.encoding or "utf-8", errors=self.errors)

    return PrivateRotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8", delay=False
    )


def _thread_exception(args: threading.ExceptHookArgs) -> None:
    """An exception that ended a thread: log it, then let the crash handler (``sys.excepthook``) see it."""
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    if args.exc_value is None:
        log.error("thread %s ended with %s", name, args.exc_type.__name__)
        return
    sys.excepthook(args.exc_type, args.exc_value, args.exc_traceback)


def install_loop_exception_handler(loop: asyncio.AbstractEventLoop) -> None:
    """Route the loop's own error reports (a task's exception nobody retrieved, a failing callback).

    A task that died with an exception nobody awaited is a bug like any other: it goes to
    the crash handler. Transport noise the loop reports (a peer closing a socket: an
    ``OSError``) is logged as a warning; anything else the loop reports, as an error.
    """

    def handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        err = context.get("exception")
        message = str(context.get("message") or "asyncio error")
        is_task = "task" in context or "future" in context or "handle" in context
        if isinstance(err, Exception) and is_task and not isinstance(err, OSError):
            asyncio_log.warning("%s (handed to the crash handler)", message)
            sys.excepthook(type(err), err, err.__traceback__)
            return
        level = logging.WARNING if isinstance(err, OSError) else logging.ERROR
        exc_info = (type(err), err, err.__traceback__) if err is not None else None
        asyncio_log.log(level, "%s", message, exc_info=exc_info)

    loop.set_exception_handler(handler)
