"""The report as a PDF: the HTML layout (``html.py``, target "pdf") in a QTextDocument,
painted page by page onto a QPdfWriter with our own header and footer. Charts are
QTextDocument inline objects drawn with QPainter, so they stay vector in the PDF. The
bundled WenQuanYi Micro Hei font is used throughout so CJK text embeds. The only Qt
module of the report package."""
from __future__ import annotations

import contextlib
import ctypes
import math
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
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QApplication

from planner_app.paths import resources_dir
from planner_app.report import charts as C
from planner_app.report.html import render_pdf
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

# Pagination (one flowing document; our rules, not Qt's page-break-before, which loses blocks):
KEEP_WITH_NEXT_PX = 60.0  # a heading keeps at least this much of what follows (three table rows) on its page
MAJOR_ROOM = 0.3  # a major section (memory, serving, scaling) starts a new page when less of the page is left
LAST_PAGE_MIN = 0.2  # a last page filled less than this is a page of leftovers: lay the report out smaller ...
SCALES = (1.0, 0.97, 0.94, 0.91)  # ... at most 9% smaller (a print "shrink to fit")
LONE_TAIL = 0.25  # a title whose last line is shorter than this share of the width leaves a word alone ...
TITLE_MIN_PT = 14.0  # ... it is set smaller, down to this size


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


def _blocks(doc):
    b = doc.begin()
    while b.isValid():
        yield b
        b = b.next()


def _build_document(report, family: str, width_px: float, height_px: float) -> tuple[QTextDocument, list]:
    """The report as one paginated QTextDocument of pages ``width_px`` x ``height_px``, and the
    h2 ordinals of its major sections."""
    charts_by_name = {}

    def chart_html(ch):
        if ch is None:
            return ""
        ch.width = min(ch.width, width_px)
        charts_by_name[ch.name] = ch
        return f"<p>@@CHART:{ch.name}@@</p>"

    html, majors = render_pdf(report, chart_html)
    handler = _ChartObject(charts_by_name, family)
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
    _fit_title(doc, width_px)
    _keep_headings(doc, height_px, majors)
    return doc, majors


def _lone_tail(block, width: float) -> bool:
    lay = block.layout()
    n = lay.lineCount()
    return n > 1 and lay.lineAt(n - 1).naturalTextWidth() < LONE_TAIL * width


def _fit_title(doc: QTextDocument, width: float) -> None:
    """The title (h1) a little smaller while its last line would hold a word or a character alone."""
    block = next((b for b in _blocks(doc) if b.blockFormat().headingLevel() == 1), None)
    if block is None:
        return
    doc.pageCount()  # lay out
    pt = block.begin().fragment().charFormat().font().pointSizeF()  # the size the style sheet gave it
    while _lone_tail(block, width) and pt > TITLE_MIN_PT:
        pt -= 0.5
        cur = QTextCursor(block)
        cur.setPosition(block.position() + block.length() - 1, QTextCursor.KeepAnchor)
        f = QTextCharFormat(block.begin().fragment().charFormat())
        f.clearProperty(QTextFormat.FontSizeAdjustment)  # <h1>'s own step would override the size
        f.setFontPointSize(pt)
        cur.setCharFormat(f)
        doc.pageCount()


def _keep_headings(doc: QTextDocument, page_h: float, majors: list) -> None:
    """Move a heading to the next page when what follows it would not start on its page (a chart,
    the first rows of a table), and a major section when little of the page is left. In document
    order: each move shifts what comes after."""
    layout = doc.documentLayout()
    h2 = -1
    for block in _blocks(doc):
        level = block.blockFormat().headingLevel()
        if level not in (2, 3):
            continue
        h2 += level == 2
        r = layout.blockBoundingRect(block)
        page_top = math.floor(r.top() / page_h) * page_h
        if r.top() - page_top < 2:  # already heads its page
            continue
        room = page_top + page_h - r.top()
        nxt = block.next()
        follow = nxt.layout().lineAt(0).height() if nxt.isValid() and nxt.layout().lineCount() else 0.0
        major = level == 2 and h2 in majors and room < MAJOR_ROOM * page_h
        if major or r.height() + max(follow, KEEP_WITH_NEXT_PX) > room:
            f = block.blockFormat()
            f.setTopMargin(f.topMargin() + room)
            QTextCursor(block).setBlockFormat(f)


def _last_page_fill(doc: QTextDocument, page_h: float) -> float:
    """How far down its last page the document's text reaches (0..1)."""
    b = doc.lastBlock()
    while b.previous().isValid() and not b.text().strip():
        b = b.previous()
    bottom = doc.documentLayout().blockBoundingRect(b).bottom()
    return (bottom - (doc.pageCount() - 1) * page_h) / page_h


def _layout(report, family: str, width_px: float, height_px: float) -> tuple[QTextDocument, float]:
    """(the document, the scale it is painted at): full size, or a little smaller where full size
    would leave a last page of a few lines."""
    first = None
    for scale in SCALES:
        doc, _ = _build_document(report, family, width_px / scale, height_px / scale)
        first = first or (doc, scale)
        if doc.pageCount() == 1 or _last_page_fill(doc, height_px / scale) >= LAST_PAGE_MIN:
            return doc, scale
    return first


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
    doc, scale = _layout(report, family, area.width(), body_h)
    page_h = body_h / scale  # a page of the document, in its own (unscaled) units
    pages = range(max(1, doc.pageCount()))
    painter = QPainter()
    if not painter.begin(writer):
        raise ReportError(f"cannot write {path}")
    try:
        small = QFont(family)
        small.setPointSizeF(7.5)
        for n in pages:
            if n:
                writer.newPage()
            _header_footer(painter, report, s, small, area.width(), area.height(), n + 1, len(pages))
            painter.save()
            painter.translate(0, HEADER_PX)
            painter.scale(scale, scale)
            painter.translate(0, -n * page_h)
            clip = QRectF(0, n * page_h, area.width() / scale, page_h)
            painter.setClipRect(clip)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            # lines that start at the page's bottom edge or end at its top edge belong to the next or the
            # previous page: not drawn here (a clipped line still puts its text into the PDF)
            ctx.clip = clip.adjusted(0, 0.5, 0, -0.5)
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
