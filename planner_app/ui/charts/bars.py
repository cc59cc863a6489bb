"""Bar charts: stacked bars per plan (memory breakdown against the GPU's capacity, step-time
breakdown) and grouped bars (one metric across plans, the best marked)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel

from planner_app.ui.charts.base import PALETTE, ChartBase, Legend
from planner_app.ui.textfit import wrap_lines


class ChartLegend(Legend):
    """A bar chart's legend: a colour box per component shown (top of the stack first)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.entries: list[tuple[str, str]] = []  # (label, colour) as shown

    def set_entries(self, entries: list[tuple[str, str, str]]) -> None:
        """``entries``: (label, colour, style) with style "box" or "line". Unchanged entries
        keep their widgets (an edit redraws the chart ~10 times a second)."""
        if [(e[0], e[1]) for e in entries] == self.entries:
            return
        rows = []
        for label, colour, style in entries:
            sw = QLabel()
            sw.setFixedSize(12, 4 if style == "line" else 12)
            sw.setStyleSheet(f"background: {colour}; border: none;")
            rows.append((sw, label))
        self.set_rows(rows)
        self.entries = [(e[0], e[1]) for e in entries]


def category_labels(names: list[str], font, slot_px: float, lines: int = 3) -> list[str]:
    """Axis labels for plan names: wrapped into at most ``lines`` lines no wider than ``slot_px``
    (a bar's share of the axis), the end of a longer name cut with "…"; names that would still
    read the same are numbered, so no two bars carry one label."""
    out = ["\n".join(wrap_lines(n, font, slot_px, lines)) for n in names]
    if len(set(out)) < len(out):
        out = ["\n".join(wrap_lines(f"{i + 1}. {n}", font, slot_px, lines)) for i, n in enumerate(names)]
    return out


class CategoryAxis:
    """The plans (or components) along a bar chart's x axis, one per integer position from 0, their
    labels re-wrapped whenever the chart's width or font changes so they never overlap."""

    # a label may use this share of its bar's slot: a gap keeps neighbours apart
    SLOT_FILL = 0.92
    MAX_LINES = 3

    def init_categories(self) -> None:
        self.categories: list[str] = []
        self.category_texts: list[str] = []

    def set_categories(self, names: list[str]) -> None:
        self.categories = list(names)
        self.relabel()

    def slot_px(self) -> float:
        """The width one category has on screen: the plot's width over the x range shown."""
        vb = self.plot.getViewBox()
        (x0, x1), width_px = vb.viewRange()[0], vb.width()
        if width_px <= 1:  # not laid out yet: the widget's width less the left axis
            width_px = max(self.width() - 60, 100)
        return width_px / max(x1 - x0, 1e-9)

    def relabel(self) -> None:
        f = self.body_font()
        labels = category_labels(self.categories, f, self.slot_px() * self.SLOT_FILL, self.MAX_LINES)
        self.category_texts = labels
        axis = self.plot.getAxis("bottom")
        axis.setTicks([[(float(i), c) for i, c in enumerate(labels)]])
        n_lines = max((c.count("\n") + 1 for c in labels), default=1)
        axis.setHeight(int(QFontMetrics(f).lineSpacing() * n_lines + axis.style["tickTextOffset"][1] + 10))

    def fonts_changed(self) -> None:
        if hasattr(self, "categories"):
            self.relabel()

    def resizeEvent(self, ev):  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        if getattr(self, "categories", None):
            self.relabel()


class StackedBarChart(CategoryAxis, ChartBase):
    """Categories on x (plans), stacked components on y; optional limit marker per bar."""

    LIMIT_COLOUR = "#c00"

    def __init__(self, title: str, unit: str, parent=None):
        self.init_categories()
        super().__init__(title, parent)
        self.unit = unit
        self.plot.setLabel("left", unit)
        self.legend = ChartLegend(self)
        self.layout().setSpacing(0)
        self.layout().addWidget(self.legend, 0)
        self._bars: dict[str, pg.BarGraphItem] = {}
        self._colours: dict[str, str] = {}
        # the capacity: one red segment over each bar (pairs of points)
        self._limit = pg.PlotDataItem([], [], connect="pairs", pen=pg.mkPen(self.LIMIT_COLOUR, width=3,
                                                                           style=pg.QtCore.Qt.DashLine))
        self._limit.setZValue(10)  # over the bars: a bar above capacity must not hide the line it crosses
        self.plot.addItem(self._limit)
        self.plot.getAxis("bottom").setStyle(tickTextOffset=6)
        self.totals = np.zeros(0)

    def set_unit(self, unit: str) -> None:
        if unit != self.unit:
            self.unit = unit
            self.plot.setLabel("left", unit)

    def export_widget(self):
        return self  # exports include the legend

    def set_data(self, categories: list[str], components: dict[str, list[float]], limits=None,
                 labels: dict[str, str] | None = None) -> None:
        """``components``: name -> value per category (already in display units). No
        categories clears the chart."""
        x = np.arange(len(categories), dtype=float)
        bottom = np.zeros(len(categories))
        shown = []
        for name, values in components.items():
            vals = np.asarray(values, dtype=float)
            bar = self._bars.get(name)
            if bar is None:
                colour = PALETTE[len(self._bars) % len(PALETTE)]
                bar = pg.BarGraphItem(x=x, y0=bottom, height=vals, width=0.6, brush=colour,
                                      pen=pg.mkPen("w", width=0.5))
                self._bars[name], self._colours[name] = bar, colour
                self.plot.addItem(bar)
            bar.setOpts(x=x, y0=bottom.copy(), height=vals)
            visible = bool(np.any(vals > 0))
            bar.setVisible(visible)
            if visible:
                shown.append(((labels or {}).get(name, name.replace("_", " ")), self._colours[name], "box"))
            bottom = bottom + vals
        for name, bar in self._bars.items():
            if name not in components:
                bar.setOpts(x=x, y0=np.zeros(len(x)), height=np.zeros(len(x)))
                bar.setVisible(False)
        shown.reverse()  # the legend reads top-down like the stack
        if limits is not None and len(categories):
            lim = np.asarray(limits, dtype=float)
            self._limit.setData(np.column_stack([x - 0.38, x + 0.38]).ravel(), np.repeat(lim, 2))
            shown.insert(0, (QCoreApplication.translate("Breakdown", "GPU capacity"), self.LIMIT_COLOUR, "line"))
        else:
            self._limit.setData([], [])
        self.legend.set_entries(shown)
        top = max(float(bottom.max()) if len(bottom) else 1.0,
                  float(np.max(limits)) if limits is not None and len(limits) else 0.0)
        self.plot.setXRange(-0.6, max(len(categories), 1) - 0.4, padding=0)
        self.set_categories(categories)
        self.plot.setYRange(0, top * 1.12 if top > 0 else 1.0, padding=0)
        self.totals = bottom


class GroupedBarChart(CategoryAxis, ChartBase):
    """One metric per plan; the best bar drawn darker. A plan without the value (no price,
    no estimate) gets no bar but a note ("no price"), never a bar at 0."""

    def __init__(self, title: str, unit: str, parent=None):
        self.init_categories()
        super().__init__(title, parent)
        self.plot.setLabel("left", unit)
        self._bar = pg.BarGraphItem(x=[], height=[], width=0.6, brushes=[])
        self.plot.addItem(self._bar)
        self._notes: list[pg.TextItem] = []
        self.missing_text = QCoreApplication.translate("Charts", "n/a")

    def set_data(self, categories: list[str], values: list[float | None], best=None,
                 missing_text: str | list | None = None) -> None:
        """``best``: the index of the best plan, or a set of them (ties are all best); ``missing_text``:
        what a plan without the value shows instead of a bar (one text, or one per plan: why that
        plan has none)."""
        best = set() if best is None else {best} if isinstance(best, int) else set(best)
        known = [i for i, v in enumerate(values) if v is not None]
        x = np.array(known, dtype=float)
        vals = np.array([values[i] for i in known], dtype=float)
        brushes = [pg.mkBrush(PALETTE[0] if i in best else "#a9c1dd") for i in known]
        self.best = best
        self._bar.setOpts(x=x, height=vals, width=0.6, brushes=brushes)
        for t in self._notes:
            self.plot.removeItem(t)
        self._notes = []
        for i, v in enumerate(values):
            if v is None:
                why = missing_text[i] if isinstance(missing_text, list) else missing_text
                t = pg.TextItem(why or self.missing_text, color="#777", anchor=(0.5, 1.0))
                t.setPos(float(i), 0.0)
                self.plot.addItem(t)
                self._notes.append(t)
        self.plot.setXRange(-0.6, max(len(categories) - 0.4, 0.6), padding=0)
        self.set_categories(categories)
        top = float(vals.max()) if len(vals) and vals.max() > 0 else 1.0
        self.plot.setYRange(0, top * 1.15, padding=0)
        self.values = np.array([np.nan if v is None else v for v in values], dtype=float)
