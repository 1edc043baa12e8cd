"""Suite-wide rules: a test fails when the code logs an error it did not expect.

Errors in the log are how unexpected failures show up in a desktop app (the
engine logs and carries on), so a test that provokes one on purpose says so
with ``@pytest.mark.expected_log_errors``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


class _ErrorCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def fail_on_unexpected_log_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    collector = _ErrorCollector()
    root = logging.getLogger()
    root.addHandler(collector)
    try:
        yield
    finally:
        root.removeHandler(collector)
    if collector.records and request.node.get_closest_marker("expected_log_errors") is None:
        lines = "\n".join(f"{r.name}: {r.getMessage()}" for r in collector.records[:5])
        pytest.fail(f"unexpected errors were logged:\n{lines}", pytrace=False)
