"""Keeping file-system tools inside the folders the user allowed (docs/design.md §6).

Every path a model gives is resolved (``..`` collapsed, symlinks followed, a
relative path taken from the first allowed folder) and must then lie inside one
of the agent's ``allowed_folders``, themselves resolved. A symlink inside an
allowed folder that points out of it is therefore refused, as are ``../`` and
absolute paths elsewhere. (A link swapped between the check and the use is not
defended against; the tools run for one user on their own machine.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from threadline.tools.context import current_tool_context


class OutsideAllowedFolders(Exception):
    """A path the tool was asked to touch is not inside an allowed folder."""


def allowed_roots(folders: Sequence[str] | None = None) -> list[Path]:
    """The allowed folders of the running call (or ``folders``), resolved."""
    if folders is None:
        try:
            folders = current_tool_context().allowed_folders
        except LookupError:
            folders = ()
    roots = [Path(f).expanduser().resolve() for f in folders if f]
    if not roots:
        raise OutsideAllowedFolders(
            "No folder is allowed for this agent, so file and shell tools cannot run. "
            "Add a folder to the agent's allowed folders in Settings."
        )
    return roots


def inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_path(raw: str, folders: Sequence[str] | None = None) -> Path:
    """``raw`` resolved and checked; raises ``OutsideAllowedFolders`` with a clear message."""
    roots = allowed_roots(folders)
    if not isinstance(raw, str) or not raw.strip():
        raise OutsideAllowedFolders("A path is required.")
    if "\x00" in raw:
        raise OutsideAllowedFolders("The path contains a NUL character.")
    candidate = Path(raw).expanduser()
    if not candidate.is_absolute():
        candidate = roots[0] / candidate
    resolved = candidate.resolve()
    if not inside(resolved, roots):
        shown = ", ".join(str(r) for r in roots)
        raise OutsideAllowedFolders(
            f"Refused: {raw!r} resolves to {resolved}, which is outside the folders this agent may "
            f"use ({shown})."
        )
    return resolved


def display(path: Path, roots: Sequence[Path]) -> str:
    """``path`` relative to the first allowed folder when inside it, else absolute."""
    if roots and path.is_relative_to(roots[0]):
        return str(path.relative_to(roots[0])) or "."
    return str(path)
