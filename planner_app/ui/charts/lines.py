"""Line and scatter charts: scaling efficiency against node count, the search's time/cost
Pareto front and the serving Pareto front (the Probe page's charts: probe_charts.py)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol
from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPixmap
from PySide6.QtWidgets import QLabel

from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.ui.charts.base import PALETTE, ChartBase, Legend


class LineLegend(Legend):
    """The legend of a line chart: each swatch is drawn with its line's own pen and marker, so lines
    told apart by width, dash or marker are told apart here too."""

    SWATCH = QSize(30, 16)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.entries: list[tuple] = []  # (label, colour, width, dashed, symbol) as shown

    def set_entries(self, entries: list[tuple]) -> None:
        """``entries``: (label, colour, pen width, dashed, symbol or None). Unchanged entries keep
        their widgets."""
        entries = [tuple(e) for e in entries]
        if entries == self.entries:
            return
        rows = []
        for label, colour, width, dashed, symbol in entries:
            sw = QLabel()
            sw.setFixedSize(self.SWATCH)
            sw.setPixmap(self._swatch(colour, width, dashed, symbol))
            rows.append((sw, label))
        self.set_rows(rows)
        self.entries = entries

    def _swatch(self, colour, width, dashed, symbol) -> QPixmap:
        pm = QPixmap(self.SWATCH)
        pm.fill(QColor("white"))
        p = QPainter(pm)
        try:
            p.setRenderHint(QPainter.Antialiasing)
            mid = self.SWATCH.height() / 2
            p.setPen(pg.mkPen(colour, width=min(width, self.SWATCH.height() - 2),
                              style=Qt.DashLine if dashed else Qt.SolidLine))
            p.drawLine(QPointF(1, mid), QPointF(self.SWATCH.width() - 1, mid))
            if symbol:
                p.translate(self.SWATCH.width() / 2, mid)
                drawSymbol(p, symbol, 8, pg.mkPen(colour), pg.mkBrush(colour))
        finally:
            p.end()
        return pm


class ScalingChart(ChartBase):
    """Efficiency (%) against nodes, one line per fabric, plus the 1/(1 + t_comm/t_compute)
    no-overlap reference drawn dashed. The legend sits under the plot. Lines that lie on each other
    stay visible: the lower line is drawn on top, each line has its own marker, a line with others
    on it is drawn wider (a halo around them), and the legend says "same as" for them."""

    SYMBOLS = ("o", "s", "t", "d", "star", "x", "p", "h", "+", "t1")
    WIDTH = 2.0  # px, a line with nothing under it
    HALO = 3.0  # px wider for each line drawn on it
    MAX_WIDTH = 11.0
    # lines closer than this (percentage points) at every node count read as one at the chart's
    # 0-105 % scale (about 3 px a point at 300 px of plot height)
    SAME_PT = 1.0

    def __init__(self, parent=None):
        super().__init__(translate("Charts", "Scaling efficiency"), parent)
        self.plot.setLabel("left", translate("Charts", "efficiency"), units="%")
        self.plot.setLabel("bottom", translate("Charts", "nodes"))
        self.plot.setLogMode(x=True, y=False)
        self.legend = LineLegend(self)
        self.layout().setSpacing(0)
        self.layout().addWidget(self.legend, 0)
        self._curves: dict[str, pg.PlotDataItem] = {}
        self.same_as: dict[str, list[str]] = {}  # line -> the lines under it it coincides with

    def export_widget(self):
        return self  # exports include the legend

    def set_curves(self, curves: dict[str, tuple[list, list]], reference: dict[str, tuple[list, list]] | None = None,
                   details: dict[str, str] | None = None):
        """``curves``: name -> (nodes, efficiency 0-1), drawn solid; ``reference``: the same names'
        no-overlap efficiencies, drawn dashed in the same colour (one legend entry says so);
        ``details``: name -> what the legend adds after the name (a network's NICs per node)."""
        no_overlap = translate("Charts", "{name} (no overlap)")
        lines: dict[str, tuple[np.ndarray, np.ndarray, str, bool, str | None]] = {}
        colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(curves)}
        for i, (name, (xs, ys)) in enumerate(curves.items()):
            lines[name] = (np.asarray(xs, float), np.asarray(ys, float) * 100, colours[name], False,
                           self.SYMBOLS[i % len(self.SYMBOLS)])
        for i, (name, (xs, ys)) in enumerate((reference or {}).items()):
            lines[no_overlap.format(name=name)] = (np.asarray(xs, float), np.asarray(ys, float) * 100,
                                                   colours.get(name, PALETTE[i % len(PALETTE)]), True, None)
        for key, item in self._curves.items():
            if key not in lines:
                item.setData([], [])
                item.setVisible(False)
        # draw order: the highest line first, so a lower (slower network's) line is never under it
        order = sorted(lines, key=lambda k: (-float(np.mean(lines[k][1])) if len(lines[k][1]) else 0.0, lines[k][3]))
        self.same_as = {k: [] for k in lines}
        on_it = {k: 0 for k in lines}  # lines drawn on this one that coincide with it
        for z, name in enumerate(order):
            for below in order[:z]:
                if lines[name][3] == lines[below][3] and self._coincide(lines[name], lines[below]):
                    self.same_as[name].append(below)
                    on_it[below] += 1
        self.widths = {k: min(self.WIDTH + self.HALO * on_it[k], self.MAX_WIDTH) for k in lines}
        for z, name in enumerate(order):
            xs, ys, colour, dashed, symbol = lines[name]
            item = self._curve(name)
            item.setPen(pg.mkPen(colour, width=self.widths[name], style=Qt.DashLine if dashed else Qt.SolidLine))
            item.setSymbol(symbol)
            if symbol:
                item.setSymbolSize(7 + self.widths[name])
                item.setSymbolBrush(colour)
                item.setSymbolPen(pg.mkPen("w", width=1))
            item.setZValue(z)
            item.setData(xs, ys)
        entries = []
        for name in curves:  # the legend keeps the caller's order
            xs, ys, colour, dashed, symbol = lines[name]
            label = (translate("Charts", "{name}, {detail}").format(name=name, detail=details[name])
                     if details and details.get(name) else name)
            if self.same_as[name]:
                label = translate("Charts", "{line}: same as {others} (within {pt:g} point)").format(
                    line=label, others=translate("Charts", ", ").join(self.same_as[name]), pt=self.SAME_PT)
            entries.append((label, colour, self.widths[name], dashed, symbol))
        if reference:  # one entry for the dashed lines: each in its network's colour
            entries.append((translate("Charts", "dashed, in each network's colour: the no-overlap reference "
                                                "1/(1 + t_comm/t_compute)"), "#555", self.WIDTH, True, None))
        self.legend.set_entries(entries)
        nodes = sorted({int(x) for xs, _ in curves.values() for x in xs if x > 0})
        if nodes:  # ticks at the node counts themselves (log axis positions)
            self.plot.getAxis("bottom").setTicks([[(float(np.log10(n)), str(n)) for n in nodes]])
        self.plot.setYRange(0, 105, padding=0)

    @classmethod
    def _coincide(cls, a, b) -> bool:
        """Two lines within SAME_PT of each other at every node count they share (and sharing one)."""
        ya = dict(zip(a[0].tolist(), a[1].tolist()))
        common = [(ya[x], y) for x, y in zip(b[0].tolist(), b[1].tolist()) if x in ya]
        return bool(common) and all(abs(p - q) <= cls.SAME_PT for p, q in common)

    def _curve(self, name):
        c = self._curves.get(name)
        if c is None:
            c = self.plot.plot([], [], name=name)
            self._curves[name] = c
        c.setVisible(True)
        return c


class FrontChart(ChartBase):
    """Points (dots), their Pareto front (a line through its points in x order) and one chosen
    point (a star): the base of the training search's and the serving search's charts."""

    def __init__(self, title: str, x_label: str, y_label: str, parent=None):
        super().__init__(title, parent, value_bottom=True)
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        self._all = pg.ScatterPlotItem(size=9, brush=pg.mkBrush("#a9c1dd"), pen=pg.mkPen("#4e79a7"))
        self._front = self.plot.plot([], [], pen=pg.mkPen(PALETTE[1], width=2), symbol="o", symbolSize=8,
                                     symbolBrush=PALETTE[1])
        self._chosen = pg.ScatterPlotItem(size=16, symbol="star", brush=pg.mkBrush("#e15759"), pen=pg.mkPen("#800"))
        self.plot.addItem(self._all)
        self.plot.addItem(self._chosen)
        self.front_points: list[tuple[float, float]] = []

    def _show(self, xs, ys, front_x, front_y, chosen) -> None:
        """Draw the points, the front sorted by x (kept in ``front_points``) and the chosen (x, y) or None."""
        self._all.setData(x=np.asarray(xs, float), y=np.asarray(ys, float))
        fx, fy = np.asarray(front_x, float), np.asarray(front_y, float)
        order = np.argsort(fx)
        self._front.setData(fx[order], fy[order])
        self.front_points = list(zip(fx[order].tolist(), fy[order].tolist()))
        self._chosen.setData(x=[chosen[0]] if chosen else [], y=[chosen[1]] if chosen else [])
        self.plot.enableAutoRange()


class ParetoChart(FrontChart):
    """Every ranked plan (dots) and the Pareto front (line): days against USD at one price
    basis, or against GPU-hours (and so labelled) when no plan has a price."""

    def __init__(self, parent=None):
        super().__init__(translate("Charts", "Time against cost"), translate("Charts", "time to train (days)"),
                         translate("Charts", "cost (USD)"), parent)
        self.quantity = "usd"

    def set_points(self, days, values, front_days, front_values, chosen=None, quantity: str = "usd",
                   basis: str = ""):
        """``values``: USD at the price basis named ``basis`` (``quantity="usd"``) or GPU-hours
        (``quantity="gpu_hours"``); the left axis says which."""
        if quantity not in ("usd", "gpu_hours"):
            raise ValueError(f"quantity must be usd or gpu_hours, got {quantity!r}")
        self.quantity = quantity
        if quantity == "usd":
            label = (translate("Charts", "cost (USD, {basis})").format(basis=basis) if basis
                     else translate("Charts", "cost (USD)"))
        else:
            label = translate("Charts", "GPU-hours")
        self.plot.setLabel("left", label)
        self._show(days, values, front_days, front_values, chosen)

    def axis_label(self, side: str = "left") -> str:
        return self.plot.getAxis(side).labelText


class ServingParetoChart(FrontChart):
    """The serving trade-off SemiAnalysis's InferenceX draws: output tokens/s per GPU against
    tokens/s per user, for the listed deployments (dots), the Pareto front (line) and the
    selected deployment (star)."""

    def __init__(self, parent=None):
        super().__init__(translate("Charts", "Pareto front"), translate("Charts", "tokens/s per user"),
                         translate("Charts", "output tokens/s per GPU"), parent)

    def set_points(self, per_user, per_gpu, front_per_user, front_per_gpu, chosen=None) -> None:
        """Tokens/s per user (x) and output tokens/s per GPU (y); ``chosen``: (x, y) or None."""
        self._show(per_user, per_gpu, front_per_user, front_per_gpu, chosen)
