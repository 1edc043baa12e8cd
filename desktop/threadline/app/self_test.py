"""``threadline --self-test``: prove a build or an install works, without a display.

The checks that need no Qt live here: the bundled resources are found, keyring found
its backends. The window part — Qt starting offscreen (so the platform and
image-format plugins must load), the app icon, the real engine on the database (so
SQLAlchemy, the dialect and the Alembic scripts must be there), the main window
painting, a session created, opened in a tab and deleted — is
``threadline.app.start.self_test_window``, imported only then: this module imports no PySide6.
It writes only to ``data_dir`` (or the database at ``database_url``).

Exit 0 and one ``… self-test OK`` line with the version and the data dir; otherwise exit 1
and one line on stderr that says which step failed — smoke tests grep these.
"""

from __future__ import annotations

import sys
from pathlib import Path


class SelfTestError(RuntimeError):
    """A check failed; the message says which."""


def _keychain() -> str:
    """The keyring backend in use; keyring finds its backends through entry points, so a build
    without keyring's metadata would silently have none (that is a packaging bug: fail)."""
    from importlib.metadata import entry_points

    if not list(entry_points(group="keyring.backends")):
        raise SelfTestError("keyring has no backends (its distribution metadata is missing)")
    import keyring

    backend = keyring.get_keyring()
    name = type(backend).__module__.removeprefix("keyring.backends.") + "." + type(backend).__name__
    return "none usable" if "fail" in name or "null" in name else name


def _check_database(data_dir: Path, database_url: str | None) -> None:
    """Fail on a damaged database: SQLite's page and search-index checks, or a read of every
    table on a server. A database that does not exist yet passes (the window part creates it).

    On a SQLite file the outcome is also recorded for other processes (``store.damage``):
    damage found makes writing commands refuse, and the failure names the backup to restore
    and the command; a file that passes has any earlier record cleared (it was repaired).
    """
    from threadline.engine.engine import DATABASE_FILENAME
    from threadline.store import damage
    from threadline.store.db import sqlite_path, sqlite_url
    from threadline.store.integrity import check_database

    url = database_url or sqlite_url(data_dir / DATABASE_FILENAME)
    problems = check_database(url)
    database = sqlite_path(url)
    if not problems:
        if database is not None:
            damage.clear_damage(database)
        return
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    advice = ""
    if database is not None:
        from threadline.engine.damage_advice import restore_advice

        damage.record_damage(database, damage.SEEN_BY_SELF_TEST, problems[0])
        advice = " " + restore_advice(database)
    raise SelfTestError(f"the database is damaged: {problems[0]}{more}.{advice}")


def run_self_test(data_dir: Path, database_url: str | None) -> int:
    """Run the checks; print one line; return the process exit status."""
    step = "starting"

    def set_step(name: str) -> None:
        nonlocal step
        step = name

    try:
        from threadline import __version__

        set_step("finding resources")
        from threadline.app.resources import resource_path

        resource_path("icons", "threadline.svg")

        set_step("checking the keychain")
        keychain = _keychain()

        set_step("checking the database")
        _check_database(data_dir, database_url)

        from threadline.app.start import self_test_window

        qt = self_test_window(data_dir, database_url, set_step)
    except Exception as err:  # one line, no traceback: the exit code and message are the result
        text = str(err).strip()
        detail = text.splitlines()[0] if text else ""
        reason = f"{type(err).__name__}: {detail}" if detail else type(err).__name__
        print(f"threadline self-test FAILED while {step}: {reason}", file=sys.stderr)
        return 1
    where = database_url.rsplit("@", 1)[-1] if database_url else str(data_dir)
    print(f"threadline {__version__} self-test OK: {qt}, keychain {keychain}, database in {where}")
    return 0
