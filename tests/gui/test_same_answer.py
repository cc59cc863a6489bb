"""Same workload, same answer on every page: a workload that leaves framework, recipe and
attention unset is searched on the Search page (estimate's defaults), its best plan opened in
the Plan page, and the Plan page, ``gpu-planner estimate`` run with the row's command, and the
report of the same scenario all give the row's peak and device bytes, step time and days."""
import contextlib
import io
import json
import shlex

import pytest
from gui_helpers import plan_shows_search_row  # tests/gui is on sys.path (pytest prepends a test file's folder)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from planner_app.cli import main
from planner_app.scenario import ESTIMATE_OPTIONS
from planner_app.service.resolve import default_attention, default_recipe
from planner_app.ui.pages.hardware import hw_key

OPTION_DEFAULTS = {k: o.default for k, o in ESTIMATE_OPTIONS.items()}

KEYS = (("memory", "peak_bytes"), ("memory", "device_bytes"), ("time", "step_s"), ("time", "train_days"))


def _numbers(est: dict) -> dict:
    return {f"{a}.{b}": est[a][b] for a, b in KEYS}


def test_search_plan_estimate_cli_and_report_agree(window, qtbot):
    from planner_app.report.model import build_report

    doc, sp = window.doc, window.search_page
    doc.update_workload(model="llama-2-7b", framework=None, recipe=None, attention=None, optimizer=None,
                        seq_len=4096, global_batch=256, tokens=1e12, recompute=None, micro_batch=1)
    sp.machines.set_checked({hw_key("instance", "p5.48xlarge")})
    assert sp.selected_machines() == [("instance", "p5.48xlarge")]
    sp.max_gpus.setValue(64)
    window.nav.setCurrentRow(4)
    with qtbot.waitSignal(sp.slot.succeeded, timeout=60000):
        qtbot.mouseClick(sp.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: sp.run_button.isEnabled(), timeout=10000)
    QApplication.processEvents()
    assert sp.result.plans
    best = sp.result.plans[0]
    # the search scored the workload with estimate's defaults, not a page's own rule
    fw = OPTION_DEFAULTS["framework"]
    # (a row's options leave out what is the default: it reproduces the plan as given)
    assert best["plan"].get("framework", fw) == fw
    assert best["plan"]["recipe"] == default_recipe(window.db.gpu(best["gpu"]), fw, OPTION_DEFAULTS["finetune"])
    assert best["plan"]["attention"] == default_attention(fw)
    assert best["plan"].get("optimizer", OPTION_DEFAULTS["optimizer"]) == OPTION_DEFAULTS["optimizer"]

    sp.table.selectRow(0)
    qtbot.mouseClick(sp.open_button, Qt.LeftButton)
    page = window.plan_page

    qtbot.waitUntil(lambda: plan_shows_search_row(page, best), timeout=15000)
    plan_est = page.last_estimate

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(shlex.split(best["estimate_command"])[1:] + ["--json"]) == 0
    cli_est = json.loads(out.getvalue())

    sc = doc.snapshot()
    assert sc["chosen_plan"] == len(sc["plans"]) - 1  # the opened row is the chosen plan
    report = build_report(sc, window.db)
    report_est = report.chosen_plan.estimate

    row = _numbers(best)
    for name, est in (("Plan page", plan_est), ("gpu-planner estimate", cli_est), ("report", report_est)):
        assert _numbers(est) == pytest.approx(row, rel=1e-12), name
        assert (est["setup"]["recipe"], est["setup"]["framework"]) == (best["plan"]["recipe"], fw), name
