"""What a GGUF file says about itself: checked before a model is listed, read with ``gguf``.

The runtime needs the architecture, the trained context window and the chat template
(docs/local-models.md, "What the GGUF header gives"); the fit estimate needs the layer and
head counts to size the KV cache. The magic and version are checked by hand first, so a
file that is not GGUF gets a sentence naming it instead of a parser's traceback.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadline.models.errors import NotGgufError

MAGIC = b"GGUF"
KNOWN_VERSIONS = (2, 3)


@dataclass(frozen=True)
class GgufInfo:
    """The facts of one GGUF file that Threadline uses."""

    version: int
    architecture: str
    name: str | None = None
    context_length: int | None = None
    chat_template: str | None = None
    block_count: int | None = None
    embedding_length: int | None = None
    head_count: int | None = None
    head_count_kv: int | None = None

    def kv_bytes_per_token(self) -> int | None:
        """K and V at 16 bits for one token across all layers, when the header says enough."""
        if not (self.block_count and self.embedding_length and self.head_count):
            return None
        kv_heads = self.head_count_kv or self.head_count
        head_dim = self.embedding_length // self.head_count
        return 2 * self.block_count * kv_heads * head_dim * 2

    def as_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "architecture": self.architecture,
            "name": self.name,
            "context_length": self.context_length,
            "chat_template": self.chat_template,
            "block_count": self.block_count,
            "embedding_length": self.embedding_length,
            "head_count": self.head_count,
            "head_count_kv": self.head_count_kv,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GgufInfo:
        def num(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) else None

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        return cls(
            version=num("version") or 3,
            architecture=text("architecture") or "unknown",
            name=text("name"),
            context_length=num("context_length"),
            chat_template=text("chat_template"),
            block_count=num("block_count"),
            embedding_length=num("embedding_length"),
            head_count=num("head_count"),
            head_count_kv=num("head_count_kv"),
        )


def check_header(path: Path, name: str | None = None) -> int:
    """The GGUF version of ``path``; ``NotGgufError`` naming the file (``name``, shown) when it is not one."""
    shown = name or path.name
    try:
        with path.open("rb") as f:
            head = f.read(8)
    except OSError as err:
        raise NotGgufError(f"Could not read {shown}: {err.strerror or err}.") from err
    if len(head) < 8 or head[:4] != MAGIC:
        raise NotGgufError(
            f"{shown} is not a GGUF model file (it does not start with “GGUF”). "
            "Threadline runs models in the GGUF format only; look for a file ending in .gguf."
        )
    (version,) = struct.unpack("<I", head[4:8])
    if version not in KNOWN_VERSIONS:
        raise NotGgufError(
            f"{shown} is GGUF version {version}, which Threadline cannot read (it reads 2 and 3)."
        )
    return int(version)


def read_info(path: Path, name: str | None = None) -> GgufInfo:
    """The header facts of a GGUF file (the tensors are not read)."""
    shown = name or path.name
    version = check_header(path, shown)
    from gguf import GGUFReader

    try:
        reader = GGUFReader(path, "r")
    except Exception as err:  # the parser's failure on arbitrary bytes can be of any kind
        raise NotGgufError(f"{shown} is damaged: its GGUF header could not be read ({err}).") from err
    values: dict[str, Any] = {}
    for key, field in reader.fields.items():
        try:
            values[key] = field.contents()
        except (ValueError, IndexError, TypeError):
            continue
    arch = values.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise NotGgufError(f"{shown} does not name its architecture (general.architecture).")

    def number(key: str) -> int | None:
        value = values.get(f"{arch}.{key}")
        if isinstance(value, list):  # some models give a count per layer
            value = max(value) if value else None
        return int(value) if isinstance(value, int | float) else None

    template = values.get("tokenizer.chat_template")
    name = values.get("general.name")
    return GgufInfo(
        version=version,
        architecture=arch,
        name=name if isinstance(name, str) else None,
        context_length=number("context_length"),
        chat_template=template if isinstance(template, str) else None,
        block_count=number("block_count"),
        embedding_length=number("embedding_length"),
        head_count=number("attention.head_count"),
        head_count_kv=number("attention.head_count_kv"),
    )
