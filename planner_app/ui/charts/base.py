"""Chart base: a pyqtgraph PlotWidget with items created once (subclasses only call
``setData``), and export to PNG (raster, 2x) or SVG (the scene rendered through
QSvgGenerator: vector, and free of pyqtgraph 0.14's SVG exporter bug with closed paths)."""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from planner_app.atomic import atomic_path
from planner_app.ui.textfit import WrapLabel, wrap_lines

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]


def readable_ticks(values, spacing) -> list[str]:
    """Tick labels as plain numbers with thousands separators (4,000,000, not 4e+06), with
    as many decimals as the tick spacing needs."""
    if not spacing or not np.isfinite(spacing) or spacing <= 0:  # pyqtgraph passes None for some levels
        spacing = min((abs(b - a) for a, b in zip(values, values[1:]) if b != a), default=1.0)
    decimals = 0 if spacing >= 1 else min(6, int(np.ceil(-np.log10(spacing))))
    return [f"{v:,.{decimals}f}" for v in values]


class ReadableAxis(pg.AxisItem):
    """An axis whose labels are plain numbers (``readable_ticks``), never scaled by an SI prefix."""

    def __init__(self, orientation, **kw):
        super().__init__(orientation, **kw)
        self.enableAutoSIPrefix(False)

    # major labels at least this many text heights apart (pyqtgraph spaces them by pixels alone, and a
    # short chart or a large meeting font stacked them over each other)
    MIN_LABEL_GAP_LINES = 1.6

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 - pyqtgraph override
        levels = super().tickSpacing(minVal, maxVal, size)
        if self.logMode or self.orientation not in ("left", "right") or maxVal <= minVal or size <= 0:
            return levels
        px_per_unit = size / (maxVal - minVal)
        need_px = QFontMetrics(self.style["tickFont"] or QFont()).height() * self.MIN_LABEL_GAP_LINES
        kept = [(sp, off) for sp, off in levels if sp * px_per_unit >= need_px]
        if kept:
            return kept
        # every level too dense: the next 1-2-5 step that leaves the room
        step = need_px / px_per_unit
        mag = 10 ** np.floor(np.log10(step))
        nice = next(m * mag for m in (1, 2, 5, 10) if m * mag >= step)
        return [(nice, 0)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph override
        if self.logMode:  # a log axis labels powers of ten: pyqtgraph's own strings
            return super().tickStrings(values, scale, spacing)
        return readable_ticks([v * scale for v in values], spacing * scale if spacing else None)


class Legend(QWidget):
    """A chart's legend under its plot, as Qt widgets in two columns: it never covers a bar or a line,
    each swatch stays on the row of its label, a narrow chart wraps its labels. Subclasses draw the
    swatches (a box for a bar, the line's own pen and marker for a line)."""

    COLUMNS = 2

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAutoFillBackground(True)
        self.setStyleSheet("background: white;")
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(8, 2, 8, 6)
        self.grid.setHorizontalSpacing(12)
        self.grid.setVerticalSpacing(2)
        self.labels: list[QLabel] = []

    def set_rows(self, rows: list[tuple[QLabel, str]]) -> None:
        """``rows``: (swatch, label text) in the order shown; the old rows go."""
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.labels = []
        for i, (swatch, label) in enumerate(rows):
            row = QWidget()
            h = QHBoxLayout(row)
            h.setContentsMargins(0, 0, 0, 0)
            h.setSpacing(5)
            text = WrapLabel(label)
            text.setStyleSheet("color: #222; background: white;")
            h.addWidget(swatch, 0, Qt.AlignVCenter)
            h.addWidget(text, 1)
            self.grid.addWidget(row, i // self.COLUMNS, i % self.COLUMNS)
            self.labels.append(text)


class ChartView(pg.PlotWidget):
    """A PlotWidget that zooms only on Ctrl+wheel: a plain wheel is left to the page the chart sits
    on (the event goes to the parent scroll area), so scrolling past a chart never rescales it."""

    def wheelEvent(self, ev):  # noqa: N802 - Qt override
        if ev.modifiers() & Qt.ControlModifier:
            super().wheelEvent(ev)
        else:
            ev.ignore()


class ChartBase(QWidget):
    def __init__(self, title: str = "", parent=None, value_bottom: bool = False, axes: dict | None = None):
        """``value_bottom``: the x axis holds values too (scatter charts), read as the y axis is.
        ``axes``: axis items by side that replace these defaults (a log chart's decade axes)."""
        super().__init__(parent)
        # value axes read 4,000,000, never 4e+06 or an SI-scaled "x1e6"
        axes = {"left": ReadableAxis("left"), **({"bottom": ReadableAxis("bottom")} if value_bottom else {}),
                **(axes or {})}
        self.plot_widget = ChartView(background="w", axisItems=axes)
        self.plot = self.plot_widget.getPlotItem()
        # every charted quantity (bytes, seconds, dollars, rates, %) is >= 0: a zoom or a drag never
        # shows a negative value axis (a log axis clears this: its view coordinates are log10)
        self.plot.getViewBox().setLimits(yMin=0, **({"xMin": 0} if value_bottom else {}))
        self._title = title
        self.plot.showGrid(x=False, y=True, alpha=0.25)
        for ax in ("left", "bottom"):
            self.plot.getAxis(ax).setPen(pg.mkPen("#444"))
            self.plot.getAxis(ax).setTextPen(pg.mkPen("#222"))
        self.plot.setMenuEnabled(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot_widget)
        self.setMinimumHeight(220)
        self.apply_fonts()

    # a chart's title is this much larger than the body text (it was 11 pt over 10 pt text)
    TITLE_SCALE = 1.1

    def body_font(self) -> QFont:
        """The font the chart's text follows: the widget's, i.e. the application font (meeting mode
        enlarges it; every axis, label and title grows with it)."""
        return QFont(self.font())

    def apply_fonts(self) -> None:
        """Title, tick labels and axis labels in the body font (pyqtgraph keeps its own fonts)."""
        f = self.body_font()
        self._draw_title()
        for ax in ("left", "bottom"):
            axis = self.plot.getAxis(ax)
            axis.setStyle(tickFont=f)
            axis.label.setFont(f)
            axis.picture = None  # pyqtgraph redraws its cached tick picture
            axis.update()
        self.fonts_changed()

    def fonts_changed(self) -> None:
        """Subclasses re-lay out what depends on text size (category labels, axis heights)."""

    def changeEvent(self, ev):  # noqa: N802 - Qt override
        if ev.type() == QEvent.FontChange:
            self.apply_fonts()
        super().changeEvent(ev)

    def title_font(self) -> QFont:
        f = self.body_font()
        f.setPointSizeF((f.pointSizeF() if f.pointSizeF() > 0 else 10.0) * self.TITLE_SCALE)
        return f

    def _draw_title(self) -> None:
        """The title, wrapped onto a second line when the chart is narrower than it."""
        f = self.title_font()
        room = self.plot_widget.width() - 16
        lines = wrap_lines(self._title, f, room, 2) if room > 40 and self._title else [self._title]
        text = "<br>".join(html.escape(t) for t in lines)
        self.plot.setTitle(text, color="#222", size=f"{f.pointSizeF():.1f}pt")

    def resizeEvent(self, ev):  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        if ev.oldSize().width() != ev.size().width():
            self._draw_title()

    def set_title(self, title: str) -> None:
        self._title = title
        self._draw_title()

    def export_widget(self) -> QWidget:
        """What an export draws: the plot (subclasses with a legend beside it: the whole chart)."""
        return self.plot_widget

    def export_png(self, path: str, scale: float = 2.0) -> None:
        widget = self.export_widget()
        img = widget.grab().toImage()
        if scale != 1.0:
            w, h = widget.width(), widget.height()
            img = QImage(int(w * scale), int(h * scale), QImage.Format_ARGB32)
            img.fill(0xFFFFFFFF)
            p = QPainter(img)
            try:
                p.setRenderHint(QPainter.Antialiasing)
                p.scale(scale, scale)  # QWidget.render draws at 1:1; the painter scales it
                widget.render(p, QPoint(0, 0))
            finally:
                p.end()
        if not img.save(path, "PNG"):
            raise OSError(f"cannot write {path}")

    def export_svg(self, path: str) -> None:
        gen = QSvgGenerator()
        gen.setFileName(path)
        widget = self.export_widget()
        w, h = max(widget.width(), 400), max(widget.height(), 300)
        gen.setSize(QSize(w, h))
        gen.setViewBox(QRectF(0, 0, w, h))
        p = QPainter(gen)
        try:
            widget.render(p, QPoint(0, 0))
        finally:
            p.end()

    def export(self, path: str) -> None:
        """PNG or SVG by the file's suffix, written to a temporary file in the same folder and
        renamed: a failed export leaves no partial file and keeps an older one."""
        svg = path.lower().endswith(".svg")
        with atomic_path(path, suffix=".svg" if svg else ".png", prefix=".chart-") as tmp:
            (self.export_svg if svg else self.export_png)(tmp)
