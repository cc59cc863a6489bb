"""The report as a PDF: the HTML layout (``html.py``, target "pdf") in a QTextDocument,
painted page by page onto a QPdfWriter with our own header and footer. Charts are
QTextDocument inline objects drawn with QPainter, so they stay vector in the PDF. The
bundled WenQuanYi Micro Hei font is used throughout so CJK text embeds. The only Qt
module of the report package."""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys

from PySide6.QtCore import QCoreApplication, QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QPageLayout,
    QPageSize,
    QPainter,
    QPainterPath,
    QPdfWriter,
    QPen,
    QPyTextObject,
    QTextCharFormat,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QApplication

from planner_app.paths import resources_dir
from planner_app.report import charts as C
from planner_app.report.html import render_parts
from planner_app.report.text import Strings

DPI = 96  # layout units: CSS pixels; fonts in points scale with it
CHART_OBJECT = QTextFormat.UserObject + 17
CHART_PROP = QTextFormat.UserProperty + 17
PAPERS = {"A4": QPageSize.A4, "Letter": QPageSize.Letter}
MARGIN_MM = 16.0
HEADER_PX = 30.0
FOOTER_PX = 30.0
FONT_FILE = "wqy-microhei.ttc"
_font_family: list = []


@contextlib.contextmanager
def _keep_none_alive():
    """PySide6 6.12.0 drops a reference to ``None`` on every call of an overloaded method
    (QPainter.setPen, drawRect, ...); after a few thousand calls the interpreter aborts
    with "none_dealloc" (seen with 6.12.0, not with 6.11). Give back what was lost while
    painting. An extra reference to None is harmless, a missing one is fatal."""
    before = sys.getrefcount(None)
    try:
        yield
    finally:
        lost = before - sys.getrefcount(None)
        if lost > 0:
            incref = ctypes.pythonapi.Py_IncRef
            incref.argtypes = [ctypes.py_object]
            for _ in range(lost):
                incref(None)


class ReportError(Exception):
    """The PDF could not be written (no GUI application possible, painter refused the file)."""


def ensure_app():
    """The running Qt application, or a new QApplication (a widgets one, so a GUI or a
    test session that later wants widgets can share it) for fonts and painting."""
    app = QCoreApplication.instance()
    if app is None:
        return QApplication([])
    if not isinstance(app, QGuiApplication):
        raise ReportError("a non-GUI QCoreApplication is running; PDF reports need a QGuiApplication")
    return app


def report_font_family() -> str:
    """Load the bundled CJK-capable font once; its family name (a system sans as fallback)."""
    if _font_family:
        return _font_family[0]
    family = "Sans Serif"
    path = os.path.join(resources_dir(), "fonts", FONT_FILE)
    if os.path.exists(path):
        fid = QFontDatabase.addApplicationFont(path)
        fams = QFontDatabase.applicationFontFamilies(fid) if fid >= 0 else []
        if fams:
            family = fams[0]
    _font_family.append(family)
    return family


class _ChartObject(QPyTextObject):
    """Draws a chart display list where its placeholder character sits in the document."""

    def __init__(self, charts_by_name: dict, family: str):
        super().__init__()
        self.charts = charts_by_name
        self.family = family

    def intrinsicSize(self, doc, pos, fmt):
        ch = self.charts.get(fmt.property(CHART_PROP))
        return QSizeF(ch.width, ch.height) if ch else QSizeF(1, 1)

    def drawObject(self, painter, rect, doc, pos, fmt):
        ch = self.charts.get(fmt.property(CHART_PROP))
        if ch is not None:
            painter.save()
            painter.translate(rect.topLeft())
            paint_chart(painter, ch, self.family)
            painter.restore()


def paint_chart(p: QPainter, ch: C.Chart, family: str) -> None:
    """Draw a chart display list with QPainter (vector on a PDF device)."""
    p.setRenderHint(QPainter.Antialiasing, True)
    fonts: dict = {}
    for it in ch.items:
        if isinstance(it, C.Rect):
            p.setPen(QPen(QColor(it.stroke)) if it.stroke else Qt.NoPen)
            p.setBrush(QColor(it.fill) if it.fill else Qt.NoBrush)
            p.drawRect(QRectF(it.x, it.y, it.w, it.h))
        elif isinstance(it, (C.Line, C.Poly)):
            pen = QPen(QColor(it.color), it.width)
            pen.setCapStyle(Qt.FlatCap)
            if it.dash:
                pen.setDashPattern([4.0 / it.width, 3.0 / it.width])
            p.setPen(pen)
            p.setBrush(Qt.NoBrush)
            if isinstance(it, C.Line):
                p.drawLine(it.x1, it.y1, it.x2, it.y2)
            else:
                path = QPainterPath()
                path.moveTo(*it.points[0])
                for xy in it.points[1:]:
                    path.lineTo(*xy)
                p.drawPath(path)
        elif isinstance(it, C.Dot):
            p.setPen(Qt.NoPen)
            p.setBrush(QColor(it.fill))
            p.drawEllipse(QRectF(it.x - it.r, it.y - it.r, 2 * it.r, 2 * it.r))
        elif isinstance(it, C.Text):
            key = (it.size, it.bold)
            if key not in fonts:
                f = QFont(family)
                f.setPointSizeF(it.size)
                f.setBold(it.bold)
                fonts[key] = f
            p.setFont(fonts[key])
            p.setPen(QColor(it.color))
            w = p.fontMetrics().horizontalAdvance(it.text)
            x = it.x - (w / 2 if it.anchor == "middle" else w if it.anchor == "end" else 0)
            p.drawText(QPointF(x, it.y), it.text)


def _build_documents(report, family: str, width_px: float, height_px: float) -> list:
    """One QTextDocument per run of pages (the report's forced page breaks split them)."""
    charts_by_name = {}

    def chart_html(ch):
        if ch is None:
            return ""
        ch.width = min(ch.width, width_px)
        charts_by_name[ch.name] = ch
        return f"<p>@@CHART:{ch.name}@@</p>"

    parts = render_parts(report, target="pdf", chart_html=chart_html)
    handler = _ChartObject(charts_by_name, family)
    docs = []
    for html in parts:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        font = QFont(family)
        font.setPointSizeF(9.5)
        doc.setDefaultFont(font)
        doc.documentLayout().registerHandler(CHART_OBJECT, handler)
        doc.setHtml(html)
        for name in charts_by_name:
            cur = doc.find(f"@@CHART:{name}@@")
            if cur.isNull():
                continue
            f = QTextCharFormat()
            f.setObjectType(CHART_OBJECT)
            f.setProperty(CHART_PROP, name)
            cur.insertText("\ufffc", f)
        doc.setPageSize(QSizeF(width_px, height_px))  # lay out once, after the edits
        doc._chart_handler = handler  # keep the handler alive as long as the document
        docs.append(doc)
    return docs


def write_pdf(report, path: str, paper: str = "A4", progress=None) -> int:
    """Write the report to ``path`` (any writable file name); returns the page count."""
    with _keep_none_alive():
        return _write_pdf(report, path, paper, progress)


def _write_pdf(report, path, paper, progress) -> int:
    ensure_app()
    family = report_font_family()
    s = Strings(report.lang)
    writer = QPdfWriter(path)
    writer.setResolution(DPI)
    writer.setPageSize(QPageSize(PAPERS[paper]))
    writer.setPageMargins(QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM), QPageLayout.Millimeter)
    writer.setTitle(report.title)
    writer.setCreator(f"GPU Capacity Planner {report.app_version}")
    writer.setAuthor(report.author or "")
    area = writer.pageLayout().paintRectPixels(DPI)
    body_h = area.height() - HEADER_PX - FOOTER_PX
    if progress:
        progress(0.35, s("Laying out the report"))
    docs = _build_documents(report, family, area.width(), body_h)
    pages = [(doc, i) for doc in docs for i in range(max(1, doc.pageCount()))]
    painter = QPainter()
    if not painter.begin(writer):
        raise ReportError(f"cannot write {path}")
    try:
        small = QFont(family)
        small.setPointSizeF(7.5)
        for n, (doc, i) in enumerate(pages):
            if n:
                writer.newPage()
            _header_footer(painter, report, s, small, area.width(), area.height(), n + 1, len(pages))
            painter.save()
            painter.translate(0, HEADER_PX - i * body_h)
            clip = QRectF(0, i * body_h, area.width(), body_h)
            painter.setClipRect(clip)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            ctx.clip = clip
            doc.documentLayout().draw(painter, ctx)
            painter.restore()
            if progress:
                progress(0.4 + 0.55 * (n + 1) / len(pages), s.f("Page {i} of {n}", i=n + 1, n=len(pages)))
    finally:
        painter.end()
    return len(pages)


def _header_footer(p: QPainter, report, s, font, w, h, page, pages):
    p.save()
    p.setFont(font)
    p.setPen(QColor("#555555"))
    fm = p.fontMetrics()
    title = fm.elidedText(report.title, Qt.ElideRight, int(w * 0.62))
    p.drawText(QRectF(0, 0, w * 0.64, HEADER_PX - 10), Qt.AlignLeft | Qt.AlignBottom, title)
    right = report.project or s("GPU sizing report")
    p.drawText(QRectF(w * 0.64, 0, w * 0.36, HEADER_PX - 10), Qt.AlignRight | Qt.AlignBottom,
               fm.elidedText(right, Qt.ElideRight, int(w * 0.35)))
    p.setPen(QPen(QColor("#9AA8B8"), 0.8))
    p.drawLine(0, HEADER_PX - 6, w, HEADER_PX - 6)
    p.drawLine(0, h - FOOTER_PX + 8, w, h - FOOTER_PX + 8)
    p.setPen(QColor("#555555"))
    left = s.f("GPU Capacity Planner {v} · generated {d}", v=report.app_version, d=report.created)
    p.drawText(QRectF(0, h - FOOTER_PX + 10, w * 0.7, FOOTER_PX - 10), Qt.AlignLeft | Qt.AlignTop, left)
    p.drawText(QRectF(w * 0.6, h - FOOTER_PX + 10, w * 0.4, FOOTER_PX - 10), Qt.AlignRight | Qt.AlignTop,
               s.f("Page {i} of {n}", i=page, n=pages))
    p.restore()
