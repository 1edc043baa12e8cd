"""The column types: PostgreSQL's dialect stays unimported on SQLite, and is used on PostgreSQL."""

from __future__ import annotations

import subprocess
import sys

from sqlalchemy.dialects import postgresql, sqlite

from threadline.store.coltypes import JSONValue


def test_the_store_and_engine_import_no_postgresql_dialect() -> None:
    code = (
        "import sys\n"
        "import threadline.store.repository, threadline.engine.engine\n"
        "loaded = [m for m in sys.modules if m.startswith('sqlalchemy.dialects.postgresql')]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr


def test_json_values_are_jsonb_on_postgresql_and_json_on_sqlite() -> None:
    on_postgres = postgresql.psycopg.dialect()  # type: ignore[no-untyped-call]
    assert JSONValue.compile(dialect=on_postgres) == "JSONB"
    assert JSONValue.compile(dialect=sqlite.dialect()) == "JSON"
    # The decorator hands SQLAlchemy the driver's own JSONB type (binds, casts, results).
    decorated = JSONValue.dialect_impl(on_postgres)
    assert isinstance(getattr(decorated, "impl_instance", None), postgresql.JSONB)
