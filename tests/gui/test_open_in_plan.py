"""Issue 29, item 2: "Open in Plan" from Search adds a plan that carries the settings its row was
scored with; the workload and every other plan stay as they were (the old code wrote the row's
micro-batch, global batch, precision and attention into the workload, and an untouched plan went
from 39 GB, 0.70 s/step to 59 GB, 590 s/step)."""
import copy

from gui_helpers import plan_shows_search_row  # tests/gui is on sys.path
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from planner_app import scenario
from planner_app.ui.pages.hardware import hw_key


def test_open_in_plan_keeps_the_workload_and_the_other_plans(window, qtbot):
    doc, sp = window.doc, window.search_page
    doc.update_workload(model="llama-2-7b", recipe=None, attention=None, global_batch=None, micro_batch=1,
                        seq_len=4096, tokens=1e11, recompute="none")
    workload = copy.deepcopy(doc.data["workload"])
    before = [r.get("estimate") for r in scenario.evaluate(doc.data, window.db)]
    n_plans = len(doc.data["plans"])
    sp.machines.set_checked({hw_key("instance", "p5.48xlarge")})
    sp.max_gpus.setValue(64)
    window.nav.setCurrentRow(4)
    with qtbot.waitSignal(sp.slot.succeeded, timeout=60000):
        qtbot.mouseClick(sp.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: sp.run_button.isEnabled(), timeout=10000)
    QApplication.processEvents()
    best = sp.result.plans[0]
    sp.table.selectRow(0)
    qtbot.mouseClick(sp.open_button, Qt.LeftButton)
    page = window.plan_page
    qtbot.waitUntil(lambda: plan_shows_search_row(page, best), timeout=15000)

    # the workload is as it was, and so is every plan that was there
    assert doc.data["workload"] == workload
    after = scenario.evaluate(doc.data, window.db)
    assert len(after) == n_plans + 1
    for i in range(n_plans):
        assert after[i].get("estimate") == before[i], f"plan {i} changed"
    # the new plan holds what differs (the search's micro-batch, the resolved recipe, attention and
    # batch) and says so on the Plan page and in Compare
    own = scenario.plan_own_settings(doc.data, n_plans)
    assert own and "tokens" not in own
    assert page.own_label.isVisibleTo(window) and "own settings" in page.own_label.text()
    window.nav.setCurrentRow(2)
    cp = window.compare_page
    qtbot.waitUntil(lambda: len(cp.results) == n_plans + 1, timeout=30000)
    row = next(r for r in cp.model.rows if r["metric"] == "Plan's own settings")
    assert row[f"p{n_plans}"] and all(row[f"p{i}"] is None for i in range(n_plans))
    # and the Workload page still shows the workload's values
    assert window.workload_page.field("micro_batch").value() == workload["micro_batch"]


def test_the_report_lists_a_plans_own_settings(db, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    sc = scenario.load(scenario.examples()[0])
    sc["plans"][0].update(micro_batch=2, recompute="full")
    rep = build_report(sc, db)
    assert rep.plans[0].own == {"micro_batch": 2, "recompute": "full"} and rep.plans[1].own == {}
    out = tmp_path / "r.html"
    write_report(rep, str(out), "html", "A4")
    text = out.read_text(encoding="utf-8")
    assert "Micro-batch 2; Activation recomputation full" in text
    # a scenario file with a plan's own setting stays valid and loads back the same
    path = tmp_path / "s.json"
    scenario.save(sc, str(path))
    assert scenario.load(str(path))["plans"][0]["micro_batch"] == 2
