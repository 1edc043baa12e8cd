"""Render every icon Threadline ships from the one source, ``resources/icons/threadline.svg``.

    python packaging/icons.py png            # resources/icons/hicolor/<N>x<N>/apps/threadline.png (committed)
    python packaging/icons.py ico OUT.ico    # Windows icon (16…256), from the PNGs
    python packaging/icons.py icns OUT.icns  # macOS icon (16…1024), from the SVG

PNGs are rendered with Qt's QSvgRenderer (PySide6 is there on every build machine), so
the output is the same on Linux, Windows and macOS runners; .ico and .icns are assembled
with Pillow (the ``packaging`` extra).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "resources" / "icons" / "threadline.svg"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
PNG_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICNS_SIZES = (16, 32, 64, 128, 256, 512, 1024)


def _render(size: int):  # -> PIL.Image.Image
    """The SVG drawn at ``size``×``size`` pixels, as a Pillow RGBA image."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PIL import Image
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"cannot read {SOURCE}")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    import io

    return Image.open(io.BytesIO(bytes(data))).convert("RGBA")


def png_path(size: int) -> Path:
    return HICOLOR / f"{size}x{size}" / "apps" / "threadline.png"


def write_pngs() -> list[Path]:
    written = []
    for size in PNG_SIZES:
        path = png_path(size)
        path.parent.mkdir(parents=True, exist_ok=True)
        _render(size).save(path, optimize=True)
        written.append(path)
    return written


def write_ico(out: Path) -> Path:
    images = [_render(size) for size in ICO_SIZES]
    out.parent.mkdir(parents=True, exist_ok=True)
    images[-1].save(out, format="ICO", sizes=[(s, s) for s in ICO_SIZES], append_images=images[:-1])
    return out


def write_icns(out: Path) -> Path:
    images = [_render(size) for size in ICNS_SIZES]
    out.parent.mkdir(parents=True, exist_ok=True)
    images[-1].save(out, format="ICNS", append_images=images[:-1])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=["png", "ico", "icns"])
    parser.add_argument("out", nargs="?", type=Path)
    args = parser.parse_args(argv)
    if args.kind == "png":
        for path in write_pngs():
            print(path.relative_to(ROOT))
    elif args.out is None:
        parser.error(f"{args.kind} needs an output path")
    elif args.kind == "ico":
        print(write_ico(args.out))
    else:
        print(write_icns(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
