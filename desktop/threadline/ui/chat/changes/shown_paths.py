"""A changed file's path as the user reads it: relative to the allowed folder, always printable.

Paths arrive the way ``os.fsdecode`` gives them (docs/workspace.md): a name that is not UTF-8
keeps its bytes as lone surrogates, which Qt cannot draw and which a ``str.encode`` refuses.
For display only, those bytes become U+FFFD (the replacement character) and control
characters their visible symbols (a newline in a file name shows as ␊), so a strange name
never breaks a row; the path itself, kept in the ``FileChange``, is never rewritten.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTENT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def printable(text: str) -> str:
    """``text`` with undecodable bytes as U+FFFD and control characters as their symbols (␀…␟, ␡)."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
        raw = text.encode("utf-8", "replace")
    shown = raw.decode("utf-8", "replace")
    return _CONTROL.sub(lambda m: "\u2421" if m.group() == "\x7f" else chr(0x2400 + ord(m.group())), shown)


def printable_content(text: str) -> str:
    """File content (a diff) for display: like :func:`printable`, but tabs and line ends stay."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "replace")
    shown = raw.decode("utf-8", "replace")
    return _CONTENT_CONTROL.sub(
        lambda m: "\u2421" if m.group() == "\x7f" else chr(0x2400 + ord(m.group())), shown
    )


def relative(path: str, root: str | None) -> str:
    """``path`` relative to ``root`` when it lies inside it (``/`` or ``\\`` separated, as the path is)."""
    if not root:
        return path
    base = root.rstrip("/\\")
    for sep in ("/", "\\"):
        if path.startswith(base + sep):
            return path[len(base) + 1 :]
    return path


def shown_path(path: str, root: str | None = None) -> str:
    """The path for a list or a title: inside ``root`` when given, printable."""
    return printable(relative(path, root))


def split_name(shown: str) -> tuple[str, str]:
    """(folder with its trailing separator, file name) of a shown path: the name is drawn stronger."""
    cut = max(shown.rfind("/"), shown.rfind("\\"))
    return shown[: cut + 1], shown[cut + 1 :]
