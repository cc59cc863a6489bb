"""Search page: constraints in (machines, GPU budget, deadline, money), ranked plans and a
time/cost Pareto chart out; the chosen result opens in the Plan page. The ranking and the folding
of near-identical plans are the engine's (core/plans/ranking.py), as the CLI shows them."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION
from planner_app.core.options import build, options_of
from planner_app.core.plans.cost import cny_rate
from planner_app.core.plans.ranking import SIMILAR_FRACTION
from planner_app.core.requests import SearchRequest, TrainingRequest
from planner_app.core.training.setup import TrainingSetup
from planner_app.i18n import engine_text
from planner_app.scenario import PLAN_KEYS, PLAN_OWN_KEYS
from planner_app.service.search import run_search
from planner_app.ui.charts.lines import ParetoChart
from planner_app.ui.fields import ChoiceField, IntField, NumberField, duration_text, price_basis_labels
from planner_app.ui.machine_chooser import MachineChooser, plan_machine_keys
from planner_app.ui.models.table_model import Column, RowsTableModel, SortProxy
from planner_app.ui.option_form import choice_text
from planner_app.ui.pages.hardware import hw_key, parse_hw_key
from planner_app.ui.tables import DataTable
from planner_app.ui.textfit import WrapLabel
from planner_app.ui.workers import TaskSlot

DEFAULT_MACHINES = ("p5.48xlarge", "Standard_ND96isr_H100_v5", "a3-megagpu-8g")
SIMILAR_LISTED = 12  # a "+N similar" tooltip lists this many of the folded plans, then counts the rest
LATER_ROW_COLOR = "#6b6b6b"  # a plan after its machine's best at its GPU count (slower and dearer) reads in grey


class SearchTableModel(RowsTableModel):
    """The ranked plans: a cell's tooltip from the row's ``tips`` (the plans folded into a row, why
    a row comes later), a plan after its machine's best at its GPU count in grey."""

    def data(self, index, role=Qt.DisplayRole):
        if index.isValid() and 0 <= index.row() < len(self.rows) and 0 <= index.column() < len(self.columns):
            row = self.rows[index.row()]
            if role == Qt.ToolTipRole and self.columns[index.column()].key in row.get("tips", {}):
                return row["tips"][self.columns[index.column()].key]
            if role == Qt.ForegroundRole and not row.get("lead", True):
                return QColor(LATER_ROW_COLOR)
        return super().data(index, role)


def search_request(sc: dict, machines: list[tuple[str, str]], max_gpus: int, deadline, budget, objective, top,
                   price_basis: str | None = None, min_headroom_fraction: float | None = None) -> SearchRequest:
    """The search service's request for the scenario's workload (its training setup options) and the
    page's constraints (what the workload leaves unset takes ``estimate``'s defaults)."""
    w = sc["workload"]
    if w.get("mode", "training") != "training":
        raise ValueError("search plans training runs; switch the workload to training")
    if not w.get("tokens"):
        raise ValueError("Tokens: the search needs a training budget; set Tokens on the Workload page")
    setup = options_of(TrainingSetup)
    values = {"model": w["model"], **{k: v for k, v in w.items() if k in setup},
              "instance": ",".join(n for k, n in machines if k == "instance") or None,
              "gpu": ",".join(n for k, n in machines if k == "gpu") or None,
              "max_gpus": max_gpus, "deadline_days": deadline, "budget_usd": budget, "objective": objective,
              "top": top, "price": price_basis, "cny_per_usd": sc.get("cny_per_usd"),
              "calibration": sc.get("calibration"),
              "min_headroom_pct": None if min_headroom_fraction is None else min_headroom_fraction * 100}
    return build(SearchRequest, values, "the search")


def search_task(sc: dict, db, machines: list[tuple[str, str]], max_gpus: int, deadline, budget, objective, top,
                price_basis: str | None = None, min_headroom_fraction: float | None = None):
    """The background task: the search service on the request built from the scenario."""
    def run(progress, cancelled):
        request = search_request(sc, machines, max_gpus, deadline, budget, objective, top, price_basis,
                                 min_headroom_fraction)
        return run_search(request, db, progress, cancelled)
    return run


class SearchPage(QWidget):
    open_plan = Signal(object)  # a plan dict for the scenario

    def __init__(self, doc, db, parent=None):
        super().__init__(parent)
        self.doc, self.db = doc, db
        self.result = None
        self.min_headroom_fraction = DEFAULT_MIN_HEADROOM_FRACTION  # the user's margin (Settings)
        self.slot = TaskSlot(self)
        self.slot.succeeded.connect(self._show)
        self.slot.failed.connect(self._failed)
        self.slot.progressed.connect(lambda f, t: self.progress.setValue(int(f * 100)))
        self.slot.finished.connect(self._idle)
        lay = QHBoxLayout(self)
        left = QVBoxLayout()
        left.addWidget(QLabel(self.tr("Machines to consider")))
        self.machines = MachineChooser(db, {hw_key("instance", m) for m in DEFAULT_MACHINES})
        self.machines.set_plan_keys(plan_machine_keys(doc.data))
        doc.changed.connect(self._doc_changed)
        left.addWidget(self.machines, 1)
        form = QFormLayout()
        self.max_gpus = IntField(1, 100_000, 1024)
        self.deadline = NumberField(self.tr("Deadline (days)"), placeholder=self.tr("optional"))
        self.budget = NumberField(self.tr("Budget (USD)"), placeholder=self.tr("optional"))
        self.objective = ChoiceField([("time", self.tr("fastest")), ("cost", self.tr("cheapest"))], "time")
        self.top = IntField(1, 200, 20)
        self.price_basis = ChoiceField(list(price_basis_labels().items()), "on_demand")
        self.price_basis.setToolTip(self.tr("Every plan is priced at this one price; a machine without it has no cost"))
        for label, w in ((self.tr("At most GPUs"), self.max_gpus), (self.tr("Deadline (days)"), self.deadline),
                         (self.tr("Budget (USD)"), self.budget), (self.tr("Objective"), self.objective),
                         (self.tr("Price"), self.price_basis), (self.tr("Plans to show"), self.top)):
            form.addRow(label, w)
        left.addLayout(form)
        buttons = QHBoxLayout()
        self.run_button = QPushButton(self.tr("Search"))
        self.run_button.clicked.connect(self.run_search)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.slot.cancel)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        left.addLayout(buttons)
        self.progress = QProgressBar()
        left.addWidget(self.progress)
        self.status = WrapLabel()
        left.addWidget(self.status)
        lay.addLayout(left, 1)

        right = QVBoxLayout()
        self.model = SearchTableModel(self._columns("on_demand"))
        self.proxy = SortProxy(self)  # a header click sorts on the raw values (seconds, USD), not the text
        self.proxy.setSourceModel(self.model)
        self.table = DataTable(fit=True)
        self.table.setModel(self.proxy)
        self.table.horizontalHeader().setSortIndicator(0, Qt.AscendingOrder)  # by rank until a header is clicked
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.doubleClicked.connect(lambda _i: self.open_selected())
        right.addWidget(self.table, 3)
        row = QHBoxLayout()
        self.open_button = QPushButton(self.tr("Open in Plan"))
        self.open_button.clicked.connect(self.open_selected)
        self.open_button.setEnabled(False)
        self.copy_button = QPushButton(self.tr("Copy estimate command"))
        self.copy_button.setToolTip(self.tr("Copy the gpu-planner estimate command that reproduces the selected plan"))
        self.copy_button.clicked.connect(self.copy_command)
        self.copy_button.setEnabled(False)
        row.addStretch(1)
        row.addWidget(self.copy_button)
        row.addWidget(self.open_button)
        right.addLayout(row)
        self.chart = ParetoChart()
        right.addWidget(self.chart, 2)
        lay.addLayout(right, 3)

    def _doc_changed(self, what: str) -> None:
        if what == "all":  # a new or opened scenario: the ticks start again (the example's stayed)
            self.machines.reset(plan_machine_keys(self.doc.data))
        elif what == "plans":
            self.machines.set_plan_keys(plan_machine_keys(self.doc.data))

    def selected_machines(self):
        return [parse_hw_key(k) for k in self.machines.checked_keys()]

    def run_search(self):
        machines = self.selected_machines()
        if not machines:
            self.status.setText(self.tr("Tick at least one machine"))
            return
        for f in (self.deadline, self.budget):
            if f.error_text:
                self.status.setText(f.error_text)
                return
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.status.setText(self.tr("Searching…"))
        self.slot.start(search_task(self.doc.snapshot(), self.db, machines, self.max_gpus.value(),
                                    self.deadline.value(), self.budget.value(), self.objective.value(),
                                    self.top.value(), self.price_basis.value(), self.min_headroom_fraction))

    def set_min_headroom(self, fraction: float) -> None:
        """The user's memory margin (Settings): the next search keeps at least this much free."""
        self.min_headroom_fraction = fraction

    def _idle(self):
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self.slot.busy is False and self.result is None and not self.status.text():
            self.status.setText(self.tr("Cancelled"))

    def _failed(self, e):
        self.status.setText(str(e))

    def _columns(self, basis: str) -> list:
        no_price = self.tr("no price at {basis}").format(basis=price_basis_labels()[basis])
        return [
            Column("rank", "#"), Column("machine", self.tr("Machine")), Column("gpus", self.tr("GPUs")),
            Column("time", self.tr("Time to train"), fmt=duration_text,
                   tip=self.tr("The whole run in its natural unit (seconds, minutes, hours, days); sorts by time")),
            Column("usd", self.tr("Cost (USD, {basis})").format(basis=price_basis_labels()[basis]),
                   row_fmt=lambda v, row: no_price if v == "" else ("¥→$ " if row.get("cny") else "") + f"{v:,.0f}",
                   tip=self.tr("¥→$: the instance's price is in CNY, converted to USD at {rate} CNY per USD "
                               "(the scenario's rate, else the default)").format(rate=f"{self._cny_rate():.2f}")),
            Column("mfu", "MFU", "%", fmt=lambda v: f"{v * 100:.1f}"),
            Column("layout", self.tr("tp×pp×cp×ep×dp")), Column("sp", self.tr("Sequence parallel")),
            Column("schedule", self.tr("Pipeline schedule")), Column("zero", "ZeRO"),
            Column("mb", self.tr("Micro-batch")), Column("recompute", self.tr("Recomputation")),
            Column("similar", self.tr("Similar"), fmt=lambda n: self.tr("+{n} similar").format(n=n) if n else "",
                   tip=self.tr("Plans on the same machine and GPU count within {pct:g}% of the row's time and cost, "
                               "folded into it (the row shows the simplest); hover a cell for the list").format(
                       pct=SIMILAR_FRACTION * 100))]

    def _cny_rate(self) -> float:
        return cny_rate(self.doc.data.get("cny_per_usd"))

    def _is_cny(self, plan) -> bool:
        """Whether the plan's instance is priced in CNY (its USD cost is converted)."""
        if not plan.get("instance"):
            return False
        try:
            return self.db.instance(plan["candidate"]).prices.currency != "USD"
        except ValueError:
            return False

    def _show(self, out):
        if out is None:  # cancelled
            return
        res = out.result
        self.result = res
        yes, no = self.tr("yes"), self.tr("no")
        rows = []
        for i, p in enumerate(res.plans, 1):
            q = p["parallel"]
            sched = (self.tr("interleaved, vp {vp}").format(vp=q["vp"])
                     if q["pp_schedule"] == "interleaved" else "1F1B")
            lead = p.get("best_for_gpus", True)
            tips = {"time": self.tr("{time} ({days:.4g} days)").format(time=duration_text(p["time"]["train_s"]),
                                                                        days=p["time"]["train_days"])}
            if p.get("similar"):
                tips["similar"] = self._similar_tip(p)
            if not lead:
                tips["rank"] = self.tr("Slower and dearer than the row above of {machine} at {gpus:,} GPUs").format(
                    machine=p["candidate"], gpus=q["gpus"])
            rows.append({"rank": i, "machine": p["candidate"], "gpus": q["gpus"],
                         "layout": self._layout(q),
                         "sp": yes if q["sequence_parallel"] else no, "schedule": sched, "zero": q["zero"],
                         "mb": p["micro_batch"], "recompute": choice_text("recompute", p["recompute"]), "time": p["time"]["train_s"],
                         "mfu": p["time"]["mfu"], "usd": "" if p["cost"]["usd"] is None else p["cost"]["usd"],
                         "cny": self._is_cny(p), "similar": len(p.get("similar", ())), "lead": lead, "tips": tips})
        self.model.set_columns(self._columns(res.price_basis))
        self.model.set_rows(rows)
        self.table.fit_columns()
        if rows:
            self.table.selectRow(0)
        self.open_button.setEnabled(bool(rows))
        self.copy_button.setEnabled(bool(rows))
        self._draw_chart(res)
        lines = [self.tr("{n:,} configurations scored in {s:.2f} s; {f:,} fit").format(
            n=res.evaluated, s=res.elapsed_s, f=res.fitting)]
        lines += [engine_text(t) for t in ([res.rule] if res.rule else []) + list(res.notes)]
        self.status.setText("\n".join(lines))

    @staticmethod
    def _layout(q: dict) -> str:
        return f"{q['tp']}×{q['pp']}×{q['cp']}×{q['ep']}×{q['dp']}"

    def _similar_tip(self, p: dict) -> str:
        """The plans folded into row ``p``: layout, settings, time and cost, one a line."""
        lines = [self.tr("Folded into this row (within {pct:g}% of its time and cost):").format(
            pct=SIMILAR_FRACTION * 100)]
        for s in p["similar"][:SIMILAR_LISTED]:
            q = s["parallel"]
            cost = self.tr("no price") if s["usd"] is None else f"${s['usd']:,.0f}"
            sched = self.tr("interleaved") if q["pp_schedule"] == "interleaved" else "1F1B"
            if q["sequence_parallel"]:
                sched = self.tr("{schedule}, sequence parallel").format(schedule=sched)
            lines.append(self.tr("tp×pp×cp×ep×dp {layout}, {schedule}, ZeRO {zero}, micro-batch {mb}, recomputation "
                                 "{rec}: {time}, {cost}").format(
                layout=self._layout(q), schedule=sched, zero=q["zero"], mb=s["micro_batch"], rec=choice_text("recompute", s["recompute"]),
                time=duration_text(s["train_s"]), cost=cost))
        if len(p["similar"]) > SIMILAR_LISTED:
            lines.append(self.tr("… and {n} more").format(n=len(p["similar"]) - SIMILAR_LISTED))
        return "\n".join(lines)

    def _draw_chart(self, res):
        """Days against USD at the basis for the priced plans; GPU-hours (so labelled) when none is priced."""
        key = "usd" if res.pareto_y == "usd" else "gpu_hours"
        shown = [p for p in res.plans if p["cost"][key] is not None]
        best = shown[0] if shown else None
        self.chart.set_points([p["time"]["train_days"] for p in shown], [p["cost"][key] for p in shown],
                              [p["time"]["train_days"] for p in res.pareto], [p["cost"][key] for p in res.pareto],
                              (best["time"]["train_days"], best["cost"][key]) if best else None,
                              quantity=key, basis=price_basis_labels()[res.price_basis])

    def selected_plan(self) -> dict | None:
        """The search row selected in the table (the first when none is)."""
        if not self.result or not self.result.plans:
            return None
        rows = self.table.selectionModel().selectedRows()
        return self.result.plans[self.proxy.mapToSource(rows[0]).row() if rows else 0]

    def copy_command(self):
        p = self.selected_plan()
        if p is not None:
            QGuiApplication.clipboard().setText(p["estimate_command"])
            self.status.setText(self.tr("Copied: {command}").format(command=p["estimate_command"]))

    def workload_from_result(self, p: dict) -> dict:
        """The workload options the row was scored with (the Plan page then gives its numbers)."""
        return {k: p["plan"].get(k) for k in ("micro_batch", "recompute", *options_of(TrainingSetup))
                if k != "tokens"}

    def plan_from_result(self, p: dict) -> dict:
        """A scenario plan holding the row's full layout (scenario.PLAN_KEYS)."""
        q = p["parallel"]
        plan = {"name": f"{p['candidate']} ({q['gpus']} GPUs, search)"}
        plan.update({k: v for k, v in p["plan"].items() if k in PLAN_KEYS and v is not None})
        return plan

    def open_selected(self):
        """A new plan with the row's layout and the settings it was scored with where they differ
        from the workload's (its own, shown on Plan and Compare); the workload and the other plans
        stay as they are."""
        p = self.selected_plan()
        if p is None:
            return
        plan = self.plan_from_result(p)
        defaults = options_of(TrainingRequest)
        wl = self.doc.data["workload"]
        for k, v in self.workload_from_result(p).items():
            scored = defaults[k].default if v is None else v  # a row's options leave defaults out
            if k in PLAN_OWN_KEYS and scored != wl.get(k, defaults[k].default):
                plan[k] = scored
        self.open_plan.emit(plan)
