"""The suite's guards fail the tests they should: logged errors and warnings, Qt warnings.

A guard that never fires looks the same as a guard that works, so each one is
tried here: a small test file runs in a fresh pytest (``pytester``) with this
repository's own pyproject settings and tests/conftest.py, and every case must
end the way the guard promises.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

ROOT = Path(__file__).resolve().parents[2]

CASES = """
import logging

import pytest
from PySide6.QtCore import qWarning

ours = logging.getLogger("threadline.engine")


def test_error_fails():
    logging.getLogger("somewhere").error("the disk is on fire")


@pytest.mark.expected_log_errors
def test_expected_error_passes():
    ours.error("provoked on purpose")


def test_our_warning_fails():
    ours.warning("something looks wrong")


@pytest.mark.expected_log_warnings
def test_expected_warning_passes():
    ours.warning("provoked on purpose")


@pytest.mark.expected_log_warnings("store refused")
def test_warning_matching_the_pattern_passes():
    ours.warning("background store work failed: store refused")


@pytest.mark.expected_log_warnings("store refused")
def test_other_warning_than_the_pattern_fails():
    ours.warning("a different warning")


def test_other_libraries_warnings_pass():
    logging.getLogger("httpx").warning("not ours to judge")


def test_qt_warning_fails(qapp):
    qWarning("QObject::connect: no such signal")


def test_ignored_qt_message_passes(qapp):
    qWarning("This plugin does not support propagateSizeHints()")


@pytest.fixture
def warns_on_teardown(qapp):
    yield
    qWarning("QThread: Destroyed while thread is still running")


def test_qt_warning_in_teardown_fails(warns_on_teardown):
    pass
"""


@pytest.fixture
def outcomes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    # The copied conftest imports ``tests.support``: the fresh pytest finds it from the repository.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    pytester.makepyprojecttoml((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_cases=CASES)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", "test_cases.py")


def test_each_guard_fails_what_it_should_and_passes_the_rest(outcomes: pytest.RunResult) -> None:
    # A log guard or the teardown check ends a test in its teardown: pytest reports an ERROR.
    failing = {
        "test_error_fails": "ERROR",
        "test_our_warning_fails": "ERROR",
        "test_other_warning_than_the_pattern_fails": "ERROR",
        "test_qt_warning_fails": "FAILED",
        "test_qt_warning_in_teardown_fails": "ERROR",
    }
    passing = [
        "test_expected_error_passes",
        "test_expected_warning_passes",
        "test_warning_matching_the_pattern_passes",
        "test_other_libraries_warnings_pass",
        "test_ignored_qt_message_passes",
    ]
    summary = [
        line for line in outcomes.outlines if line.startswith(("ERROR test_cases", "FAILED test_cases"))
    ]
    assert sorted(line.split(" ")[1].split("::")[1] for line in summary) == sorted(failing)
    for name, how in failing.items():
        assert any(line.startswith(f"{how} test_cases.py::{name}") for line in summary), name
    assert not any(name in line for line in summary for name in passing)
    outcomes.stdout.fnmatch_lines_random(
        [
            "*unexpected errors were logged*",
            "*somewhere: the disk is on fire*",
            "*unexpected warnings were logged*",
            "*threadline.engine: a different warning*",
            "*QObject::connect: no such signal*",
            "*Qt warnings during teardown*",
            "*QThread: Destroyed while thread is still running*",
        ]
    )
    outcomes.assert_outcomes(passed=9, failed=1, errors=4)  # errors come on top of a passed call
