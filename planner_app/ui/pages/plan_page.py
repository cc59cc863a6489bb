"""Plan page: one plan's hardware and parallel layout; its memory against the GPU's
capacity, step time and where it goes, MFU, time to train, GPU-hours, cost, advice and the
assumptions. Recomputes on every edit (debounced) on a worker thread."""
from __future__ import annotations

import copy
import html

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGraphicsOpacityEffect,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from planner_app import scenario, units
from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION, memory_verdict
from planner_app.core.hardware.specs import NVML_CAPACITY_FACTOR
from planner_app.core.options import options_of
from planner_app.core.requests import InferenceRequest, TrainingRequest
from planner_app.i18n import engine_text  # engine sentences in the UI's language
from planner_app.service.estimate import run_estimate
from planner_app.service.pricing import price_source
from planner_app.ui.charts.bars import StackedBarChart
from planner_app.ui.fields import (
    ChoiceField,
    duration_text,
    option_label,
    price_basis_labels,
)
from planner_app.ui.machine_chooser import machine_combo
from planner_app.ui.option_form import OptionForm, settings_text
from planner_app.ui.pages.hardware import (
    hw_key,
    parse_hw_key,
    plan_hardware,
)
from planner_app.ui.pages.host_panel import HostPanel
from planner_app.ui.workers import TaskSlot

# Edits are coalesced for this long before recomputing; with the ~20 ms estimate an edit shows
# its result within the 100 ms goal (benchmarks/speed/gui_speed.py).
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
    "offload_transfer": QT_TRANSLATE_NOOP("Breakdown", "CPU offload transfers (PCIe)"),
    "optimizer_step": QT_TRANSLATE_NOOP("Breakdown", "optimizer step"),
    "prefill_ttft": QT_TRANSLATE_NOOP("Breakdown", "prefill (time to first token)"),
    "decode_all_tokens": QT_TRANSLATE_NOOP("Breakdown", "decode (every generated token)"),
}


# The eight result cells; their titles depend on the mode (PlanPage._set_titles).
RESULT_KEYS = ("memory", "largest_mb", "step", "tokens_s", "mfu", "train", "gpu_hours", "cost")
# Results that do not match the inputs for longer than this are greyed out (a recompute is
# usually back within ~80 ms, so quick edits do not flicker).
STALE_AFTER_MS = 250
VERDICT_STYLE = "font-size: 16pt; font-weight: bold; padding: 6px; "


def _lines_html(lines: list[str]) -> str:
    """One price a line; a line never breaks inside: no-break spaces and hyphens (Qt's label
    layout breaks at a hyphen even under white-space: nowrap)."""
    return "<br>".join(html.escape(x).replace(" ", "&nbsp;").replace("-", "\u2011") for x in lines)


def breakdown_labels() -> dict:
    return {k: QCoreApplication.translate("Breakdown", v) for k, v in BREAKDOWN_LABELS.items()}


def estimate_task(request, db):
    """The background task: the estimate of ``request``, as its JSON."""
    def run(progress, cancelled):
        return run_estimate(request, db).to_json()
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
        self.stale_timer = QTimer(self)
        self.stale_timer.setSingleShot(True)
        self.stale_timer.setInterval(STALE_AFTER_MS)
        self.stale_timer.timeout.connect(lambda: self._mark_stale(True))
        self.min_headroom_fraction = DEFAULT_MIN_HEADROOM_FRACTION  # the user's margin (Settings)

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
        self.hardware = machine_combo(db)
        # long plan names must not widen the input panel past what a laptop screen has
        self.plan_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.plan_combo.setMinimumContentsLength(18)
        # a row for every option of the plan's machine and layout (core/requests.py); the host side has
        # its own panel, dp shows what the GPU count leaves for it
        self.zero = _ZeroField(self.tr("none"))
        self.fabric = _FabricField(db, self.tr("default"))
        plan_opts = [o for o in options_of(TrainingRequest).values()
                     if o.scope == "plan" and o.group in ("machine", "layout", "network") and o.key != "dp"]
        self.layout_form = OptionForm(plan_opts, custom={"zero": self.zero, "fabric": self.fabric})
        self.zero.currentIndexChanged.connect(self.layout_form.edited)
        self.fabric.currentIndexChanged.connect(self.layout_form.edited)
        form.addRow(self.tr("Name"), self.name)
        form.addRow(self.tr("GPU or instance"), self.hardware)
        form.addRow(self.layout_form)
        self.dp_label = QLabel()
        self.dp_label.setWordWrap(True)
        form.addRow(option_label("dp"), self.dp_label)
        # a plan with its own workload settings (opened from Search) says so: they apply to it alone
        self.own_label = QLabel()
        self.own_label.setWordWrap(True)
        self.own_label.setStyleSheet("color: #7a4a00;")
        self.own_label.setVisible(False)
        form.addRow(self.own_label)
        self.form = form
        # the options a single inference batch takes (it runs on tp GPUs of one node)
        self.inference_keys = set(options_of(InferenceRequest))
        self._names_typed: set[int] = set()  # plans whose name the user typed (kept when the hardware changes)
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
        self.verdict.setStyleSheet(VERDICT_STYLE)
        self.verdict.setWordWrap(True)
        # what the GPU's "85.54 GB" is: the driver's total, not the datasheet's "80 GB" (that is 80 GiB)
        self.verdict.setToolTip(self.tr("GPU memory here is the GPU's total as the driver reports it (NVML, "
                                        "nvidia-smi), in GB of 10⁹ bytes: {factor} × the datasheet's size, which is "
                                        "in GiB (a datasheet's \"80 GB\" is {example:.2f} GB here; the Specs page "
                                        "shows both). A plan's memory includes the CUDA context.").format(
            factor=NVML_CAPACITY_FACTOR, example=80 * 2**30 * NVML_CAPACITY_FACTOR / 1e9))
        rl.addWidget(self.verdict)
        self.results = QWidget()  # the numbers and charts: greyed out while they do not match the inputs
        res_lay = QVBoxLayout(self.results)
        res_lay.setContentsMargins(0, 0, 0, 0)
        grid = QGridLayout()
        self.numbers, self.number_titles = {}, {}
        for i, k in enumerate(RESULT_KEYS):
            title = QLabel()
            title.setStyleSheet("color: #555;")
            title.setWordWrap(True)
            value = QLabel("–")
            value.setObjectName(f"result_{k}")
            value.setStyleSheet("font-size: 13pt; font-weight: bold;")
            value.setTextInteractionFlags(Qt.TextSelectableByMouse)
            if k == "cost":  # several prices, one per line (rich text), smaller
                value.setStyleSheet("font-size: 11pt; font-weight: bold;")
                value.setTextFormat(Qt.RichText)
            value.setWordWrap(True)
            grid.addWidget(title, (i // 4) * 2, i % 4)
            grid.addWidget(value, (i // 4) * 2 + 1, i % 4)
            self.numbers[k], self.number_titles[k] = value, title
        for c in range(4):
            grid.setColumnStretch(c, 1)
        res_lay.addLayout(grid)
        self._set_titles("training")
        charts = QHBoxLayout()
        self.memory_chart = StackedBarChart(self.tr("Memory per GPU"), "GB")
        self.time_chart = StackedBarChart(self.tr("Step time"), "ms")
        charts.addWidget(self.memory_chart)
        charts.addWidget(self.time_chart)
        res_lay.addLayout(charts, 1)

        self.host_panel = HostPanel()  # checkpoint, host RAM, input pipeline (issue 19)
        res_lay.addWidget(self.host_panel)
        self.advice = QLabel()
        self.advice.setWordWrap(True)
        self.advice.setTextInteractionFlags(Qt.TextSelectableByMouse)
        res_lay.addWidget(self.advice)
        res_lay.addWidget(QLabel(self.tr("Assumptions")))
        self.assumptions = QListWidget()
        self.assumptions.setWordWrap(True)
        self.assumptions.setMaximumHeight(150)
        res_lay.addWidget(self.assumptions)
        rl.addWidget(self.results, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # results wrap; they never scroll sideways
        scroll.setWidget(right)
        self._left = left
        self._fit_left_panel()
        split.addWidget(scroll)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([340, 1000])

        self.name.editingFinished.connect(self._edited)
        self.name.textEdited.connect(lambda _t: self._names_typed.add(self.index))
        self.hardware.currentIndexChanged.connect(self._hardware_changed)
        self.layout_form.edited.connect(self._edited)
        for f in self.host_panel.fields.values():
            f.value_changed.connect(self._edited)
        doc.changed.connect(self._doc_changed)
        self.load_from_doc()

    def field(self, key: str):
        """The input of option ``key`` (its row of the layout form)."""
        return self.layout_form.widget(key)

    # ---- document -> widgets ---------------------------------------------------------------
    def _doc_changed(self, what):
        if what == "serve":  # the Serve page's inputs: nothing of this page's estimate
            return
        if what == "all":
            self._names_typed.clear()
        if what in ("all", "plans"):
            self.load_from_doc()
        elif what == "workload":  # only the mode decides which layout fields show
            self._show_mode_fields(self.doc.data["workload"].get("mode", "training"))
        self.schedule_recompute()

    def _show_mode_fields(self, mode: str) -> None:
        for key in self.layout_form.fields:
            self.layout_form.set_row_visible(key, mode != "inference" or key in self.inference_keys)
        self.form.setRowVisible(self.dp_label, mode != "inference")
        # checkpoints, host RAM for offloaded states and the input pipeline belong to training runs
        self.host_panel.setVisible(mode != "inference")

    def load_from_doc(self):
        self._loading = True
        try:
            self._show_mode_fields(self.doc.data["workload"].get("mode", "training"))
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
                try:  # a differently spelled GPU name: find its id; an instance id sold in several
                    # regions: the row the engine uses (SpecDB.instance takes the first)
                    if kind_id[0] == "gpu":
                        g = self.db.gpu(kind_id[1])
                        i = self.hardware.findData(hw_key("gpu", g.id)) if g else -1
                    else:
                        x = self.db.instance(kind_id[1])
                        i = self.hardware.findData(hw_key("instance", f"{x.provider}:{x.region}:{x.instance_id}"))
                except Exception:  # noqa: BLE001 - unknown: leave the field for the user
                    i = -1
            if i >= 0:
                self.hardware.setCurrentIndex(i)
            self.layout_form.set_values(p)
            own = scenario.plan_own_settings(self.doc.data, self.index)
            self.own_label.setText(self.tr("This plan's own settings (the Workload page's apply to the other plans): "
                                           "{settings}").format(settings=settings_text(own, scenario.ESTIMATE_OPTIONS)))
            self.own_label.setVisible(bool(own))
            self.host_panel.load(p)
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
    def _hardware_changed(self, *_):
        """A new GPU or instance renames the plan after it, unless the user typed the name."""
        if not self._loading and self.index not in self._names_typed and self.hardware.currentData():
            self.name.setText(self.hardware.currentText().split(" (")[0].removeprefix("GPU "))
        self._edited()

    def _edited(self, *_):
        if self._loading:
            return
        data = self.hardware.currentData()
        if data is None:
            self.error.setText(self.tr("GPU or instance: choose one from the list"))
            return
        kind, ident = parse_hw_key(data)
        values = {"name": self.name.text().strip() or None, **self.layout_form.values(),
                  "gpu": ident if kind == "gpu" else None, "instance": ident if kind == "instance" else None}
        values.update(self.host_panel.option_values())
        self.doc.update_plan(self.index, **values)

    # ---- compute ----------------------------------------------------------------------------
    def schedule_recompute(self):
        self.timer.start()
        if self.last_estimate is not None and not self.stale_timer.isActive():
            self.stale_timer.start()

    def recompute(self):
        try:
            request = scenario.plan_request(self.doc.data, self.index)
        except (ValueError, KeyError, IndexError) as e:
            self._show_error(e)
            return
        self.slot.start(estimate_task(request, self.db))

    def set_min_headroom(self, fraction: float) -> None:
        """The user's memory margin (Settings); the verdict is redrawn at once."""
        self.min_headroom_fraction = fraction
        if self.last_estimate is not None:
            self._show(self.last_estimate)

    def _mark_stale(self, stale: bool) -> None:
        """Grey the numbers and charts out while they no longer match the inputs."""
        if stale:
            eff = QGraphicsOpacityEffect(self.results)
            eff.setOpacity(0.35)
            self.results.setGraphicsEffect(eff)
        else:
            self.results.setGraphicsEffect(None)
        self.stale = stale

    def _clear_results(self) -> None:
        """Nothing from an earlier estimate stays on screen."""
        self.last_estimate = None
        for v in self.numbers.values():
            v.setText("–")
        self.memory_chart.set_data([], {})
        self.time_chart.set_data([], {})
        self.advice.setText("")
        self.host_panel.set_estimate(None)
        self.assumptions.clear()
        self.dp_label.setText("–")

    def _show_error(self, exc):
        self.stale_timer.stop()
        self._mark_stale(False)
        self._clear_results()
        self.error.setText(str(exc))
        self.verdict.setText(self.tr("No result: fix the input marked below"))
        self.verdict.setStyleSheet(VERDICT_STYLE + "color: #b00;")
        self.estimate_failed.emit(str(exc))

    def _set_titles(self, mode: str) -> None:
        if mode == "inference":
            titles = (self.tr("Memory per GPU"), self.tr("Largest batch that fits"),
                      self.tr("Time to first token (prefill)"), self.tr("Generated tokens/s (all sequences)"),
                      self.tr("Time per output token (decode)"), self.tr("Tokens/s per sequence"),
                      self.tr("Request latency (prefill + decode)"), self.tr("Cost per million generated tokens"))
        else:
            titles = (self.tr("Memory per GPU"), self.tr("Largest micro-batch that fits"), self.tr("Step time"),
                      self.tr("Tokens/s"), self.tr("MFU"), self.tr("Time to train"), self.tr("GPU-hours"),
                      self.tr("Cost of the run"))
        for k, t in zip(RESULT_KEYS, titles):
            self.number_titles[k].setText(t)
        self._mode_shown = mode

    def _verdict_text(self, m: dict) -> tuple[str, str]:
        """(text, style) of the memory verdict at the user's margin."""
        gb = units.fmt_bytes
        cap, dev = m["capacity_bytes"], m["device_bytes"]
        head = cap - dev
        verdict = memory_verdict(dev, cap, self.min_headroom_fraction)
        pct = head / cap * 100
        if verdict == "fits":
            return (self.tr("FITS: {used} of {cap} per GPU, {head} free ({pct:.0f}%)").format(
                used=gb(dev), cap=gb(cap), head=gb(head), pct=pct), "color: #0a5c2b; background: #e3f4e8;")
        if verdict == "tight":
            return (self.tr("TIGHT: fits with only {head} free ({pct:.1f}%), below your {margin:g}% margin; "
                            "{used} of {cap} per GPU").format(head=gb(head), pct=pct,
                                                              margin=self.min_headroom_fraction * 100,
                                                              used=gb(dev), cap=gb(cap)),
                    "color: #7a4a00; background: #fff1d6;")
        return (self.tr("DOES NOT FIT: needs {used} per GPU, the GPU has {cap}").format(used=gb(dev), cap=gb(cap)),
                "color: #8a1010; background: #fbe4e4;")

    def _show(self, est: dict):
        self.stale_timer.stop()
        self._mark_stale(False)
        self.error.setText("")
        self.last_estimate = est
        m = est["memory"]
        text, style = self._verdict_text(m)
        self.verdict.setText(text)
        self.verdict.setStyleSheet(VERDICT_STYLE + "border-radius: 4px; " + style)
        self._set_titles(est["mode"])
        if est["mode"] == "training":
            self._show_training(est)
        else:
            self._show_inference(est)
        comps = {k: [v / 1e9] for k, v in m["breakdown"].items() if v}
        overhead = m["device_bytes"] - m["peak_bytes"]
        if overhead > 0:
            comps["runtime overheads"] = [overhead / 1e9]
        self.memory_chart.set_data([self.tr("per GPU")], comps, limits=[m["capacity_bytes"] / 1e9],
                                   labels=breakdown_labels())
        advice = [engine_text(est["advice"]["text"])] if est.get("advice") else []
        advice += [engine_text(a) for a in est.get("host", {}).get("advice", [])]
        self.advice.setText((self.tr("Advice: ") + " ".join(advice)) if advice else "")
        self.host_panel.set_estimate(est)
        self.assumptions.clear()
        self.assumptions.addItems([engine_text(a) for a in est.get("assumptions", [])])
        self.estimated.emit(est)

    # the input panel's widest, in average characters of the body font (400 px at 9 pt): it grows with
    # meeting mode's larger font instead of squeezing the machine box
    LEFT_PANEL_CHARS = 58

    def _fit_left_panel(self) -> None:
        self._left.setMaximumWidth(max(400, self.fontMetrics().averageCharWidth() * self.LEFT_PANEL_CHARS))

    def changeEvent(self, ev):  # noqa: N802 - Qt override
        if ev.type() == QEvent.FontChange and hasattr(self, "_left"):
            self._fit_left_panel()
        super().changeEvent(ev)

    def _show_training(self, est: dict) -> None:
        n, m, t, c = self.numbers, est["memory"], est.get("time", {}), est.get("cost", {})
        gb = units.fmt_bytes
        p = est["parallel"]
        self.dp_label.setText(self.tr("{dp}  ({gpus} GPUs = tp {tp} × pp {pp} × cp {cp} × ep {ep} × dp {dp})").format(
            **{k: p[k] for k in ("dp", "gpus", "tp", "pp", "cp", "ep")}))
        n["memory"].setText(gb(m["device_bytes"]))
        n["largest_mb"].setText(str(m.get("largest_micro_batch", "–")))
        # a plan that does not fit cannot run: its time and cost are what it would take if it fit
        hypothetical = "" if m["fits"] else "\n" + self.tr("(if it fit)")
        n["step"].setText(duration_text(t["step_s"]) + hypothetical)
        n["tokens_s"].setText(f"{t['tokens_per_s']:,.0f}" + hypothetical)
        n["mfu"].setText(f"{t['mfu'] * 100:.1f}%" + hypothetical)
        # the natural unit: a 2.6-minute LoRA job reads "2.6 min", not "0.0 days"
        n["train"].setText(duration_text(t["train_s"]) + hypothetical if "train_s" in t else
                           self.tr("set Tokens on the Workload page"))
        n["gpu_hours"].setText((f"{c['gpu_hours']:,.1f}" if c["gpu_hours"] < 100 else f"{c['gpu_hours']:,.0f}")
                               + hypothetical if "gpu_hours" in c else "–")
        n["cost"].setText(self._cost_text(c) + (f"<br>{self.tr('(if it fit)')}" if hypothetical and c.get("usd")
                                                else ""))
        # the chart's unit follows the step: ms below 100 s, seconds above (never 600,000 ms)
        scale, unit = (1e3, "ms") if t["step_s"] < 100 else (1.0, "s")
        times = {k: [v * scale] for k, v in t["breakdown_s"].items() if v > 0}
        self.time_chart.set_title(self.tr("Step time"))
        self.time_chart.set_unit(unit)
        self.time_chart.set_data([self.tr("this plan")], times, labels=breakdown_labels())

    def _show_inference(self, est: dict) -> None:
        n, m, t, c, st = self.numbers, est["memory"], est["time"], est.get("cost", {}), est["setup"]
        gb = units.fmt_bytes
        self.dp_label.setText("–")
        n["memory"].setText(gb(m["device_bytes"]))
        n["largest_mb"].setText(self.tr("{b:,} sequences").format(b=m["largest_batch"]) +
                                "\n" + self.tr("(of {p:,} + {g:,} tokens)").format(p=st["prompt_len"],
                                                                                   g=st["new_tokens"]))
        n["step"].setText(duration_text(t["prefill_s"]))
        n["tokens_s"].setText(self.tr("{v:,.0f} tokens/s").format(v=t["decode_tokens_per_s"]) + "\n" +
                              self.tr("{v:,.0f} per GPU").format(v=t["tokens_per_s_per_gpu"]))
        bound = {"memory": self.tr("memory-bound"), "compute": self.tr("compute-bound"),
                 "host": self.tr("host-bound (Python dispatch)")}.get(
            t.get("decode_bound"), t.get("decode_bound", ""))
        engine = t.get("serving_engine_decode_s_per_token")
        n["mfu"].setText(duration_text(t["decode_s_per_token"]) + "\n" + bound
                         + ("\n" + self.tr("vLLM: {t}").format(t=duration_text(engine)) if engine else ""))
        n["train"].setText(self.tr("{v:,.1f} tokens/s").format(v=t["decode_tokens_per_s_per_user"]))
        n["gpu_hours"].setText(duration_text(t["end_to_end_s"]))
        per_m = c.get("usd_per_million_tokens")
        if per_m is None:
            n["cost"].setText(self._no_price_text())
        else:
            kind = price_basis_labels()[c.get("usd_price_basis") or "on_demand"]
            n["cost"].setText(_lines_html([self.tr("${v:,.3f} {kind}").format(v=per_m, kind=kind),
                                           self.tr("(${h:,.2f} per hour)").format(h=c["usd_per_hour"])])
                              + self._price_html())
        # one request's latency: time to first token, then every generated token
        decode_s = t["end_to_end_s"] - t["prefill_s"]
        self.time_chart.set_title(self.tr("Latency of one request"))
        self.time_chart.set_unit("s")
        self.time_chart.set_data([self.tr("this plan")], {"prefill_ttft": [t["prefill_s"]],
                                                          "decode_all_tokens": [decode_s]},
                                 labels=breakdown_labels())

    def _price_source(self):
        """The plan's price currency, date and exchange rate (service/pricing.py); None for a bare GPU."""
        try:
            opts = scenario.plan_options(self.doc.data, self.index)
        except (ValueError, KeyError, IndexError):
            return None
        return price_source(self.db, opts.get("instance"), opts.get("cny_per_usd"))

    def _price_lines(self) -> list[str]:
        """Where the price comes from: currency and date, the rate of a converted CNY price, its age."""
        src = self._price_source()
        if src is None:
            return []
        date = src.date or "?"
        if src.converted:  # the default rate is a fixed planning figure, not a dated market rate
            how = self.tr("your rate") if src.rate_given else self.tr("default rate")
            lines = [self.tr("¥ CNY price of {date}").format(date=date),
                     self.tr("at {rate} CNY/USD ({how})").format(rate=f"{src.cny_per_usd:.2f}", how=how)]
        else:
            lines = [self.tr("$ USD price of {date}").format(date=date)]
        if src.stale():
            lines.append(self.tr("{days} days old: may be stale").format(days=src.age_days()))
        return lines

    def _price_html(self) -> str:
        """The price's provenance under the cost, in smaller plain text."""
        lines = self._price_lines()
        if not lines:
            return ""
        return '<br><span style="font-size: small; font-weight: normal">' + _lines_html(lines) + "</span>"

    def _no_price_text(self) -> str:
        if self._price_source() is not None:  # an instance, but its provider publishes no price
            return self.tr("the provider publishes no price for this instance")
        return self.tr("no price (choose a cloud instance)")

    def _cost_text(self, c: dict) -> str:
        """The run's cost at each price the instance has, each line named by its own kind (an
        instance with only a spot price shows "$X spot" and says it has no on-demand price)."""
        if c.get("usd") is None:
            return self._no_price_text() if "gpu_hours" in c else "–"
        by = c.get("usd_by_price", {})
        parts = [f"${v:,.0f} " + price_basis_labels()[k] for k, v in by.items() if v is not None]
        if by.get("on_demand") is None:
            parts.append(self.tr("no on-demand price"))
        return _lines_html(parts) + self._price_html()


class _ZeroField(ChoiceField):
    """The ZeRO stage as users name it: none, ZeRO-1, ZeRO-2, ZeRO-3."""

    def __init__(self, none: str):
        super().__init__([(z, f"ZeRO-{z}" if z else none) for z in range(4)], 0)


class _FabricField(ChoiceField):
    """The inter-node network: the default (the instance's, else InfiniBand NDR) or one of the spec
    database's networks."""

    def __init__(self, db, default: str):
        super().__init__([(None, default)] + [(r["id"], r["name"]) for r in db.records["fabrics"]
                                              if r["scope"] == "inter"])

    def set_value(self, v) -> None:
        i = self.findData(v) if v is not None else 0
        self.setCurrentIndex(max(i, 0))
