"""Refusing Office files (zips) that would inflate far beyond their size.

DOCX, XLSX and PPTX files are zip archives of XML. A crafted one can declare a
member of gigabytes stored in a few kilobytes; the libraries that parse them would
inflate it in full. The zip's central directory is read first (cheap: no member is
inflated) and the file is refused when its members are too many, too big in total,
or compressed too well to be real XML.

The directory may lie, though: a member declared as a few kilobytes can hold a
gigabyte of zeros, and ``zipfile``, asked for the whole member (as the parsers ask),
inflates up to 2 GB before it compares anything with the declared size. So every
member is then inflated once through :class:`~threadline.files.zip_members.MemberReader`,
keeping nothing, which refuses it as soon as it passes its declared size or its ratio
(docs/attachments.md). A file that passes inflates to exactly what its directory
declares, so the parser is never given more than the limits allow.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from threadline.documents.limits import DocumentLimits, describe_size
from threadline.documents.model import DocumentError
from threadline.files.zip_members import (
    MemberError,
    MemberOversized,
    MemberReader,
    MemberTooCompressed,
    MemberUnsupported,
)

RATIO_CHECK_FROM = 1024 * 1024
"""Members smaller than this inflated are not judged by ratio (tiny XML compresses very well)."""


def check_zip(path: Path, name: str, what: str, limits: DocumentLimits) -> None:
    """Raise ``DocumentError`` unless ``path`` is a zip within ``limits``; ``what`` is "Word document"…"""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        raise DocumentError(f"{name} could not be read: the {what} is damaged or incomplete.") from err
    if len(members) > limits.max_zip_entries:
        raise DocumentError(f"{name} holds too many parts ({len(members):,}) to be a real {what}.")
    total = 0
    for member in members:
        total += member.file_size
        if total > limits.max_unzipped_bytes:
            raise DocumentError(
                f"{name} unpacks to more than {describe_size(limits.max_unzipped_bytes)}; "
                "Threadline does not open it (it may be a zip bomb)."
            )
        stored = max(member.compress_size, 1)
        if member.file_size >= RATIO_CHECK_FROM and member.file_size / stored > limits.max_compression_ratio:
            raise DocumentError(
                f"{name} holds a part that unpacks {member.file_size // stored:,} times its size; "
                "Threadline does not open it (it may be a zip bomb)."
            )
    for member in members:
        _inflate_once(path, member, name, what, limits)


def _inflate_once(path: Path, member: zipfile.ZipInfo, name: str, what: str, limits: DocumentLimits) -> None:
    """Inflate ``member`` keeping nothing; refuse the file if it is not what its directory says."""
    try:
        with MemberReader(path, member, max_ratio=limits.max_compression_ratio) as reader:
            reader.drain()
    except (MemberTooCompressed, MemberOversized) as err:
        raise DocumentError(
            f"{name} holds a part that unpacks to far more than its size; "
            "Threadline does not open it (it may be a zip bomb)."
        ) from err
    except MemberUnsupported as err:
        raise DocumentError(
            f"{name} could not be read: the {what} is encrypted "
            "or compressed in a way Threadline cannot read."
        ) from err
    except (MemberError, OSError) as err:
        raise DocumentError(f"{name} could not be read: the {what} is damaged or incomplete.") from err
