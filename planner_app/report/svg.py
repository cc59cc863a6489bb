"""A chart display list (``charts.py``) as an inline SVG element."""
from __future__ import annotations

from html import escape

from planner_app.report.charts import Chart, Dot, Line, Poly, Rect, Text

FONT_STACK = "'WenQuanYi Micro Hei', 'Noto Sans CJK SC', 'Segoe UI', Helvetica, Arial, sans-serif"


def _n(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def to_svg(ch: Chart) -> str:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="{escape(ch.title)}" '
           f'width="{_n(ch.width)}" height="{_n(ch.height)}" viewBox="0 0 {_n(ch.width)} {_n(ch.height)}" '
           f'font-family="{escape(FONT_STACK)}">']
    for it in ch.items:
        if isinstance(it, Rect):
            attrs = f'fill="{it.fill or "none"}"' + (f' stroke="{it.stroke}"' if it.stroke else "")
            out.append(f'<rect x="{_n(it.x)}" y="{_n(it.y)}" width="{_n(it.w)}" height="{_n(it.h)}" {attrs}/>')
        elif isinstance(it, Line):
            dash = ' stroke-dasharray="4 3"' if it.dash else ""
            out.append(f'<line x1="{_n(it.x1)}" y1="{_n(it.y1)}" x2="{_n(it.x2)}" y2="{_n(it.y2)}" '
                       f'stroke="{it.color}" stroke-width="{_n(it.width)}"{dash}/>')
        elif isinstance(it, Poly):
            dash = ' stroke-dasharray="5 3"' if it.dash else ""
            pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in it.points)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{it.color}" stroke-width="{_n(it.width)}"'
                       f' stroke-linejoin="round"{dash}/>')
        elif isinstance(it, Dot):
            out.append(f'<circle cx="{_n(it.x)}" cy="{_n(it.y)}" r="{_n(it.r)}" fill="{it.fill}"/>')
        elif isinstance(it, Text):
            rot = f' transform="rotate({_n(it.rotate)} {_n(it.x)} {_n(it.y)})"' if it.rotate else ""
            weight = ' font-weight="bold"' if it.bold else ""
            out.append(f'<text x="{_n(it.x)}" y="{_n(it.y)}" font-size="{_n(it.size * 96 / 72)}" '
                       f'fill="{it.color}" text-anchor="{it.anchor}"{weight}{rot}>{escape(it.text)}</text>')
    out.append("</svg>")
    return "".join(out)
