"""Probe page: the local GPUs (NVML inventory), live telemetry, microbenchmarks in a
cancellable subprocess with progress, results against the datasheet with verdicts, a
roofline with the measured points, calibration profiles and real-run validation."""
from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from planner_app.i18n import engine_text
from planner_app.probe import cluster, nvml
from planner_app.probe.calibration import profile_from_result
from planner_app.probe.runner import ProbeCancelled, ProbeRunner
from planner_app.probe.telemetry import Sampler
from planner_app.probe.verdicts import all_verdicts
from planner_app.service.validation import (
    compare_validation,
    estimate_case,
    match_gpu,
    model_gemm_shapes,
    parse_validate_args,
    record_validation,
    validation_case,
)
from planner_app.specdb.schema import SpecDataError
from planner_app.ui.charts.probe_charts import RooflineChart, TelemetryChart
from planner_app.ui.fields import ChoiceField, IntField
from planner_app.ui.models.table_model import Column, RowsTableModel
from planner_app.ui.tables import DataTable
from planner_app.ui.workers import TaskSlot

ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def gemm_intensity(r: dict) -> float:
    """FLOP per byte of an m x n x k GEMM reading A and B and writing C once."""
    e = ELEMENT_BYTES.get(r["dtype"], 2)
    return 2.0 * r["m"] * r["n"] * r["k"] / (e * (r["m"] * r["k"] + r["k"] * r["n"] + r["m"] * r["n"]))


class ProbePage(QWidget):
    calibration_chosen = Signal(str)

    def __init__(self, doc, db, userdb=None, sample_fn=None, parent=None):
        super().__init__(parent)
        self.doc, self.db, self.userdb = doc, db, userdb
        self.result = None
        self.gpu = None
        self.runner = None
        self.slot = TaskSlot(self)
        self.slot.progressed.connect(self._progress)
        self.slot.succeeded.connect(self._show_result)
        self.slot.failed.connect(self._failed)
        self.slot.finished.connect(self._idle)
        lay = QVBoxLayout(self)

        # ---- devices and telemetry ------------------------------------------------------------
        top = QHBoxLayout()
        inv_box = QGroupBox(self.tr("Devices"))
        il = QVBoxLayout(inv_box)
        self.nvml_status = QLabel()
        self.nvml_status.setWordWrap(True)
        il.addWidget(self.nvml_status)
        self.inv_model = RowsTableModel([
            Column("index", "#"), Column("name", self.tr("GPU")),
            Column("memory_total_bytes", self.tr("Memory"), "GiB", fmt=lambda v: f"{v / 2**30:,.0f}"),
            Column("sm_clock_mhz", self.tr("SM clock"), "MHz"), Column("power_w", self.tr("Power"), "W",
                                                                        fmt=lambda v: f"{v:,.0f}"),
            Column("temperature_c", self.tr("Temperature"), "°C"),
            Column("pcie_gen", "PCIe"), Column("throttle", self.tr("Throttling"))])
        inv = DataTable(fit=True)
        inv.setModel(self.inv_model)
        inv.verticalHeader().setVisible(False)
        inv.setMinimumHeight(60)  # one GPU row and the header; the benchmarks below need the height more
        il.addWidget(inv)
        top.addWidget(inv_box, 2)
        tel_box = QGroupBox(self.tr("Live telemetry"))
        self.tel_box = tel_box
        tl = QHBoxLayout(tel_box)
        self.util_chart = TelemetryChart(self.tr("Utilization"), "%", y_max=100.0)
        self.power_chart = TelemetryChart(self.tr("Power"), "W")
        self.mem_chart = TelemetryChart(self.tr("Memory used"), "GiB")
        for c in (self.util_chart, self.power_chart, self.mem_chart):
            tl.addWidget(c)
        top.addWidget(tel_box, 3)
        lay.addLayout(top, 2)

        # ---- benchmarks -----------------------------------------------------------------------
        mid = QHBoxLayout()
        bench_box = QGroupBox(self.tr("Microbenchmarks"))
        bl = QVBoxLayout(bench_box)
        row = QHBoxLayout()
        self.backend = ChoiceField([("auto", self.tr("auto")), ("torch", "PyTorch"), ("cupy", "CuPy"),
                                    ("numpy", self.tr("CPU (numpy)"))], "auto")
        self.quick = QCheckBox(self.tr("quick"))
        self.quick.setChecked(True)
        self.run_button = QPushButton(self.tr("Run benchmarks"))
        # not connect(self.run_benchmarks): clicked(bool) would land False in timeout_s (a 0 s limit)
        self.run_button.clicked.connect(lambda _checked=False: self.run_benchmarks())
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        for w in (QLabel(self.tr("Backend")), self.backend, self.quick, self.run_button, self.cancel_button):
            row.addWidget(w)
        row.addStretch(1)
        bl.addLayout(row)
        self.progress = QProgressBar()
        bl.addWidget(self.progress)
        self.status = QLabel()
        self.status.setWordWrap(True)
        bl.addWidget(self.status)
        self.res_model = RowsTableModel([
            Column("what", self.tr("Measurement")), Column("size", self.tr("Size")),
            Column("value", self.tr("Measured"), fmt=lambda v: f"{v:,.2f}"), Column("unit", self.tr("Unit"))])
        res = DataTable(fit=True)
        res.setModel(self.res_model)
        res.horizontalHeader().setStretchLastSection(True)
        res.verticalHeader().setVisible(False)
        res.verticalHeader().setDefaultSectionSize(22)
        res.setMinimumHeight(3 * 22 + 26)  # a laptop-height window still shows a few results
        bl.addWidget(res, 2)
        self.verdicts = QListWidget()
        self.verdicts.setWordWrap(True)
        self.verdicts.setMinimumHeight(40)
        self.verdicts.setMaximumHeight(110)
        bl.addWidget(self.verdicts)
        mid.addWidget(bench_box, 3)
        self.roofline = RooflineChart()
        mid.addWidget(self.roofline, 2)
        lay.addLayout(mid, 3)

        # ---- calibration and validation -------------------------------------------------------
        cal_box = QGroupBox(self.tr("Calibration profiles"))
        cl = QGridLayout(cal_box)
        self.profiles = QListWidget()
        self.profiles.setMaximumHeight(90)
        self.profiles.itemSelectionChanged.connect(self._update_use_button)
        cl.addWidget(self.profiles, 0, 0, 3, 1)
        self.profile_name = QLineEdit()
        self.profile_name.setPlaceholderText(self.tr("profile name"))
        self.profile_name.setMaxLength(60)
        self.save_button = QPushButton(self.tr("Save results as profile"))
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save_profile)
        self.use_button = QPushButton(self.tr("Use selected profile in this scenario"))
        self.use_button.clicked.connect(self.use_profile)
        self.use_button.setEnabled(False)
        self.validate_button = QPushButton(self.tr("Validate: train the workload model for a few steps"))
        self.validate_button.setEnabled(False)
        self.validate_button.clicked.connect(self.run_validation)
        cl.addWidget(self.profile_name, 0, 1)
        cl.addWidget(self.save_button, 0, 2)
        cl.addWidget(self.use_button, 1, 1, 1, 2)
        cl.addWidget(self.validate_button, 2, 1, 1, 2)
        bottom = QHBoxLayout()
        bottom.addWidget(cal_box, 1)
        bottom.addWidget(self._cluster_box(), 1)
        lay.addLayout(bottom)

        self.sampler = None
        self.sample_fn = sample_fn
        self.tel_timer = QTimer(self)
        self.tel_timer.setInterval(1000)
        self.tel_timer.timeout.connect(self.refresh_telemetry)
        self.refresh_inventory()
        self.refresh_profiles()

    # ---- cluster probe ------------------------------------------------------------------------
    def _cluster_box(self):
        box = QGroupBox(self.tr("Cluster probe (torch.distributed: NCCL on GPUs)"))
        g = QGridLayout(box)
        self.cl_nodes = IntField(1, 4096, 1)
        self.cl_gpus = IntField(1, 64, 8)
        self.cl_kind = ChoiceField([("torchrun", "torchrun"), ("slurm", self.tr("Slurm script"))], "torchrun")
        self.cl_text = QPlainTextEdit()
        self.cl_text.setReadOnly(True)
        self.cl_text.setMaximumHeight(90)
        write = QPushButton(self.tr("Write launch command"))
        write.clicked.connect(self.write_cluster_command)
        imp = QPushButton(self.tr("Import result file…"))
        imp.clicked.connect(self._import_dialog)
        self.cl_status = QLabel()
        self.cl_status.setWordWrap(True)
        g.addWidget(QLabel(self.tr("Nodes")), 0, 0)
        g.addWidget(self.cl_nodes, 0, 1)
        g.addWidget(QLabel(self.tr("GPUs per node")), 0, 2)
        g.addWidget(self.cl_gpus, 0, 3)
        g.addWidget(self.cl_kind, 0, 4)
        g.addWidget(write, 0, 5)
        g.addWidget(self.cl_text, 1, 0, 1, 6)
        g.addWidget(imp, 2, 0, 1, 2)
        g.addWidget(self.cl_status, 2, 2, 1, 4)
        return box

    def write_cluster_command(self) -> str:
        out = "gpu-planner-collectives.json"
        if self.cl_kind.value() == "slurm":
            text = cluster.slurm_script(self.cl_nodes.value(), self.cl_gpus.value(), out)
        else:
            text = cluster.torchrun_command(self.cl_nodes.value(), self.cl_gpus.value(), out)
            if self.cl_nodes.value() > 1:
                text += "\n# run on every node with MASTER_ADDR set to the first node's address"
        self.cl_text.setPlainText(text)
        return text

    def import_cluster_result(self, path: str, profile: str | None = None) -> list[dict]:
        """Read a collectives result, store it (and in ``profile`` when named), show verdicts."""
        try:
            data = cluster.read_result(path)
        except SpecDataError as e:
            self.cl_status.setText(str(e))
            return []
        env = data.get("environment", {})
        devices = env.get("devices") or []
        gpu = match_gpu(self.db, devices[0]) if devices else None
        inter = None
        try:
            inter = self.db.fabric("ib-ndr")
        except Exception:  # noqa: BLE001 - a trimmed user database: no network verdict
            pass
        verdicts = cluster.collective_verdicts(data, gpu, cluster.default_intra_fabric(self.db, gpu), inter)
        udb = self._udb()
        udb.add_collectives(profile or path, data)
        if profile:
            cluster.attach_to_profile(udb, profile, data, gpu)
            self.refresh_profiles()
        best = cluster.best_busbw(data)
        text = self.tr("{n} ranks on {nodes} node(s): best all-reduce bus bandwidth {bw:,.0f} GB/s").format(
            n=env.get("world_size", "?"), nodes=env.get("nodes", "?"), bw=best or 0)
        if verdicts:
            text += "\n" + verdicts[0]["text"]
        if profile:
            text += "\n" + self.tr("saved in profile {name}").format(name=profile)
        self.cl_status.setText(text)
        return verdicts

    def _import_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Import a cluster probe result"), "",
                                              self.tr("JSON files (*.json)"))
        if path:
            self.import_cluster_result(path, self.profile_name.text().strip() or None)

    # ---- devices ------------------------------------------------------------------------------
    def refresh_inventory(self):
        self._capacity = {}
        if self.sample_fn is not None:
            state_ok, gpus, message = True, [], self.tr("simulated devices (test)")
        else:
            state, inv = nvml.inventory()
            state_ok, message = state.available, engine_text(state.message)  # probe/ is Qt-free: translated here
            gpus = [g.to_dict() for g in inv]
        for g in gpus:
            g["throttle"] = ", ".join(g.get("throttle_reasons") or []) or self.tr("none")
        self.inv_model.set_rows(gpus)
        self.nvml_status.setText(message if not gpus else self.tr("{n} GPU(s) via NVML").format(n=len(gpus)))
        if state_ok and (gpus or self.sample_fn is not None):
            self.sampler = Sampler(indices=[g["index"] for g in gpus] or [0], hz=2.0, capacity=600,
                                   sample_fn=self.sample_fn)
            # the value axes reach the GPUs' power limit and memory (NVML's inventory), when known
            self._capacity = {
                "power_w": max((g.get("power_limit_w") or 0 for g in gpus), default=0) or None,
                "memory_gib": max(((g.get("memory_total_bytes") or 0) / 2**30 for g in gpus), default=0) or None}
        else:
            why = (self.tr("No GPU telemetry: NVML found no GPU") if state_ok
                   else self.tr("No GPU telemetry: NVML is unavailable (see Devices)"))
            for c in (self.util_chart, self.power_chart, self.mem_chart):
                c.set_empty(why)

    def showEvent(self, event):  # noqa: N802 - Qt override
        super().showEvent(event)
        if self.sampler is not None:
            self.sampler.start()
            self.tel_timer.start()

    def hideEvent(self, event):  # noqa: N802 - Qt override
        super().hideEvent(event)
        self.stop_telemetry()

    def stop_telemetry(self):
        self.tel_timer.stop()
        if self.sampler is not None:
            self.sampler.stop()

    def refresh_telemetry(self):
        if self.sampler is None:
            return
        samples = self.sampler.snapshot()
        now = time.monotonic()
        by = {}
        for s in samples:
            by.setdefault(s["gpu"], []).append(s)
        util, power, mem = {}, {}, {}
        for gi, ss in by.items():
            t = [max(0.0, now - s["t_s"]) for s in ss]  # seconds ago
            util[gi] = (t, [s.get("utilization_gpu_pct") or 0 for s in ss])
            power[gi] = (t, [s.get("power_w") or 0 for s in ss])
            mem[gi] = (t, [(s.get("memory_used_bytes") or 0) / 2**30 for s in ss])
        self.util_chart.set_series(util)
        self.power_chart.set_series(power, self._capacity.get("power_w"))
        self.mem_chart.set_series(mem, self._capacity.get("memory_gib"))

    # ---- benchmarks ---------------------------------------------------------------------------
    def run_benchmarks(self, *, timeout_s: float = 900.0):
        self.runner = ProbeRunner(timeout_s=timeout_s)
        runner = self.runner
        args = {"backend": self.backend.value(), "quick": self.quick.isChecked(), "model_shapes": self._model_shapes()}
        self._busy(True)
        self.status.setText(self.tr("Running…"))
        self.slot.start(lambda progress, cancelled: ("bench", runner.run("bench", args, progress=progress)),
                        on_cancel=runner.cancel)

    def _model_shapes(self) -> list:
        """The GEMM shapes of the Workload page's preset model at the validation settings (the
        probe measures them sustained, with its typical set); none for an imported model."""
        model_ref = self.doc.data.get("workload", {}).get("model")
        if not isinstance(model_ref, str):
            return []
        try:
            return model_gemm_shapes(self.db, model_ref, parse_validate_args(None))
        except Exception:  # noqa: BLE001 - an unknown model only loses its shapes; the typical set stays
            return []

    def cancel(self):
        self.slot.cancel()
        self.status.setText(self.tr("Cancelled"))

    def _busy(self, busy):
        self.run_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.validate_button.setEnabled(not busy and self.gpu is not None)
        if busy:
            self.progress.setValue(0)

    def _idle(self):
        self._busy(False)

    def _progress(self, frac, text):
        self.progress.setValue(int(frac * 100))
        self.status.setText(text)

    def _failed(self, e):
        if isinstance(e, ProbeCancelled):
            self.status.setText(self.tr("Cancelled"))
        else:
            self.status.setText(self.tr("Probe failed: {err}").format(err=e))

    def _show_result(self, out):
        kind, res = out
        if kind == "validate":
            self._show_validation(res)
            return
        self.result = res
        dev = res["device"]
        self.gpu = match_gpu(self.db, dev.get("name")) if dev.get("kind") != "cpu" else None
        best = max((r["tflops"] for r in res["gemm"]), default=0.0)
        scale, unit = (1.0, "TFLOP/s") if best >= 1.0 else (1e3, "GFLOP/s")  # CPUs: GFLOP/s reads better
        rows = [{"what": f"{r['dtype']} GEMM", "size": f"{r['m']}×{r['n']}×{r['k']}", "value": r["tflops"] * scale,
                 "unit": unit} for r in res["gemm"]]
        rows += [{"what": b["kind"], "size": f"{b.get('bytes', 0) / 2**20:,.0f} MiB" if b.get("bytes") else "",
                  "value": b["gbps"], "unit": "GB/s"} for b in res["bandwidth"]]
        if res.get("dispatch"):  # the host's cost per eager op (calibrates launch_s)
            rows.append({"what": self.tr("eager dispatch (host)"), "size": "",
                         "value": res["dispatch"]["us_per_op"], "unit": self.tr("us per op")})
        self.res_model.set_rows(rows)
        self._show_verdicts(res)
        copy = next((b["gbps"] for b in res["bandwidth"] if b["kind"] == "copy"), None)
        peak = self.gpu.bf16_tflops if self.gpu else None
        bw = self.gpu.mem_bw_gb_s if self.gpu else None
        self.roofline.set_data(peak, bw, [(gemm_intensity(r), r["tflops"]) for r in res["gemm"]], best, copy)
        self.status.setText(self.tr("{dev} with {backend}: best GEMM {t:,.1f} {unit}").format(
            dev=dev.get("name", "?"), backend=res["backend"], t=(best or 0) * scale, unit=unit))
        self.save_button.setEnabled(self.gpu is not None)
        self.validate_button.setEnabled(self.gpu is not None)
        if self.gpu is None:
            self.save_button.setToolTip(self.tr("Profiles calibrate GPU estimates: run on a GPU from the spec database"))

    # a check mark only where a measurement met its datasheet reference; a warning where it fell short
    # (or above it); a grey dash where nothing was compared, saying why
    VERDICT_LOOK = {"passed": ("✔", "#1a7f37"), "warning": ("⚠", "#b35900"), "not_compared": ("–", "#666666")}

    def _not_compared_reason(self, res: dict, dtype: str | None = None) -> str:
        dev = res.get("device") or {}
        if dev.get("kind") == "cpu":
            return self.tr("a CPU run ({backend} backend) has no datasheet to compare with").format(
                backend=res.get("backend", "numpy"))
        if self.gpu is None:
            return self.tr("{device} is not in the spec database").format(device=dev.get("name") or "?")
        if dtype:
            return self.tr("the datasheet has no {dtype} figure").format(dtype=dtype)
        return self.tr("no datasheet figure for this measurement")

    def _add_verdict(self, kind: str, text: str, tip: str = "") -> None:
        mark, color = self.VERDICT_LOOK[kind]
        item = QListWidgetItem(f"{mark} {text}")
        item.setData(Qt.UserRole, kind)
        item.setForeground(QColor(color))
        item.setToolTip(tip or text)
        self.verdicts.addItem(item)

    def _show_verdicts(self, res: dict) -> None:
        """Each verdict marked by what it is: passed against the datasheet, a warning, or not compared
        (with the reason); measurements no verdict covers are listed as not compared too."""
        self.verdicts.clear()
        covered = set()
        for v in all_verdicts(res, self.gpu, []):
            covered.add(v.get("what"))
            compared = v.get("datasheet") is not None
            if v["status"] == "normal" and compared:
                self._add_verdict("passed", v["text"], self.tr("Measured against the datasheet: normal"))
            elif v["status"] in ("low", "check", "warning"):
                self._add_verdict("warning", v["text"])
            elif v.get("what", "").endswith("GEMM") and v.get("measured") is not None:
                t = v["measured"]
                rate = f"{t:,.0f} TFLOP/s" if t >= 1 else f"{t * 1e3:,.0f} GFLOP/s"
                reason = self._not_compared_reason(res, v["what"].split()[0])
                self._add_verdict("not_compared", self.tr("{what} {rate}: not compared — {reason}").format(
                    what=v["what"], rate=rate, reason=reason), reason)
            else:
                self._add_verdict("not_compared", v["text"])
        for b in res.get("bandwidth", []):
            if b["kind"] in covered or (b["kind"] == "copy" and "device copy" in covered):
                continue
            reason = self._not_compared_reason(res)
            self._add_verdict("not_compared", self.tr("{what} {bw:,.1f} GB/s: not compared — {reason}").format(
                what=b["kind"].replace("_", " "), bw=b["gbps"], reason=reason), reason)

    def verdict_kinds(self) -> list[tuple[str, str]]:
        """(kind, text) of each verdict line shown: kind is passed, warning or not_compared."""
        return [(self.verdicts.item(i).data(Qt.UserRole), self.verdicts.item(i).text())
                for i in range(self.verdicts.count())]

    # ---- profiles -----------------------------------------------------------------------------
    def _udb(self):
        if self.userdb is None:
            from planner_app.specdb.userdb import UserDB  # lazy: sqlite3 is optional (a Python built without it)
            self.userdb = UserDB.open_default()
        return self.userdb

    def refresh_profiles(self):
        self.profiles.clear()
        try:
            for p in self._udb().profiles():
                item = QListWidgetItem(f"{p['name']}  —  {p.get('device') or '?'}  {p['created'][:10]}")
                item.setData(Qt.UserRole, p["name"])
                self.profiles.addItem(item)
        except Exception as e:  # noqa: BLE001 - a damaged user database is reported, not fatal
            self.profiles.addItem(self.tr("user database unavailable: {err}").format(err=e))
        self._update_use_button()

    def _selected_profile(self) -> str | None:
        """The name of the selected profile (None: no profile selected, or the line is not a profile)."""
        items = self.profiles.selectedItems()
        return items[0].data(Qt.UserRole) if items else None

    def _update_use_button(self) -> None:
        name = self._selected_profile()
        has_profiles = any(self.profiles.item(i).data(Qt.UserRole) for i in range(self.profiles.count()))
        self.use_button.setEnabled(name is not None)
        if name is not None:
            tip = self.tr("Calibrate this scenario's estimates with profile {name}").format(name=name)
        elif has_profiles:
            tip = self.tr("Select a profile in the list first")
        else:
            tip = self.tr("No calibration profiles yet: run the benchmarks on a GPU and save the results as a "
                          "profile")
        self.use_button.setToolTip(tip)

    def save_profile(self):
        name = self.profile_name.text().strip()
        if not name:
            self.status.setText(self.tr("Profile name: type a name first"))
            return
        if self.result is None or self.gpu is None:
            return
        self._udb().save_profile(name, {"bench": self.result}, gpu_id=self.gpu.id,
                                 device=self.result["device"].get("name"))
        self.refresh_profiles()
        self.status.setText(self.tr("Saved profile {name}").format(name=name))

    def use_profile(self):
        name = self._selected_profile()
        if name is None:
            self.status.setText(self.tr("Select a profile first"))
            return
        self.doc.update_meta(calibration=name)
        self.calibration_chosen.emit(name)

    # ---- validation ---------------------------------------------------------------------------
    def run_validation(self):
        if self.gpu is None:
            return
        model_ref = self.doc.data["workload"].get("model")
        if not isinstance(model_ref, str):
            self.status.setText(self.tr("Validation runs preset models; choose a preset on the Workload page"))
            return
        settings = parse_validate_args(None)
        try:
            model, wargs, est = validation_case(self.db, model_ref, settings, self.gpu)
            self._validation_case = (model, settings)
        except Exception as e:  # noqa: BLE001 - shown inline
            self.status.setText(str(e))
            return
        self.runner = ProbeRunner(timeout_s=1800)
        runner = self.runner
        self._busy(True)
        self._validation_estimate = est
        self.slot.start(lambda progress, cancelled: ("validate", runner.run("validate", wargs, progress=progress)),
                        on_cancel=runner.cancel)

    def _show_validation(self, measured):
        est_cal = None
        if self.result is not None and self.gpu is not None and getattr(self, "_validation_case", None):
            model, settings = self._validation_case
            try:
                est_cal = estimate_case(model, settings, self.gpu, profile_from_result("probe", self.result,
                                                                                       self.gpu).efficiency)
            except Exception:  # noqa: BLE001 - the line then shows the uncalibrated gap alone
                est_cal = None
        v = compare_validation(measured, getattr(self, "_validation_estimate", None), est_cal)
        if v.get("estimate") and getattr(self, "_validation_case", None):
            model, settings = self._validation_case
            try:  # profiles of this GPU are checked against it (probe/calibration.py guard_profile)
                record_validation(self._udb(), self.gpu, model, self.doc.data["workload"].get("model"), settings,
                                  measured, v)
            except Exception:  # noqa: BLE001 - an unwritable user database loses the record, not the result
                pass
        gap = v.get("peak_gap")
        step = v.get("step_gap")
        cal = v.get("step_gap_calibrated")
        self.status.setText(self.tr("Validation: peak memory {p}, step time {s} against the estimate without a "
                                    "profile, {c} with this probe's profile").format(
            p="–" if gap is None else f"{gap:+.1%}", s="–" if step is None else f"{step:+.1%}",
            c="–" if cal is None else f"{cal:+.1%}"))
