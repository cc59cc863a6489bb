"""Issue 29, item 1: a cost names its basis everywhere. AWS p5e.48xlarge has only a spot price
(14.03 USD/h in spec_data/instances.csv): the Plan page calls its cost "spot" and says there is no
on-demand price; Compare's on-demand chart draws no bar for it and never marks it best; its cost
per million tokens is in a row of its own, named spot; the CLI and the report say "spot"."""
import copy
import json
import re

import pytest

from planner_app.cli import main

TRAINING = {"schema_version": 2, "meta": {"title": "spot vs on-demand"},
            "workload": {"mode": "training", "model": "llama-3.1-8b", "tokens": 2e9, "seq_len": 4096,
                         "micro_batch": 1, "recompute": "full"},
            "plans": [{"name": "p5 (on-demand)", "instance": "p5.48xlarge", "gpus": 8, "zero": 3},
                      {"name": "p5e (spot only)", "instance": "p5e.48xlarge", "gpus": 8, "zero": 3}],
            "calibration": None, "currency": "USD", "price_mix": None, "cny_per_usd": None, "chosen_plan": 0}


@pytest.fixture
def app_db_report(qapp, db):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    return build_report, write_report, db


def _plain(html: str) -> str:
    """The page's text as read: no-break spaces and hyphens as plain ones."""
    return html.replace("&nbsp;", " ").replace("\u2011", "-")


def _load(window, qtbot, sc, page_row):
    window.nav.setCurrentRow(page_row)
    window.doc.load_data(copy.deepcopy(sc), dirty=False)


def test_the_plan_page_names_the_spot_price(window, qtbot):
    _load(window, qtbot, TRAINING, 1)
    page = window.plan_page
    with qtbot.waitSignal(page.estimated, timeout=30000):
        page.plan_combo.setCurrentIndex(1)
    text = _plain(page.numbers["cost"].text())
    assert re.match(r"\$[\d,]+ spot<br>no on-demand price<br>", text), text
    assert " on-demand<br>" not in text  # no price line is called on-demand
    with qtbot.waitSignal(page.estimated, timeout=30000):
        page.plan_combo.setCurrentIndex(0)
    text = _plain(page.numbers["cost"].text())
    assert " on-demand<br>" in text and "no on-demand" not in text


def test_compare_draws_and_marks_only_on_demand_costs(window, qtbot):
    _load(window, qtbot, TRAINING, 2)
    cp = window.compare_page
    qtbot.waitUntil(lambda: len(cp.results) == 2 and all("estimate" in r for r in cp.results), timeout=30000)
    spot_only = cp.results[1]["estimate"]["cost"]
    assert spot_only["usd_price_basis"] == "spot" and spot_only["usd_by_price"]["on_demand"] is None
    vals = cp.cost_chart.values
    assert vals[0] > 0 and vals[1] != vals[1]  # p5's bar; p5e has none (NaN: "no on-demand price")
    row = next(r for r in cp.model.rows if r["metric"].startswith("Cost on-demand"))
    assert row["p0"] is not None and row["p1"] == "— no on-demand price"


def test_inference_cost_per_million_names_its_basis(window, qtbot, capsys):
    sc = copy.deepcopy(TRAINING)
    sc["workload"] = {"mode": "inference", "model": "llama-3.1-8b", "batch": 8, "prompt_len": 1024,
                      "new_tokens": 128}
    for p in sc["plans"]:
        p.pop("zero")
        p["tp"], p["gpus"] = 1, 1
    _load(window, qtbot, sc, 2)
    cp = window.compare_page
    qtbot.waitUntil(lambda: len(cp.results) == 2 and all("estimate" in r for r in cp.results), timeout=30000)
    rows = {r["metric"]: r for r in cp.model.rows}
    on_demand = next(v for k, v in rows.items() if k.startswith("Cost per million tokens, on-demand"))
    other = next(v for k, v in rows.items() if k.startswith("Cost per million tokens, other price"))
    assert on_demand["p0"] is not None and on_demand["p1"] == "— no on-demand price"
    assert other["p0"] is None and other["p1"].endswith("(spot)")
    vals = cp.cost_chart.values
    assert vals[0] > 0 and vals[1] != vals[1]
    # the CLI says the same
    assert main(["estimate", "--mode", "inference", "--model", "llama-3.1-8b", "--instance", "p5e.48xlarge",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"]["usd_price_basis"] == "spot"


def test_the_report_names_the_basis_of_each_inference_cost(app_db_report, tmp_path):
    """The zh report of the inference scenario says 竞价 (spot) for p5e and 按需 for p5."""
    build_report, write_report, db = app_db_report
    sc = copy.deepcopy(TRAINING)
    sc["workload"] = {"mode": "inference", "model": "llama-3.1-8b", "batch": 8, "prompt_len": 1024,
                      "new_tokens": 128}
    for p in sc["plans"]:
        p.pop("zero")
        p["tp"], p["gpus"] = 1, 1
    # the lead paragraph is the recommended plan's (the cheapest on-demand, whichever plan is open:
    # report/model.recommend), p5 at its on-demand price; the spot-only p5e's cost is named spot
    for lang, lead, spot in (("en", "at the on-demand price", "spot"), ("zh_CN", "按需价格下", "竞价")):
        for chosen in (0, 1):
            sc["chosen_plan"] = chosen
            out = tmp_path / f"r-{lang}-{chosen}.html"
            write_report(build_report(sc, db, lang=lang), str(out), "html", "A4")
            text = out.read_text(encoding="utf-8")
            assert lead in text and spot in text, (lang, chosen)


def test_equal_values_are_all_marked_best(window, qtbot):
    """Issue 29, item 15: three plans on the same machine tie on every chart; all three bars are
    shaded best, as the table bolds all three cells."""
    sc = copy.deepcopy(TRAINING)
    sc["plans"] = [{"name": f"p5 copy {i}", "instance": "p5.48xlarge", "gpus": 8, "zero": 3} for i in range(3)]
    _load(window, qtbot, sc, 2)
    cp = window.compare_page
    qtbot.waitUntil(lambda: len(cp.results) == 3 and all("estimate" in r for r in cp.results), timeout=30000)
    from planner_app.ui.charts.base import PALETTE

    for chart in (cp.memory_chart, cp.time_chart, cp.cost_chart):
        shades = [b.color().name() for b in chart._bar.opts["brushes"]]
        assert shades == [PALETTE[0]] * 3, (chart, shades)  # every bar drawn as the best
