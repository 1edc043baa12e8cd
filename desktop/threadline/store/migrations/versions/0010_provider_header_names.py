"""Provider header values leave the database: moved to the system keychain, or dropped with a notice.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-29

Versions before this one could leave a provider's header values (``X-Org: …``,
``Authorization: Bearer …``) in ``providers.headers``, where every request read them
and ``db copy`` carried them to another database. A header's name does not tell
whether its value is a credential, so each value is now moved to the system keychain
(``credentials.set_header_value``, as typing it again would) and the row keeps only
``[name, ""]``. A value written ``${VAR}`` names an environment variable, not a
secret, and stays as it is.

Where there is no keychain (a headless Linux) a value cannot be kept safely: it is
dropped and one notice per provider says which headers lost their values and how to
set them again, in the log and in the ``notices`` setting that the next window or command
shows once. Their names stay, so a request through that provider stops with the
same advice instead of going out without them. docs/storage.md ("Secrets").

Downgrading cannot give the values back (they are not in the database any more); it
leaves the names-only rows, which older versions read as headers with empty values.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from threadline.core.config import env_reference
from threadline.store.coltypes import JSONValue

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("threadline.store")

_providers = sa.table("providers", sa.column("name", sa.String), sa.column("headers", JSONValue))
_settings = sa.table("settings", sa.column("key", sa.String), sa.column("value", JSONValue))
NOTICES = "notices"
"""``threadline.store.key_values.NOTICES_SETTING`` (written here as it is at this revision)."""


def legacy_pairs(stored: Any) -> list[tuple[str, str]]:
    """The (name, value) pairs of a ``headers`` value as older versions wrote it (pairs or a mapping)."""
    if isinstance(stored, dict):
        return [(str(k), "" if v is None else str(v)) for k, v in stored.items()]
    return [
        (str(e[0]), "" if len(e) < 2 or e[1] is None else str(e[1]))
        for e in stored or ()
        if isinstance(e, list | tuple) and e
    ]


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.select(_providers.c.name, _providers.c.headers)).all()
    for name, stored in rows:
        pairs = legacy_pairs(stored)
        kept = [[header, value if env_reference(value) is not None else ""] for header, value in pairs]
        secret = [(header, value) for header, value in pairs if value and env_reference(value) is None]
        if secret:
            _move_to_keychain(name, secret)
        if kept != stored:
            connection.execute(sa.update(_providers).where(_providers.c.name == name).values(headers=kept))


def _move_to_keychain(provider: str, secret: list[tuple[str, str]]) -> None:
    """Keep each value in the keychain; the ones that cannot be kept are named in one warning."""
    from threadline.llm import credentials  # the keychain: imported only when there is something to move

    available = credentials.keychain_available()
    dropped: list[str] = []
    for header, value in secret:
        try:
            if not available:
                raise credentials.CredentialsError("no keychain")
            credentials.set_header_value(provider, header, value)
        except credentials.CredentialsError:
            dropped.append(header)
    if not dropped:
        return
    why = "there is no system keychain to move it to" if not available else "the system keychain refused it"
    options = " ".join(f"--header '{h}=${{{credentials.header_variable(h)}}}'" for h in dropped)
    notice = (
        f"Provider {provider}: the value of header {', '.join(dropped)} was kept in the database by an "
        f"older version and {why}, so it was removed. Set it again from an environment variable: "
        f"threadline provider add {provider} {options} (or, with a keychain, --header 'NAME=VALUE', or "
        "Settings → Providers → Headers)."
    )
    log.info("%s", notice)
    _add_notice(notice)


def _add_notice(notice: str) -> None:
    """Leave ``notice`` in the ``notices`` setting: the next window or command shows it, once."""
    connection = op.get_bind()
    held = connection.execute(sa.select(_settings.c.value).where(_settings.c.key == NOTICES)).first()
    if held is None:
        connection.execute(sa.insert(_settings).values(key=NOTICES, value=[notice]))
        return
    notices = list(held.value) if isinstance(held.value, list) else []
    connection.execute(
        sa.update(_settings).where(_settings.c.key == NOTICES).values(value=[*notices, notice])
    )


def downgrade() -> None:
    """Nothing to undo in the schema; the moved values stay in the keychain."""
