"""Render ``resources/icons/gpu-planner.svg`` to PNG files with Qt's QSvgRenderer.

Usage: ``python tools/render_icon.py [--sizes 256,128,64,48,32]``. Writes
``resources/icons/gpu-planner-<size>.png`` and ``gpu-planner.png`` (256 px, the one the
``.desktop`` file and the bundle use). Runs headless (offscreen platform).
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ICON_DIR = os.path.join(ROOT, "resources", "icons")
SVG = os.path.join(ICON_DIR, "gpu-planner.svg")


def render(svg_path: str, size: int, out_path: str) -> None:
    """Render ``svg_path`` to a square transparent PNG of ``size`` pixels."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (fonts/painting need one)
    renderer = QSvgRenderer(svg_path)
    if not renderer.isValid():
        raise RuntimeError(f"{svg_path}: not a valid SVG for Qt")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(out_path, "PNG"):
        raise RuntimeError(f"cannot write {out_path}")


def main(argv=None) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256", help="comma-separated pixel sizes (default 256)")
    args = ap.parse_args(argv)
    for s in (int(x) for x in args.sizes.split(",")):
        out = os.path.join(ICON_DIR, "gpu-planner.png" if s == 256 else f"gpu-planner-{s}.png")
        render(SVG, s, out)
        print(f"wrote {os.path.relpath(out, ROOT)} ({os.path.getsize(out)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
