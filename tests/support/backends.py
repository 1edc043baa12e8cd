"""``BACKENDS``: the parameters that run a test once on SQLite and once on a real PostgreSQL server.

Use it as ``@pytest.fixture(params=BACKENDS)`` and branch on ``request.param``. The PostgreSQL case
carries the ``postgres`` marker, so ``-m "not postgres"`` leaves it out where no server can start.
"""

from __future__ import annotations

import pytest

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
