"""Compare shows the scenario's serve section on each plan's machine (issue 15 item 4): the
serving rows of the real page, loaded from the train-and-serve example, hold the numbers of
``gpu-planner serve --json`` for that machine; the best cells are bold; they follow an edit of the
serve section, show a bad section's error naming ``serve.<field>``, and read in Chinese."""
import contextlib
import copy
import io
import json
import os

import pytest

from planner_app import scenario
from planner_app.cli import main

EXAMPLE = os.path.join(scenario.example_dir(), "china-70b-train-and-serve-aws-alibaba-tencent.json")
ROWS = ("Serving: TTFT (ms)", "Serving: TPOT (ms)", "Serving: tokens/s per user",
        "Serving: output tokens/s per GPU", "Serving: cost per million output tokens, on-demand (USD)",
        "Serving: fits / saturated", "Serving: latency targets met")


def _cli_serve(sc: dict, instance: str) -> dict:
    s = sc["serve"]
    argv = ["serve", "--model", sc["workload"]["model"], "--instance", instance, "--json"]
    for k in ("tp", "pp", "replicas", "isl", "osl", "concurrency", "weights_dtype", "kv_dtype", "engine"):
        argv += [f"--{k.replace('_', '-')}", str(s[k])]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


def _load(window, qtbot, sc):
    cp = window.compare_page
    window.nav.setCurrentRow([k for k, _t in window._page_titles].index("compare"))
    cp.results = []
    window.doc.load_data(sc, dirty=False)
    qtbot.waitUntil(lambda: bool(cp.results) and cp.serving is not None, timeout=30000)
    return cp


def _rows(cp) -> dict:
    return {r["metric"]: (i, r) for i, r in enumerate(cp.model.rows)}


def test_compare_shows_each_plans_serving_numbers(window, qtbot):
    sc = scenario.load(EXAMPLE)
    cp = _load(window, qtbot, sc)
    rows = _rows(cp)
    assert all(label in rows for label in ROWS), list(rows)
    for j, plan in enumerate(sc["plans"]):
        cli = _cli_serve(sc, plan["instance"])
        assert rows["Serving: TTFT (ms)"][1][f"p{j}"] == pytest.approx(cli["ttft_ms"])
        assert rows["Serving: TPOT (ms)"][1][f"p{j}"] == pytest.approx(cli["tpot_ms"])
        assert rows["Serving: tokens/s per user"][1][f"p{j}"] == pytest.approx(cli["tokens_per_s_per_user"])
        assert rows["Serving: output tokens/s per GPU"][1][f"p{j}"] == pytest.approx(cli["output_tokens_per_s_per_gpu"])
        assert (rows["Serving: cost per million output tokens, on-demand (USD)"][1][f"p{j}"]
                == pytest.approx(cli["cost"]["usd_per_million_output_tokens"]))
        assert rows["Serving: fits / saturated"][1][f"p{j}"] == ("fits, saturated (requests queue)" if cli["saturated"]
                                                                 else "fits")
        missed = [name for name, key in (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms")) if cli[key] > sc["serve"][key]]
        assert rows["Serving: latency targets met"][1][f"p{j}"] == ("no (" + ", ".join(missed) + ")" if missed
                                                                     else "yes")
    # the cheapest per million output tokens is bold, as the table's text shows it
    i, cost = rows["Serving: cost per million output tokens, on-demand (USD)"]
    best = min(range(3), key=lambda j: cost[f"p{j}"])
    assert (i, best + 1) in cp.model.bold_cells and (i, 3 - best) not in cp.model.bold_cells
    assert cp.model.index(i, best + 1).data() == f"{cost[f'p{best}']:,.2f}"


def test_serving_rows_follow_the_serve_section_and_name_a_bad_field(window, qtbot):
    cp = _load(window, qtbot, scenario.load(EXAMPLE))
    before = _rows(cp)["Serving: TPOT (ms)"][1]["p0"]
    with qtbot.waitSignal(cp.slot.succeeded, timeout=30000):
        window.doc.update_serve(weights_dtype="fp8")  # the Serve page's edit: Compare recomputes
    after = _rows(cp)["Serving: TPOT (ms)"][1]["p0"]
    assert after < before
    with qtbot.waitSignal(cp.slot.succeeded, timeout=30000):
        window.doc.update_serve(tp=3)
    assert cp.serving is None and not any(k.startswith("Serving:") for k in _rows(cp))
    assert "serve.tp" in cp.status.text() and "64" in cp.status.text()


def test_a_scenario_without_serve_has_no_serving_rows(window, qtbot):
    sc = scenario.load(EXAMPLE)
    del sc["serve"]
    cp = window.compare_page
    window.nav.setCurrentRow([k for k, _t in window._page_titles].index("compare"))
    cp.results = []
    window.doc.load_data(sc, dirty=False)
    names = [p["name"] for p in sc["plans"]]
    qtbot.waitUntil(lambda: [r["name"] for r in cp.results] == names, timeout=30000)
    assert cp.serving is None and not any(k.startswith("Serving") for k in _rows(cp))


def test_serving_rows_in_chinese(zh_window, qtbot):
    sc = scenario.load(EXAMPLE)
    cp = _load(zh_window, qtbot, copy.deepcopy(sc))
    rows = _rows(cp)
    assert any(k.startswith("推理服务：首 token 时延 (TTFT)") for k in rows), list(rows)
    met = next(r for k, (_i, r) in rows.items() if k.startswith("推理服务：满足时延目标"))
    labels = []
    for j, plan in enumerate(sc["plans"]):
        cli = _cli_serve(sc, plan["instance"])
        missed = [name for name, key in (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms")) if cli[key] > sc["serve"][key]]
        labels.append("否（" + ", ".join(missed) + "）" if missed else "是")
        assert met[f"p{j}"] == labels[-1]
    assert "是" in labels and any(x.startswith("否") for x in labels)  # the example has both
