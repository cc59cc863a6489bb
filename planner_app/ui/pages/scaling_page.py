"""Scaling page: throughput and efficiency of the chosen plan against node count, one curve
per network, with the no-overlap 1/(1 + t_comm/t_compute) reference dashed."""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from planner_app import scenario
from planner_app.core.requests import ScalingCurves, ScalingRequest
from planner_app.i18n import engine_text  # the service's sentences in the UI's language
from planner_app.service.scaling import run_scaling
from planner_app.ui.charts.lines import ScalingChart
from planner_app.ui.fields import CheckList
from planner_app.ui.models.table_model import Column, RowsTableModel
from planner_app.ui.tables import DataTable
from planner_app.ui.workers import RecomputeWhenVisible, TaskSlot

DEFAULT_NODES = "1,2,4,8,16,32,64"
DEFAULT_FABRICS = ("ib-ndr", "roce-400", "efa-v2", "eth-100")


def parse_nodes(text: str) -> list[int]:
    out = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if not part.isdigit() or int(part) < 1 or int(part) > 100_000:
            raise ValueError(f"node counts: whole numbers from 1 to 100000 separated by commas; {part!r} is not")
        out.append(int(part))
    if not out:
        raise ValueError("node counts: give at least one, e.g. 1,2,4,8")
    return sorted(set(out))


def scaling_request(sc: dict, fabrics: list[str], nodes: list[int], weak: bool) -> ScalingRequest:
    """The scaling service's request: the scenario's chosen plan as it is estimated (its request,
    calibration profile included) and the page's networks and node counts."""
    if sc["workload"].get("mode", "training") != "training":
        raise ValueError("scaling curves are for training plans; the workload is inference")
    plan = scenario.plan_request(sc, sc.get("chosen_plan", 0))
    return ScalingRequest(plan=plan, curves=ScalingCurves(nodes=",".join(map(str, nodes)),
                                                          fabrics=",".join(fabrics) or None, weak=weak))


def scaling_task(sc: dict, db, fabrics: list[str], nodes: list[int], weak: bool):
    """The background task: the scaling service on the request built from the scenario."""
    def run(progress, cancelled):
        return run_scaling(scaling_request(sc, fabrics, nodes, weak), db, progress, cancelled)
    return run


class ScalingPage(RecomputeWhenVisible, QWidget):
    def __init__(self, doc, db, parent=None):
        super().__init__(parent)
        self.doc, self.db = doc, db
        self.curves = {}
        self.slot = TaskSlot(self)
        self.slot.succeeded.connect(self._show)
        self.slot.failed.connect(lambda e: self.error.setText(str(e)))
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(200)
        self.timer.timeout.connect(self.recompute)
        lay = QHBoxLayout(self)
        left = QVBoxLayout()
        form = QFormLayout()
        self.nodes = QLineEdit(DEFAULT_NODES)
        self.nodes.setMaxLength(200)
        self.weak = QCheckBox(self.tr("weak scaling (global batch grows with the nodes)"))
        form.addRow(self.tr("Node counts"), self.nodes)
        form.addRow("", self.weak)
        left.addLayout(form)
        left.addWidget(QLabel(self.tr("Networks")))
        self.fabric_list = CheckList([(r["id"], r["name"]) for r in db.records["fabrics"] if r["scope"] == "inter"],
                                     checked=DEFAULT_FABRICS)
        left.addWidget(self.fabric_list, 1)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00;")
        left.addWidget(self.error)
        lay.addLayout(left, 1)
        right = QVBoxLayout()
        self.chart = ScalingChart()
        right.addWidget(self.chart, 3)
        self.model = RowsTableModel([Column("fabric", self.tr("Network")),
                                     Column("nics", self.tr("NICs per node")), Column("nodes", self.tr("Nodes")),
                                     Column("gpus", self.tr("GPUs")), Column("fits", self.tr("Fits")),
                                     Column("tokens_per_s", self.tr("Tokens/s"), fmt=lambda v: f"{v:,.0f}"),
                                     Column("efficiency", self.tr("Efficiency"), "%", fmt=lambda v: f"{v * 100:.1f}"),
                                     Column("no_overlap", self.tr("No-overlap reference"), "%",
                                            fmt=lambda v: f"{v * 100:.1f}"),
                                     Column("step_s", self.tr("Step time"), "s", fmt=lambda v: f"{v:.3f}")])
        self.table = DataTable(fit=True)
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        right.addWidget(self.table, 2)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        right.addWidget(self.notes)
        lay.addLayout(right, 3)
        self.nodes.textEdited.connect(self.request_recompute)
        self.weak.toggled.connect(self.request_recompute)
        self.fabric_list.itemChanged.connect(self.request_recompute)
        doc.changed.connect(self.request_recompute)

    def selected_fabrics(self) -> list[str]:
        return self.fabric_list.checked_keys()

    def recompute(self):
        try:
            nodes = parse_nodes(self.nodes.text())
        except ValueError as e:
            self.error.setText(self.tr("Node counts: whole numbers from 1 to 100000 separated by commas") +
                               f" ({e})")
            self.nodes.setStyleSheet("QLineEdit { border: 2px solid #d33; background: #fff0f0; }")
            return
        self.nodes.setStyleSheet("")
        fabrics = self.selected_fabrics()
        if not fabrics:
            self.error.setText(self.tr("Tick at least one network"))
            return
        self.error.setText("")
        self.slot.start(scaling_task(self.doc.snapshot(), self.db, fabrics, nodes, self.weak.isChecked()))

    def _show(self, out):
        if out is None:  # cancelled
            return
        curves = out.curves
        self.curves = curves
        names = self.fabric_list.labels()
        main, ref, nics_text, rows = {}, {}, {}, []
        yes, no = self.tr("yes"), self.tr("NO")
        for fab, pts in curves.items():
            label, nics = names.get(fab, fab), out.nics.get(fab)
            main[label] = ([p.nodes for p in pts], [p.efficiency for p in pts])
            ref[label] = ([p.nodes for p in pts], [p.no_overlap_efficiency for p in pts])
            # the legend names each network's NICs per node: a network's curve is only as fast as its NICs
            nics_text[label] = self.tr("NICs per node: {n}").format(n=nics) if nics else ""
            rows += [{"fabric": label, "nics": nics, "nodes": p.nodes, "gpus": p.gpus,
                      "tokens_per_s": p.tokens_per_s, "efficiency": p.efficiency,
                      "no_overlap": p.no_overlap_efficiency, "step_s": p.step_s, "fits": yes if p.fits else no}
                     for p in pts]
        self.chart.set_curves(main, ref, nics_text)
        self.model.set_rows(rows)
        self.table.fit_columns()
        notes = [self.tr("Each node: {g} GPUs. NICs per node: the plan's own network has the plan's (its "
                         "instance's); another network has what nodes on it have:").format(g=out.gpus_per_node)]
        notes += ["  • " + self.tr("{network}: {n}, {why}").format(network=names.get(fab, fab), n=out.nics.get(fab),
                                                                 why=engine_text(out.nics_from[fab]))
                  for fab in curves if fab in out.nics_from]
        if out.skipped:
            notes.append(self.tr("Left out: {counts} node(s): the GPUs do not hold whole tp × pp × cp × ep groups "
                                 "of the plan").format(counts=", ".join(str(n) for n in out.skipped)))
        if any(not p.fits for pts in curves.values() for p in pts):
            notes.append(self.tr("Rows marked NO under Fits do not fit in GPU memory at that count"))
        self.notes.setText("\n".join(notes))
