"""What the text-fit test measures (issue 29, item 7): every visible piece of text of a window
against the room its widget gives it, with the font it is drawn in.

- a label: one line (no word wrap) no wider than its contents; a wrapped label no taller than its
  height at its width;
- a button, check box or radio button: its size hint (text plus the style's padding) within its width;
- a combo box: its current text within the style's edit field;
- a line edit holding text: the text within the field (a field scrolled to its end hides its start);
- a tab bar: each tab's text within its tab;
- a table header: each visible section's label within the section (a WrapHeader: wrapped, its tallest
  label within the header's height; a plain QHeaderView: one line);
- a table cell in view: its text within its cell, unless the column wraps;
- a chart (pyqtgraph): the title within the plot's width, the tick labels drawn (pyqtgraph drops one
  that would leave its axis) and none overlapping another.

Each problem is a string naming the page, the widget and what does not fit."""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics, QImage, QPainter, QTextDocument
from PySide6.QtGui import Qt as QtGuiNs
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QStyle,
    QStyleOptionComboBox,
    QTabBar,
    QTableView,
    QWidget,
)

from planner_app.ui.charts.base import ChartBase
from planner_app.ui.tables import WrapHeader
from planner_app.ui.textfit import wrapped_size

SLACK_PX = 2  # rounding between QFontMetrics and what the style draws


def shown(w: QWidget) -> bool:
    return w.isVisible() and w.width() > 0 and w.height() > 0 and w.visibleRegion().boundingRect().width() > 0


def plain(text: str) -> str:
    return text.replace("&&", "\x00").replace("&", "").replace("\x00", "&")


def name_of(w: QWidget) -> str:
    n = w.objectName() or ""
    return f"{type(w).__name__}{'(' + n + ')' if n else ''}"


def label_problems(lab: QLabel) -> list[str]:
    text = lab.text()
    if not text.strip():
        return []
    room = lab.contentsRect().width() - 2 * lab.margin() - (lab.indent() if lab.indent() > 0 else 0)
    rich = lab.textFormat() == Qt.RichText or (lab.textFormat() == Qt.AutoText and QtGuiNs.mightBeRichText(text))
    if lab.wordWrap():
        need_h = lab.heightForWidth(lab.width())
        if need_h > lab.height() + SLACK_PX:
            return [f"{name_of(lab)} {text[:60]!r}: needs {need_h} px of height, has {lab.height()}"]
        return []
    if rich:
        doc = QTextDocument()
        doc.setDefaultFont(lab.font())
        doc.setHtml(text)
        doc.setDocumentMargin(0)
        need = doc.idealWidth()
    else:
        fm = QFontMetrics(lab.font())
        need = max(fm.horizontalAdvance(line) for line in plain(text).split("\n"))
    if need > room + SLACK_PX:
        return [f"{name_of(lab)} {text[:60]!r}: needs {need:.0f} px, has {room}"]
    return []


def button_problems(b: QAbstractButton) -> list[str]:
    if not b.text().strip():
        return []
    need = b.sizeHint().width()
    if isinstance(b, (QCheckBox, QRadioButton)):
        need = b.sizeHint().width()
    if need > b.width() + SLACK_PX:
        return [f"{name_of(b)} {b.text()[:60]!r}: needs {need} px, has {b.width()}"]
    return []


def combo_problems(c: QComboBox) -> list[str]:
    text = c.currentText()
    if not text:
        return []
    opt = QStyleOptionComboBox()
    c.initStyleOption(opt)
    field = c.style().subControlRect(QStyle.CC_ComboBox, opt, QStyle.SC_ComboBoxEditField, c)
    room = field.width() - (6 if not c.isEditable() else 4)
    need = QFontMetrics(c.font()).horizontalAdvance(text)
    if need > room + SLACK_PX:
        return [f"{name_of(c)} {text[:60]!r}: needs {need} px, has {room}"]
    return []


def line_edit_problems(e: QLineEdit) -> list[str]:
    if isinstance(e.parentWidget(), QComboBox) or not e.text():
        return []  # a combo's edit field: combo_problems
    room = e.width() - 10
    need = QFontMetrics(e.font()).horizontalAdvance(e.text())
    if need > room + SLACK_PX:
        return [f"{name_of(e)} {e.text()[:60]!r}: needs {need} px, has {room}"]
    return []


def tab_problems(t: QTabBar) -> list[str]:
    out = []
    fm = QFontMetrics(t.font())
    for i in range(t.count()):
        text = plain(t.tabText(i))
        room = t.tabRect(i).width() - 8
        if fm.horizontalAdvance(text) > room + SLACK_PX:
            out.append(f"tab {text!r}: needs {fm.horizontalAdvance(text)} px, has {room}")
        if t.elideMode() != Qt.ElideNone and fm.horizontalAdvance(text) > room:
            out.append(f"tab {text!r} elided")
    return out


def header_problems(h: QHeaderView) -> list[str]:
    out = []
    model = h.model()
    if model is None or h.orientation() != Qt.Horizontal:
        return out
    fm = QFontMetrics(h.font())
    for i in range(h.count()):
        if h.isSectionHidden(i) or h.sectionSize(i) <= 0:
            continue
        text = str(model.headerData(i, Qt.Horizontal, Qt.DisplayRole) or "")
        if not text:
            continue
        if isinstance(h, WrapHeader):
            room = h.text_width_px(i)
            need = wrapped_size(fm, text, room)
            if need.width() > room + SLACK_PX or need.height() > h.height() - 2 + SLACK_PX:
                out.append(f"header {text!r}: needs {need.width()}x{need.height()} px, "
                           f"has {room}x{h.height()}")
        else:
            room = h.sectionSize(i) - 12
            if fm.horizontalAdvance(text) > room + SLACK_PX:
                out.append(f"header {text!r}: needs {fm.horizontalAdvance(text)} px, has {room}")
    return out


def cell_problems(v: QTableView, max_rows: int = 60) -> list[str]:
    out = []
    model = v.model()
    if model is None:
        return out
    fm = QFontMetrics(v.font())
    vp = v.viewport().rect()
    # the item delegate's text margin: QStyle.PM_FocusFrameHMargin + 1 on each side (qcommonstyle.cpp)
    pad = 2 * (v.style().pixelMetric(QStyle.PM_FocusFrameHMargin, None, v) + 1)
    for r in range(min(model.rowCount(), max_rows)):
        if v.isRowHidden(r):
            continue
        for c in range(model.columnCount()):
            if v.isColumnHidden(c):
                continue
            idx = model.index(r, c)
            rect = v.visualRect(idx)
            if not rect.isValid() or not vp.intersects(rect):
                continue
            text = str(model.data(idx, Qt.DisplayRole) or "")
            if not text:
                continue
            room = rect.width() - pad
            if v.wordWrap():
                need = fm.boundingRect(QRect(0, 0, max(room, 1), 100_000), Qt.TextWordWrap, text)
                if need.width() > room + SLACK_PX or need.height() > rect.height() + SLACK_PX:
                    out.append(f"cell ({r},{c}) {text[:50]!r}: needs {need.width()}x{need.height()}, "
                               f"has {room}x{rect.height()}")
            elif max(fm.horizontalAdvance(t) for t in text.split("\n")) > room + SLACK_PX:
                out.append(f"cell ({r},{c}) {text[:50]!r}: needs {fm.horizontalAdvance(text)} px, has {room}")
    return out


def drawn_ticks(axis) -> list[tuple]:
    """(rectangle, text) of each tick label pyqtgraph draws on ``axis`` (its own layout pass: a label
    that would leave the axis is dropped there, AxisItem.generateDrawSpecs)."""
    img = QImage(10, 10, QImage.Format_ARGB32)
    p = QPainter(img)
    try:
        specs = axis.generateDrawSpecs(p)
    finally:
        p.end()
    return [] if specs is None else [(rect, text) for rect, _f, text in specs[2]]


def chart_problems(ch: ChartBase) -> list[str]:
    out = []
    plot = ch.plot
    title = plot.titleLabel
    if title.isVisible() and title.text:
        doc = QTextDocument()
        doc.setHtml(title.text)
        doc.setDefaultFont(ch.title_font())
        doc.setDocumentMargin(0)
        need, room = doc.idealWidth(), ch.plot_widget.width() - 8
        if need > room + SLACK_PX:
            out.append(f"chart title {doc.toPlainText()!r}: needs {need:.0f} px, has {room}")
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        if not axis.isVisible():
            continue
        ticks = drawn_ticks(axis)
        rects = sorted((r for r, _t in ticks), key=(lambda r: r.left()) if side == "bottom" else (lambda r: r.top()))
        for a, b in zip(rects, rects[1:]):
            if (side == "bottom" and a.right() > b.left() + 0.5) or (side == "left" and a.bottom() > b.top() + 0.5):
                out.append(f"chart {ch.plot.titleLabel.text[:40]!r} {side} axis labels overlap")
                break
        wanted = getattr(ch, "category_texts", None)
        if side == "bottom" and wanted and len(ticks) < len(wanted):
            out.append(f"chart {ch.plot.titleLabel.text[:40]!r}: {len(wanted) - len(ticks)} category label(s) not drawn")
    return out


def window_problems(root: QWidget) -> list[str]:
    """Every problem of the visible widgets under ``root``."""
    out = []
    for w in [root] + root.findChildren(QWidget):
        if not shown(w):
            continue
        if isinstance(w, QLabel):
            out += label_problems(w)
        elif isinstance(w, (QPushButton, QCheckBox, QRadioButton)):
            out += button_problems(w)
        elif isinstance(w, QComboBox):
            out += combo_problems(w)
        elif isinstance(w, QLineEdit):
            out += line_edit_problems(w)
        elif isinstance(w, QTabBar):
            out += tab_problems(w)
        elif isinstance(w, QHeaderView):
            out += header_problems(w)
        elif isinstance(w, QGroupBox) and w.title():
            need = QFontMetrics(w.font()).horizontalAdvance(plain(w.title()))
            if need > w.width() - 16:
                out.append(f"group box {w.title()!r}: needs {need} px, has {w.width() - 16}")
        if isinstance(w, QTableView):
            out += cell_problems(w)
        if isinstance(w, ChartBase):
            out += chart_problems(w)
    return out

