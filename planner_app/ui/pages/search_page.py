"""Search page: constraints in (machines, GPU budget, deadline, money), ranked plans and a
time/cost Pareto chart out; the chosen result opens in the Plan page."""
from __future__ import annotations

import math

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QAbstractItemView, QFormLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QTableView, QVBoxLayout, QWidget)

from planner_app.ui.charts.lines import ParetoChart
from planner_app.ui.fields import CheckList, ChoiceField, IntField, NumberField
from planner_app.ui.models.table_model import Column, RowsTableModel
from planner_app.ui.pages.hardware import hardware_choices, hw_key, parse_hw_key
from planner_app.ui.workers import TaskSlot

DEFAULT_MACHINES = ("p5.48xlarge", "Standard_ND96isr_H100_v5", "a3-megagpu-8g")


def search_task(sc: dict, db, machines: list[tuple[str, str]], max_gpus: int, deadline, budget, objective, top):
    def run(progress, cancelled):
        from planner_app.cli_search import build_candidates
        from planner_app.core.search import search
        from planner_app.resolve import default_seq_len, resolve_model
        w = sc["workload"]
        if w.get("mode", "training") != "training":
            raise ValueError("search plans training runs; switch the workload to training")
        if not w.get("tokens"):
            raise ValueError("Tokens: the search needs a training budget; set Tokens on the Workload page")
        model = resolve_model(w["model"], db)
        seq = w.get("seq_len") or default_seq_len(model, db)
        gbs = w.get("global_batch") or 2 ** max(0, round(math.log2(4_000_000 / seq)))
        insts = ",".join(i for k, i in machines if k == "instance")
        gpus = ",".join(i for k, i in machines if k == "gpu")
        cands = []
        if insts:
            cands += build_candidates(db, None, insts, None, 7.10)
        if gpus:
            cands += build_candidates(db, gpus, None, None, 7.10)
        progress(0.1, "scoring")
        fw = w.get("framework") or "megatron"
        recipe = w.get("recipe") or ("mixed-bf16" if fw != "pytorch" else "amp-bf16")
        res = search(model, cands, tokens=float(w["tokens"]), max_gpus=max_gpus, seq_len=seq, global_batch=gbs,
                     recipe=recipe, framework=fw, deadline_days=deadline, budget_usd=budget, objective=objective,
                     top=top)
        progress(1.0, "done")
        return {"result": res, "seq_len": seq, "global_batch": gbs}
    return run


class SearchPage(QWidget):
    open_plan = Signal(object)  # a plan dict for the scenario

    def __init__(self, doc, db, parent=None):
        super().__init__(parent)
        self.doc, self.db = doc, db
        self.result = None
        self.slot = TaskSlot(self)
        self.slot.succeeded.connect(self._show)
        self.slot.failed.connect(self._failed)
        self.slot.progressed.connect(lambda f, t: self.progress.setValue(int(f * 100)))
        self.slot.finished.connect(self._idle)
        lay = QHBoxLayout(self)
        left = QVBoxLayout()
        left.addWidget(QLabel(self.tr("Machines to consider")))
        self.machines = CheckList([(hw_key(k, i), label) for k, i, label in hardware_choices(db)],
                                  checked={hw_key("instance", m) for m in DEFAULT_MACHINES})
        left.addWidget(self.machines, 1)
        form = QFormLayout()
        self.max_gpus = IntField(1, 100_000, 1024)
        self.deadline = NumberField(self.tr("Deadline (days)"), placeholder=self.tr("optional"))
        self.budget = NumberField(self.tr("Budget (USD)"), placeholder=self.tr("optional"))
        self.objective = ChoiceField([("time", self.tr("fastest")), ("cost", self.tr("cheapest"))], "time")
        self.top = IntField(1, 200, 20)
        for label, w in ((self.tr("At most GPUs"), self.max_gpus), (self.tr("Deadline (days)"), self.deadline),
                         (self.tr("Budget (USD)"), self.budget), (self.tr("Objective"), self.objective),
                         (self.tr("Plans to show"), self.top)):
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
        self.status = QLabel()
        self.status.setWordWrap(True)
        left.addWidget(self.status)
        lay.addLayout(left, 1)

        right = QVBoxLayout()
        self.model = RowsTableModel([
            Column("rank", "#"), Column("machine", self.tr("Machine")), Column("gpus", self.tr("GPUs")),
            Column("layout", self.tr("tp×pp×cp×ep×dp")), Column("zero", "ZeRO"), Column("mb", self.tr("Micro-batch")),
            Column("recompute", self.tr("Recomputation")),
            Column("days", self.tr("Days"), fmt=lambda v: f"{v:,.1f}"),
            Column("mfu", "MFU", "%", fmt=lambda v: f"{v * 100:.1f}"),
            Column("usd", self.tr("Cost"), "USD", fmt=lambda v: f"{v:,.0f}")])
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.doubleClicked.connect(lambda _i: self.open_selected())
        right.addWidget(self.table, 3)
        row = QHBoxLayout()
        self.open_button = QPushButton(self.tr("Open in Plan"))
        self.open_button.clicked.connect(self.open_selected)
        self.open_button.setEnabled(False)
        row.addStretch(1)
        row.addWidget(self.open_button)
        right.addLayout(row)
        self.chart = ParetoChart()
        right.addWidget(self.chart, 2)
        lay.addLayout(right, 3)

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
                                    self.top.value()))

    def _idle(self):
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self.slot.busy is False and self.result is None and not self.status.text():
            self.status.setText(self.tr("Cancelled"))

    def _failed(self, e):
        self.status.setText(str(e))

    def _show(self, out):
        res = out["result"]
        self.result = res
        rows = []
        for i, p in enumerate(res.plans, 1):
            q = p["parallel"]
            rows.append({"rank": i, "machine": p["candidate"], "gpus": q["gpus"],
                         "layout": f"{q['tp']}×{q['pp']}×{q['cp']}×{q['ep']}×{q['dp']}", "zero": q["zero"],
                         "mb": p["micro_batch"], "recompute": p["recompute"], "days": p["time"]["train_days"],
                         "mfu": p["time"]["mfu"], "usd": p["cost"]["usd"]})
        self.model.set_rows(rows)
        self.table.resizeColumnsToContents()
        if rows:
            self.table.selectRow(0)
        self.open_button.setEnabled(bool(rows))
        cost = lambda p: p["cost"]["usd"] if p["cost"]["usd"] is not None else p["cost"]["gpu_hours"]  # noqa: E731
        best = res.plans[0] if res.plans else None
        self.chart.set_points([p["time"]["train_days"] for p in res.plans], [cost(p) for p in res.plans],
                              [p["time"]["train_days"] for p in res.pareto], [cost(p) for p in res.pareto],
                              (best["time"]["train_days"], cost(best)) if best else None)
        self.status.setText(self.tr("{n:,} configurations scored in {s:.2f} s; {f:,} fit").format(
            n=res.evaluated, s=res.elapsed_s, f=res.fitting) + ("\n" + "\n".join(res.notes) if res.notes else ""))

    def plan_from_result(self, p: dict) -> dict:
        q = p["parallel"]
        plan = {"name": f"{p['candidate']} ({q['gpus']} GPUs, search)", "gpus": q["gpus"],
                "gpus_per_node": q["gpus_per_node"], "zero": q["zero"] or None}
        plan["instance" if p.get("instance") else "gpu"] = p.get("instance") or p["gpu"]
        for a in ("tp", "pp", "cp", "ep"):
            if q[a] > 1:
                plan[a] = q[a]
        if q["sequence_parallel"]:
            plan["sequence_parallel"] = True
        if q["pp_schedule"] != "1f1b":
            plan["pp_schedule"], plan["vp"] = q["pp_schedule"], q["vp"]
        return {k: v for k, v in plan.items() if v is not None}

    def open_selected(self):
        if not self.result or not self.result.plans:
            return
        rows = self.table.selectionModel().selectedRows()
        i = rows[0].row() if rows else 0
        p = self.result.plans[i]
        self.doc.update_workload(micro_batch=p["micro_batch"], recompute=p["recompute"])
        self.open_plan.emit(self.plan_from_result(p))
