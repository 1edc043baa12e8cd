"""Command-line options shared by the parser (``__main__``) and the commands (``cli``).

Kept apart from ``cli`` so building the parser imports nothing heavy: the
window's start-up time includes it.
"""

from __future__ import annotations

import argparse
import math

from threadline.llm.timeouts import DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT

MAX_TIMEOUT_SECONDS = 3600.0


def seconds(text: str) -> float:
    """A timeout in seconds: a positive number up to an hour, or 0 for the app's default."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0 or value > MAX_TIMEOUT_SECONDS:
        raise argparse.ArgumentTypeError(
            f"{text} s is out of range (give 0 for the default, or up to {MAX_TIMEOUT_SECONDS:g} s)"
        )
    return value


def add_timeout_options(parser: argparse.ArgumentParser) -> None:
    """``--timeout`` (first byte) and ``--connect-timeout`` of ``provider add``."""
    parser.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help=f"wait this long for the first byte of a reply (0: default, {DEFAULT_FIRST_BYTE_TIMEOUT:g} s)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=seconds,
        metavar="SECONDS",
        help=f"wait this long for the connection to open (0: the default, {DEFAULT_CONNECT_TIMEOUT:g} s)",
    )
