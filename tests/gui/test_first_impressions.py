"""Issue 29, item 13: the first minutes. The first-run window names the example it shows; File > New
gives a plan that fits; Compare counts "1 plan", not "1 plans"."""
from PySide6.QtWidgets import QApplication

from planner_app.app import build_window


def test_the_first_run_names_its_example_and_new_gives_a_plan_that_fits(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path))
    win = build_window()
    qtbot.addWidget(win)
    win.show()
    assert win.windowTitle().startswith("llama-70b-pretraining-three-clouds.json (example copy)"), win.windowTitle()
    win.new_file()
    QApplication.processEvents()
    assert win.windowTitle().startswith("Untitled")
    win.nav.setCurrentRow(1)
    page = win.plan_page
    qtbot.waitUntil(lambda: page.last_estimate is not None and page.last_estimate["parallel"]["gpus"] == 8,
                    timeout=20000)
    assert page.last_estimate["memory"]["fits"], page.verdict.text()
    assert page.verdict.text().startswith("FITS")
    win.nav.setCurrentRow(2)
    cp = win.compare_page
    qtbot.waitUntil(lambda: len(cp.results) == 1, timeout=20000)
    qtbot.waitUntil(lambda: cp.status.text().startswith("1 plan;"), timeout=5000)


def test_a_new_scenario_gives_the_clis_numbers_for_the_same_plan(window, qtbot, capsys):
    """Issue 29, item 17: File > New then choosing Llama-3.1-8B gives what `gpu-planner estimate`
    gives for the same plan (the CLI takes the model's default sequence length, 8192; the new
    scenario used to fix 4096)."""
    import json

    from planner_app import scenario
    from planner_app.cli import main

    window.nav.setCurrentRow(1)
    page = window.plan_page
    window.doc.load_data(scenario.new_scenario(model="llama-3.1-8b"), dirty=False)
    qtbot.waitUntil(lambda: page.last_estimate is not None and page.last_estimate["model"]["name"] == "llama-3.1-8b",
                    timeout=20000)
    assert main(["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8", "--zero", "3",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    gui = page.last_estimate
    assert gui["setup"]["seq_len"] == cli["setup"]["seq_len"] == 8192
    assert gui["memory"]["device_bytes"] == cli["memory"]["device_bytes"]
    assert gui["time"]["step_s"] == cli["time"]["step_s"]
