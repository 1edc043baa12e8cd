"""Sizes of files as a person reads them, said the same way everywhere a file's size is shown.

Files (a changed file, the space left on a disk, an attachment) are shown as a file manager
on Windows shows them: powers of 1024 with the familiar unit names. Model downloads are the
exception, in ``models/fit.py``: they are shown in powers of 1000, as the Hugging Face Hub and
disk makers state them, so the figure matches the model's page.
"""

from __future__ import annotations


def readable_size(size: int) -> str:
    """``size`` bytes: "1 byte", "740 bytes", "12 KB", "3.4 MB", "1.2 GB", "2.0 TB"."""
    if size < 1024:
        return "1 byte" if size == 1 else f"{size} bytes"
    value = float(size) / 1024
    units = ["KB", "MB", "GB", "TB"]
    while value >= 1024 and len(units) > 1:
        value /= 1024
        units.pop(0)
    return f"{value:.0f} {units[0]}" if value >= 10 else f"{value:.1f} {units[0]}"
