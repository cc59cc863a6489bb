"""Plan page: one plan's hardware and parallel layout; its memory against the GPU's
capacity, step time and where it goes, MFU, time to train, GPU-hours, cost, advice and the
assumptions. Recomputes on every edit (debounced) on a worker thread."""
from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGridLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QListWidget, QPushButton, QScrollArea, QSplitter, QVBoxLayout, QWidget)

from planner_app import units
from planner_app.core.setup import PP_SCHEDULES
from planner_app.ui.charts.bars import StackedBarChart
from planner_app.ui.fields import ChoiceField, IntField
from planner_app.ui.pages.hardware import hardware_choices, hw_key, parse_hw_key, plan_hardware
from planner_app.ui.workers import TaskSlot

# Edits are coalesced for this long before recomputing; with the ~20 ms estimate an edit shows
# its result within the 100 ms goal (benchmarks/gui_speed.py).
DEBOUNCE_MS = 60

# Legend names of the engine's breakdown keys (translated at display time).
BREAKDOWN_LABELS = {
    "parameters": QT_TRANSLATE_NOOP("Breakdown", "parameters"),
    "gradients": QT_TRANSLATE_NOOP("Breakdown", "gradients"),
    "optimizer_states": QT_TRANSLATE_NOOP("Breakdown", "optimizer states"),
    "master_weights": QT_TRANSLATE_NOOP("Breakdown", "master weights"),
    "activations": QT_TRANSLATE_NOOP("Breakdown", "activations"),
    "logits_and_loss": QT_TRANSLATE_NOOP("Breakdown", "logits and loss"),
    "autocast_weight_cache": QT_TRANSLATE_NOOP("Breakdown", "autocast weight cache"),
    "zero_gather_buffers": QT_TRANSLATE_NOOP("Breakdown", "ZeRO gather buffers"),
    "temporaries": QT_TRANSLATE_NOOP("Breakdown", "temporaries"),
    "optimizer_temporaries": QT_TRANSLATE_NOOP("Breakdown", "optimizer temporaries"),
    "other": QT_TRANSLATE_NOOP("Breakdown", "other"),
    "kv_cache": QT_TRANSLATE_NOOP("Breakdown", "KV cache"),
    "runtime overheads": QT_TRANSLATE_NOOP("Breakdown", "runtime overheads"),
    "compute": QT_TRANSLATE_NOOP("Breakdown", "compute"),
    "recompute": QT_TRANSLATE_NOOP("Breakdown", "recompute"),
    "tensor_parallel_comm": QT_TRANSLATE_NOOP("Breakdown", "tensor parallel comm"),
    "expert_parallel_comm": QT_TRANSLATE_NOOP("Breakdown", "expert parallel comm"),
    "context_parallel_comm": QT_TRANSLATE_NOOP("Breakdown", "context parallel comm"),
    "pipeline_p2p": QT_TRANSLATE_NOOP("Breakdown", "pipeline p2p"),
    "pipeline_bubble": QT_TRANSLATE_NOOP("Breakdown", "pipeline bubble"),
    "data_parallel_comm_exposed": QT_TRANSLATE_NOOP("Breakdown", "data parallel comm exposed"),
    "optimizer_step": QT_TRANSLATE_NOOP("Breakdown", "optimizer step"),
    "decode": QT_TRANSLATE_NOOP("Breakdown", "decode"),
    "prefill (per request)": QT_TRANSLATE_NOOP("Breakdown", "prefill (per request)"),
}


def breakdown_labels() -> dict:
    return {k: QCoreApplication.translate("Breakdown", v) for k, v in BREAKDOWN_LABELS.items()}


def estimate_task(options: dict, db):
    def run(progress, cancelled):
        from planner_app.cli_estimate import estimate_from_options
        return estimate_from_options(options, db)
    return run


class PlanPage(QWidget):
    estimated = Signal(object)  # the latest estimate shown
    estimate_failed = Signal(str)

    def __init__(self, doc, db, parent=None):
        super().__init__(parent)
        self.doc, self.db = doc, db
        self.index = 0
        self._loading = False
        self.last_estimate = None
        self.slot = TaskSlot(self)
        self.slot.succeeded.connect(self._show)
        self.slot.failed.connect(self._show_error)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self.recompute)

        split = QSplitter(Qt.Horizontal, self)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)

        # ---- inputs ----------------------------------------------------------------------
        left = QWidget()
        ll = QVBoxLayout(left)
        sel = QHBoxLayout()
        self.plan_combo = QComboBox()
        self.plan_combo.currentIndexChanged.connect(self._plan_selected)
        add = QPushButton(self.tr("Duplicate"))
        add.clicked.connect(self.duplicate_plan)
        rm = QPushButton(self.tr("Remove"))
        rm.clicked.connect(self.remove_plan)
        sel.addWidget(self.plan_combo, 1)
        sel.addWidget(add)
        sel.addWidget(rm)
        ll.addLayout(sel)
        box = QGroupBox(self.tr("Hardware and layout"))
        form = QFormLayout(box)
        self.name = QLineEdit()
        self.name.setMaxLength(80)
        self.hardware = QComboBox()
        self.hardware.setEditable(True)
        self.hardware.setInsertPolicy(QComboBox.NoInsert)
        self.hardware.setMaxVisibleItems(25)
        for kind, ident, label in hardware_choices(db):
            self.hardware.addItem(label, hw_key(kind, ident))
        self.hardware.completer().setFilterMode(Qt.MatchContains)
        self.hardware.completer().setCaseSensitivity(Qt.CaseInsensitive)
        self.gpus = IntField(0, 1_000_000, 0, special=self.tr("auto"))
        self.gpus_per_node = IntField(0, 64, 0, special=self.tr("auto"))
        self.axes = {a: IntField(1, 65536, 1) for a in ("tp", "pp", "cp", "ep")}
        self.zero = ChoiceField([(z, f"ZeRO-{z}" if z else self.tr("none")) for z in range(4)], 0)
        self.sp = QCheckBox(self.tr("sequence parallel"))
        self.schedule = ChoiceField([(s, s) for s in PP_SCHEDULES], "1f1b")
        fabrics = db.fabrics
        self.fabric = ChoiceField([(None, self.tr("default"))] +
                                  [(r["id"], r["name"]) for r in fabrics[fabrics.scope == "inter"].to_dict("records")])
        self.nics = IntField(0, 64, 0, special=self.tr("auto"))
        rows = ((self.tr("Name"), self.name), (self.tr("GPU or instance"), self.hardware), (self.tr("GPUs"), self.gpus),
                (self.tr("GPUs per node"), self.gpus_per_node), (self.tr("Tensor parallel"), self.axes["tp"]),
                (self.tr("Pipeline parallel"), self.axes["pp"]), (self.tr("Context parallel"), self.axes["cp"]),
                (self.tr("Expert parallel"), self.axes["ep"]), (self.tr("ZeRO stage"), self.zero), ("", self.sp),
                (self.tr("Pipeline schedule"), self.schedule), (self.tr("Network"), self.fabric),
                (self.tr("NICs per node"), self.nics))
        for label, w in rows:
            form.addRow(label, w)
        self.dp_label = QLabel()
        form.addRow(self.tr("Data parallel"), self.dp_label)
        ll.addWidget(box)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00; font-weight: bold;")
        ll.addWidget(self.error)
        ll.addStretch(1)
        split.addWidget(left)

        # ---- results ----------------------------------------------------------------------
        right = QWidget()
        rl = QVBoxLayout(right)
        self.verdict = QLabel()
        self.verdict.setStyleSheet("font-size: 16pt; font-weight: bold; padding: 6px;")
        self.verdict.setWordWrap(True)
        rl.addWidget(self.verdict)
        grid = QGridLayout()
        self.numbers = {}
        keys = (("memory", self.tr("Memory per GPU")), ("largest_mb", self.tr("Largest micro-batch")),
                ("step", self.tr("Step time")), ("tokens_s", self.tr("Tokens/s")), ("mfu", self.tr("MFU")),
                ("train", self.tr("Time to train")), ("gpu_hours", self.tr("GPU-hours")), ("cost", self.tr("Cost")))
        for i, (k, label) in enumerate(keys):
            title = QLabel(label)
            title.setStyleSheet("color: #555;")
            value = QLabel("–")
            value.setObjectName(f"result_{k}")
            value.setStyleSheet("font-size: 13pt; font-weight: bold;")
            value.setTextInteractionFlags(Qt.TextSelectableByMouse)
            grid.addWidget(title, (i // 4) * 2, i % 4)
            grid.addWidget(value, (i // 4) * 2 + 1, i % 4)
            self.numbers[k] = value
        rl.addLayout(grid)
        charts = QHBoxLayout()
        self.memory_chart = StackedBarChart(self.tr("Memory per GPU"), "GB")
        self.time_chart = StackedBarChart(self.tr("Step time"), "ms")
        charts.addWidget(self.memory_chart)
        charts.addWidget(self.time_chart)
        rl.addLayout(charts, 1)
        self.advice = QLabel()
        self.advice.setWordWrap(True)
        self.advice.setTextInteractionFlags(Qt.TextSelectableByMouse)
        rl.addWidget(self.advice)
        rl.addWidget(QLabel(self.tr("Assumptions")))
        self.assumptions = QListWidget()
        self.assumptions.setWordWrap(True)
        self.assumptions.setMaximumHeight(150)
        rl.addWidget(self.assumptions)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(right)
        split.addWidget(scroll)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([380, 1000])

        self.name.editingFinished.connect(self._edited)
        self.hardware.currentIndexChanged.connect(self._edited)
        for w in (self.gpus, self.gpus_per_node, self.nics, *self.axes.values()):
            w.valueChanged.connect(self._edited)
        for w in (self.zero, self.schedule, self.fabric):
            w.currentIndexChanged.connect(self._edited)
        self.sp.toggled.connect(self._edited)
        doc.changed.connect(self._doc_changed)
        self.load_from_doc()

    # ---- document -> widgets ---------------------------------------------------------------
    def _doc_changed(self, what):
        if what in ("all", "plans"):
            self.load_from_doc()
        self.schedule_recompute()

    def load_from_doc(self):
        self._loading = True
        try:
            plans = self.doc.data["plans"]
            self.index = min(self.index, len(plans) - 1)
            self.plan_combo.blockSignals(True)
            self.plan_combo.clear()
            for i, p in enumerate(plans):
                self.plan_combo.addItem(p.get("name") or self.tr("Plan {n}").format(n=i + 1))
            self.plan_combo.setCurrentIndex(self.index)
            self.plan_combo.blockSignals(False)
            p = plans[self.index]
            self.name.setText(p.get("name", ""))
            kind_id = plan_hardware(p)
            i = self.hardware.findData(hw_key(*kind_id))
            if i < 0 and kind_id[1]:
                try:  # a differently spelled GPU name: find its id
                    g = self.db.gpu(kind_id[1]) if kind_id[0] == "gpu" else None
                    i = self.hardware.findData(hw_key("gpu", g.id)) if g else -1
                except Exception:  # noqa: BLE001 - unknown: leave the field for the user
                    i = -1
            if i >= 0:
                self.hardware.setCurrentIndex(i)
            self.gpus.setValue(int(p.get("gpus") or 0))
            self.gpus_per_node.setValue(int(p.get("gpus_per_node") or 0))
            for a, f in self.axes.items():
                f.setValue(int(p.get(a) or 1))
            self.zero.set_value(int(p.get("zero") or 0))
            self.sp.setChecked(bool(p.get("sequence_parallel")))
            self.schedule.set_value(p.get("pp_schedule", "1f1b"))
            self.fabric.set_value(p.get("fabric"))
            self.nics.setValue(int(p.get("nics_per_node") or 0))
        finally:
            self._loading = False

    def show_plan(self, index: int):
        self.index = index
        self.load_from_doc()
        self.schedule_recompute()

    def _plan_selected(self, i):
        if i >= 0 and not self._loading:
            self.index = i
            self.doc.set_chosen(i)
            self.load_from_doc()
            self.schedule_recompute()

    def duplicate_plan(self):
        import copy
        p = copy.deepcopy(self.doc.data["plans"][self.index])
        p["name"] = (p.get("name") or "Plan") + self.tr(" (copy)")
        try:
            self.index = self.doc.add_plan(p)
        except ValueError as e:
            self.error.setText(str(e))

    def remove_plan(self):
        try:
            self.doc.remove_plan(self.index)
        except ValueError as e:
            self.error.setText(str(e))

    # ---- widgets -> document ----------------------------------------------------------------
    def _edited(self, *_):
        if self._loading:
            return
        data = self.hardware.currentData()
        if data is None:
            self.error.setText(self.tr("GPU or instance: choose one from the list"))
            return
        kind, ident = parse_hw_key(data)
        values = {"name": self.name.text().strip() or None, "gpu": ident if kind == "gpu" else None,
                  "instance": ident if kind == "instance" else None, "gpus": self.gpus.value_or_none(),
                  "gpus_per_node": self.gpus_per_node.value_or_none(),
                  "zero": self.zero.value() or None, "sequence_parallel": self.sp.isChecked() or None,
                  "pp_schedule": None if self.schedule.value() == "1f1b" else self.schedule.value(),
                  "fabric": self.fabric.value(), "nics_per_node": self.nics.value_or_none()}
        values.update({a: (f.value() if f.value() > 1 else None) for a, f in self.axes.items()})
        self.doc.update_plan(self.index, **values)

    # ---- compute ----------------------------------------------------------------------------
    def schedule_recompute(self):
        self.timer.start()

    def recompute(self):
        from planner_app import scenario
        opts = scenario.plan_options(self.doc.data, self.index)
        self.slot.start(estimate_task(opts, self.db))

    def _show_error(self, exc):
        self.error.setText(str(exc))
        self.verdict.setText(self.tr("No result: fix the input marked below"))
        self.verdict.setStyleSheet("font-size: 16pt; font-weight: bold; padding: 6px; color: #b00;")
        self.estimate_failed.emit(str(exc))

    def _show(self, est: dict):
        self.error.setText("")
        self.last_estimate = est
        m = est["memory"]
        gb = units.fmt_bytes
        fits = m["fits"]
        if fits:
            text = self.tr("FITS: {used} of {cap} per GPU ({head} free)").format(
                used=gb(m["device_bytes"]), cap=gb(m["capacity_bytes"]), head=gb(m["capacity_bytes"] - m["device_bytes"]))
        else:
            text = self.tr("DOES NOT FIT: needs {used} per GPU, the GPU has {cap}").format(
                used=gb(m["device_bytes"]), cap=gb(m["capacity_bytes"]))
        self.verdict.setText(text)
        self.verdict.setStyleSheet("font-size: 16pt; font-weight: bold; padding: 6px; border-radius: 4px; "
                                   + ("color: #0a5c2b; background: #e3f4e8;" if fits else
                                      "color: #8a1010; background: #fbe4e4;"))
        n = self.numbers
        n["memory"].setText(gb(m["device_bytes"]))
        n["largest_mb"].setText(str(m.get("largest_micro_batch", m.get("largest_batch", "–"))))
        t = est.get("time", {})
        c = est.get("cost", {})
        if est["mode"] == "training":
            p = est["parallel"]
            self.dp_label.setText(f"{p['dp']}  ({p['gpus']} GPUs = tp {p['tp']} × pp {p['pp']} × cp {p['cp']} × "
                                  f"ep {p['ep']} × dp {p['dp']})")
            n["step"].setText(units.fmt_seconds(t["step_s"]))
            n["tokens_s"].setText(f"{t['tokens_per_s']:,.0f}")
            n["mfu"].setText(f"{t['mfu'] * 100:.1f}%")
            n["train"].setText(self.tr("{d:.1f} days").format(d=t["train_days"]) if "train_days" in t else
                               self.tr("set Tokens"))
            n["gpu_hours"].setText(f"{c['gpu_hours']:,.0f}" if "gpu_hours" in c else "–")
            n["cost"].setText(self._cost_text(c))
            times = {k: [v * 1e3] for k, v in t["breakdown_s"].items() if v > 0}
            self.time_chart.set_title(self.tr("Step time"))
            self.time_chart.set_data([self.tr("this plan")], times, labels=breakdown_labels())
        else:
            self.dp_label.setText("1")
            n["step"].setText(self.tr("prefill {t}").format(t=units.fmt_seconds(t["prefill_s"])))
            n["tokens_s"].setText(f"{t['decode_tokens_per_s']:,.0f}")
            n["mfu"].setText(t.get("decode_bound", "–"))
            n["train"].setText(self.tr("{v:,.1f} per user").format(v=t["decode_tokens_per_s_per_user"]))
            n["gpu_hours"].setText("–")
            per_m = c.get("usd_per_million_tokens")
            n["cost"].setText(f"${per_m:,.3f} / M tokens" if per_m is not None else self.tr("no price"))
            self.time_chart.set_title(self.tr("Per-token decode time"))
            self.time_chart.set_data([self.tr("this plan")], {"decode": [t["decode_s_per_token"] * 1e3],
                                                              "prefill (per request)": [t["prefill_s"] * 1e3]},
                                     labels=breakdown_labels())
        comps = {k: [v / 1e9] for k, v in m["breakdown"].items() if v}
        overhead = m["device_bytes"] - m["peak_bytes"]
        if overhead > 0:
            comps["runtime overheads"] = [overhead / 1e9]
        self.memory_chart.set_data([self.tr("per GPU")], comps, limits=[m["capacity_bytes"] / 1e9],
                                   labels=breakdown_labels())
        from planner_app.i18n import engine_text  # engine sentences in the UI's language
        self.advice.setText((self.tr("Advice: ") + engine_text(est["advice"]["text"])) if est.get("advice") else "")
        self.assumptions.clear()
        self.assumptions.addItems([engine_text(a) for a in est.get("assumptions", [])])
        self.estimated.emit(est)

    def _cost_text(self, c: dict) -> str:
        if c.get("usd") is None:
            return self.tr("no price") if "gpu_hours" in c else "–"
        by = c.get("usd_by_price", {})
        parts = [f"${c['usd']:,.0f} " + self.tr("on-demand")]
        if by.get("reserved_1yr"):
            parts.append(f"${by['reserved_1yr']:,.0f} " + self.tr("1-yr"))
        if by.get("spot"):
            parts.append(f"${by['spot']:,.0f} " + self.tr("spot"))
        return "\n".join(parts)
