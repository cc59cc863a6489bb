"""Specs page: browse, filter and sort GPUs, instances and fabrics; each row's every value
with its source and date; add or edit the user's own rows (saved in the user database,
never in the shipped files). Memory is shown as the datasheet gives it (GiB) and as the driver
reports it (GB, the number Plan and Compare use); prices older than a year are marked and counted."""
from __future__ import annotations

import datetime as _dt
import html
import math

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from planner_app.core.errors import InputError
from planner_app.core.hardware.specs import NVML_CAPACITY_FACTOR
from planner_app.service.pricing import STALE_AFTER_DAYS
from planner_app.specdb.catalog import SpecDB, gpu_from_row
from planner_app.specdb.schema import FILES, SpecDataError
from planner_app.ui.models.table_model import MARK_COLOUR, CellMark, Column, RowsTableModel, SortProxy
from planner_app.ui.tables import DataTable

# Columns of each table: (key, header with its unit). Prices are per instance-hour in the
# row's own currency (CNY for the Chinese clouds, USD elsewhere): every price cell carries it.
SHOWN = {
    "gpus": (("name", QT_TRANSLATE_NOOP("Specs", "Name")), ("vendor", QT_TRANSLATE_NOOP("Specs", "Vendor")),
             ("memory_gb", QT_TRANSLATE_NOOP("Specs", "Memory (GiB, datasheet)")),
             ("driver_total_gb", QT_TRANSLATE_NOOP("Specs", "Memory, driver total (GB)")),
             ("mem_bw_gb_s", QT_TRANSLATE_NOOP("Specs", "Memory bandwidth (GB/s)")),
             ("bf16_tflops", QT_TRANSLATE_NOOP("Specs", "BF16 dense (TFLOP/s)")),
             ("fp8_tflops", QT_TRANSLATE_NOOP("Specs", "FP8 dense (TFLOP/s)")),
             ("fp32_tflops", QT_TRANSLATE_NOOP("Specs", "FP32 (TFLOP/s)")), ("link", QT_TRANSLATE_NOOP("Specs", "GPU link")),
             ("link_bw_gb_s", QT_TRANSLATE_NOOP("Specs", "Link bandwidth (GB/s)")),
             ("tdp_w", QT_TRANSLATE_NOOP("Specs", "TDP (W)")), ("year", QT_TRANSLATE_NOOP("Specs", "Year")),
             ("retrieved", QT_TRANSLATE_NOOP("Specs", "Retrieved")), ("origin", QT_TRANSLATE_NOOP("Specs", "Origin"))),
    "instances": (("provider", QT_TRANSLATE_NOOP("Specs", "Provider")), ("region", QT_TRANSLATE_NOOP("Specs", "Region")),
                  ("instance_id", QT_TRANSLATE_NOOP("Specs", "Instance")), ("gpu_id", QT_TRANSLATE_NOOP("Specs", "GPU")),
                  ("gpu_count", QT_TRANSLATE_NOOP("Specs", "GPUs")), ("vcpu", QT_TRANSLATE_NOOP("Specs", "vCPUs")),
                  ("ram_gb", QT_TRANSLATE_NOOP("Specs", "RAM (GB)")),
                  ("network_gbit_s", QT_TRANSLATE_NOOP("Specs", "Network (Gbit/s)")),
                  ("price_on_demand_hr", QT_TRANSLATE_NOOP("Specs", "On-demand price / h")),
                  ("price_1yr_hr", QT_TRANSLATE_NOOP("Specs", "1-yr reserved price / h")),
                  ("price_3yr_hr", QT_TRANSLATE_NOOP("Specs", "3-yr reserved price / h")),
                  ("price_spot_hr", QT_TRANSLATE_NOOP("Specs", "Spot price / h")),
                  ("price_sub_month", QT_TRANSLATE_NOOP("Specs", "Monthly subscription / month")),
                  ("currency", QT_TRANSLATE_NOOP("Specs", "Currency")),
                  ("price_date", QT_TRANSLATE_NOOP("Specs", "Prices dated")), ("origin", QT_TRANSLATE_NOOP("Specs", "Origin"))),
    "fabrics": (("id", QT_TRANSLATE_NOOP("Specs", "ID")), ("name", QT_TRANSLATE_NOOP("Specs", "Name")),
                ("scope", QT_TRANSLATE_NOOP("Specs", "Scope")),
                ("bw_gb_s", QT_TRANSLATE_NOOP("Specs", "Bandwidth (GB/s)")),
                ("latency_us", QT_TRANSLATE_NOOP("Specs", "Latency (µs)")),
                ("efficiency", QT_TRANSLATE_NOOP("Specs", "Efficiency")),
                ("retrieved", QT_TRANSLATE_NOOP("Specs", "Retrieved")), ("origin", QT_TRANSLATE_NOOP("Specs", "Origin"))),
}
PRICE_COLUMNS = ("price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr", "price_sub_month")
HOURLY_PRICE_COLUMNS = PRICE_COLUMNS[:4]  # dated by price_date; the monthly price by price_sub_date
CURRENCY_MARKS = {"USD": "$", "CNY": "¥"}


def price_text(value, row: dict) -> str:
    """A price with its row's currency mark: ``¥26.46``, ``$98.32``; ``EUR 1.20`` for others."""
    cur = str(row.get("currency") or "").upper()
    mark = CURRENCY_MARKS.get(cur)
    num = f"{value:,.2f}" if isinstance(value, (int, float)) else str(value)
    return f"{mark}{num}" if mark else f"{cur} {num}".strip()


def memory_tips() -> dict[str, str]:
    """What the two memory columns hold: the datasheet's size is in GiB ("80 GB" on an H100 datasheet
    is 80 x 2^30 bytes); the driver reports a little less (core/hardware/specs.NVML_CAPACITY_FACTOR,
    measured on an H200's NVML), which Plan and Compare show in GB of 10^9 bytes."""
    example = 80 * 2**30 * NVML_CAPACITY_FACTOR / 1e9
    return {"memory_gb": QCoreApplication.translate(
                "Specs", "The memory size as the datasheet gives it. A datasheet's \"80 GB\" is 80 GiB "
                         "(80 × 2³⁰ bytes = 85.90 × 10⁹ bytes)."),
            "driver_total_gb": QCoreApplication.translate(
                "Specs", "The GPU's total memory as the driver reports it (NVML, nvidia-smi): {factor} × the "
                         "datasheet's GiB, in GB of 10⁹ bytes (80 GiB: {example:.2f} GB). Plan and Compare check "
                         "a plan's memory, CUDA context included, against this number.").format(
                factor=NVML_CAPACITY_FACTOR, example=example)}


def driver_total_gb(row: dict) -> float | None:
    """The GPU's capacity as the engine uses it (GpuSpec.capacity_bytes), in GB of 10^9 bytes."""
    try:
        return gpu_from_row(row).capacity_bytes / 1e9
    except (InputError, KeyError, TypeError, ValueError):
        return None


def price_age_days(date_text, today: _dt.date) -> int | None:
    """Days since a price date (ISO text); None without a valid date."""
    try:
        return (today - _dt.date.fromisoformat(str(date_text))).days
    except (TypeError, ValueError):
        return None


def stale_tip(date: str, age_days: int) -> str:
    return QCoreApplication.translate("Specs", "Price dated {date}, older than 1 year ({days} days old): check it "
                                               "before quoting it").format(date=date, days=age_days)


def stale_price_marks(rows: list[dict], cols: list[Column], today: _dt.date) -> tuple[dict, int]:
    """({(row, column): CellMark}, rows marked) for prices more than STALE_AFTER_DAYS (one year)
    old on ``today``: the hourly prices and their date (with a warning icon) by ``price_date``, the
    monthly price by ``price_sub_date``."""
    at = {c.key: i for i, c in enumerate(cols)}
    marks: dict = {}
    marked_rows = 0
    for r, row in enumerate(rows):
        hit = False
        for date_key, keys in (("price_date", HOURLY_PRICE_COLUMNS), ("price_sub_date", ("price_sub_month",))):
            age = price_age_days(row.get(date_key), today)
            priced = [k for k in keys if row.get(k) is not None and k in at]
            if age is None or age <= STALE_AFTER_DAYS or not priced:
                continue
            tip = stale_tip(row[date_key], age)
            for k in priced:
                marks[(r, at[k])] = CellMark(tip)
            if date_key in at:
                marks[(r, at[date_key])] = CellMark(tip, icon=True)
            hit = True
        marked_rows += hit
    return marks, marked_rows


def columns(kind: str) -> list[Column]:
    """The table columns of ``kind`` with translated headers; prices formatted per row."""
    tip = QCoreApplication.translate("Specs", "Per instance-hour, in the row's own currency (¥ CNY, $ USD)")
    tip_month = QCoreApplication.translate("Specs", "Per instance-month of a monthly subscription, in the row's own "
                                                    "currency; its date is in the row's details")
    tips = memory_tips() if kind == "gpus" else {}
    return [Column(key, QCoreApplication.translate("Specs", header),
                   fmt=(lambda v: f"{v:,.2f}") if key == "driver_total_gb" else None,
                   row_fmt=price_text if key in PRICE_COLUMNS else None,
                   tip=(tip_month if key == "price_sub_month" else tip) if key in PRICE_COLUMNS else tips.get(key, ""))
            for key, header in SHOWN[kind]]


def _clean(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


class RowDialog(QDialog):
    """Add or edit one user row; fields from the schema; the error names the field."""

    def __init__(self, kind: str, userdb, row: dict | None = None, parent=None):
        super().__init__(parent)
        self.kind, self.userdb = kind, userdb
        self.setWindowTitle(self.tr("Your {kind} row").format(kind=kind))
        lay = QVBoxLayout(self)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        inner = QWidget()
        form = QFormLayout(inner)
        self.fields = {}
        for c in FILES[kind]:
            e = QLineEdit()
            e.setMaxLength(500)
            v = _clean((row or {}).get(c.name))
            if v is not None:
                e.setText(str(int(v)) if isinstance(v, float) and v.is_integer() and c.kind == "int" else str(v))
            hint = c.kind + (", required" if c.required else "") + (f", {c.min:g}..{c.max:g}" if c.min is not None
                                                                    and c.max is not None else "")
            e.setPlaceholderText(hint)
            form.addRow(c.name + (" *" if c.required else ""), e)
            self.fields[c.name] = e
        scroll.setWidget(inner)
        lay.addWidget(scroll)
        self.error = QLabel()
        self.error.setStyleSheet("color: #b00;")
        self.error.setWordWrap(True)
        lay.addWidget(self.error)
        bb = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        bb.accepted.connect(self.try_save)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)
        self.resize(520, 640)
        self.saved_row = None

    def values(self) -> dict:
        return {k: e.text().strip() for k, e in self.fields.items() if e.text().strip()}

    def try_save(self) -> bool:
        for e in self.fields.values():
            e.setStyleSheet("")
        try:
            self.saved_row = self.userdb.upsert(self.kind, self.values())
        except SpecDataError as err:
            self.error.setText(str(err))
            if err.column in self.fields:
                self.fields[err.column].setStyleSheet("QLineEdit { border: 2px solid #d33; }")
                self.fields[err.column].setFocus()
            return False
        self.accept()
        return True


class SpecsPage(QWidget):
    database_changed = Signal()

    def __init__(self, doc, db, userdb=None, parent=None):
        super().__init__(parent)
        self.doc, self.db, self.userdb = doc, db, userdb
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText(self.tr("Filter: type any part of a name, provider, GPU…"))
        self.filter.setClearButtonEnabled(True)
        self.filter.setMaxLength(100)
        top.addWidget(self.filter, 1)
        self.add_button = QPushButton(self.tr("Add your own…"))
        self.edit_button = QPushButton(self.tr("Copy and edit…"))
        self.add_button.clicked.connect(lambda: self.edit_row(None))
        self.edit_button.clicked.connect(lambda: self.edit_row(self.selected_row()))
        top.addWidget(self.add_button)
        top.addWidget(self.edit_button)
        lay.addLayout(top)
        split = QSplitter(Qt.Horizontal)
        self.tabs = QTabWidget()
        self.models, self.proxies, self.views = {}, {}, {}
        for kind, title in (("gpus", self.tr("GPUs")), ("instances", self.tr("Cloud instances")),
                            ("fabrics", self.tr("Interconnects"))):
            model = RowsTableModel(columns(kind))
            proxy = SortProxy()
            proxy.setSourceModel(model)
            view = DataTable(wrap_cells=False)
            view.setModel(proxy)
            view.setSortingEnabled(True)
            # sorted A to Z by the first column at the start (Qt starts descending: Z to A)
            view.sortByColumn(0, Qt.AscendingOrder)
            view.setSelectionBehavior(QAbstractItemView.SelectRows)
            view.setSelectionMode(QAbstractItemView.SingleSelection)
            view.verticalHeader().setVisible(False)
            view.setAlternatingRowColors(True)
            # sizing columns reads every cell (~1 s for the instance table at start-up): the first 40 rows do
            view.horizontalHeader().setResizeContentsPrecision(40)
            view.selectionModel().selectionChanged.connect(lambda *_a: self.show_details())
            self.models[kind], self.proxies[kind], self.views[kind] = model, proxy, view
            self.tabs.addTab(view, title)
        tabs_box = QWidget()
        tabs_lay = QVBoxLayout(tabs_box)
        tabs_lay.setContentsMargins(0, 0, 0, 0)
        self.stale_note = QLabel()  # above the table: how many rows' prices are older than a year
        self.stale_note.setWordWrap(True)
        self.stale_note.setStyleSheet(f"color: #7a4a00; background: {MARK_COLOUR}; padding: 2px 4px;")
        self.stale_count = 0
        tabs_lay.addWidget(self.stale_note)
        tabs_lay.addWidget(self.tabs)
        self.price_note = QLabel(self.tr("Prices are per instance-hour in each row's own currency: ¥ = CNY, $ = USD "
                                         "(estimates convert CNY at the rate in Settings)."))
        self.price_note.setWordWrap(True)
        tabs_lay.addWidget(self.price_note)
        split.addWidget(tabs_box)
        self.details = QTextBrowser()
        self.details.setOpenExternalLinks(True)
        split.addWidget(self.details)
        split.setSizes([1000, 400])
        lay.addWidget(split, 1)
        self.count = QLabel()
        lay.addWidget(self.count)
        self.filter.textChanged.connect(self._filter)
        self.tabs.currentChanged.connect(lambda _i: (self.show_details(), self._count(), self._note()))
        self._note()
        self.reload()

    def kind(self) -> str:
        return ("gpus", "instances", "fabrics")[self.tabs.currentIndex()]

    def reload(self):
        for kind in ("gpus", "instances", "fabrics"):
            rows = self.db.records_as_printed(kind)
            marks = None
            if kind == "gpus":
                for r in rows:
                    r["driver_total_gb"] = driver_total_gb(r)
            elif kind == "instances":
                marks, self.stale_count = stale_price_marks(rows, self.models[kind].columns, _dt.date.today())
            self.models[kind].set_rows(rows, marked_cells=marks)
        self.stale_note.setText(self.tr("⚠ {n} of {total} instance rows have prices older than 1 year (marked "
                                        "amber; their date is on the row): check them before quoting them.").format(
            n=self.stale_count, total=self.models["instances"].rowCount()))
        self._columns_sized = False
        if self.isVisible():
            self._size_columns()
        self._count()
        self._note()
        self.show_details()  # a reset leaves no row selected: the pane says what to do

    def _size_columns(self):
        for view in self.views.values():
            view.resizeColumnsToContents()
        self._columns_sized = True

    def showEvent(self, event):  # noqa: N802 - Qt override: columns are sized when first seen
        super().showEvent(event)
        if not self._columns_sized:
            self._size_columns()

    def _filter(self, text):
        for p in self.proxies.values():
            p.setFilterFixedString(text)
        self._count()

    def _note(self):
        self.price_note.setVisible(self.kind() == "instances")
        self.stale_note.setVisible(self.kind() == "instances" and self.stale_count > 0)

    def _count(self):
        k = self.kind()
        self.count.setText(self.tr("{shown} of {total} rows").format(shown=self.proxies[k].rowCount(),
                                                                   total=self.models[k].rowCount()))

    def selected_row(self) -> dict | None:
        k = self.kind()
        sel = self.views[k].selectionModel().selectedRows()
        if not sel:
            return None
        return self.models[k].rows[self.proxies[k].mapToSource(sel[0]).row()]

    def show_details(self):
        row = self.selected_row()
        if row is None:
            self.details.setHtml(self.tr("<p>Select a row to see its details and sources: every value with "
                                         "its source and date.</p>"))
            return
        src = row.get("source_url") or ""
        date = row.get("retrieved") or row.get("price_date") or ""
        source_l, date_l, origin_l = self.tr("Source"), self.tr("Date"), self.tr("Origin")  # not in f-strings: lupdate
        parts = [f"<h3>{html.escape(str(row.get('name') or row.get('instance_id') or row.get('id')))}</h3>",
                 f"<p><b>{source_l}:</b> <a href='{html.escape(src)}'>{html.escape(src)}</a><br>"
                 f"<b>{date_l}:</b> {html.escape(str(date))}<br>"
                 f"<b>{origin_l}:</b> {html.escape(str(row.get('origin', '')))}</p>"]
        for key in ("price_date", "price_sub_date"):
            age = price_age_days(row.get(key), _dt.date.today())
            if age is not None and age > STALE_AFTER_DAYS:
                parts.append(f"<p style='color:#7a4a00'>⚠ {html.escape(stale_tip(row[key], age))}</p>")
        parts.append("<table>")
        labels = {key: QCoreApplication.translate("Specs", header) for key, header in SHOWN[self.kind()]}
        for k, v in row.items():
            if v is None or k in ("source_url",):
                continue
            shown = labels.get(k, k)  # the table's header where the column is shown, else the CSV name
            text = price_text(v, row) if k in PRICE_COLUMNS else f"{v:,.2f}" if k == "driver_total_gb" else str(v)
            parts.append(f"<tr><td style='color:#555;padding-right:8px'>{html.escape(shown)}</td>"
                         f"<td>{html.escape(text)}</td></tr>")
        parts.append("</table>")
        self.details.setHtml("".join(parts))

    def _udb(self):
        if self.userdb is None:
            from planner_app.specdb.userdb import UserDB  # lazy: sqlite3 is optional (a Python built without it)
            self.userdb = UserDB.open_default()
        return self.userdb

    def edit_row(self, row):
        kind = self.kind()
        base = None
        if row is not None:
            names = {c.name for c in FILES[kind]}
            base = {k: v for k, v in row.items() if k in names}
        d = RowDialog(kind, self._udb(), base, self)
        if d.exec() == QDialog.Accepted:
            self.refresh_database()

    def refresh_database(self):
        new = SpecDB(self.db.data_dir, user_db=self._udb())
        self.db.__dict__.update(new.__dict__)  # every page shares this object
        self.reload()
        self.database_changed.emit()
