"""The Probe page's charts: live telemetry (a sentence instead of empty axes when there is no
GPU) and the roofline with the measured points on log axes labelled at whole decades."""
from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel

from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.ui.charts.base import PALETTE, ChartBase, ReadableAxis

# The least space between two tick labels, in lines of the tick font: pyqtgraph draws every label of
# the first tick level it is given, so the decade axis leaves out labels itself to keep this gap
TICK_GAP_LINES = 0.6


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2 or 5 x 10^k at or above ``value`` (an axis top that reads well); 1 for 0."""
    if not value or not math.isfinite(value) or value <= 0:
        return 1.0
    k = math.floor(math.log10(value))
    for m in (1.0, 2.0, 5.0):
        if m * 10.0 ** k >= value * (1 - 1e-12):
            return m * 10.0 ** k
    return 10.0 ** (k + 1)


class EdgeLabelAxis(ReadableAxis):
    """A value axis whose end labels (0 at the bottom, the top value) are drawn although they reach
    half a line past the plot: pyqtgraph drops a label outside the axis' bounding rectangle, which
    with a grid ends at the plot's edge, so an axis starting at 0 showed no 0."""

    def boundingRect(self):  # noqa: N802 - Qt override
        r = super().boundingRect()
        if self.orientation not in ("left", "right"):
            return r
        half = QFontMetrics(self.style.get("tickFont") or QFont()).height() / 2 + 1
        return r.adjusted(0, -half, 0, half)


class TelemetryChart(ChartBase):
    """Rolling lines of one telemetry field per GPU: seconds ago (0 = now, at the right) against
    the field in its unit from 0. Without samples it shows why, in place of empty axes."""

    # seconds of history the time axis spans at least (the page keeps 600 samples at 2 Hz: 300 s)
    MIN_SPAN_S = 30.0

    def __init__(self, title: str, unit: str, parent=None, y_max: float | None = None):
        """``y_max``: a fixed top of the value axis (100 for a percentage); else from the data."""
        super().__init__(title, parent, axes={"left": EdgeLabelAxis("left")})
        self.unit, self.y_max = unit, y_max
        self.plot.setLabel("left", unit)
        self.plot.setLabel("bottom", translate("Charts", "seconds ago"))
        self.plot.getViewBox().invertX(True)  # now at the right, older samples to the left
        self._curves: dict[int, pg.PlotDataItem] = {}
        self.empty_label = QLabel()
        self.empty_label.setAlignment(Qt.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.empty_label.setStyleSheet("color: #555; background: white;")
        self.layout().addWidget(self.empty_label)
        self.setMinimumHeight(160)
        self.empty_text = ""
        self.set_empty(translate("Charts", "Waiting for telemetry samples…"))

    def set_empty(self, text: str) -> None:
        """Show the chart's title and ``text`` (why there is nothing to draw) instead of the axes."""
        self.empty_text = text
        self.empty_label.setText(f"<b>{html.escape(self._title)}</b><br><br>{html.escape(text)}")
        self.plot_widget.setVisible(False)
        self.empty_label.setVisible(True)

    def is_empty(self) -> bool:
        """True while the chart shows its sentence rather than axes."""
        return not self.plot_widget.isVisibleTo(self)

    def set_series(self, series: dict[int, tuple[list, list]], capacity: float | None = None) -> None:
        """``series``: per GPU index, (seconds ago, values in the chart's unit); ``capacity``: the
        value axis reaches at least this (a GPU's memory or power limit) unless ``y_max`` is fixed."""
        if not any(len(t) for t, _y in series.values()):
            self.set_empty(translate("Charts", "Waiting for telemetry samples…"))
            return
        self.empty_label.setVisible(False)
        self.plot_widget.setVisible(True)
        top, span = 0.0, self.MIN_SPAN_S
        for idx, (t, y) in series.items():
            c = self._curves.get(idx)
            if c is None:
                c = self.plot.plot([], [], pen=pg.mkPen(PALETTE[idx % len(PALETTE)], width=2),
                                   name=translate("Charts", "GPU {n}").format(n=idx))
                self._curves[idx] = c
            ts, ys = np.asarray(t, float), np.asarray(y, float)
            c.setData(ts, ys)
            if ys.size and np.isfinite(ys).any():
                top = max(top, float(np.nanmax(ys)))
            if ts.size and np.isfinite(ts).any():
                span = max(span, float(np.nanmax(ts)))
        y_top = self.y_max if self.y_max else nice_ceiling(max(top * 1.1, capacity or 0.0))
        # a sliver past "now" (4% of the span, no label there) keeps the 0 s label inside its axis
        self.plot.getViewBox().setLimits(xMin=-span * 0.04)
        self.plot.setXRange(-span * 0.04, span, padding=0)
        self.plot.setYRange(0, y_top, padding=0)


class DecadeAxis(EdgeLabelAxis):
    """A log axis labelled at whole decades only, as plain numbers (0.001, 1, 1,000), never
    pyqtgraph's minor 2..9 labels stacked on a short axis (less than a decade in view: 1, 2 and 5).
    The labels are chosen from their drawn size: every decade when they fit apart, else every
    second (third, ...), keeping only labels that fit inside the axis, so none is dropped or
    overlaps another."""

    def _extents(self, values: list[float], lo: float, hi: float, size: float) -> list[tuple[float, float] | None]:
        """Each label's (start, end) in pixels along the axis, or None where it would leave the axis."""
        fm = QFontMetrics(self.style.get("tickFont") or QFont())
        vertical = self.orientation in ("left", "right")
        out: list[tuple[float, float] | None] = []
        for v, text in zip(values, self.tickStrings(values, 1.0, 1.0)):
            pos = (v - lo) / (hi - lo) * size
            half = (fm.height() if vertical else fm.horizontalAdvance(text)) / 2
            # a vertical axis may reach half a line past its ends (EdgeLabelAxis); a horizontal one not
            slack = half + 1 if vertical else -1
            out.append((pos - half, pos + half) if -slack <= pos - half and pos + half <= size + slack else None)
        return out

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - pyqtgraph override
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = sorted((float(minVal), float(maxVal)))
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo or not size or size <= 0:
            return []
        values = [float(d) for d in range(math.ceil(lo - 1e-9), math.floor(hi + 1e-9) + 1)]
        if len(values) < 2:
            values = [d + math.log10(m) for d in range(math.floor(lo) - 1, math.ceil(hi) + 1) for m in (1, 2, 5)
                      if lo - 1e-9 <= d + math.log10(m) <= hi + 1e-9]
        extents = self._extents(values, lo, hi, size)
        gap = QFontMetrics(self.style.get("tickFont") or QFont()).height() * TICK_GAP_LINES
        best: list[float] = []
        for step in range(1, len(values) + 1):
            for offset in range(step):
                kept = [(v, e) for v, e in list(zip(values, extents))[offset::step] if e is not None]
                apart = all(b[1][0] - a[1][1] >= gap for a, b in zip(kept, kept[1:]))
                if apart and len(kept) > len(best):
                    best = [v for v, _e in kept]
            if len(best) >= min(2, len(values)):
                break
        return [(1.0, best)] if best else []

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph override
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        return [f"{10.0 ** v:,.{max(0, -math.floor(v + 1e-9))}f}" for v in values]


class RooflineChart(ChartBase):
    """Attainable TFLOP/s against arithmetic intensity (FLOP/byte), log-log: the datasheet
    roof min(peak, bw x intensity) (Williams et al., CACM 2009) and the measured points. The
    view spans the whole decades the data reach; the legend names only what is drawn."""

    # the intensities charted, log10 FLOP/byte: 0.1 (a copy) to 10^4 (a large GEMM)
    INTENSITY_DECADES = (-1, 4)
    EMPTY_DECADES = (-2, 3)  # TFLOP/s shown before a run: 0.01 to 1,000

    def __init__(self, parent=None):
        super().__init__(translate("Charts", "Roofline"), parent,
                         axes={"left": DecadeAxis("left"), "bottom": DecadeAxis("bottom")})
        self.plot.setLogMode(x=True, y=True)
        # log10 coordinates: a value below 1 is negative there (pyqtgraph's log limits want numbers)
        self.plot.getViewBox().setLimits(xMin=-np.inf, yMin=-np.inf)
        self.plot.setLabel("bottom", translate("Charts", "arithmetic intensity (FLOP/byte)"))
        self.plot.setLabel("left", "TFLOP/s")
        self.legend = self.plot.addLegend(offset=(10, 10), labelTextColor="#222", brush=pg.mkBrush(255, 255, 255, 220))
        self._roof = self.plot.plot([], [], pen=pg.mkPen("#444", width=2))
        self._measured_roof = self.plot.plot([], [], pen=pg.mkPen(PALETTE[1], width=2, style=pg.QtCore.Qt.DashLine))
        # a PlotDataItem (not a bare ScatterPlotItem) so the log axes transform the points too
        self._points = self.plot.plot([], [], pen=None, symbol="o", symbolSize=9, symbolBrush=PALETTE[0],
                                      symbolPen="#223")
        self._names = {self._roof: translate("Charts", "datasheet roof"),
                       self._measured_roof: translate("Charts", "measured roof"),
                       self._points: translate("Charts", "measured GEMMs")}
        self._hint = pg.TextItem(translate("Charts", "No measurements yet: run the benchmarks"), color="#555",
                                 anchor=(0.5, 0.5))
        self.plot.addItem(self._hint, ignoreBounds=True)
        self._set_view(*self.EMPTY_DECADES)

    @staticmethod
    def roof(peak_tflops: float, bw_gbps: float, intensities):
        i = np.asarray(intensities, float)
        return np.minimum(peak_tflops, bw_gbps * 1e9 * i / 1e12)

    def legend_names(self) -> list[str]:
        """The legend's entries in order: only the lines and points drawn."""
        return [label.text for _sample, label in self.legend.items]

    def hint_shown(self) -> bool:
        return self._hint.isVisible()

    def _set_view(self, y_lo: float, y_hi: float) -> None:
        x_lo, x_hi = self.INTENSITY_DECADES
        # padding: the end decades' labels stay inside their axis (pyqtgraph drops one that would leave
        # it); 8% of 5 decades is 0.4 decade, the half-width of "10,000" on a chart 300 px wide
        self.plot.setXRange(x_lo, x_hi, padding=0.08)
        self.plot.setYRange(y_lo, y_hi, padding=0.05)
        self._hint.setPos((x_lo + x_hi) / 2, (y_lo + y_hi) / 2)

    def set_data(self, peak_tflops, bw_gbps, points, measured_peak=None, measured_bw=None):
        """``peak_tflops``/``bw_gbps``: the datasheet's (None: no roof drawn, a CPU run);
        ``points``: (FLOP/byte, TFLOP/s) measured; ``measured_*``: the measured roof's."""
        xs = np.logspace(*self.INTENSITY_DECADES, 120)
        lines = {self._roof: self.roof(peak_tflops, bw_gbps, xs) if peak_tflops and bw_gbps else None,
                 self._measured_roof: (self.roof(measured_peak, measured_bw, xs)
                                       if measured_peak and measured_bw else None)}
        drawn: list[float] = []
        for item, ys in lines.items():
            item.setData(xs if ys is not None else [], ys if ys is not None else [])
            drawn += [] if ys is None else ys.tolist()
        pts = [(float(x), float(y)) for x, y in (points or []) if x > 0 and y > 0]
        self._points.setData([p[0] for p in pts], [p[1] for p in pts])
        drawn += [p[1] for p in pts]
        for item in self._names:  # the legend names only what is drawn (a CPU run has no datasheet roof)
            self.legend.removeItem(item)
            if (item is self._points and pts) or (item is not self._points and lines[item] is not None):
                self.legend.addItem(item, self._names[item])
        ys_pos = [y for y in drawn if np.isfinite(y) and y > 0]
        self._hint.setVisible(not ys_pos)
        if ys_pos:
            lo, hi = math.floor(math.log10(min(ys_pos))), math.ceil(math.log10(max(ys_pos)))
            self._set_view(lo, max(hi, lo + 1))
        else:
            self._set_view(*self.EMPTY_DECADES)
