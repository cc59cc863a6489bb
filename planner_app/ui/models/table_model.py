"""One table model for every table: a list of row dicts and a column list (key, header,
unit, formatter). DisplayRole: formatted text; UserRole: the raw value (used for
sorting); ToolTipRole: full precision. ``data()`` computes nothing beyond formatting.
Cells can be bold (the best of a row) or marked with a warning (amber, a warning icon where
asked, the reason as the tooltip: a price older than a year)."""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QApplication, QStyle

from planner_app.i18n import tr as translate

_NO_PARENT = QModelIndex()  # the invalid index Qt passes for a flat table's root

# Units shown in headers and row labels that read differently in Chinese (others, such as
# GB, GiB, s, %, W and MHz, are the same in both languages).
UNITS = (QT_TRANSLATE_NOOP("Units", "days"), QT_TRANSLATE_NOOP("Units", "USD"), QT_TRANSLATE_NOOP("Units", "CNY"),
         QT_TRANSLATE_NOOP("Units", "hours"), QT_TRANSLATE_NOOP("Units", "per user"))


def with_unit(label: str, unit: str) -> str:
    """``label (unit)`` with the unit translated; full-width brackets around a Chinese unit."""
    if not unit:
        return label
    u = translate("Units", unit)
    if any("\u4e00" <= ch <= "\u9fff" for ch in u):
        return f"{label}（{u}）"
    return f"{label} ({u})"


def yes_no(value: bool) -> str:
    return translate("Table", "yes") if value else translate("Table", "no")


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    unit: str = ""
    fmt: Callable | None = None
    row_fmt: Callable | None = None  # (value, row) -> text, when the row decides (a price's currency)
    tip: str = ""  # header tooltip

    def text(self, value, row: dict | None = None) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        if self.row_fmt is not None and row is not None:
            return self.row_fmt(value, row)
        if self.fmt is not None:
            return self.fmt(value)
        if isinstance(value, float):
            return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
        if isinstance(value, bool):
            return yes_no(value)
        return str(value)


@dataclass(frozen=True)
class CellMark:
    """A warning on one cell: ``tip`` says why (the cell's tooltip); ``icon``: a warning icon too."""

    tip: str
    icon: bool = False


MARK_COLOUR = "#ffe1a8"  # amber: a value to check before quoting it


class RowsTableModel(QAbstractTableModel):
    def __init__(self, columns: list[Column], parent=None):
        super().__init__(parent)
        self.columns = list(columns)
        self.rows: list[dict] = []
        self.bold_cells: set[tuple[int, int]] = set()
        self.marked_cells: dict[tuple[int, int], CellMark] = {}

    def set_rows(self, rows: list[dict], bold_cells=None, marked_cells=None) -> None:
        """``bold_cells``: (row, column) pairs; ``marked_cells``: (row, column) -> CellMark."""
        self.beginResetModel()
        self.rows = list(rows)
        self.bold_cells = set(bold_cells or ())
        self.marked_cells = dict(marked_cells or {})
        self.endResetModel()

    def set_columns(self, columns: list[Column]) -> None:
        self.beginResetModel()
        self.columns = list(columns)
        self.endResetModel()

    def rowCount(self, parent=_NO_PARENT):  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=_NO_PARENT):  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.rows) or not 0 <= index.column() < len(self.columns):
            return None
        col = self.columns[index.column()]
        row = self.rows[index.row()]
        value = row.get(col.key)
        if role == Qt.DisplayRole:
            return col.text(value, row)
        if role == Qt.UserRole:
            return value if isinstance(value, (int, float, str)) or value is None else str(value)
        mark = self.marked_cells.get((index.row(), index.column())) if self.marked_cells else None
        if role == Qt.ToolTipRole:
            if mark is not None:
                return mark.tip
            return None if value is None else repr(value) if isinstance(value, float) else str(value)
        if role == Qt.FontRole and (index.row(), index.column()) in self.bold_cells:
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.BackgroundRole and mark is not None:
            return QColor(MARK_COLOUR)
        if role == Qt.DecorationRole and mark is not None and mark.icon:
            return QApplication.style().standardIcon(QStyle.SP_MessageBoxWarning)
        if role == Qt.BackgroundRole and (index.row(), index.column()) in self.bold_cells:
            return QColor("#d9f2df")
        if role == Qt.TextAlignmentRole and isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):  # noqa: N802 - Qt override
        if role == Qt.ToolTipRole and orientation == Qt.Horizontal and 0 <= section < len(self.columns):
            return self.columns[section].tip or None
        if role != Qt.DisplayRole:
            return None
        if orientation == Qt.Horizontal and 0 <= section < len(self.columns):
            c = self.columns[section]
            return with_unit(c.header, c.unit)
        if orientation == Qt.Vertical:
            return str(section + 1)
        return None

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow([with_unit(c.header, c.unit) for c in self.columns])
        for r in self.rows:
            w.writerow(["" if r.get(c.key) is None else r.get(c.key) for c in self.columns])
        return buf.getvalue()


class SortProxy(QSortFilterProxyModel):
    """Sorts on the raw values (UserRole); filters on any column's text."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSortRole(Qt.UserRole)
        self.setFilterCaseSensitivity(Qt.CaseInsensitive)
        self.setFilterKeyColumn(-1)

    def lessThan(self, left, right):  # noqa: N802 - Qt override
        a, b = left.data(Qt.UserRole), right.data(Qt.UserRole)
        if a is None:
            return b is not None
        if b is None:
            return False
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)
