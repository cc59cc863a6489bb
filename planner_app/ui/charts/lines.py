"""Line and scatter charts: scaling efficiency against node count, the search's time/cost
Pareto front and the serving Pareto front (the Probe page's charts: probe_charts.py)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.ui.charts.base import PALETTE, ChartBase


class ScalingChart(ChartBase):
    """Efficiency (%) against nodes, one line per fabric, plus the 1/(1 + t_comm/t_compute)
    no-overlap reference drawn dashed."""

    def __init__(self, parent=None):
        super().__init__(translate("Charts", "Scaling efficiency"), parent)
        self.plot.setLabel("left", translate("Charts", "efficiency"), units="%")
        self.plot.setLabel("bottom", translate("Charts", "nodes"))
        self.plot.setLogMode(x=True, y=False)
        self.legend = self.plot.addLegend(offset=(-10, -10), labelTextColor="#222", brush=pg.mkBrush(255, 255, 255, 220))
        self.legend.setColumnCount(2)  # half as tall: it stays below the curves (they sit near 70-100%)
        self._curves: dict[str, pg.PlotDataItem] = {}

    def set_curves(self, curves: dict[str, tuple[list, list]], reference: dict[str, tuple[list, list]] | None = None):
        no_overlap = translate("Charts", "{name} (no overlap)")
        wanted = set(curves) | {no_overlap.format(name=k) for k in (reference or {})}
        for key, item in self._curves.items():
            item.setVisible(key in wanted)
        for i, (name, (xs, ys)) in enumerate(curves.items()):
            self._curve(name, PALETTE[i % len(PALETTE)], False).setData(np.asarray(xs, float), np.asarray(ys, float) * 100)
        for i, (name, (xs, ys)) in enumerate((reference or {}).items()):
            label = translate("Charts", "{name} (no overlap)").format(name=name)
            self._curve(label, PALETTE[i % len(PALETTE)], True).setData(
                np.asarray(xs, float), np.asarray(ys, float) * 100)
        nodes = sorted({int(x) for xs, _ in curves.values() for x in xs if x > 0})
        if nodes:  # ticks at the node counts themselves (log axis positions)
            self.plot.getAxis("bottom").setTicks([[(float(np.log10(n)), str(n)) for n in nodes]])
        self.plot.setYRange(0, 105, padding=0)

    def _curve(self, name, color, dashed):
        c = self._curves.get(name)
        if c is None:
            pen = pg.mkPen(color, width=2, style=pg.QtCore.Qt.DashLine if dashed else pg.QtCore.Qt.SolidLine)
            c = self.plot.plot([], [], pen=pen, symbol=None if dashed else "o", symbolSize=6, symbolBrush=color,
                               name=name)
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
