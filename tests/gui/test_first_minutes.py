"""What a new user hits in the first minutes (issue 12): inference results under their own
labels, no stale numbers under an error, headroom and the user's margin, names and titles
that follow the inputs, charts that never draw a missing price as $0, scaling that says
what it leaves out, file dialogs that start in a sensible folder. Driven through the real
widgets (offscreen), with the CLI's numbers as the reference."""
from __future__ import annotations

import os
import time

import pytest
from PySide6.QtCore import Qt

from planner_app import scenario, units
from planner_app.service.estimate import estimate_json

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLES = os.path.join(ROOT, "examples")


def _set_spin(qtbot, spin, value):
    spin.selectAll()
    qtbot.keyClicks(spin, str(value))
    qtbot.keyClick(spin, Qt.Key_Return)


def _open_example(window, qtbot, name):
    page = window.plan_page
    with qtbot.waitSignal(page.estimated, timeout=20000):
        assert window.open_path(os.path.join(EXAMPLES, name))
    return page


def test_inference_has_its_own_result_layout(window, qtbot):
    page = _open_example(window, qtbot, "inference-70b-service.json")
    est = page.last_estimate
    assert est["mode"] == "inference"
    titles = {k: t.text() for k, t in page.number_titles.items()}
    joined = " ".join(titles.values())
    # no training label survives on an inference plan
    for word in ("micro-batch", "MFU", "Time to train", "GPU-hours", "Step time"):
        assert word not in joined, (word, titles)
    assert titles["step"].startswith("Time to first token") and "per million" in titles["cost"]
    t = est["time"]
    assert page.numbers["mfu"].text().startswith(f"{t['decode_s_per_token'] * 1e3:.1f} ms")
    assert "tokens/s" in page.numbers["train"].text()  # tokens/s per sequence, with its unit
    # the latency chart: prefill then every generated token, in seconds, adding up to the request
    assert page.time_chart.unit == "s"
    assert page.time_chart.totals[0] == pytest.approx(t["end_to_end_s"])
    assert [e[0] for e in page.time_chart.legend.entries] == ["decode (every generated token)",
                                                             "prefill (time to first token)"]
    # training-only layout fields are hidden, and so is the host panel (checkpoints, input pipeline);
    # tensor parallel stays
    assert not page.field("pp").isVisibleTo(page) and not page.field("zero").isVisibleTo(page)
    assert page.field("tp").isVisibleTo(page) and not page.host_panel.isVisibleTo(page)
    # what bounds the decode is said in words: a 64-sequence generate() on H100s waits for Python
    assert t["decode_bound"] == "host" and "host-bound" in page.numbers["mfu"].text()
    # and what a serving engine would take for the same batch, beside it
    assert f"vLLM: {units.fmt_seconds(t['serving_engine_decode_s_per_token'])}" in page.numbers["mfu"].text()
    # back to training: the training labels and fields return
    with qtbot.waitSignal(page.estimated, timeout=20000):
        window.workload_page.mode.set_value("training")
    assert page.number_titles["mfu"].text() == "MFU" and page.field("pp").isVisibleTo(page)
    assert page.host_panel.isVisibleTo(page)


def test_an_input_error_leaves_no_old_numbers(window, qtbot):
    page = window.plan_page
    assert page.numbers["step"].text() != "–" and page.memory_chart.totals.sum() > 0
    with qtbot.waitSignal(page.estimate_failed, timeout=10000):
        _set_spin(qtbot, page.field("tp"), 3)  # 64 heads do not split over 3
    assert "No result" in page.verdict.text() and "FITS" not in page.verdict.text()
    assert all(v.text() == "–" for v in page.numbers.values())
    assert page.memory_chart.totals.size == 0 and page.time_chart.totals.size == 0
    assert page.advice.text() == "" and page.assumptions.count() == 0
    assert page.last_estimate is None


def test_opening_a_scenario_that_cannot_be_estimated_clears_the_plan(window, qtbot, tmp_path):
    bad = scenario.new_scenario(model="llama-3.1-8b")
    bad["plans"] = [{"name": "odd", "gpu": "h100-sxm", "gpus": 8, "tp": 3}]
    path = tmp_path / "bad.json"
    scenario.save(bad, str(path))
    page = window.plan_page
    assert "FITS" in page.verdict.text()
    with qtbot.waitSignal(page.estimate_failed, timeout=10000):
        assert window.open_path(str(path))
    assert "FITS" not in page.verdict.text() and page.numbers["memory"].text() == "–"


def test_results_grey_out_while_they_do_not_match_the_inputs(window, qtbot, monkeypatch):
    from planner_app.ui.pages import plan_page

    real = plan_page.estimate_task

    def slow(options, db):  # an estimate that takes longer than STALE_AFTER_MS (a big search of plans would)
        run = real(options, db)

        def delayed(progress, cancelled):
            time.sleep(0.6)
            return run(progress, cancelled)
        return delayed

    monkeypatch.setattr(plan_page, "estimate_task", slow)
    page = window.plan_page
    _set_spin(qtbot, page.field("pp"), 8)
    qtbot.waitUntil(lambda: page.results.graphicsEffect() is not None, timeout=5000)
    assert page.stale
    qtbot.waitUntil(lambda: page.last_estimate["parallel"]["pp"] == 8, timeout=10000)
    assert page.results.graphicsEffect() is None and not page.stale


def test_headroom_and_the_users_margin(window, qtbot):
    page = window.plan_page
    m = page.last_estimate["memory"]
    free_pct = (m["capacity_bytes"] - m["device_bytes"]) / m["capacity_bytes"] * 100
    assert "FITS" in page.verdict.text() and f"({free_pct:.0f}%)" in page.verdict.text()
    # a margin above what this plan leaves free: still fits, but marked tight
    window.settings.set("min_headroom_pct", min(free_pct + 5, 99))
    window._apply_margin()
    assert page.verdict.text().startswith("TIGHT") and "margin" in page.verdict.text()
    window.nav.setCurrentRow(2)
    cp = window.compare_page
    qtbot.waitUntil(lambda: bool(cp.results), timeout=20000)
    fits_row = next(r for r in cp.model.rows if r["metric"] == "Fits")
    assert fits_row["p0"] == "tight"
    window.settings.set("min_headroom_pct", 5.0)
    window._apply_margin()
    assert page.verdict.text().startswith("FITS")


def test_search_keeps_the_memory_margin():
    from planner_app.core.plans.search import SearchGroup, search
    from planner_app.core.requests import SearchLimits
    from planner_app.core.training.setup import TrainingSetup
    from planner_app.service.resolve import resolve_model
    from planner_app.service.search import build_candidates
    from planner_app.specdb.catalog import shipped_db
    db = shipped_db()
    model = resolve_model("llama-3.1-8b", db)
    cands = build_candidates(db, (("gpu", "h100-sxm"),), None, 7.1)
    setup = TrainingSetup(seq_len=4096, global_batch=64, tokens=1e10, recipe="mixed-bf16", framework="megatron",
                          attention="flash")
    groups = [SearchGroup(setup=setup, candidates=tuple(cands))]
    loose = search(model, groups, SearchLimits(max_gpus=8, top=500, min_headroom_pct=0.0), None, model.name)
    strict = search(model, groups, SearchLimits(max_gpus=8, top=500, min_headroom_pct=30.0), None, model.name)
    cap = cands[0].hardware.gpu.capacity_bytes
    assert strict.plans and all(p["memory"]["device_bytes"] <= 0.70 * cap for p in strict.plans)
    assert any(p["memory"]["device_bytes"] > 0.70 * cap for p in loose.plans)  # the margin took some away
    with pytest.raises(Exception, match="99"):
        SearchLimits(max_gpus=8, min_headroom_pct=150.0)


def test_a_plan_is_renamed_after_its_new_hardware_unless_the_user_named_it(window, qtbot):
    page = window.plan_page
    assert page.name.text() == "AWS p5.48xlarge"
    i = page.hardware.findData("instance:p4de.24xlarge")
    with qtbot.waitSignal(page.estimated, timeout=10000):
        page.hardware.setCurrentIndex(i)
    assert "p4de.24xlarge" in page.name.text() and "p5" not in page.name.text()
    assert window.doc.data["plans"][page.index]["name"] == page.name.text()
    # a name the user typed is theirs
    page.name.selectAll()
    qtbot.keyClicks(page.name, "my cluster")
    qtbot.keyClick(page.name, Qt.Key_Return)
    with qtbot.waitSignal(page.estimated, timeout=10000):
        page.hardware.setCurrentIndex(page.hardware.findData("gpu:h100-sxm"))
    assert page.name.text() == "my cluster"


def test_example_title_and_notes_give_way_when_the_model_changes(window, qtbot):
    meta = window.doc.data["meta"]
    assert "70B" in meta["title"] and meta["notes"]
    wp = window.workload_page
    assert wp.meta_fields["title"].text() == meta["title"]
    with qtbot.waitSignal(window.plan_page.estimated, timeout=10000):
        wp.model_combo.set_value("llama-3.1-8b")
    meta = window.doc.data["meta"]
    assert meta["title"] == "llama-3.1-8b training sizing" and meta["notes"] == ""
    assert wp.meta_fields["title"].text() == meta["title"]
    # the report is built from the same document: it carries the new title
    from planner_app.report.model import build_report
    rep = build_report(window.doc.snapshot(), window.db)
    assert "llama-3.1-8b training sizing" in str(rep.title if hasattr(rep, "title") else rep)
    # a title the user writes stays through later edits
    wp.meta_fields["title"].setText("Budget review")
    wp.meta_fields["title"].editingFinished.emit()
    with qtbot.waitSignal(window.plan_page.estimated, timeout=10000):
        wp.model_combo.set_value("llama-2-7b")
    assert window.doc.data["meta"]["title"] == "Budget review"


def test_compare_never_draws_a_missing_price_as_zero_and_keeps_names_apart(window, qtbot):
    window.doc.load_data(scenario.new_scenario(model="llama-3.1-8b"), dirty=False)
    window.doc.update_workload(tokens=1e10)
    window.doc.set_plans([{"name": "H100 cluster in region one, plan A", "gpu": "h100-sxm", "gpus": 8},
                          {"name": "H100 cluster in region one, plan B", "instance": "p5.48xlarge"}])
    window.nav.setCurrentRow(2)
    cp = window.compare_page
    qtbot.waitUntil(lambda: len(cp.results) == 2 and cp.cost_chart.values.size == 2, timeout=20000)
    vals = cp.cost_chart.values
    assert vals[0] != vals[0] and vals[1] > 0  # NaN: no bar for the bare GPU, a real bar for the instance
    assert [t.toPlainText() for t in cp.cost_chart._notes] == ["no price"]
    ticks = [t for _x, t in cp.cost_chart.plot.getAxis("bottom")._tickLevels[0]]
    assert len(set(ticks)) == 2 and all("\n" in t or len(t) <= 16 for t in ticks), ticks
    # the value axis reads plain numbers
    axis = cp.cost_chart.plot.getAxis("left")
    assert axis.tickStrings([2e6, 4e6], 1.0, 2e6) == ["2,000,000", "4,000,000"]


def test_scaling_says_which_node_counts_it_leaves_out_and_its_nics(window, qtbot):
    window.doc.update_plan(0, pp=2, tp=8, sequence_parallel=True)
    sp = window.scaling_page
    sp.nodes.setText("1,2,3,4")
    window.nav.setCurrentRow(3)
    sp.request_recompute()
    qtbot.waitUntil(lambda: "Left out" in sp.notes.text(), timeout=20000)
    assert "1, 3 node(s)" in sp.notes.text()
    assert {r["nodes"] for r in sp.model.rows} == {2, 4}
    assert all(r["nics"] for r in sp.model.rows) and all(r["fits"] in ("yes", "NO") for r in sp.model.rows)


def test_file_dialogs_start_in_documents_and_the_status_names_the_file(window, qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog
    monkeypatch.chdir(tmp_path)
    start = window.files_dir()
    assert os.path.abspath(start) != os.path.abspath(str(tmp_path))  # not wherever the app was started
    seen = {}
    out = tmp_path / "out" / "r.pdf"
    out.parent.mkdir()

    def fake(parent, caption, directory, filters):
        seen["dir"] = directory
        return str(out), filters.split(";;")[0]
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    window.export_report_dialog()
    qtbot.waitUntil(lambda: "Report written" in window.statusBar().currentMessage(), timeout=60000)
    assert str(out) in window.statusBar().currentMessage()
    assert os.path.dirname(seen["dir"]) == start and seen["dir"].endswith(".pdf")
    assert window.files_dir() == str(out.parent)  # the next dialog starts where this one saved


def test_cli_refuses_options_of_the_other_mode():
    from planner_app.cli import main
    assert main(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--weights-dtype", "int4"]) == 2
    assert main(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--mode", "inference", "--zero", "2"]) == 2
    assert main(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--mode", "inference",
                 "--weights-dtype", "int4", "--json"]) == 0


def test_every_cli_option_has_help_and_shows_its_default():
    import argparse

    from planner_app.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, p in sub.choices.items():
        for a in p._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            if not a.help or a.help == a.dest.replace("_", " "):
                missing.append(f"{name} {a.option_strings or a.dest}")
    assert not missing, missing
    est = sub.choices["estimate"].format_help()
    for text in ("(default: adamw)", "(default: 1f1b)", "(default: pytorch)", "(default: 1024)"):
        assert text in est.replace("\n", " ").replace("  ", " "), text


def test_cli_matches_the_plan_page_for_the_example(window):
    est = window.plan_page.last_estimate
    cli = estimate_json(scenario.plan_options(window.doc.data, window.plan_page.index), window.db)
    assert cli["memory"]["verdict"] in ("fits", "tight", "does_not_fit")
    assert est["memory"]["device_bytes"] == cli["memory"]["device_bytes"]


def test_pages_other_than_plan_are_built_after_the_first_results(qtbot, settings, userdb):
    """Start-up builds Workload and Plan only; the rest follow once results are on screen (or
    at once when the user opens one)."""
    from PySide6.QtCore import QThreadPool

    from planner_app.app import build_window
    win = build_window(settings=settings, userdb=userdb)
    try:
        assert set(win._built) == {"workload", "plan"}
        win.nav.setCurrentRow(7)  # the user opens Specs before the estimate arrives
        assert "specs" in win._built and win.stack.currentWidget() is win.specs_page
        win.show()
        qtbot.waitUntil(lambda: win.plan_page.last_estimate is not None, timeout=20000)
        qtbot.waitUntil(lambda: len(win._built) == 8, timeout=20000)
        assert [win.stack.widget(i) for i in range(8)] == [p for _t, p in win.pages]
    finally:
        win.doc._set_dirty(False)
        win.close()
        win.deleteLater()
    assert QThreadPool.globalInstance().activeThreadCount() == 0


def test_skipped_user_rows_are_named_in_the_status_bar(qtbot, settings, userdb):
    """A row of the user's database that does not match the catalog (an instance of an unknown GPU)
    is kept and skipped; the window says so in the status bar, with the row in its tooltip."""
    import csv
    import os

    from planner_app.app import build_window
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "spec_data", "instances.csv"), newline="") as f:
        row = next(csv.DictReader(f))
    row.update(instance_id="my.box", gpu_id="no-such-gpu")
    userdb.upsert("instances", row)
    win = build_window(settings=settings, userdb=userdb)
    try:
        qtbot.waitUntil(lambda: win.plan_page.last_estimate is not None, timeout=20000)
        label = win.user_problems_label
        assert not label.isHidden() and "1" in label.text()
        assert "my.box" in label.toolTip() and "no-such-gpu" in label.toolTip()
    finally:
        win.doc._set_dirty(False)
        win.close()
        win.deleteLater()


def test_no_status_note_without_skipped_rows(window):
    assert window.user_problems_label.isHidden()
