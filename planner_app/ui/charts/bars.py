"""Bar charts: stacked bars per plan (memory breakdown against the GPU's capacity, step-time
breakdown) and grouped bars (one metric across plans, the best marked)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication

from planner_app.ui.charts.base import PALETTE, ChartBase


class StackedBarChart(ChartBase):
    """Categories on x (plans), stacked components on y; optional limit marker per bar."""

    def __init__(self, title: str, unit: str, parent=None):
        super().__init__(title, parent)
        self.unit = unit
        self.plot.setLabel("left", unit)
        self.legend = self.plot.addLegend(offset=(-4, 4), labelTextColor="#222", brush=pg.mkBrush(255, 255, 255, 220))
        self._bars: dict[str, pg.BarGraphItem] = {}
        # the capacity: one red segment over each bar (pairs of points)
        self._limit = pg.PlotDataItem([], [], connect="pairs", pen=pg.mkPen("#c00", width=3,
                                                                           style=pg.QtCore.Qt.DashLine))
        self.plot.addItem(self._limit)
        self._limit_in_legend = False
        self._labels: list[pg.TextItem] = []
        self.plot.getAxis("bottom").setStyle(tickTextOffset=6)

    def set_data(self, categories: list[str], components: dict[str, list[float]], limits=None,
                 labels: dict[str, str] | None = None) -> None:
        """``components``: name -> value per category (already in display units)."""
        x = np.arange(len(categories), dtype=float)
        bottom = np.zeros(len(categories))
        for i, (name, values) in enumerate(components.items()):
            vals = np.asarray(values, dtype=float)
            bar = self._bars.get(name)
            if bar is None:
                color = PALETTE[len(self._bars) % len(PALETTE)]
                bar = pg.BarGraphItem(x=x, y0=bottom, height=vals, width=0.6, brush=color, pen=pg.mkPen("w", width=0.5))
                self._bars[name] = bar
                self.plot.addItem(bar)
                self.legend.addItem(bar, (labels or {}).get(name, name.replace("_", " ")))
            bar.setOpts(x=x, y0=bottom.copy(), height=vals)
            bar.setVisible(bool(np.any(vals > 0)))
            bottom = bottom + vals
        for name, bar in self._bars.items():
            if name not in components:
                bar.setOpts(x=x, y0=np.zeros(len(x)), height=np.zeros(len(x)))
                bar.setVisible(False)
        self._sync_legend()
        if limits is not None:
            lim = np.asarray(limits, dtype=float)
            self._limit.setData(np.column_stack([x - 0.38, x + 0.38]).ravel(), np.repeat(lim, 2))
            if not self._limit_in_legend:
                self.legend.addItem(self._limit, QCoreApplication.translate("Breakdown", "GPU capacity"))
                self._limit_in_legend = True
        else:
            self._limit.setData([], [])
        self.plot.getAxis("bottom").setTicks([[(float(i), c) for i, c in enumerate(categories)]])
        top = max(float(bottom.max()) if len(bottom) else 1.0, float(np.max(limits)) if limits is not None and len(limits) else 0.0)
        # room on the right for the legend
        self.plot.setXRange(-0.6, len(categories) - 0.4 + 1.3, padding=0)
        self.plot.setYRange(0, top * 1.12 if top > 0 else 1.0, padding=0)
        self.totals = bottom

    def _sync_legend(self):
        for sample, label in list(self.legend.items):
            item = sample.item
            if item is self._limit:
                continue
            sample.setVisible(item.isVisible())
            label.setVisible(item.isVisible())


class GroupedBarChart(ChartBase):
    """One metric per plan; the best bar drawn darker."""

    def __init__(self, title: str, unit: str, parent=None):
        super().__init__(title, parent)
        self.plot.setLabel("left", unit)
        self._bar = pg.BarGraphItem(x=[], height=[], width=0.6, brushes=[])
        self.plot.addItem(self._bar)

    def set_data(self, categories: list[str], values: list[float | None], best: int | None = None) -> None:
        x = np.arange(len(categories), dtype=float)
        vals = np.array([v if v is not None else 0.0 for v in values], dtype=float)
        brushes = [pg.mkBrush(PALETTE[0] if i == best else "#a9c1dd") for i in range(len(categories))]
        self._bar.setOpts(x=x, height=vals, width=0.6, brushes=brushes)
        self.plot.getAxis("bottom").setTicks([[(float(i), c) for i, c in enumerate(categories)]])
        self.plot.setXRange(-0.6, max(len(categories) - 0.4, 0.6), padding=0)
        self.plot.setYRange(0, float(vals.max()) * 1.15 if len(vals) and vals.max() > 0 else 1.0, padding=0)
        self.values = vals
