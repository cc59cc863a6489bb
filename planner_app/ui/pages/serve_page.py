"""Serve page (issue 15): one continuous-batching deployment of the Workload page's model at
steady state (``gpu-planner serve``): latency, throughput, KV cache, cost per million output
tokens and the memory per GPU; an SLO search that ranks the deployments meeting TTFT and TPOT
targets and draws their throughput per GPU against speed per user. Recomputes on every edit
(debounced) on a worker thread; the inputs are the scenario's optional ``serve`` section."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from planner_app.core.options import build, with_options
from planner_app.core.requests import ServeRequest, ServeSearchRequest, SloTargets, serve_section_options
from planner_app.i18n import engine_text
from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.service.serving import run_serve, run_slo_search
from planner_app.ui.charts.bars import StackedBarChart
from planner_app.ui.charts.lines import ServingParetoChart
from planner_app.ui.fields import (
    add_option_row,
    option_choice_field,
    option_int_field,
    option_number_field,
    price_basis_labels,
    with_option_tooltip,
)
from planner_app.ui.machine_chooser import MachineChooser, machine_combo, plan_machine_keys
from planner_app.ui.models.table_model import Column, RowsTableModel
from planner_app.ui.option_form import OptionForm
from planner_app.ui.pages.hardware import (
    hw_key,
    parse_hw_key,
    plan_hardware,
)
from planner_app.ui.tables import DataTable
from planner_app.ui.workers import RecomputeWhenVisible, TaskSlot

DEBOUNCE_MS = 150  # STYLE.md: edits are coalesced before recomputing
SERVE_OPTIONS = serve_section_options()
# The search's own options (quantized weights, ...): a form generated from the request, so a new one is a new row
SEARCH_OPTIONS = [o for o in SERVE_OPTIONS.values() if o.group == "search"]
# The deployment the page starts from when the scenario has no serve section yet (the first edit writes
# every field into the section): the example traffic (2K in / 512 out, 64 concurrent users,
# TTFT under 1 s, 30 tokens/s per user) and tp 8, one 8-GPU server, the usual serving unit (a 70B
# model in bf16 does not fit on one GPU). Other keys: the serve request's defaults.
SERVE_EXAMPLE = {"tp": 8, "isl": 2048, "osl": 512, "concurrency": 64, "ttft_ms": 1000.0, "tpot_ms": 1000.0 / 30}
DEFAULTS = SERVE_EXAMPLE
DEFAULT_SEARCH_MACHINES = ("p5.48xlarge", "p5en.48xlarge", "a3-megagpu-8g")  # priced: the ranking has a cost
RESULT_KEYS = ("ttft_ms", "benchmark_ttft_ms", "tpot_ms", "e2e_latency_ms", "output_tokens_per_s",
               "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "requests_per_s", "kv_cache_tokens", "max_concurrency", "usd_per_m")
GB = 1e9
MEMORY_KEYS = ("weights", "kv_pool", "activation_workspace", "cuda_graphs", "other")


def result_titles() -> dict:
    return {"ttft_ms": translate("ServePage", "Time to first token"),
            "benchmark_ttft_ms": translate("ServePage", "Mean time to first token in a benchmark run"),
            "tpot_ms": translate("ServePage", "Time per output token"),
            "e2e_latency_ms": translate("ServePage", "End-to-end latency"), "output_tokens_per_s": translate("ServePage", "Output tokens/s"),
            "output_tokens_per_s_per_gpu": translate("ServePage", "Output tokens/s per GPU"),
            "tokens_per_s_per_user": translate("ServePage", "Tokens/s per user"), "requests_per_s": translate("ServePage", "Requests/s"),
            "kv_cache_tokens": translate("ServePage", "KV cache (tokens per replica)"), "max_concurrency": translate("ServePage", "Max concurrency"),
            "usd_per_m": translate("ServePage", "Cost per million output tokens")}


def memory_labels() -> dict:
    return {"weights": translate("ServePage", "weights"), "kv_pool": translate("ServePage", "KV cache pool"), "activation_workspace": translate("ServePage", "activation workspace"),
            "cuda_graphs": translate("ServePage", "CUDA graphs"), "other": translate("ServePage", "other")}


def step_labels() -> dict:
    """The parts of a decode step (core/serving.STEP_PARTS), as the step chart's legend names them."""
    return {"dense_gemm": translate("ServePage", "GEMMs (attention, dense MLP, output layer)"),
            "expert_gemm": translate("ServePage", "expert GEMMs"), "attention": translate("ServePage", "attention (KV cache)"),
            "communication": translate("ServePage", "communication"), "elementwise": translate("ServePage", "element-wise"),
            "kernel_floor": translate("ServePage", "kernel launches"),
            "engine_overhead": translate("ServePage", "engine CPU overhead"),
            "host_wait": translate("ServePage", "waiting for the host (per-request CPU work)")}


def _ms(v) -> str:
    return translate("ServePage", "unbounded (queue grows)") if v is None else f"{v:,.1f} ms"


def format_results(out: dict) -> dict:
    """The result cells' text for a ``serve`` JSON (the page shows exactly these)."""
    usd = (out.get("cost") or {}).get("usd_per_million_output_tokens")
    bench = out.get("benchmark")
    return {"ttft_ms": _ms(out["ttft_ms"]),
            # a closed-loop benchmark's mean (its clients start together); none under a request rate
            "benchmark_ttft_ms": translate("ServePage", "{ttft} ({n:,} requests)").format(
                ttft=_ms(bench["mean_ttft_ms"]), n=bench["requests"]) if bench
            else translate("ServePage", "none (open loop: a request rate)"),
            "tpot_ms": _ms(out["tpot_ms"]), "e2e_latency_ms": _ms(out["e2e_latency_ms"]),
            "output_tokens_per_s": f"{out['output_tokens_per_s']:,.0f}",
            "output_tokens_per_s_per_gpu": f"{out['output_tokens_per_s_per_gpu']:,.0f}",
            "tokens_per_s_per_user": f"{out['tokens_per_s_per_user']:,.1f}",
            "requests_per_s": f"{out['requests_per_s']:,.2f}", "kv_cache_tokens": f"{out['kv_cache_tokens']:,}",
            "max_concurrency": f"{out['max_concurrency']:,}",
            "usd_per_m": f"${usd:,.2f}" if usd is not None else translate("ServePage", "no price (choose an instance)")}


def verdict_text(out: dict) -> str:
    d = out["deployment"]
    if out["saturated"]:
        text = translate("ServePage", "Fits on {gpus} GPUs, but saturated: at most {n:,} requests run at once, the rest queue").format(
            gpus=d["gpus"], n=out["max_concurrency"])
    else:
        text = translate("ServePage", "Fits on {gpus} GPUs: {n:,} requests can run at once, no queueing").format(
            gpus=d["gpus"], n=out["max_concurrency"])
    cost = out.get("cost") or {}
    if cost.get("instances"):  # what is billed: whole instances (core/serving/deployment.pack_replicas)
        text += "\n" + translate("ServePage", "Billed: {n:,} instance(s) of {per} GPUs, {idle:,} GPUs idle").format(
            n=cost["instances"], per=cost["gpus_per_instance"], idle=cost["idle_gpus"])
    return text


def serve_request(sc: dict, values: dict) -> ServeRequest:
    """The serve service's request: the scenario's model, prices and calibration and the page's inputs
    (the serve request's option names; an error names the field)."""
    return build(ServeRequest, {"model": sc["workload"]["model"], "cny_per_usd": sc.get("cny_per_usd"),
                                "calibration": sc.get("calibration"), **values}, "the Serve page")


def serve_task(sc: dict, values: dict, db):
    def run(progress, cancelled):
        return run_serve(serve_request(sc, values), db).to_json()
    return run


def slo_task(sc: dict, values: dict, machines: list, ttft_ms: float, tpot_ms: float, db, search=None):
    """``search``: the search's own options by key (None: the default)."""
    def run(progress, cancelled):
        names = {"instance": ",".join(i for k, i in machines if k == "instance") or None,
                 "gpu": ",".join(i for k, i in machines if k == "gpu") or None}
        serve = serve_request(sc, {**values, **names})
        request = ServeSearchRequest(serve=serve, targets=SloTargets(ttft_ms=ttft_ms, tpot_ms=tpot_ms))
        return run_slo_search(with_options(request, **{k: v for k, v in (search or {}).items() if v is not None}),
                              db)
    return run


class ServePage(RecomputeWhenVisible, QWidget):
    served = Signal(object)  # the latest serve JSON shown

    def __init__(self, doc, db, parent=None):
        super().__init__(parent)
        self.doc, self.db = doc, db
        self.last_result = None
        self.search_result = None
        self._loading = False
        self.slot = TaskSlot(self)
        self.slot.succeeded.connect(self._show)
        self.slot.failed.connect(self._show_error)
        self.search_slot = TaskSlot(self)
        self.search_slot.succeeded.connect(self._show_search)
        self.search_slot.failed.connect(lambda e: self.search_status.setText(str(e)))
        self.search_slot.finished.connect(lambda: self.run_button.setEnabled(True))
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self.recompute)

        split = QSplitter(Qt.Horizontal, self)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)
        split.addWidget(self._build_inputs())
        split.addWidget(self._build_results())
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([380, 1000])
        self.load_from_doc()
        doc.changed.connect(self._doc_changed)

    # ---- building ---------------------------------------------------------------------------
    def _build_inputs(self) -> QWidget:
        t = SERVE_OPTIONS
        box = QWidget()
        ll = QVBoxLayout(box)
        self.model_label = QLabel()
        self.model_label.setWordWrap(True)
        ll.addWidget(self.model_label)
        dep = QGroupBox(self.tr("Deployment"))
        form = QFormLayout(dep)
        self.hardware = machine_combo(self.db)
        form.addRow(self.tr("GPU or instance"), self.hardware)
        self.tp = option_int_field("tp", table=t)
        self.pp = option_int_field("pp", table=t)
        self.ep = option_int_field("ep", table=t)
        self.replicas = option_int_field("replicas", table=t)
        self.weights_dtype = option_choice_field("weights_dtype", table=t)
        self.kv_dtype = option_choice_field("kv_dtype", table=t)
        self.engine = option_choice_field("engine", table=t)
        self.gmu = QDoubleSpinBox()
        self.gmu.setRange(0.05, 1.0)  # the table's rule is (0, 1]; below 5% nothing fits anyway
        self.gmu.setSingleStep(0.01)
        self.gmu.setDecimals(2)
        self.gmu.setValue(t["gpu_memory_utilization"].default)
        with_option_tooltip("gpu_memory_utilization", self.gmu, t)
        for key, w in (("tp", self.tp), ("pp", self.pp), ("ep", self.ep), ("replicas", self.replicas),
                       ("weights_dtype", self.weights_dtype), ("kv_dtype", self.kv_dtype), ("engine", self.engine),
                       ("gpu_memory_utilization", self.gmu)):
            add_option_row(form, key, w, t)
        ll.addWidget(dep)
        traffic = QGroupBox(self.tr("Traffic"))
        tform = QFormLayout(traffic)
        self.isl = option_int_field("isl", table=t, value=DEFAULTS["isl"])
        self.osl = option_int_field("osl", table=t, value=DEFAULTS["osl"])
        # 0 is let through the field so that the service's own rule (the CLI's) shows inline, naming the field
        self.isl.setMinimum(0)
        self.osl.setMinimum(0)
        self.load_kind = QComboBox()
        self.load_kind.addItem(self.tr("Concurrency (closed loop)"), "concurrency")
        self.load_kind.addItem(self.tr("Request rate (open loop)"), "request_rate")
        self.concurrency = option_int_field("concurrency", table=t, value=DEFAULTS["concurrency"])
        self.request_rate = option_number_field("request_rate", placeholder="10", table=t)
        self.request_rate.set_value(10.0)
        add_option_row(tform, "isl", self.isl, t)
        add_option_row(tform, "osl", self.osl, t)
        tform.addRow(self.tr("Load"), self.load_kind)
        add_option_row(tform, "concurrency", self.concurrency, t)
        add_option_row(tform, "request_rate", self.request_rate, t)
        self._traffic_form = tform
        ll.addWidget(traffic)
        ll.addWidget(self._build_search_inputs())
        ll.addStretch(1)
        for w in (self.tp, self.pp, self.ep, self.replicas, self.isl, self.osl, self.concurrency):
            w.valueChanged.connect(self._edited)
        for w in (self.weights_dtype, self.kv_dtype, self.engine, self.load_kind, self.hardware):
            w.currentIndexChanged.connect(self._edited)
        self.gmu.valueChanged.connect(self._edited)
        self.request_rate.value_changed.connect(self._edited)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(box)
        scroll.setMinimumWidth(340)
        return scroll

    def _build_search_inputs(self) -> QWidget:
        box = QGroupBox(self.tr("SLO search"))
        v = QVBoxLayout(box)
        form = QFormLayout()
        self.ttft_target = option_number_field("ttft_ms", placeholder="ms", table=SERVE_OPTIONS)
        self.tpot_target = option_number_field("tpot_ms", placeholder="ms", table=SERVE_OPTIONS)
        for key, w in (("ttft_ms", self.ttft_target), ("tpot_ms", self.tpot_target)):
            add_option_row(form, key, w, SERVE_OPTIONS)
            label = form.labelForField(w)
            label.setText(f"{label.text()} ({SERVE_OPTIONS[key].unit})")
        v.addLayout(form)
        self.search_options = OptionForm(SEARCH_OPTIONS)
        self.search_options.edited.connect(self._save_targets)
        v.addWidget(self.search_options)
        v.addWidget(QLabel(self.tr("Machines to consider")))
        self.machines = MachineChooser(self.db, {hw_key("instance", m) for m in DEFAULT_SEARCH_MACHINES})
        self.machines.setMinimumHeight(220)
        self.machines.set_plan_keys(plan_machine_keys(self.doc.data))
        v.addWidget(self.machines, 1)
        self.run_button = QPushButton(self.tr("Run SLO search"))
        self.run_button.clicked.connect(self.run_search)
        v.addWidget(self.run_button)
        self.search_status = QLabel()
        self.search_status.setWordWrap(True)
        v.addWidget(self.search_status)
        self.ttft_target.value_changed.connect(lambda _v: self._save_targets())
        self.tpot_target.value_changed.connect(lambda _v: self._save_targets())
        return box

    def _build_results(self) -> QWidget:
        right = QSplitter(Qt.Vertical)
        top = QWidget()
        tl = QVBoxLayout(top)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00; font-weight: bold;")
        tl.addWidget(self.error)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.verdict.setStyleSheet("font-size: 14pt; font-weight: bold; padding: 4px;")
        tl.addWidget(self.verdict)
        row = QHBoxLayout()
        grid = QGridLayout()
        self.cells: dict[str, QLabel] = {}
        for i, (key, title) in enumerate(result_titles().items()):
            name = QLabel(title)
            name.setStyleSheet("color: #555;")
            value = QLabel("—")
            value.setStyleSheet("font-size: 12pt; font-weight: bold;")
            value.setTextInteractionFlags(Qt.TextSelectableByMouse)
            grid.addWidget(name, (i // 2) * 2, i % 2)
            grid.addWidget(value, (i // 2) * 2 + 1, i % 2)
            self.cells[key] = value
        row.addLayout(grid, 3)
        self.memory_chart = StackedBarChart(self.tr("Memory per GPU"), "GB")
        row.addWidget(self.memory_chart, 2)
        # where an average engine step's time goes (serve's step_breakdown_ms; the parts sum to TPOT)
        self.step_chart = StackedBarChart(self.tr("Time per output token"), "ms")
        row.addWidget(self.step_chart, 2)
        tl.addLayout(row, 1)
        right.addWidget(top)
        bottom = QWidget()
        bl = QHBoxLayout(bottom)
        tv = QVBoxLayout()
        self.table_model = RowsTableModel(self._columns())
        self.table = DataTable(fit=True)
        self.table.setModel(self.table_model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.doubleClicked.connect(lambda _i: self.use_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_a: self._draw_search_chart())
        tv.addWidget(self.table, 1)
        self.use_button = QPushButton(self.tr("Use this deployment"))
        self.use_button.setEnabled(False)
        self.use_button.clicked.connect(self.use_selected)
        tv.addWidget(self.use_button, 0, Qt.AlignRight)
        bl.addLayout(tv, 3)
        self.pareto_chart = ServingParetoChart()
        bl.addWidget(self.pareto_chart, 2)
        right.addWidget(bottom)
        return right

    def _columns(self) -> list:
        basis = price_basis_labels()
        # GPUs: those the replicas use; Instances: the whole instances billed; Idle GPUs: theirs left unused
        return [Column("rank", "#"), Column("machine", self.tr("Machine")), Column("gpus", self.tr("GPUs")),
                Column("instances", self.tr("Instances")), Column("idle_gpus", self.tr("Idle GPUs")),
                Column("layout", self.tr("tp×pp×ep×replicas")), Column("dtypes", self.tr("Weights / KV")),
                Column("ttft_ms", "TTFT", "ms", fmt=lambda v: f"{v:,.0f}"),
                Column("tpot_ms", "TPOT", "ms", fmt=lambda v: f"{v:,.1f}"),
                Column("e2e_ms", self.tr("End-to-end latency"), "ms", fmt=lambda v: f"{v:,.0f}"),
                Column("per_gpu", self.tr("Output tokens/s per GPU"), fmt=lambda v: f"{v:,.0f}"),
                Column("per_user", self.tr("Tokens/s per user"), fmt=lambda v: f"{v:,.1f}"),
                Column("out_tps", self.tr("Output tokens/s"), fmt=lambda v: f"{v:,.0f}"),
                Column("rps", self.tr("Requests/s"), fmt=lambda v: f"{v:,.2f}"),
                Column("max_conc", self.tr("Max concurrency"), fmt=lambda v: f"{v:,}"),
                Column("saturated", self.tr("Saturated")),
                Column("usd_h", self.tr("USD/h"), fmt=lambda v: f"{v:,.2f}" if v != "" else "—"),
                Column("usd_per_m", self.tr("USD per million output tokens"),
                       fmt=lambda v: f"{v:,.2f}" if v != "" else "—"),
                Column("price_basis", self.tr("Price basis"), fmt=lambda v: basis.get(v, v))]

    # ---- the document -----------------------------------------------------------------------
    def values(self) -> dict:
        """The page's inputs under the serve command's option names (None: unset)."""
        kind, ident = parse_hw_key(self.hardware.currentData())
        by_rate = self.load_kind.currentData() == "request_rate"
        return {"gpu": ident if kind == "gpu" else None, "instance": ident if kind == "instance" else None,
                "tp": self.tp.value(), "pp": self.pp.value(), "ep": self.ep.value(), "replicas": self.replicas.value(),
                "isl": self.isl.value(), "osl": self.osl.value(),
                "concurrency": None if by_rate else self.concurrency.value(),
                "request_rate": self.request_rate.value() if by_rate else None,
                "weights_dtype": self.weights_dtype.value(), "kv_dtype": self.kv_dtype.value(),
                "engine": self.engine.value(), "gpu_memory_utilization": round(self.gmu.value(), 4)}

    def load_from_doc(self) -> None:
        """The fields from the scenario's serve section (absent: the chosen plan's machine and defaults)."""
        sc = self.doc.data
        serve = sc.get("serve") or {}
        self._loading = True
        try:
            if serve.get("instance") or serve.get("gpu"):
                key = hw_key("instance", serve["instance"]) if serve.get("instance") else hw_key("gpu", serve["gpu"])
            else:
                plans = sc.get("plans") or [{}]
                key = hw_key(*plan_hardware(plans[min(sc.get("chosen_plan", 0), len(plans) - 1)]))
            self._set_hardware(key)
            for k, w in (("tp", self.tp), ("pp", self.pp), ("ep", self.ep), ("replicas", self.replicas)):
                w.setValue(int(serve.get(k, DEFAULTS.get(k, 1))))
            for k in ("isl", "osl"):
                getattr(self, k).setValue(int(serve.get(k, DEFAULTS[k])))
            by_rate = serve.get("request_rate") is not None
            self.load_kind.setCurrentIndex(1 if by_rate else 0)
            self.concurrency.setValue(int(serve.get("concurrency") or DEFAULTS["concurrency"]))
            if by_rate:
                self.request_rate.set_value(float(serve["request_rate"]))
            for k, w in (("weights_dtype", self.weights_dtype), ("kv_dtype", self.kv_dtype), ("engine", self.engine)):
                w.set_value(serve.get(k, SERVE_OPTIONS[k].default))
            self.gmu.setValue(float(serve.get("gpu_memory_utilization", SERVE_OPTIONS["gpu_memory_utilization"].default)))
            self.ttft_target.set_value(float(serve.get("ttft_ms", DEFAULTS["ttft_ms"])))
            self.tpot_target.set_value(float(serve.get("tpot_ms", round(DEFAULTS["tpot_ms"], 2))))
            self.search_options.set_values({o.key: serve.get(o.key) for o in SEARCH_OPTIONS})
        finally:
            self._loading = False
        self._show_load_field()

    def _set_hardware(self, key: str) -> None:
        self.hardware.setCurrentIndex(max(self.hardware.findData(key), 0))
        self.hardware.lineEdit().setCursorPosition(0)  # the label's start (provider, machine), not its price

    def _show_load_field(self) -> None:
        by_rate = self.load_kind.currentData() == "request_rate"
        self._traffic_form.setRowVisible(self.concurrency, not by_rate)
        self._traffic_form.setRowVisible(self.request_rate, by_rate)

    def _doc_changed(self, what: str) -> None:
        if what == "all":  # a new or opened scenario: the SLO search's ticks start again
            self.machines.reset(plan_machine_keys(self.doc.data))
            self.load_from_doc()
        elif what == "plans":
            self.machines.set_plan_keys(plan_machine_keys(self.doc.data))
        if what in ("all", "workload"):
            self.request_recompute()

    def _edited(self, *_args) -> None:
        if self._loading:
            return
        self._show_load_field()
        v = self.values()
        # the scenario keeps the values set (None removes a key: one machine kind, one load kind)
        self.doc.update_serve(**v)
        self.request_recompute()

    def _save_targets(self) -> None:
        if not self._loading:  # the search's options too (None: the default, its key removed)
            self.doc.update_serve(ttft_ms=self.ttft_target.value(), tpot_ms=self.tpot_target.value(),
                                  **self.search_options.values())

    # ---- the estimate -----------------------------------------------------------------------
    def recompute(self) -> None:
        model = self.doc.data["workload"].get("model")
        name = model if isinstance(model, str) else (model or {}).get("name", self.tr("custom model"))
        self.model_label.setText(self.tr("Model: {name} (from the Workload page)").format(name=name))
        if self.request_rate.error_text and self.load_kind.currentData() == "request_rate":
            self._show_error(self.request_rate.error_text)
            return
        self.slot.start(serve_task(self.doc.snapshot(), self.values(), self.db))

    def _clear(self) -> None:
        self.last_result = None
        self.verdict.setText("")
        for cell in self.cells.values():
            cell.setText("—")
        self.memory_chart.set_data([], {})
        self.step_chart.set_data([], {})

    def _show_error(self, e) -> None:
        field = getattr(e, "field", None)
        text = str(e)  # InputError: "field: what is allowed" (the CLI's one line)
        self._clear()
        self.error.setText(text)
        for k, w in (("isl", self.isl), ("osl", self.osl), ("tp", self.tp), ("pp", self.pp), ("ep", self.ep)):
            w.setStyleSheet("QSpinBox { border: 2px solid #d33; background: #fff0f0; }" if k == field else "")
        # a precision or engine the GPU cannot run (core/serving/support.py): its choice is marked too
        for k, w in (("weights_dtype", self.weights_dtype), ("kv_dtype", self.kv_dtype), ("engine", self.engine)):
            w.setStyleSheet("QComboBox { border: 2px solid #d33; background: #fff0f0; }" if k == field else "")

    def _show(self, out: dict) -> None:
        self.last_result = out
        self.error.setText("")
        for w in (self.isl, self.osl, self.tp, self.pp, self.ep, self.weights_dtype, self.kv_dtype, self.engine):
            w.setStyleSheet("")
        self.verdict.setText(verdict_text(out))
        self.verdict.setStyleSheet("font-size: 14pt; font-weight: bold; padding: 4px; color: "
                                   + ("#b36b00;" if out["saturated"] else "#1a7f37;"))
        for key, text in format_results(out).items():
            self.cells[key].setText(text)
        mem = out["memory"]
        self.memory_chart.set_data([self.tr("per GPU")], {k: [mem["breakdown"][k] / GB] for k in MEMORY_KEYS},
                                   limits=[mem["capacity_bytes"] / GB], labels=memory_labels())
        steps = out["step_breakdown_ms"]
        self.step_chart.set_data([self.tr("per step")], {k: [v] for k, v in steps.items() if v > 0},
                                 labels=step_labels())
        self.served.emit(out)

    # ---- the SLO search ---------------------------------------------------------------------
    def run_search(self) -> None:
        machines = [parse_hw_key(k) for k in self.machines.checked_keys()]
        if not machines:
            self.search_status.setText(self.tr("Tick at least one machine"))
            return
        for f in (self.ttft_target, self.tpot_target):
            if f.error_text or f.value() is None:
                self.search_status.setText(f.error_text or self.tr("{name}: give a target").format(name=f.name))
                return
        self.run_button.setEnabled(False)
        self.search_status.setText(self.tr("Searching…"))
        self.search_slot.start(slo_task(self.doc.snapshot(), self.values(), machines, self.ttft_target.value(),
                                        self.tpot_target.value(), self.db, self.search_options.values()))

    def _show_search(self, res) -> None:
        self.search_result = res
        rows = []
        for i, p in enumerate(res.cheapest, 1):
            rows.append({"rank": i, "machine": p["machine"], "gpus": p["gpus"], "instances": p["instances"],
                         "idle_gpus": p["idle_gpus"], "price_basis": p["price_basis"],
                         "layout": f"{p['tp']}×{p['pp']}×{p['ep']}×{p['replicas']}",
                         "dtypes": f"{p['weights_dtype']} / {p['kv_dtype']}", "ttft_ms": p["ttft_ms"],
                         "tpot_ms": p["tpot_ms"], "e2e_ms": p["e2e_latency_ms"],
                         "per_gpu": p["output_tokens_per_s_per_gpu"], "per_user": p["tokens_per_s_per_user"],
                         "out_tps": p["output_tokens_per_s"], "rps": p["requests_per_s"],
                         "max_conc": p["max_concurrency"], "saturated": p["saturated"],
                         "usd_h": "" if p["usd_per_hour"] is None else p["usd_per_hour"],
                         "usd_per_m": "" if p["usd_per_million_output_tokens"] is None
                         else p["usd_per_million_output_tokens"]})
        self.table_model.set_rows(rows)
        self.table.fit_columns()
        if rows:
            self.table.selectRow(0)
        self.use_button.setEnabled(bool(rows))
        self._draw_search_chart()
        text = self.tr("{n:,} deployments scored in {s:.2f} s; {f:,} fit, {m:,} meet the targets").format(
            n=res.evaluated, s=res.elapsed_s, f=res.fitting, m=res.meeting)
        if not rows:
            text += "\n" + self.tr("No deployment meets TTFT ≤ {ttft:g} ms and TPOT ≤ {tpot:g} ms").format(
                ttft=self.ttft_target.value(), tpot=self.tpot_target.value())
            c = res.closest
            if c is not None:
                text += "\n" + self.tr("Closest: {machine}, {gpus} GPUs, TTFT {ttft}, TPOT {tpot:,.1f} ms").format(
                    machine=c["machine"], gpus=c["gpus"], ttft=_ms(c["ttft_ms"]), tpot=c["tpot_ms"])
        if res.notes:  # precisions or machines the engine cannot run, skipped (service/serving_search.py)
            text += "\n" + "\n".join(engine_text(n) for n in res.notes)
        self.search_status.setText(text)

    def _draw_search_chart(self) -> None:
        """The listed deployments, the Pareto front, and the selected row as a star."""
        res = self.search_result
        if res is None:
            return
        chosen = self.selected_deployment()
        self.pareto_chart.set_points([p["tokens_per_s_per_user"] for p in res.cheapest],
                                     [p["output_tokens_per_s_per_gpu"] for p in res.cheapest],
                                     [p["tokens_per_s_per_user"] for p in res.pareto],
                                     [p["output_tokens_per_s_per_gpu"] for p in res.pareto],
                                     (chosen["tokens_per_s_per_user"], chosen["output_tokens_per_s_per_gpu"])
                                     if chosen else None)

    def selected_deployment(self) -> dict | None:
        if not self.search_result or not self.search_result.cheapest:
            return None
        rows = self.table.selectionModel().selectedRows()
        return self.search_result.cheapest[rows[0].row() if rows else 0]

    def use_selected(self) -> None:
        """The selected row's machine, layout and precisions into the page's inputs (one recompute)."""
        p = self.selected_deployment()
        if p is None:
            return
        self._loading = True
        try:
            kind = "instance" if self.hardware.findData(hw_key("instance", p["machine"])) >= 0 else "gpu"
            self._set_hardware(hw_key(kind, p["machine"]))
            for k in ("tp", "pp", "ep", "replicas"):
                getattr(self, k).setValue(p[k])
            self.weights_dtype.set_value(p["weights_dtype"])
            self.kv_dtype.set_value(p["kv_dtype"])
        finally:
            self._loading = False
        self._edited()
