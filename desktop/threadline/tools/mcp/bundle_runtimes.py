"""Whether this computer's Node or Python is one a bundle says it works with.

A bundle's manifest may name the versions of its runtime in ``compatibility.runtimes``
(``{"node": ">=18.0.0", "python": ">=3.10 <4"}``), as npm version ranges. A server started on
an older Node usually fails at its first line with a syntax error the person cannot place, so
the install dialog and ``threadline mcp install`` say before installing which version is
needed and which one is here (docs/mcp.md, "Bundles").

The ranges are matched here rather than with a semver package: the manifests use the plain
comparator forms (``>=``, ``<``, ``^``, ``~``, ``x``, ``||``, hyphen ranges), the versions to
compare are a runtime's own three numbers, and the Python packages that read npm ranges are
either unmaintained or pull in more than these forty lines. A range this does not read is
reported as not checked, never as a refusal.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable

from threadline.tools.mcp.bundle_manifest import Manifest

Version = tuple[int, int, int]

_NAMES = {"node": "Node.js", "python": "Python"}
_PARTIAL = re.compile(r"v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+]\S*)?")


class RangeUnreadable(ValueError):
    """A version range in a form :func:`satisfies` does not read."""


def parse_version(text: str) -> Version | None:
    """``v20.11.1`` or ``Python 3.11.7`` → ``(20, 11, 1)``; ``None`` when there is no version."""
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2)), int(found.group(3) or 0)


def satisfies(version: Version, spec: str) -> bool:
    """Whether ``version`` is in the npm range ``spec``; ``RangeUnreadable`` for a form not read."""
    return any(_in_set(version, part.strip()) for part in spec.split("||"))


def _in_set(version: Version, spec: str) -> bool:
    """A comparator set: every word holds (``>=1.2 <2``), or a hyphen range (``1.2 - 2``)."""
    hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", spec)
    if hyphen:
        low, _ = _partial(hyphen.group(1))
        _, high = _partial(hyphen.group(2))  # inclusive of the whole upper partial: "- 2" ends before 3
        return version >= low and (high is None or version < high)
    words = re.sub(r"(>=|<=|>|<|=|\^|~)\s+", r"\1", spec).split()
    return all(_check(version, word) for word in words)


def _check(version: Version, word: str) -> bool:
    op = re.match(r"(>=|<=|>|<|=|\^|~)?", word)
    assert op is not None  # an optional group always matches
    low, high = _partial(word[op.end() :])
    match op.group(1):
        case ">=":
            return version >= low
        case ">":
            return high is not None and version >= high
        case "<":
            return version < low
        case "<=":
            return high is None or version < high
        case "^":
            return low <= version < _caret_end(word[1:], low)
        case "~":
            end = (low[0], low[1] + 1, 0) if re.match(r"v?\d+\.\d", word[1:]) else (low[0] + 1, 0, 0)
            return low <= version < end
        case _:
            return version >= low and (high is None or version < high)


def _partial(text: str) -> tuple[Version, Version | None]:
    """The versions a partial version covers, as ``[low, high)``: ``1.2`` is 1.2.0 up to 1.3.0,
    ``1.2.3`` only itself, ``*`` (or ``x``) everything (``high`` None: no end)."""
    found = _PARTIAL.fullmatch(text)
    if found is None:
        raise RangeUnreadable(text)
    major, minor, patch = (None if g is None or not g.isdigit() else int(g) for g in found.groups())
    if major is None:
        return (0, 0, 0), None
    if minor is None:
        return (major, 0, 0), (major + 1, 0, 0)
    if patch is None:
        return (major, minor, 0), (major, minor + 1, 0)
    return (major, minor, patch), (major, minor, patch + 1)


def _caret_end(text: str, low: Version) -> Version:
    """``^`` allows changes that keep the first non-zero number given (``^0.2.3`` stays below 0.3.0)."""
    given = len(re.findall(r"\d+", text))
    major, minor, patch = low
    if major > 0 or given == 1:
        return (major + 1, 0, 0)
    if minor > 0 or given == 2:
        return (0, minor + 1, 0)
    return (0, 0, patch + 1)


def installed_version(program: str) -> Version | None:
    """The version ``program --version`` prints, or ``None`` when it is absent or says none."""
    path = shutil.which(program)
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=30, check=False
        )  # a runtime's --version answers at once; the bound only keeps a broken one from hanging
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(done.stdout or done.stderr)


def runtime_problem(
    manifest: Manifest, version_of: Callable[[str], Version | None] = installed_version
) -> str:
    """What stands between this computer and the bundle's server, as a sentence, or ``""``.

    The program it starts (``node`` for a Node server) must be on this computer; where the
    manifest names a range for that runtime, the version here must be in it.
    """
    command = manifest.launch.command
    if "${" in command or "/" in command or "\\" in command:
        return ""  # a program inside the bundle: nothing to look for
    runtime = next((r for r in ("node", "python") if command.startswith(r)), "")
    spec = manifest.runtimes.get(runtime, "") if runtime else ""
    if shutil.which(command) is None:
        wanted = f" ({_NAMES[runtime]} {spec})" if spec else ""
        return (
            f"It needs {command}{wanted}, which is not found on this computer: "
            "install it before the server can start."
        )
    if not spec:
        return ""
    version = version_of(command)
    name = _NAMES[runtime]
    if version is None:
        return f"It needs {name} {spec}; the version of {command} here could not be read."
    here = ".".join(map(str, version))
    try:
        if satisfies(version, spec):
            return ""
    except RangeUnreadable:
        return f"It asks for {name} {spec}, a range Threadline cannot read; this computer has {here}."
    return f"It needs {name} {spec}, and this computer has {here}: update it before the server can start."
