"""Tables whose headers never clip their text: a header section wraps its label onto as many lines
as its width needs (at spaces, after hyphens, dots and slashes; CJK between characters) and the
header grows to the tallest label, so "Cost (USD, on-demand)" or a plan named after a long
instance id reads whole at any window size (issue 29, item 7)."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHeaderView, QStyle, QStyleOptionHeader, QTableView

from planner_app.ui.textfit import WRAP_FLAGS, breakable, longest_word_px, wrapped_size


class WrapHeader(QHeaderView):
    """A horizontal header whose labels wrap (see the module doc). ``text_margin_px`` is what the
    style keeps around a label (QStyle.PM_HeaderMargin on each side)."""

    def __init__(self, parent=None):
        super().__init__(Qt.Horizontal, parent)
        self.setDefaultAlignment(WRAP_FLAGS)
        self.setSectionsClickable(True)
        self.setHighlightSections(False)
        # a section's width changes its wrapped height: the header re-measures (cached size hint)
        self.sectionResized.connect(lambda *_: self.remeasure())

    def text_margin_px(self) -> int:
        return 2 * self.style().pixelMetric(QStyle.PM_HeaderMargin, None, self) + 4

    def label(self, logical: int) -> str:
        model = self.model()
        if model is None:
            return ""
        v = model.headerData(logical, Qt.Horizontal, Qt.DisplayRole)
        return "" if v is None else str(v)

    def text_width_px(self, logical: int) -> int:
        """The room a label has in its section now (its width less the style's margins and the
        sort indicator when it shows one)."""
        room = self.sectionSize(logical) - self.text_margin_px()
        if self.isSortIndicatorShown() and self.sortIndicatorSection() == logical:
            room -= self.style().pixelMetric(QStyle.PM_HeaderMarkSize, None, self) + 4
        return room

    def remeasure(self) -> None:
        height = self.sizeHint().height()
        if height != self.height():
            self.updateGeometries()
            self.setMinimumHeight(0)
            self.setFixedHeight(height)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        base = super().sizeHint()
        fm = QFontMetrics(self.font())
        tallest = max((wrapped_size(fm, self.label(i), self.text_width_px(i)).height()
                       for i in range(self.count()) if not self.isSectionHidden(i)), default=0)
        return QSize(base.width(), max(base.height(), tallest + self.text_margin_px()))

    def sectionSizeFromContents(self, logical: int) -> QSize:  # noqa: N802 - Qt override
        """For ResizeToContents columns: wide enough for the label's longest word, and for the
        whole label when that is not much wider (short headers stay on one line)."""
        base = super().sectionSizeFromContents(logical)
        fm = QFontMetrics(self.font())
        text = self.label(logical)
        one_line = fm.horizontalAdvance(text) + self.text_margin_px()
        word = longest_word_px(fm, text) + self.text_margin_px()
        # one line up to 160 px of text; a longer label wraps to about two lines
        width = one_line if one_line <= 160 else max(word, one_line // 2 + self.text_margin_px())
        return QSize(max(width, self.minimumSectionSize()), base.height())

    def paintSection(self, painter, rect, logical):  # noqa: N802 - Qt override
        """The style's section (background, sort arrow) with no text, then the wrapped label."""
        if not rect.isValid():
            return
        opt = QStyleOptionHeader()
        self.initStyleOption(opt)
        opt.rect = rect
        opt.section = logical
        opt.text = ""
        if self.isSortIndicatorShown() and self.sortIndicatorSection() == logical:
            # the arrow points up for ascending (A to Z, smallest first), as users read it; QHeaderView's
            # own mapping is the reverse (Ascending -> SortDown, a down arrow in Fusion)
            opt.sortIndicator = (QStyleOptionHeader.SortUp if self.sortIndicatorOrder() == Qt.AscendingOrder
                                 else QStyleOptionHeader.SortDown)
        painter.save()
        self.style().drawControl(QStyle.CE_Header, opt, painter, self)
        painter.restore()
        margin = self.text_margin_px() // 2
        text_rect = rect.adjusted(margin, 1, -(rect.width() - self.text_width_px(logical) - margin), -1)
        painter.save()
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(text_rect, WRAP_FLAGS, breakable(self.label(logical)))
        painter.restore()


class DataTable(QTableView):
    """A QTableView with a WrapHeader: every table of the app. ``fit``: the columns share the view's
    width (fit_columns) so that nothing needs a horizontal scroll bar where the words allow it.
    ``wrap_cells``: cells wrap and rows take the height they need (a big one-line table such as
    Specs' 169 instances leaves it off: measuring every row's height took a second)."""

    # a cell's padding (the delegate's margins and the grid line), px
    CELL_PAD_PX = 14
    SAMPLE_ROWS = 200  # rows measured for a column's width

    def __init__(self, parent=None, fit: bool = False, wrap_cells: bool = True):
        super().__init__(parent)
        self.setHorizontalHeader(WrapHeader(self))
        self.setWordWrap(wrap_cells)
        self.wrap_cells = wrap_cells
        self.fit = fit
        if fit:
            self.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
            self.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)

    def setModel(self, model):  # noqa: N802 - Qt override
        super().setModel(model)
        if model is not None and self.fit:
            for sig in (model.modelReset, model.layoutChanged, model.rowsInserted, model.headerDataChanged):
                sig.connect(self.fit_columns)

    def resizeEvent(self, ev):  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        if self.fit:
            self.fit_columns()
        elif self.wrap_cells and ev.oldSize().width() != ev.size().width():
            self.resizeRowsToContents()  # wrapped cells take the lines they need at the new width

    def column_widths(self) -> tuple[list[int], list[int]]:
        """Each column's natural width (its longest cell on one line; its header wrapped no narrower
        than that) and its least width (its longest unbreakable word, in cells and header)."""
        m, h = self.model(), self.horizontalHeader()
        fm, hfm = QFontMetrics(self.font()), QFontMetrics(h.font())
        margin = h.text_margin_px()
        natural, least = [], []
        rows = min(m.rowCount(), self.SAMPLE_ROWS)
        for c in range(m.columnCount()):
            texts = [str(m.data(m.index(r, c)) or "") for r in range(rows)]
            cell = max((fm.horizontalAdvance(t) for t in texts), default=0) + self.CELL_PAD_PX
            # a cell wraps at spaces only (the item delegate): its least width is its longest word
            cell_word = max((fm.horizontalAdvance(w) for t in texts for w in t.split()), default=0) + self.CELL_PAD_PX
            label = h.label(c)
            head_word = longest_word_px(hfm, label) + margin if label else 0
            head_line = hfm.horizontalAdvance(label) + margin if label else 0
            # a header wraps to its cells' width, but a short header stays on one line
            head = head_line if head_line <= max(cell, 2 * head_word) else max(head_word, cell)
            natural.append(max(cell, head, h.minimumSectionSize()))
            least.append(max(cell_word, head_word, h.minimumSectionSize()))
        return natural, least

    def fit_columns(self, *_args) -> None:
        m = self.model()
        if m is None or m.columnCount() == 0:
            return
        natural, least = self.column_widths()
        room = self.viewport().width() - 2
        if sum(natural) <= room:  # everything on one line: the spare width shared out
            spare = room - sum(natural)
            widths = [w + spare * w // max(sum(natural), 1) for w in natural]
        elif sum(least) <= room:  # the widest columns wrap first: every column capped at one width
            lo, hi = 0, max(natural)
            while hi - lo > 1:  # the largest cap whose columns fit the room
                cap = (lo + hi) // 2
                if sum(max(m_, min(n, cap)) for n, m_ in zip(natural, least)) <= room:
                    lo = cap
                else:
                    hi = cap
            widths = [max(m_, min(n, lo)) for n, m_ in zip(natural, least)]
        else:  # too many columns for the window: each as narrow as its words allow, and a scroll bar
            widths = least
        h = self.horizontalHeader()
        h.blockSignals(True)
        try:
            for c, w in enumerate(widths):
                h.resizeSection(c, int(w))
        finally:
            h.blockSignals(False)
        h.remeasure()
        if self.wrap_cells:
            self.resizeRowsToContents()
