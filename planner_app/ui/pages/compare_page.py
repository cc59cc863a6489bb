"""Compare page: every plan of the scenario side by side, a table with the best value of
each row in bold (★), and grouped charts of memory, time and cost."""
from __future__ import annotations

import copy

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from planner_app import scenario
from planner_app.core.errors import InputError
from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION, memory_verdict
from planner_app.service.pricing import price_source
from planner_app.service.serving_plans import serve_scenario
from planner_app.specdb.schema import SpecDataError
from planner_app.ui.charts.bars import GroupedBarChart
from planner_app.ui.fields import price_basis_labels
from planner_app.ui.machine_chooser import MachineChooser
from planner_app.ui.models.table_model import Column, RowsTableModel, with_unit
from planner_app.ui.option_form import settings_text
from planner_app.ui.pages.hardware import parse_hw_key
from planner_app.ui.pages.host_panel import verdict_text
from planner_app.ui.tables import DataTable
from planner_app.ui.textfit import breakable
from planner_app.ui.workers import RecomputeWhenVisible, TaskSlot

# (key, label, unit, better: "min"/"max"/None, getter)
METRICS = (
    ("hardware", QT_TRANSLATE_NOOP("Compare", "GPU / instance"), "", None, lambda e, o: (e.get("instance") or {}).get("id") or e["gpu"]["name"]),
    ("gpus", QT_TRANSLATE_NOOP("Compare", "GPUs"), "", None, lambda e, o: e.get("parallel", {}).get("gpus", o.get("tp", 1))),
    ("layout", QT_TRANSLATE_NOOP("Compare", "Layout (tp×pp×cp×ep×dp, ZeRO)"), "", None,
     lambda e, o: "{tp}×{pp}×{cp}×{ep}×{dp}, Z{zero}".format(**e["parallel"]) if "parallel" in e else f"tp {o.get('tp', 1)}"),
    ("memory_gb", QT_TRANSLATE_NOOP("Compare", "Memory per GPU"), "GB", "min", lambda e, o: e["memory"]["device_bytes"] / 1e9),
    ("capacity_gb", QT_TRANSLATE_NOOP("Compare", "GPU memory, driver total"), "GB", None, lambda e, o: e["memory"]["capacity_bytes"] / 1e9),
    ("fits", QT_TRANSLATE_NOOP("Compare", "Fits"), "", None, lambda e, o: _fits_text(e, o)),
    ("free_gb", QT_TRANSLATE_NOOP("Compare", "Free memory per GPU"), "GB", None,
     lambda e, o: (e["memory"]["capacity_bytes"] - e["memory"]["device_bytes"]) / 1e9),
    ("step_s", QT_TRANSLATE_NOOP("Compare", "Step time"), "s", "min", lambda e, o: e["time"].get("step_s")),
    ("tokens_per_s", QT_TRANSLATE_NOOP("Compare", "Tokens/s"), "", "max", lambda e, o: e["time"].get("tokens_per_s", e["time"].get("decode_tokens_per_s"))),
    ("mfu", QT_TRANSLATE_NOOP("Compare", "MFU"), "%", "max", lambda e, o: e["time"]["mfu"] * 100 if "mfu" in e["time"] else None),
    ("train_days", QT_TRANSLATE_NOOP("Compare", "Time to train"), "days", "min", lambda e, o: e["time"].get("train_days")),
    ("gpu_hours", QT_TRANSLATE_NOOP("Compare", "GPU-hours"), "", "min", lambda e, o: e.get("cost", {}).get("gpu_hours")),
    ("usd_on_demand", QT_TRANSLATE_NOOP("Compare", "Cost on-demand"), "USD", "min",
     lambda e, o: e.get("cost", {}).get("usd_by_price", {}).get("on_demand")),
    ("usd_reserved_1yr", QT_TRANSLATE_NOOP("Compare", "Cost reserved 1 yr"), "USD", "min",
     lambda e, o: e.get("cost", {}).get("usd_by_price", {}).get("reserved_1yr")),
    ("usd_spot", QT_TRANSLATE_NOOP("Compare", "Cost spot"), "USD", "min", lambda e, o: e.get("cost", {}).get("usd_by_price", {}).get("spot")),
    # a best mark compares like with like: the on-demand row; a plan priced at another kind only
    # (a spot-only instance) shows that price in its own row, named, and is never marked best
    ("usd_per_m", QT_TRANSLATE_NOOP("Compare", "Cost per million tokens, on-demand"), "USD", "min",
     lambda e, o: _at_basis(e.get("cost", {}), "usd_per_million_tokens", "usd_price_basis", "on_demand")),
    ("usd_per_m_other", QT_TRANSLATE_NOOP("Compare", "Cost per million tokens, other price"), "", None,
     lambda e, o: _other_basis_text(e.get("cost", {}), "usd_per_million_tokens", "usd_price_basis")),
    # the host side (issue 19): service/host.py
    ("checkpoint_gb", QT_TRANSLATE_NOOP("Compare", "Checkpoint (resumable)"), "GB", "min",
     lambda e, o: _host(e, "checkpoint", "resumable_bytes", 1e-9)),
    ("checkpoint_overhead", QT_TRANSLATE_NOOP("Compare", "Checkpoint overhead"), "%", "min",
     lambda e, o: _host(e, "checkpoint", "overhead_fraction", 100)),
    ("host_ram_gb", QT_TRANSLATE_NOOP("Compare", "Host RAM per node"), "GB", None,
     lambda e, o: _host_ram_text(e)),
    ("input_pipeline", QT_TRANSLATE_NOOP("Compare", "Input pipeline"), "", None,
     lambda e, o: _input_text(e)),
)


# The serving rows (issue 15): the scenario's serve section on each plan's machine, from
# service/serving_plans.py, the same call as the report's Serving section.
# (key, label, unit, better, getter of a deployment dict with a "serve" result)
SERVING_METRICS = (
    ("serve_ttft_ms", QT_TRANSLATE_NOOP("Compare", "Serving: TTFT"), "ms", "min", lambda d: d["serve"]["ttft_ms"]),
    ("serve_tpot_ms", QT_TRANSLATE_NOOP("Compare", "Serving: TPOT"), "ms", "min", lambda d: d["serve"]["tpot_ms"]),
    ("serve_per_user", QT_TRANSLATE_NOOP("Compare", "Serving: tokens/s per user"), "", "max",
     lambda d: d["serve"]["tokens_per_s_per_user"]),
    ("serve_per_gpu", QT_TRANSLATE_NOOP("Compare", "Serving: output tokens/s per GPU"), "", "max",
     lambda d: d["serve"]["output_tokens_per_s_per_gpu"]),
    ("serve_usd_per_m", QT_TRANSLATE_NOOP("Compare", "Serving: cost per million output tokens, on-demand"), "USD",
     "min", lambda d: _at_basis(d["serve"].get("cost") or {}, "usd_per_million_output_tokens", "price_basis",
                                "on_demand")),
    ("serve_usd_per_m_other", QT_TRANSLATE_NOOP("Compare", "Serving: cost per million output tokens, other price"),
     "", None, lambda d: _other_basis_text(d["serve"].get("cost") or {}, "usd_per_million_output_tokens",
                                          "price_basis")),
    ("serve_state", QT_TRANSLATE_NOOP("Compare", "Serving: fits / saturated"), "", None, lambda d: _serve_state(d)),
    ("serve_slo", QT_TRANSLATE_NOOP("Compare", "Serving: latency targets met"), "", None, lambda d: _slo_text(d)),
)


# The price rows: the kind each row is at. A plan with an estimate but no price of that kind shows
# "—" and the reason in the cell (issue 29: a blank cell read as a missing estimate).
PRICE_ROW_KINDS = {"usd_on_demand": "on_demand", "usd_reserved_1yr": "reserved_1yr", "usd_spot": "spot",
                   "usd_per_m": "on_demand", "serve_usd_per_m": "on_demand"}


def missing_price_text(kind: str, any_price: bool) -> str:
    """'— no spot price' (the instance has other prices) / '— no price' (none at all: a bare GPU
    or an unpriced instance)."""
    if not any_price:
        return "— " + QCoreApplication.translate("Compare", "no price")
    return "— " + QCoreApplication.translate("Compare", "no {kind} price").format(
        kind=price_basis_labels().get(kind, kind))


def _has_price(cost: dict) -> bool:
    return bool(any((cost.get("usd_by_price") or {}).values()) or cost.get("usd_per_million_tokens") is not None
                or cost.get("usd_per_million_output_tokens") is not None)


def _at_basis(cost: dict, key: str, basis_key: str, basis: str):
    """``cost[key]`` when it is at ``basis``, else None (no bar, no best mark)."""
    return cost.get(key) if cost.get(basis_key) == basis else None


def _other_basis_text(cost: dict, key: str, basis_key: str):
    """'$1.32 (spot)' for a cost at a basis other than on-demand; None otherwise."""
    v, basis = cost.get(key), cost.get(basis_key)
    if v is None or basis in (None, "on_demand"):
        return None
    return f"${v:,.3f} (" + price_basis_labels().get(basis, basis) + ")"


def _serve_state(d: dict) -> str:
    if not d["serve"]["fits"]:
        return QCoreApplication.translate("Compare", "NO")
    if d["serve"]["saturated"]:
        return QCoreApplication.translate("Compare", "fits, saturated (requests queue)")
    return QCoreApplication.translate("Compare", "fits")


def _slo_text(d: dict):
    slo = d.get("slo") or {}
    if slo.get("met") is None:
        return None
    if slo["met"]:
        return QCoreApplication.translate("Compare", "yes")
    missed = [name for key, name in (("ttft_met", "TTFT"), ("tpot_met", "TPOT")) if slo.get(key) is False]
    return QCoreApplication.translate("Compare", "no ({missed})").format(missed=", ".join(missed))


def serving_rows(serving: dict, n_plans: int, first_row: int) -> tuple[list[dict], set]:
    """The serving rows of Compare: one column per plan (the plan's machine), best cells bold
    (among deployments that fit); a failed deployment shows its error in the first row."""
    rows, bold = [], set()
    by_plan = {d["plan_index"]: d for d in serving["deployments"] if d["plan_index"] is not None}
    for r_i, (key, label, unit, better, get) in enumerate(SERVING_METRICS):
        row = {"metric": with_unit(QCoreApplication.translate("Compare", label), unit)}
        vals, no_price = [], []
        for j in range(n_plans):
            d = by_plan.get(j)
            if d is None or d["serve"] is None:
                row[f"p{j}"] = (d["error"][:80] if d and r_i == 0 else None)
                continue
            row[f"p{j}"] = v = get(d)
            if v is None and key in PRICE_ROW_KINDS:
                no_price.append((j, _has_price(d["serve"].get("cost") or {})))
            if better and isinstance(v, (int, float)) and d["serve"]["fits"]:
                vals.append((v, j))
        if all(row[f"p{j}"] is None for j in range(n_plans)):
            continue
        for j, any_price in no_price:
            row[f"p{j}"] = missing_price_text(PRICE_ROW_KINDS[key], any_price)
        if better and len(vals) > 1:
            best = min(vals)[0] if better == "min" else max(vals)[0]
            bold |= {(first_row + len(rows), j + 1) for v, j in vals if v == best}
        rows.append(row)
    return rows, bold


def _host(e: dict, part: str, key: str, scale: float):
    v = (e.get("host") or {}).get(part, {}).get(key)
    return v * scale if v is not None else None


def _host_ram_text(e: dict):
    r = (e.get("host") or {}).get("ram")
    if r is None:
        return None
    text = f"{r['needed_bytes'] / 1e9:,.0f}"
    if r.get("ram_bytes"):
        text += f" / {r['ram_bytes'] / 1e9:,.0f}"
        if r.get("fits") is False:
            text += " " + QCoreApplication.translate("Compare", "NO")
    return text


def _input_text(e: dict):
    p = (e.get("host") or {}).get("input")
    return verdict_text(p["verdict"]) if p else None


def _fits_text(e: dict, o: dict) -> str:
    """yes / tight (fits with less free than the margin in ``o``) / NO."""
    m = e["memory"]
    v = memory_verdict(m["device_bytes"], m["capacity_bytes"], o.get("_min_headroom", DEFAULT_MIN_HEADROOM_FRACTION))
    return {"fits": QCoreApplication.translate("Compare", "yes"), "tight": QCoreApplication.translate("Compare", "tight"),
            "does_not_fit": QCoreApplication.translate("Compare", "NO")}[v]


def price_source_text(db, options: dict) -> str | None:
    """'CNY 2024-12-31 → $ at 7.10' / 'USD 2026-11-30' for a plan's instance; None for a bare GPU."""
    src = price_source(db, options.get("instance"), options.get("cny_per_usd"))
    if src is None:
        return None
    p = db.instance(options["instance"]).prices
    if all(getattr(p, k) is None for k in ("on_demand", "reserved_1yr", "reserved_3yr", "spot")):
        return QCoreApplication.translate("Compare", "no published price")
    text = f"{src.currency} {src.date or '?'}"
    if src.converted:
        text += " " + QCoreApplication.translate("Compare", "→ $ at {rate}").format(rate=f"{src.cny_per_usd:.2f}")
    return text


def compare_rows(results: list[dict], min_headroom_fraction: float | None = None, db=None,
                 serving: dict | None = None) -> tuple[list[dict], set]:
    """Rows = metrics, one column per plan; the best cell of each comparable row; with ``db``,
    a row says each plan's price currency, date and CNY->USD rate; with ``serving``
    (service/serving_plans.py), the serving rows follow."""
    rows, bold = [], set()
    for r_i, (key, label, unit, better, get) in enumerate(METRICS):
        label = QCoreApplication.translate("Compare", label)
        row = {"metric": with_unit(label, unit)}
        vals, no_price = [], []
        for j, res in enumerate(results):
            e = res.get("estimate")
            opts = res["options"] if min_headroom_fraction is None else {**res["options"],
                                                                          "_min_headroom": min_headroom_fraction}
            try:
                v = get(e, opts) if e else (res.get("error", "error")[:60] if r_i == 0 else None)
            except (KeyError, TypeError):
                v = None
            row[f"p{j}"] = v
            if v is None and e and key in PRICE_ROW_KINDS:
                no_price.append((j, _has_price(e.get("cost") or {})))
            fits = bool(e and e["memory"]["fits"])
            if better and isinstance(v, (int, float)) and fits:
                vals.append((v, j))
        if all(row[f"p{j}"] is None for j in range(len(results))):
            continue
        for j, any_price in no_price:
            row[f"p{j}"] = missing_price_text(PRICE_ROW_KINDS[key], any_price)
        if better and len(vals) > 1:
            best = min(vals)[0] if better == "min" else max(vals)[0]
            for v, j in vals:
                if v == best:
                    bold.add((len(rows), j + 1))
        rows.append(row)
    if any(res.get("own") for res in results):  # plans opened from Search carry their own settings
        rows.append({"metric": QCoreApplication.translate("Compare", "Plan's own settings"),
                     **{f"p{j}": settings_text(res.get("own") or {}, scenario.ESTIMATE_OPTIONS) or None
                        for j, res in enumerate(results)}})
    if db is not None and results:
        row = {"metric": QCoreApplication.translate("Compare", "Prices (currency, date)")}
        for j, res in enumerate(results):
            row[f"p{j}"] = price_source_text(db, res.get("options") or {})
        if any(row[f"p{j}"] is not None for j in range(len(results))):
            rows.append(row)
    if serving is not None and results:
        more, more_bold = serving_rows(serving, len(results), len(rows))
        rows += more
        bold |= more_bold
    return rows, bold


def compare_task(sc: dict, db) -> dict:
    """Every plan's estimate, and the serve section on each plan's machine (None without one; an
    invalid section gives ``serving_error``, naming ``serve.<field>``)."""
    results = scenario.evaluate(sc, db)
    try:
        serving, error = serve_scenario(sc, db), ""
    except (InputError, SpecDataError) as e:
        serving, error = None, str(e)
    return {"results": results, "serving": serving, "serving_error": error}


def _fmt(v):
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}"
    return breakable(str(v))  # an instance id wraps after its dots and underscores, not mid-word


class AddInstancesDialog(QDialog):
    """Pick machines to compare: each becomes a plan with the current plan's layout."""

    def __init__(self, db, parent=None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Add machines to compare"))
        lay = QVBoxLayout(self)
        self.list = MachineChooser(db)
        lay.addWidget(self.list)
        bb = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        bb.accepted.connect(self.accept)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)
        self.resize(560, 600)

    def check(self, idents: list[str]) -> None:
        self.list.set_checked({k for k in self.list.labels() if parse_hw_key(k)[1] in idents})

    def chosen(self) -> list[tuple[str, str]]:
        return [parse_hw_key(k) for k in self.list.checked_keys()]


class ComparePage(RecomputeWhenVisible, QWidget):
    def set_min_headroom(self, fraction: float) -> None:
        self.min_headroom_fraction = fraction
        if self.results:
            self._show(self.results)

    def __init__(self, doc, db, parent=None):
        super().__init__(parent)
        self.doc, self.db = doc, db
        self.results = []
        self.serving = None  # the serve section on each plan's machine (serving_plans.serve_scenario)
        self.serving_error = ""
        self.min_headroom_fraction = None  # the user's memory margin (Settings); None: the engine's default
        self.slot = TaskSlot(self)
        self.slot.succeeded.connect(self._landed)
        self.slot.failed.connect(lambda e: self.status.setText(str(e)))
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(200)
        self.timer.timeout.connect(self.recompute)
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.status = QLabel()
        self.status.setWordWrap(True)
        add = QPushButton(self.tr("Add machines…"))
        add.clicked.connect(self._add_dialog)
        top.addWidget(self.status, 1)
        top.addWidget(add)
        lay.addLayout(top)
        self.model = RowsTableModel([Column("metric", self.tr("Metric"))])
        self.table = DataTable()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.horizontalHeader().setMinimumSectionSize(90)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        # the table over the charts; in meeting mode (set_meeting) the table on the left at its full
        # height and the charts stacked on the right, so every row reads without scrolling
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.table)
        chart_panel = QWidget()
        self.charts = QBoxLayout(QBoxLayout.LeftToRight, chart_panel)
        self.charts.setContentsMargins(0, 0, 0, 0)
        self.memory_chart = GroupedBarChart(self.tr("Memory per GPU"), "GB")
        self.time_chart = GroupedBarChart(self.tr("Time"), "")
        self.cost_chart = GroupedBarChart(self.tr("Cost"), "USD")
        for c in (self.memory_chart, self.time_chart, self.cost_chart):
            self.charts.addWidget(c)
        self.splitter.addWidget(chart_panel)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        lay.addWidget(self.splitter, 1)
        self.meeting = False
        doc.changed.connect(self.request_recompute)

    # in meeting mode the table takes this share of the width, the charts the rest
    MEETING_TABLE_SHARE = 0.64

    def set_meeting(self, on: bool) -> None:
        """Meeting mode's layout (MainWindow.toggle_meeting): table left, charts stacked right."""
        self.meeting = bool(on)
        self.splitter.setOrientation(Qt.Horizontal if on else Qt.Vertical)
        self.charts.setDirection(QBoxLayout.TopToBottom if on else QBoxLayout.LeftToRight)
        self._split()

    def _split(self) -> None:
        total = self.splitter.width() if self.meeting else self.splitter.height()
        share = self.MEETING_TABLE_SHARE if self.meeting else 0.6
        self.splitter.setSizes([int(total * share), total - int(total * share)])

    def resizeEvent(self, ev):  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        if self.meeting:  # full screen arrives after the toggle: keep the meeting split
            self._split()

    def add_machines(self, machines: list[tuple[str, str]]) -> None:
        base = copy.deepcopy(self.doc.data["plans"][self.doc.data.get("chosen_plan", 0)])
        for kind, ident in machines:
            p = {k: v for k, v in base.items() if k not in ("gpu", "instance", "name")}
            p[kind] = ident
            p["name"] = ident
            self.doc.add_plan(p)

    def _add_dialog(self):
        d = AddInstancesDialog(self.db, self)
        if d.exec() == QDialog.Accepted:
            try:
                self.add_machines(d.chosen())
            except ValueError as e:
                self.status.setText(str(e))

    def recompute(self):
        data = self.doc.snapshot()
        db = self.db
        self.slot.start(lambda progress, cancelled: compare_task(data, db))

    def _landed(self, payload):
        self.serving, self.serving_error = payload["serving"], payload["serving_error"]
        self._show(payload["results"])

    def _show(self, results):
        self.results = results
        names = [r["name"] for r in results]
        rows, bold = compare_rows(results, self.min_headroom_fraction, db=self.db, serving=self.serving)
        self.model.set_columns([Column("metric", self.tr("Metric"))] +
                               [Column(f"p{j}", n, fmt=_fmt) for j, n in enumerate(names)])
        self.model.set_rows(rows, bold)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        for j in range(len(names)):
            hh.setSectionResizeMode(j + 1, QHeaderView.Stretch)
        self.table.resizeRowsToContents()
        errs = [f"{r['name']}: {r['error']}" for r in results if "error" in r]
        if self.serving_error:
            errs.append(self.tr("Serving: {error}").format(error=self.serving_error))
        n = len(results)
        self.status.setText((self.tr("1 plan; bold = best among the plans that fit") if n == 1 else
                             self.tr("{n} plans; bold = best among the plans that fit").format(n=n))
                            + ("\n" + "\n".join(errs) if errs else ""))
        ests = [r.get("estimate") for r in results]
        short = list(names)  # the chart wraps and numbers them (bars.category_labels)

        def series(get):
            vals = []
            for e in ests:
                try:
                    vals.append(get(e) if e else None)
                except (KeyError, TypeError):
                    vals.append(None)
            return vals

        def best_of(vals, fn=min):
            """Every plan that fits with the best value: equal values are all best (as the table's bold)."""
            ok = [(v, i) for i, v in enumerate(vals) if v is not None and ests[i] and ests[i]["memory"]["fits"]]
            if not ok:
                return set()
            top = fn(v for v, _ in ok)
            return {i for v, i in ok if v == top}

        mem = series(lambda e: e["memory"]["device_bytes"] / 1e9)
        self.memory_chart.set_data(short, mem, best_of(mem))
        training = bool(ests and ests[0] and ests[0]["mode"] == "training")
        if training:
            days = series(lambda e: e["time"].get("train_days") or e["time"]["step_s"])
            has_days = any(e and "train_days" in e["time"] for e in ests)
            self.time_chart.set_title(self.tr("Time to train (days)") if has_days else self.tr("Step time (s)"))
            self.time_chart.set_data(short, days, best_of(days))
            # the chart's basis is on-demand for every plan: a plan priced only at another kind (a
            # spot-only instance) has no bar here and is never the best (its prices are in the table)
            cost = series(lambda e: (e["cost"].get("usd_by_price") or {}).get("on_demand"))
            self.cost_chart.set_title(self.tr("Cost on-demand (USD)"))
        else:
            tps = series(lambda e: e["time"]["decode_tokens_per_s"])
            self.time_chart.set_title(self.tr("Decode tokens/s"))
            self.time_chart.set_data(short, tps, best_of(tps, max))
            cost = series(lambda e: e["cost"]["usd_per_million_tokens"]
                          if e["cost"].get("usd_price_basis") == "on_demand" else None)
            self.cost_chart.set_title(self.tr("USD per million tokens, on-demand"))
        # why a plan has no bar: no price at all (a bare GPU, an unpriced instance), or none at the basis
        priced = series(lambda e: bool(e["cost"].get("usd_by_price") and any(e["cost"]["usd_by_price"].values()))
                        or e["cost"].get("usd_per_million_tokens") is not None)
        why = [self.tr("no on-demand price") if p else self.tr("no price") for p in priced]
        self.cost_chart.set_data(short, cost, best_of(cost), missing_text=why)
