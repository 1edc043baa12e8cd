"""Strings UTF-8 cannot encode: a lone UTF-16 surrogate, replaced by U+FFFD (pure, stdlib only).

JSON allows ``"\\ud800"`` and Python decodes it to a string holding a surrogate on
its own; ``os.scandir`` gives one for a file name that is not UTF-8. Such a string
cannot be written to a database, a terminal or a request body (all UTF-8). The
store repairs what it writes (``threadline.store.encodable``, which logs it), the
providers what they send, the command line what it prints: all with ``scrub``, so
the same text reads the same everywhere. A surrogate pair split in two code points
is joined into its character; a lone one becomes U+FFFD, so the loss shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD (pairs joined), and how many were replaced."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count(REPLACEMENT) - text.count(REPLACEMENT)


def scrub_value(value: Any) -> tuple[Any, int]:
    """``value`` (a string, or lists, tuples and dicts of them, keys included) scrubbed throughout,
    and how many lone surrogates were replaced; the same object comes back when nothing changed."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        count, changed = 0, False
        items: list[tuple[Any, Any]] = []
        for key, item in value.items():
            new_key, replaced_key = scrub_value(key)
            new_item, replaced_item = scrub_value(item)
            count += replaced_key + replaced_item
            changed = changed or new_key is not key or new_item is not item
            items.append((new_key, new_item))
        return (dict(items), count) if changed else (value, 0)
    if isinstance(value, list | tuple):
        count, changed = 0, False
        scrubbed: list[Any] = []
        for item in value:
            new_item, replaced = scrub_value(item)
            count += replaced
            changed = changed or new_item is not item
            scrubbed.append(new_item)
        if not changed:
            return value, 0
        return (scrubbed if isinstance(value, list) else tuple(scrubbed)), count
    return value, 0
