"""A real MCP server (the SDK's MCPServer over stdio) whose tool answers with a picture and JSON.

``chart`` returns a 320×200 PNG — a blue bar chart drawn here with zlib, no imaging
library — together with a long one-line JSON text, which is what a chat must show:
the image as a thumbnail, the JSON wrapped inside the column.
"""

from __future__ import annotations

import json
import struct
import zlib

from mcp.server.mcpserver import Image, MCPServer

server = MCPServer("charts")
WIDTH, HEIGHT = 320, 200
BARS = (0.35, 0.8, 0.55, 0.95, 0.4)


def chart_png() -> bytes:
    """An RGB PNG: light background, five blue bars."""
    rows = []
    bar_width = WIDTH // (2 * len(BARS) + 1)
    for y in range(HEIGHT):
        row = bytearray(b"\x00")  # filter type: none
        for x in range(WIDTH):
            slot = x // bar_width
            bar = (slot - 1) // 2 if slot % 2 == 1 else -1
            filled = 0 <= bar < len(BARS) and HEIGHT - y <= BARS[bar] * (HEIGHT - 10)
            row += b"\x2f\x6f\xd0" if filled else b"\xf4\xf6\xfa"
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


@server.tool(structured_output=False)
def chart(title: str = "Sales") -> list[object]:
    """A bar chart of the figures, with the figures as JSON."""
    figures = {
        "title": title,
        "series": [{"quarter": f"Q{i + 1}", "share": share} for i, share in enumerate(BARS)],
    }
    figures["note"] = "x" * 400  # one long unbroken token: it must wrap, not overflow
    return [json.dumps(figures, separators=(",", ":")), Image(data=chart_png(), format="png")]


if __name__ == "__main__":
    server.run()
