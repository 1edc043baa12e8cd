"""Which computer's files a change set is about: an id kept in the data folder.

With a server database several computers share the change lists, but the snapshot bytes
stay on the computer whose files they are (docs/workspace.md, "One machine's files"). The
id is made once, at random, and kept in ``<data dir>/machine-id``: a host name can change
or repeat, a random id does not.
"""

from __future__ import annotations

import os
from pathlib import Path

from threadline.files.private import PRIVATE_FILE, private_folder

MACHINE_FILE = "machine-id"


def machine_id(data_dir: Path) -> str:
    """This computer's id, made and written the first time it is asked for."""
    path = Path(data_dir) / MACHINE_FILE
    try:
        known = path.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        known = ""
    if known:
        return known
    import uuid

    made = uuid.uuid4().hex
    private_folder(path.parent)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:  # another process made it meanwhile: theirs counts
        return path.read_text("ascii").strip() or made
    with os.fdopen(descriptor, "w", encoding="ascii") as out:
        out.write(made + "\n")
    return made
