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
        self.sectionResized.connect(lambda *_: self._remeasure())

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

    def _remeasure(self) -> None:
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
            opt.sortIndicator = (QStyleOptionHeader.SortDown if self.sortIndicatorOrder() == Qt.AscendingOrder
                                 else QStyleOptionHeader.SortUp)
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
    """A QTableView with a WrapHeader: every table of the app."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHorizontalHeader(WrapHeader(self))
        self.setWordWrap(True)
