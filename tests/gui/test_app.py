"""The desktop app driven as a user would: typing values and watching results change,
importing a config, opening and saving scenarios, comparing instances, the CPU probe with
cancel, the search opening its best plan, junk typed into every field."""
import gc
import json
import os
import subprocess
import sys

import pytest
from gui_helpers import plan_shows_search_row  # tests/gui is on sys.path (pytest prepends a test file's folder)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLineEdit, QMessageBox

from planner_app import scenario
from planner_app.service.estimate import estimate_json

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLES = os.path.join(ROOT, "examples")
HF = os.path.join(ROOT, "tests", "data", "hf_configs")


def _set_spin(qtbot, spin, value):
    spin.selectAll()
    qtbot.keyClicks(spin, str(value))
    qtbot.keyClick(spin, Qt.Key_Return)


def test_smoke_test_command_exits_cleanly(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PLANNER_USER_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "planner_app", "gui", "--smoke-test"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "8 pages visited" in r.stdout and "OK" in r.stdout
    assert "Fatal" not in r.stderr  # no abort at interpreter exit


def test_widget_teardown_keeps_bool_refcounts(qtbot):
    """PySide6 6.12.0 lost references to True on each pyqtgraph widget destroyed, and Python
    3.11 aborted at exit; the pinned version must not."""
    import pyqtgraph as pg
    gc.collect()
    before = sys.getrefcount(True)
    for _ in range(3):
        widgets = [pg.PlotWidget() for _ in range(5)]
        del widgets
        gc.collect()
    assert sys.getrefcount(True) >= before - 5


def test_typing_a_layout_changes_the_results(window, qtbot):
    page = window.plan_page
    window.nav.setCurrentRow(1)
    first = page.last_estimate
    assert first["parallel"]["tp"] == 8 and first["parallel"]["gpus"] == 512
    with qtbot.waitSignal(page.estimated, timeout=10000) as sig:
        _set_spin(qtbot, page.field("pp"), 8)
    est = sig.args[0]
    assert est["parallel"]["pp"] == 8 and est["parallel"]["dp"] == 8
    # the page shows what the CLI would print for the same options
    opts = scenario.plan_options(window.doc.data, page.index)
    assert opts["pp"] == 8
    cli = estimate_json(opts, window.db)
    assert est["memory"]["device_bytes"] == cli["memory"]["device_bytes"]
    assert page.numbers["step"].text() != "–" and "FITS" in page.verdict.text()
    assert est["memory"]["breakdown"]["parameters"] < first["memory"]["breakdown"]["parameters"]
    # a plan that cannot fit says so
    page.field("sequence_parallel").setChecked(False)  # sequence parallelism needs tensor parallelism
    _set_spin(qtbot, page.field("pp"), 1)
    with qtbot.waitSignal(page.estimated, timeout=10000) as sig:
        _set_spin(qtbot, page.field("tp"), 1)
    assert not sig.args[0]["memory"]["fits"] and "DOES NOT FIT" in page.verdict.text()


def test_bad_layout_is_reported_at_the_page(window, qtbot):
    page = window.plan_page
    with qtbot.waitSignal(page.estimate_failed, timeout=10000) as sig:
        _set_spin(qtbot, page.field("tp"), 3)  # 64 heads are not divisible by 3
    assert "tp" in sig.args[0] or "head" in sig.args[0]
    assert page.error.text() and "No result" in page.verdict.text()


def test_importing_a_config_json(window, qtbot):
    wp = window.workload_page
    with qtbot.waitSignal(window.plan_page.estimated, timeout=10000) as sig:
        assert wp.import_config(os.path.join(HF, "llama-2-7b.json"))
    assert sig.args[0]["params"]["total"] == 6_738_415_616
    assert "6.74 B" in wp.model_summary.text()
    assert isinstance(window.doc.data["workload"]["model"], dict)  # embedded: the scenario stands alone
    assert not wp.import_config(os.path.join(ROOT, "README.md"))
    assert "cannot import" in wp.error.text()


def test_editing_dimensions_changes_the_model(window, qtbot):
    wp = window.workload_page
    with qtbot.waitSignal(window.plan_page.estimated, timeout=10000) as sig:
        _set_spin(qtbot, wp.dims["layers"], 40)
    assert sig.args[0]["params"]["total"] < 40e9
    assert window.doc.data["workload"]["model"]["name"] == "llama-2-70b (edited)"


def test_scenario_round_trip_is_exact(window, qtbot, tmp_path, monkeypatch):
    src = os.path.join(EXAMPLES, "finetune-8b-one-node.json")
    assert window.open_path(src)
    with open(src) as f:
        original = scenario.migrate(json.load(f))
    assert window.doc.data == original and not window.doc.dirty
    window.plan_page.show_plan(0)
    _set_spin(qtbot, window.plan_page.field("gpus"), 16)
    qtbot.waitUntil(lambda: window.doc.dirty, timeout=5000)
    # an example opens as an untitled copy: Save never overwrites the shipped file
    assert window.windowTitle().startswith("finetune-8b-one-node.json (example copy) *")
    assert window.doc.path == ""
    out = tmp_path / "mine.json"
    assert window._save_to(str(out))
    assert not window.doc.dirty
    saved = window.doc.snapshot()
    assert window.open_path(str(out))
    assert window.doc.data == saved and window.doc.data["plans"][0]["gpus"] == 16
    # settings remember it as a recent file
    assert window.settings.get("recent_files")[0] == os.path.abspath(str(out))
    # a newer schema is refused and the open scenario is untouched
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**saved, "schema_version": 99}))
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.Ok)
    assert not window.open_path(str(newer))
    assert window.doc.data == saved


def test_unsaved_changes_are_not_discarded_silently(window, qtbot, monkeypatch):
    _set_spin(qtbot, window.plan_page.field("gpus"), 256)
    qtbot.waitUntil(lambda: window.doc.dirty, timeout=5000)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Cancel)
    window.new_file()
    assert window.doc.dirty and window.doc.data["plans"][0]["gpus"] == 256
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    window.new_file()
    assert not window.doc.dirty and window.doc.data["plans"][0]["gpus"] == 8


def test_autosave_and_restore(window, qtbot):
    from planner_app.ui.document import autosave_path, clear_autosave, pending_autosave
    _set_spin(qtbot, window.plan_page.field("gpus"), 128)
    qtbot.waitUntil(lambda: window.doc.dirty, timeout=5000)
    path = window.doc.autosave()
    assert path == autosave_path() and os.path.exists(path)
    restored = pending_autosave()
    assert restored["plans"][0]["gpus"] == 128
    clear_autosave()
    assert pending_autosave() is None


def test_compare_three_instances(window, qtbot):
    window.doc.load_data(scenario.new_scenario(model="llama-3.1-8b"), dirty=False)
    window.doc.set_plans([{"name": "base", "gpu": "h100-sxm", "gpus": 8, "zero": 3}])
    window.doc.update_workload(tokens=1e10, seq_len=4096)
    window.nav.setCurrentRow(2)
    cp = window.compare_page
    cp.add_machines([("instance", "p5.48xlarge"), ("instance", "p4de.24xlarge"),
                     ("instance", "Standard_ND96isr_H100_v5")])
    qtbot.waitUntil(lambda: len(cp.results) == 4 and cp.model.columnCount() == 5, timeout=15000)
    names = [r["name"] for r in cp.results]
    assert names[1:] == ["p5.48xlarge", "p4de.24xlarge", "Standard_ND96isr_H100_v5"]
    rows = {r["metric"]: r for r in cp.model.rows}
    days = rows["Time to train (days)"]
    est = estimate_json(scenario.plan_options(window.doc.data, 2), window.db)
    assert days["p2"] == pytest.approx(est["time"]["train_days"])
    # the best time among fitting plans is bold
    i = list(rows).index("Time to train (days)")
    fits = [j for j, r in enumerate(cp.results) if r["estimate"]["memory"]["fits"]]
    best = min(fits, key=lambda j: days[f"p{j}"])
    assert (i, best + 1) in cp.model.bold_cells
    assert len(cp.time_chart.values) == 4


def test_cpu_probe_runs_and_cancels(window, qtbot):
    pp = window.probe_page
    window.nav.setCurrentRow(6)
    pp.backend.set_value("numpy")
    pp.quick.setChecked(True)
    # the real button: its clicked(bool) once landed in timeout_s ("did not finish within 0 s")
    with qtbot.waitSignal(pp.slot.succeeded, timeout=120000):
        qtbot.mouseClick(pp.run_button, Qt.LeftButton)
    assert pp.result["backend"] == "numpy"
    assert pp.res_model.rowCount() >= 4 and pp.verdicts.count() >= 1
    assert "GFLOP/s" in pp.status.text()
    # telemetry from the stand-in sampler reaches the charts
    qtbot.waitUntil(lambda: bool(pp.sampler.snapshot()), timeout=5000)
    pp.refresh_telemetry()
    # run again and cancel: the subprocess is killed, the page says so and can run again
    qtbot.mouseClick(pp.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: pp.runner._proc is not None, timeout=10000)
    proc = pp.runner._proc
    qtbot.mouseClick(pp.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=10000)
    assert pp.status.text() == "Cancelled" and pp.run_button.isEnabled()


def _search_by_clicking(sp, qtbot, basis=None):
    from PySide6.QtWidgets import QApplication
    if basis is not None:
        sp.price_basis.set_value(basis)
    with qtbot.waitSignal(sp.slot.succeeded, timeout=60000):
        qtbot.mouseClick(sp.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: sp.run_button.isEnabled(), timeout=10000)
    QApplication.processEvents()


def _header(model, text):
    heads = [model.headerData(i, Qt.Horizontal) for i in range(model.columnCount())]
    return next(i for i, h in enumerate(heads) if text in h), heads


def test_search_labels_its_price_basis_copies_and_opens_the_exact_plan(window, qtbot):
    """The cost column and chart say the price basis; the row's estimate command reaches the
    clipboard; Open in Plan gives the Plan page the row's numbers exactly."""
    import shlex

    from gui_helpers import cli_json
    from PySide6.QtWidgets import QApplication
    sp = window.search_page
    window.nav.setCurrentRow(4)
    _search_by_clicking(sp, qtbot)
    assert sp.model.rowCount() > 0 and sp.result.evaluated > 1000
    assert sp.result.price_basis == "on_demand"
    col, heads = _header(sp.model, "Cost (USD, on-demand)")
    assert any("Sequence parallel" in h for h in heads) and any("Pipeline schedule" in h for h in heads)
    assert sp.chart.axis_label("left") == "cost (USD, on-demand)"
    # machine names in full: the machine column is as wide as its longest name
    names = [sp.model.index(r, 1).data() for r in range(sp.model.rowCount())]
    assert "Standard_ND96isr_H100_v5" in names or max(map(len, names)) >= len("p5.48xlarge")
    fm = sp.table.fontMetrics()
    assert sp.table.columnWidth(1) >= max(fm.horizontalAdvance(n) for n in names)
    # a row with a pipeline (its schedule and vp must travel too)
    row = next(i for i, p in enumerate(sp.result.plans) if p["parallel"]["pp"] > 1)
    sp.table.selectRow(row)
    best = sp.result.plans[row]
    qtbot.mouseClick(sp.copy_button, Qt.LeftButton)
    cmd = QApplication.clipboard().text()
    assert cmd == best["estimate_command"] and cmd.startswith("gpu-planner estimate ")
    cli = cli_json(shlex.split(cmd)[1:])
    assert cli["memory"]["peak_bytes"] == pytest.approx(best["memory"]["peak_bytes"], rel=1e-6)
    # Open in Plan: the Plan page estimates the same plan
    n_before = len(window.doc.data["plans"])
    qtbot.mouseClick(sp.open_button, Qt.LeftButton)
    assert len(window.doc.data["plans"]) == n_before + 1 and window.nav.currentRow() == 1
    page = window.plan_page

    qtbot.waitUntil(lambda: plan_shows_search_row(page, best), timeout=15000)
    est = page.last_estimate
    for k in ("tp", "pp", "dp", "cp", "ep", "zero", "sequence_parallel", "pp_schedule", "vp", "gpus"):
        assert est["parallel"][k] == best["parallel"][k], k
    assert est["setup"]["micro_batch"] == best["micro_batch"] and est["setup"]["recompute"] == best["recompute"]
    assert est["memory"]["peak_bytes"] == pytest.approx(best["memory"]["peak_bytes"], rel=1e-6)
    assert est["memory"]["device_bytes"] == pytest.approx(best["memory"]["device_bytes"], rel=1e-6)
    assert est["time"]["step_s"] == pytest.approx(best["time"]["step_s"], rel=1e-6)
    assert est["time"]["train_days"] == pytest.approx(best["time"]["train_days"], rel=1e-6)
    assert est["cost"]["usd_by_price"]["on_demand"] == pytest.approx(best["cost"]["usd"], rel=1e-6)


def test_search_at_another_basis_and_without_prices(window, qtbot):
    from planner_app.ui.pages.hardware import hw_key
    sp = window.search_page
    window.nav.setCurrentRow(4)
    _search_by_clicking(sp, qtbot, "reserved_1yr")
    assert sp.result.price_basis == "reserved_1yr"
    _header(sp.model, "Cost (USD, 1-year reserved)")
    assert sp.chart.axis_label("left") == "cost (USD, 1-year reserved)"
    assert len(sp.chart._all.data) == sum(p["cost"]["usd"] is not None for p in sp.result.plans) > 0
    # readable tick labels on the USD axis, never 4e+06
    from planner_app.ui.charts.base import readable_ticks
    assert readable_ticks([4e6, 4.5e6], 5e5) == ["4,000,000", "4,500,000"]
    assert readable_ticks([0.5, 1.0], 0.5) == ["0.5", "1.0"]
    axis = sp.chart.plot.getAxis("left")
    lo, hi = sp.chart.plot.viewRange()[1]
    ticks = [v for spacing, vals in axis.tickValues(lo, hi, 300) for v in vals]
    labels = axis.tickStrings(ticks, 1.0, max(abs(hi - lo) / 5, 1))
    assert labels and not any("e+" in t or "e-" in t for t in labels)
    assert any("," in t for t in labels) or max(ticks) < 1000
    # a3-megagpu-8g has no 1-year price: every row says so and the chart draws GPU-hours, so labelled
    only(sp, hw_key("instance", "a3-megagpu-8g"))
    _search_by_clicking(sp, qtbot)
    col, _ = _header(sp.model, "Cost (USD, 1-year reserved)")
    assert sp.result.plans and all(p["cost"]["usd"] is None for p in sp.result.plans)
    assert {sp.model.index(i, col).data() for i in range(sp.model.rowCount())} == {"no price at 1-year reserved"}
    assert sp.result.pareto_y == "gpu_hours" and sp.chart.axis_label("left") == "GPU-hours"
    assert len(sp.chart._all.data) == len(sp.result.plans)
    # GPUs alone have no price either
    only(sp, hw_key("gpu", "h100-sxm"))
    _search_by_clicking(sp, qtbot, "on_demand")
    assert sp.result.pareto_y == "gpu_hours" and sp.chart.axis_label("left") == "GPU-hours"


def only(sp, key):
    for i in range(sp.machines.list.count()):
        it = sp.machines.list.item(i)
        it.setCheckState(Qt.Checked if it.data(Qt.UserRole) == key else Qt.Unchecked)


def test_specs_filter_details_and_a_custom_gpu(window, qtbot):
    from planner_app.ui.pages.specs_page import RowDialog
    sp = window.specs_page
    window.nav.setCurrentRow(7)
    qtbot.keyClicks(sp.filter, "h200")
    assert 0 < sp.proxies["gpus"].rowCount() < sp.models["gpus"].rowCount()
    sp.views["gpus"].selectRow(0)
    assert "Source" in sp.details.toPlainText() and "H200" in sp.details.toPlainText()
    d = RowDialog("gpus", sp._udb(), None, sp)
    d.fields["id"].setText("my-gpu")
    assert not d.try_save() and "column vendor: is required" in d.error.text()  # the missing field is named
    base = dict(sp.selected_row())
    d2 = RowDialog("gpus", sp._udb(), {k: v for k, v in base.items() if k in d.fields}, sp)
    d2.fields["id"].setText("my-h200")
    d2.fields["name"].setText("My H200")
    d2.fields["aliases"].setText("")
    assert d2.try_save()
    sp.refresh_database()
    assert window.db.gpu("my-h200").name == "My H200"


def test_meeting_mode_and_exports(window, qtbot, tmp_path):
    from PySide6.QtWidgets import QApplication
    base = QApplication.font().pointSizeF()
    window.toggle_meeting(True)
    assert window.nav.currentRow() == 2 and QApplication.font().pointSizeF() > base
    window.toggle_meeting(False)
    assert QApplication.font().pointSizeF() == pytest.approx(base)
    chart = window.plan_page.memory_chart
    chart.export(str(tmp_path / "m.png"))
    chart.export(str(tmp_path / "m.svg"))
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "m.svg").read_text()
    with pytest.raises(OSError):
        chart.export(str(tmp_path / "missing-folder" / "m.png"))
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".chart-")]  # no temporary left
    csv_text = window.specs_page.models["gpus"].to_csv()
    assert csv_text.splitlines()[0].startswith("Name,Vendor,\"Memory (GiB, datasheet)\",\"Memory, driver total (GB)\"") and len(csv_text.splitlines()) > 30


def test_report_export_from_the_window(window, qtbot, tmp_path):
    out = tmp_path / "r.pdf"
    slot = window.export_report(str(out))
    with qtbot.waitSignal(slot.succeeded, timeout=60000):
        pass
    assert out.read_bytes()[:5] == b"%PDF-"


JUNK = ["", "-1", "abc", "1e999", "nan", "0", "99999999999999999999", "１２", "'; DROP TABLE x;--", " ", "1,2,,x",
        "\u202e", "%n%s"]


def _type(qtbot, w, text):
    """Type ``text`` key by key; characters outside ASCII go as key events carrying the text
    (QTest.keyClicks only maps ASCII to keys)."""
    from PySide6.QtTest import QTest
    for ch in text:
        if ord(ch) < 128:
            qtbot.keyClicks(w, ch)
        else:
            QTest.sendKeyEvent(QTest.KeyAction.Click, w, Qt.Key_unknown, ch, Qt.NoModifier)


def test_junk_in_every_field_never_crashes(window, qtbot):
    """Type junk into every text field, spin box and editable combo of every page."""
    errors = []
    sys_hook = sys.excepthook
    sys.excepthook = lambda *a: errors.append(a)
    try:
        for i, (_title, page) in enumerate(window.pages):
            window.nav.setCurrentRow(i)
            widgets = page.findChildren(QLineEdit) + page.findChildren(QAbstractSpinBox)
            widgets += [c for c in page.findChildren(QComboBox) if c.isEditable()]
            for w in widgets:
                if not w.isVisibleTo(page) or not w.isEnabled():
                    continue
                for junk in JUNK:
                    if isinstance(w, QComboBox):
                        w.lineEdit().selectAll()
                        _type(qtbot, w.lineEdit(), junk)
                    else:
                        if hasattr(w, "selectAll"):
                            w.selectAll()
                        _type(qtbot, w, junk)
                    qtbot.keyClick(w, Qt.Key_Tab)
            qtbot.wait(250)
    finally:
        sys.excepthook = sys_hook
    assert not errors, errors[:1]
    # the app still answers: a valid edit gives a result
    window.nav.setCurrentRow(1)
    window.doc.load_data(scenario.new_scenario(), dirty=False)
    qtbot.waitUntil(lambda: window.plan_page.last_estimate is not None and
                    window.plan_page.last_estimate["parallel"]["gpus"] == 8, timeout=15000)


def test_settings_units_defaults_and_reset(window, qtbot):
    from planner_app import units
    from planner_app.ui.settings import SettingsDialog
    d = SettingsDialog(window.settings, window)
    d.binary.setChecked(True)
    d.currency.set_value("CNY")
    d.framework.set_value("megatron")
    d.rate.set_value(7.3)
    d.save()
    assert window.settings.get("binary_units") and window.settings.get("cny_per_usd") == pytest.approx(7.3)
    window.plan_page.schedule_recompute()
    qtbot.waitUntil(lambda: "GiB" in window.plan_page.numbers["memory"].text(), timeout=10000)
    window.doc._set_dirty(False)
    window.new_file()
    assert window.doc.data["currency"] == "CNY" and window.doc.data["workload"]["framework"] == "megatron"
    assert window.doc.data["cny_per_usd"] == pytest.approx(7.3)
    d2 = SettingsDialog(window.settings, window)
    d2.rate.setText("abc")
    d2.rate.textEdited.emit("abc")
    d2.save()  # refused: the rate field says what is allowed
    assert "CNY per USD" in d2.rate.error_text and window.settings.get("cny_per_usd") == pytest.approx(7.3)
    d2.reset()
    assert not window.settings.get("binary_units") and window.settings.get("currency") == "USD"
    assert units.fmt_bytes(2**30) == "1.07 GB"


def test_cluster_probe_section_writes_commands_and_imports_results(window, qtbot):
    pp = window.probe_page
    pp.cl_nodes.setValue(4)
    pp.cl_gpus.setValue(8)
    text = pp.write_cluster_command()
    assert "--nnodes=4" in text and "--nproc-per-node=8" in text and text == pp.cl_text.toPlainText()
    pp.cl_kind.set_value("slurm")
    assert pp.write_cluster_command().startswith("#!/bin/bash")
    verdicts = pp.import_cluster_result(os.path.join(ROOT, "tests", "data", "collectives_h200x2.json"), "h200-pair")
    assert verdicts and verdicts[0]["status"] == "normal"
    assert "347 GB/s" in pp.cl_status.text() and "h200-pair" in pp.cl_status.text()
    assert any(pp.profiles.item(i).text().startswith("h200-pair") for i in range(pp.profiles.count()))
    assert pp.import_cluster_result(os.path.join(ROOT, "README.md")) == []
    assert "not valid JSON" in pp.cl_status.text()


def test_hidden_pages_wait_until_shown(window, qtbot):
    """Edits on the Plan page do not make the hidden Compare page re-evaluate every plan;
    it catches up when shown."""
    cp = window.compare_page
    window.nav.setCurrentRow(1)
    cp.results = []
    with qtbot.waitSignal(window.plan_page.estimated, timeout=10000):
        _set_spin(qtbot, window.plan_page.field("gpus"), 256)
    qtbot.wait(400)
    assert cp.results == [] and not cp.timer.isActive()
    window.nav.setCurrentRow(2)
    qtbot.waitUntil(lambda: bool(cp.results), timeout=15000)
    assert cp.results[0]["estimate"]["parallel"]["gpus"] == 256


def test_scaling_node_field_says_what_is_allowed(window, qtbot):
    sp = window.scaling_page
    window.nav.setCurrentRow(3)
    qtbot.waitUntil(lambda: bool(sp.curves), timeout=15000)
    sp.nodes.selectAll()
    qtbot.keyClicks(sp.nodes, "1,x")
    qtbot.waitUntil(lambda: "Node counts" in sp.error.text(), timeout=5000)
    assert "whole numbers" in sp.error.text() and "border" in sp.nodes.styleSheet()
    sp.nodes.selectAll()
    qtbot.keyClicks(sp.nodes, "4,8")
    qtbot.waitUntil(lambda: not sp.error.text() and sorted({p.nodes for v in sp.curves.values() for p in v}) == [4, 8],
                    timeout=15000)


def test_a_gpu_probe_result_shows_the_hosts_dispatch_cost(window):
    """An H200 probe result (tests/data/probe_h200.json) with the dispatch test: its row is in the
    results table, in us per op."""
    import json
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "data", "probe_h200.json")
    with open(path, encoding="utf-8") as f:
        res = json.load(f)
    res["dispatch"] = {"us_per_op": 9.5}
    pp = window.probe_page
    pp._show_result(("bench", res))
    rows = {r["what"]: r for r in pp.res_model.rows}
    assert rows["eager dispatch (host)"]["value"] == 9.5 and rows["eager dispatch (host)"]["unit"] == "us per op"
    assert len(pp.res_model.rows) == len(res["gemm"]) + len(res["bandwidth"]) + 1
