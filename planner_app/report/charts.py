"""Report charts as display lists: rectangles, lines, polylines, dots and text in a box of
``width`` x ``height`` points. The same list is drawn as SVG (``svg.py``, for HTML) and
with QPainter (``pdf.py``), so both are vector and identical. No Qt here."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from planner_app.report import text as fmt

FONT_PT = 8.5  # chart text size (points)
PALETTE = {"parameters": "#4C72B0", "gradients": "#DD8452", "optimizer_states": "#55A868",
           "activations": "#C44E52", "kv_cache": "#8172B3", "other": "#937860", "runtime_overhead": "#B8B8B8"}
AXIS = "#444444"
GRID = "#E3E3E3"
MUTED = "#666666"
ACCENT = "#1F4E79"
BAD = "#B22222"

COMPONENT_LABELS = {"parameters": "Parameters", "gradients": "Gradients", "optimizer_states": "Optimizer states",
                    "activations": "Activations", "kv_cache": "KV cache", "other": "Other",
                    "runtime_overhead": "CUDA context, NCCL, allocator"}


@dataclass
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str | None = None
    stroke: str | None = None


@dataclass
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    color: str = AXIS
    width: float = 1.0
    dash: bool = False


@dataclass
class Poly:
    points: list
    color: str = ACCENT
    width: float = 1.6
    dash: bool = False


@dataclass
class Dot:
    x: float
    y: float
    r: float
    fill: str = ACCENT


@dataclass
class Text:
    x: float
    y: float  # baseline
    text: str
    size: float = FONT_PT
    color: str = "#222222"
    anchor: str = "start"  # start | middle | end
    bold: bool = False
    rotate: float = 0.0  # degrees, about (x, y)


@dataclass
class Chart:
    name: str
    width: float
    height: float
    title: str = ""
    items: list = field(default_factory=list)

    def add(self, *items):
        self.items.extend(items)


def text_width(s: str, size: float = FONT_PT) -> float:
    """An estimate of the width of ``s`` in chart units (96 per inch) at ``size`` points: CJK
    glyphs are square, Latin ones ~0.56 em wide on average."""
    return sum(size * 96 / 72 * (1.0 if ord(c) >= 0x2E80 else 0.56) for c in s)


def _clip(s: str, max_w: float, size: float) -> str:
    if text_width(s, size) <= max_w:
        return s
    while s and text_width(s + "…", size) > max_w:
        s = s[:-1]
    return s + "…"


def nice_ticks(top: float, n: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``top``."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    k = math.ceil(top / step - 1e-9)
    return [i * step for i in range(k + 1)]


def _legend(ch: Chart, entries: list[tuple[str, str, str]], x0: float, y: float, max_x: float) -> float:
    """Legend entries (label, colour, kind 'box'|'line'|'dash'); wraps; returns the y below."""
    x = x0
    for label, color, kind in entries:
        w = 14 + text_width(label) + 14
        if x + w > max_x and x > x0:
            x, y = x0, y + 14
        if kind == "box":
            ch.add(Rect(x, y - 8, 9, 9, fill=color))
        else:
            ch.add(Line(x - 1, y - 3.5, x + 11, y - 3.5, color=color, width=1.8, dash=(kind == "dash")))
        ch.add(Text(x + 14, y, label, color="#333333"))
        x += w
    return y + 16


# ---- memory ----------------------------------------------------------------------------------
def memory_chart(report, s, width: float = 660.0) -> Chart:
    """Stacked bars of memory per GPU for each plan, against that plan's GPU capacity."""
    plans = report.plans
    used_keys = []
    for p in plans:
        if p.ok:
            for k, _ in p.memory_groups():
                if k not in used_keys:
                    used_keys.append(k)
    order = [k for k in PALETTE if k in used_keys]
    subs = {}
    for p in plans:
        if p.ok:
            m = p.estimate["memory"]
            verdict = s("fits") if m["fits"] else s("does not fit")
            subs[p.index] = f"{fmt.gb(m.get('device_bytes') or m['peak_bytes'])} / {fmt.gb(m['capacity_bytes'])}, {verdict}"
        else:
            subs[p.index] = s("estimate failed")
    label_w = min(250.0, max([text_width(p.name, FONT_PT + 0.5) * 0.92 for p in plans]
                             + [text_width(t, FONT_PT - 1) * 0.92 for t in subs.values()] + [130.0]) + 14)
    x0, x1 = label_w, width - 18
    bar_h, gap = 20.0, 22.0
    ch = Chart("memory", width, 0, title=s("Memory per GPU"))
    legend = [(s(COMPONENT_LABELS[k]), PALETTE[k], "box") for k in order] + [(s("GPU capacity"), BAD, "line")]
    y = _legend(ch, legend, x0, 12, width)
    top_y = y + 4
    peak = max([max(p.estimate["memory"].get("device_bytes") or 0, p.estimate["memory"]["capacity_bytes"])
                for p in plans if p.ok] + [1e9])
    ticks = nice_ticks(peak / 1e9 * 1.02)
    scale = (x1 - x0) / (ticks[-1] * 1e9)
    plot_h = len(plans) * (bar_h + gap)
    for t in ticks:
        x = x0 + t * 1e9 * scale
        ch.add(Line(x, top_y, x, top_y + plot_h, color=GRID, width=0.8))
        ch.add(Text(x, top_y + plot_h + 12, f"{t:g}", anchor="middle", color=MUTED))
    ch.add(Line(x0, top_y, x0, top_y + plot_h, color=AXIS))
    ch.add(Text((x0 + x1) / 2, top_y + plot_h + 26, s("GB per GPU (10^9 bytes)"), anchor="middle", color=MUTED))
    for i, p in enumerate(plans):
        yb = top_y + gap / 2 + i * (bar_h + gap)
        chosen = i == report.recommended
        ch.add(Text(x0 - 8, yb + 9, _clip(p.name, (label_w - 12) / 0.92, FONT_PT + 0.5), size=FONT_PT + 0.5, anchor="end",
                    bold=chosen))
        if not p.ok:
            ch.add(Text(x0 - 8, yb + 20, subs[i], size=FONT_PT - 1, anchor="end", color=BAD))
            ch.add(Text(x0 + 6, yb + 14, _clip(p.error or "", x1 - x0 - 12, FONT_PT), color=BAD))
            continue
        m = p.estimate["memory"]
        xs = x0
        for k, v in p.memory_groups():
            w = v * scale
            ch.add(Rect(xs, yb, w, bar_h, fill=PALETTE[k]))
            xs += w
        cap = m["capacity_bytes"]
        ch.add(Text(x0 - 8, yb + 20, subs[i], size=FONT_PT - 1,
                    anchor="end", color=MUTED if m["fits"] else BAD))
        xc = x0 + cap * scale
        ch.add(Line(xc, yb - 5, xc, yb + bar_h + 5, color=BAD, width=1.8))
    ch.height = top_y + plot_h + 32
    return ch


# ---- scaling ------------------------------------------------------------------------------------
def _log2_axis(nodes: list[int], xa: float, xb: float):
    lo, hi = math.log2(min(nodes)), math.log2(max(nodes))
    span = max(hi - lo, 1.0)
    return lambda n: xa + (math.log2(n) - lo) / span * (xb - xa)


def scaling_chart(report, s, width: float = 660.0) -> Chart | None:
    sc = report.scaling
    if not sc or "points" not in sc:
        return None
    pts = sc["points"]
    nodes = [p["nodes"] for p in pts]
    ch = Chart("scaling", width, 250.0, title=s("Scaling of the recommended plan"))
    panel_w = (width - 30) / 2
    plan_n = sc["plan_nodes"]
    specs = [
        (s("Throughput (tokens/s)"), [p["tokens_per_s"] for p in pts],
         [pts[0]["tokens_per_s"] / pts[0]["nodes"] * n for n in nodes], s("ideal (linear)"), None),
        (s("Efficiency"), [p["efficiency"] * 100 for p in pts], [p["no_overlap_efficiency"] * 100 for p in pts],
         s("no-overlap reference"), 100.0),
    ]
    _legend(ch, [(s("engine model"), ACCENT, "line"),
                 (s("reference: ideal linear (left), nothing overlapped (right)"), MUTED, "dash"),
                 (s("this plan"), BAD, "dash")], 56, 12, width)
    for j, (title, ys, ref, _, fixed_top) in enumerate(specs):
        left = j * (panel_w + 30)
        xa, xb = left + 54, left + panel_w - 8
        ya, yb = 44, 206  # top, bottom of the plot
        top = fixed_top or max(ys + ref) * 1.05
        ticks = nice_ticks(top, 4)
        if fixed_top:
            ticks = [0, 25, 50, 75, 100]
        ymax = ticks[-1]
        fy = lambda v, ya=ya, yb=yb, ymax=ymax: yb - v / ymax * (yb - ya)  # noqa: E731  (this panel's axis)
        fx = _log2_axis(nodes, xa, xb)
        ch.add(Text((xa + xb) / 2, 34, title, anchor="middle", bold=True, size=FONT_PT + 0.5))
        for t in ticks:
            ch.add(Line(xa, fy(t), xb, fy(t), color=GRID, width=0.8))
            label = f"{t:g}%" if fixed_top else _short(t)
            ch.add(Text(xa - 5, fy(t) + 3, label, anchor="end", color=MUTED))
        for n in nodes:
            ch.add(Text(fx(n), yb + 13, str(n), anchor="middle", color=MUTED))
        ch.add(Line(xa, ya, xa, yb, color=AXIS), Line(xa, yb, xb, yb, color=AXIS))
        ch.add(Text((xa + xb) / 2, yb + 28, s.f("nodes ({n} GPUs each, log scale)", n=sc["gpus_per_node"]),
                    anchor="middle", color=MUTED))
        if plan_n in nodes:
            ch.add(Line(fx(plan_n), ya, fx(plan_n), yb, color=BAD, width=1.0, dash=True))
        ch.add(Poly([(fx(n), fy(v)) for n, v in zip(nodes, ref)], color=MUTED, width=1.2, dash=True))
        ch.add(Poly([(fx(n), fy(v)) for n, v in zip(nodes, ys)], color=ACCENT, width=1.8))
        for n, v in zip(nodes, ys):
            ch.add(Dot(fx(n), fy(v), 2.6, fill=BAD if n == plan_n else ACCENT))
    return ch


def _short(v: float) -> str:
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(v) >= div:
            return f"{v / div:g}{suf}"
    return f"{v:g}"
