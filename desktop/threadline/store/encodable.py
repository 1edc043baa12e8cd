"""Every text the store writes can be encoded: a lone surrogate becomes U+FFFD, with a log line.

A Python string may hold a UTF-16 surrogate on its own (``"\\ud800"``): JSON allows
the escape, so a model's stream, a tool's output or an imported file can hand one
over. UTF-8 cannot encode it, and both SQLite and PostgreSQL reject the write
(``UnicodeEncodeError``), which would fail the turn or the import. So the store
repairs text on its way into the database, in the one place every write passes:

* ``scrub_parameters`` runs on each statement's parameters just before the driver
  sees them (a SQLAlchemy ``before_cursor_execute`` hook installed by
  ``db.create_engine``): message text, titles, names — any string column, whatever
  statement wrote it;
* ``json_dumps`` is the engines' JSON serializer: tool arguments and results,
  metadata, settings (JSON escapes a lone surrogate as ``\\ud800``, which SQLite
  would keep and PostgreSQL's JSONB refuses).

The repair itself is ``threadline.core.unicode_text.scrub`` (a lone surrogate becomes
U+FFFD, so the loss is visible where the text is shown). Each repair is
logged (a warning naming the table and, where the driver tells, the column, never
the text). See docs/storage.md, "Text that cannot be encoded".
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from threadline.core.unicode_text import scrub_value

log = logging.getLogger("threadline.store")

_TABLE = re.compile(r"^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+\"?(\w+)", re.IGNORECASE)

_writing: ContextVar[str] = ContextVar("threadline_store_writing", default="the database")
"""The table the statement being prepared writes (for the JSON serializer's log line)."""


def scrub_parameters(statement: str, parameters: Any) -> Any:
    """A statement's parameters, strings scrubbed (the same object when nothing needed it)."""
    if isinstance(parameters, Mapping):
        changed = False
        fixed: dict[str, Any] = {}
        for key, value in parameters.items():
            new_value, replaced = scrub_value(value)
            if replaced:
                _logged(f"{table_of(statement)} ({key})", replaced)
            changed = changed or new_value is not value
            fixed[key] = new_value
        return fixed if changed else parameters
    new_parameters, replaced = scrub_value(parameters)
    if replaced:
        _logged(table_of(statement), replaced)
    return new_parameters


def json_dumps(value: Any) -> str:
    """``json.dumps`` as SQLAlchemy does it, with lone surrogates replaced first (and logged)."""
    text = json.dumps(value)
    if "\\ud" not in text:  # no surrogate escapes at all (an emoji's pair has them too)
        return text
    fixed, replaced = scrub_value(value)
    if fixed is value:
        return text  # pairs only, escaped as JSON allows
    if replaced:
        _logged(f"{_writing.get()} (JSON)", replaced)
    return json.dumps(fixed)


def table_of(statement: str) -> str:
    """The table an INSERT, UPDATE or DELETE writes, or "the database" for anything else."""
    match = _TABLE.match(statement)
    return match.group(1) if match else "the database"


def note_statement(statement: object) -> None:
    """Remember which table the statement about to be prepared writes (SQL text or a Core statement)."""
    table = getattr(statement, "table", None)
    name = getattr(table, "name", None)
    if isinstance(name, str):
        _writing.set(name)
    elif isinstance(statement, str):
        _writing.set(table_of(statement))
    else:
        _writing.set("the database")


def _logged(where: str, replaced: int) -> None:
    log.warning(
        "%d character(s) that cannot be stored (lone UTF-16 surrogates) were written as U+FFFD in %s",
        replaced,
        where,
    )
