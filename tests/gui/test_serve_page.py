"""The Serve page (issue 15) driven through its widgets: its numbers are ``gpu-planner serve
--json``'s for the same inputs; an SLO search run from the page lists deployments that meet the
targets and "Use this deployment" reproduces the row; a bad input shows inline and clears the
numbers; the inputs survive a save and a load of the scenario."""
import contextlib
import io
import json

import pytest
from PySide6.QtCore import Qt

from planner_app.cli import main
from planner_app.ui.pages.hardware import hw_key
from planner_app.ui.pages.serve_page import format_results

NUMBER_KEYS = ("ttft_ms", "tpot_ms", "e2e_latency_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu",
               "tokens_per_s_per_user", "requests_per_s", "kv_cache_tokens", "max_concurrency", "saturated", "fits")


def _cli_serve(values: dict, model: str) -> dict:
    argv = ["serve", "--model", model, "--json"]
    for k, v in values.items():
        if v is not None:
            argv += [f"--{k.replace('_', '-')}", str(v)]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


def _open_serve(window, qtbot):
    idx = [k for k, _t in window._page_titles].index("serve")
    window.nav.setCurrentRow(idx)
    page = window.serve_page
    assert window.stack.currentWidget() is page
    qtbot.waitUntil(lambda: page.last_result is not None or bool(page.error.text()), timeout=20000)
    return page


def _search(page, qtbot, machines, ttft_ms, tpot_ms):
    """Check ``machines`` (hardware keys), set the targets and click Run SLO search; wait for it."""
    page.machines.set_checked(set(machines))
    page.ttft_target.set_value(ttft_ms)
    page.tpot_target.set_value(tpot_ms)
    with qtbot.waitSignal(page.search_slot.succeeded, timeout=60000):
        page.run_button.click()


def _settled(page, qtbot, check):
    """Wait until the latest recompute has landed and ``check()`` holds."""
    qtbot.waitUntil(lambda: not page.timer.isActive() and not page.slot.busy and check(), timeout=20000)


def test_numbers_equal_the_cli(window, qtbot):
    window.doc.update_workload(model="llama-3.1-8b")
    page = _open_serve(window, qtbot)
    page.hardware.setCurrentIndex(page.hardware.findData(hw_key("instance", "p5.48xlarge")))
    page.tp.setValue(2)
    page.replicas.setValue(3)
    page.isl.setValue(4096)
    page.osl.setValue(256)
    page.concurrency.setValue(200)
    page.kv_dtype.set_value("fp8")
    page.engine.set_value("sglang")
    before = page.last_result
    _settled(page, qtbot, lambda: page.last_result is not before and page.last_result is not None
             and page.last_result["deployment"]["tp"] == 2 and page.last_result["traffic"]["concurrency"] == 200
             and page.last_result["engine"] == "sglang")
    values = page.values()
    cli = _cli_serve(values, "llama-3.1-8b")
    shown = page.last_result
    for k in NUMBER_KEYS:
        assert shown[k] == cli[k], k
    assert shown["memory"] == cli["memory"] and shown["cost"] == cli["cost"]
    # the cells show the CLI's numbers, not some other rounding of another computation
    for key, text in format_results(cli).items():
        assert page.cells[key].text() == text, key
    assert cli["cost"]["usd_per_million_output_tokens"] is not None
    assert page.cells["usd_per_m"].text().startswith("$")
    # the memory chart stacks the breakdown against the GPU's capacity (GB)
    total_gb = sum(cli["memory"]["breakdown"].values()) / 1e9
    assert page.memory_chart.totals[0] == pytest.approx(total_gb)
    # the step chart stacks where the time per output token goes: its parts sum to the CLI's TPOT
    assert shown["step_breakdown_ms"] == cli["step_breakdown_ms"]
    assert page.step_chart.totals[0] == pytest.approx(cli["tpot_ms"])
    assert not page.error.text()


def test_slo_search_and_use_this_deployment(window, qtbot):
    window.doc.update_workload(model="llama-3.1-8b")
    page = _open_serve(window, qtbot)
    page.machines.set_checked({hw_key("instance", "p5.48xlarge"), hw_key("instance", "p5en.48xlarge")})
    page.ttft_target.setText("")
    qtbot.keyClicks(page.ttft_target, "800")
    page.tpot_target.setText("")
    qtbot.keyClicks(page.tpot_target, "25")
    assert (page.ttft_target.value(), page.tpot_target.value()) == (800.0, 25.0)
    with qtbot.waitSignal(page.search_slot.succeeded, timeout=60000):
        qtbot.mouseClick(page.run_button, Qt.LeftButton)
    res = page.search_result
    assert res.cheapest and page.table_model.rowCount() == len(res.cheapest)
    for p in res.cheapest:
        assert p["ttft_ms"] <= 800 and p["tpot_ms"] <= 25 and not p["saturated"]
        assert p["machine"] in ("p5.48xlarge", "p5en.48xlarge")
    costs = [(p["usd_per_million_output_tokens"], p["gpus"]) for p in res.cheapest]
    assert costs == sorted(costs)  # the cheapest first (USD per million output tokens, then fewer GPUs)
    assert page.pareto_chart.front_points  # the front is drawn
    page.table.selectRow(1)
    row = res.cheapest[1]
    before = page.last_result
    qtbot.mouseClick(page.use_button, Qt.LeftButton)
    _settled(page, qtbot, lambda: page.last_result is not before and page.last_result is not None)
    v = page.values()
    assert (v["instance"], v["tp"], v["pp"], v["ep"], v["replicas"], v["weights_dtype"], v["kv_dtype"]) == \
        (row["machine"], row["tp"], row["pp"], row["ep"], row["replicas"], row["weights_dtype"], row["kv_dtype"])
    out = page.last_result
    for k in ("ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu", "tokens_per_s_per_user"):
        assert out[k] == pytest.approx(row[k], rel=1e-9), k
    assert out["cost"]["usd_per_million_output_tokens"] == pytest.approx(row["usd_per_million_output_tokens"])
    assert window.doc.data["serve"]["tp"] == row["tp"]


def test_unreachable_targets_name_the_closest(window, qtbot):
    window.doc.update_workload(model="llama-3.1-8b")
    page = _open_serve(window, qtbot)
    _search(page, qtbot, {hw_key("gpu", "l4")}, 1.0, 0.5)
    assert page.table_model.rowCount() == 0 and not page.use_button.isEnabled()
    assert "TTFT ≤ 1 ms" in page.search_status.text() and "l4" in page.search_status.text()


def test_bad_input_is_inline_and_clears_the_numbers(window, qtbot):
    window.doc.update_workload(model="llama-3.1-8b")
    page = _open_serve(window, qtbot)
    _settled(page, qtbot, lambda: page.last_result is not None)
    assert page.cells["tpot_ms"].text() != "—"
    page.isl.selectAll()
    qtbot.keyClicks(page.isl, "0")
    assert page.isl.value() == 0
    _settled(page, qtbot, lambda: bool(page.error.text()))
    assert page.error.text().startswith("isl:") and "from 1" in page.error.text()
    assert page.last_result is None and page.verdict.text() == ""
    assert all(c.text() == "—" for c in page.cells.values())
    assert "d33" in page.isl.styleSheet()
    page.isl.setValue(1024)
    _settled(page, qtbot, lambda: page.last_result is not None)
    assert not page.error.text() and page.isl.styleSheet() == ""


def test_a_precision_the_gpu_cannot_run_is_shown_inline(window, qtbot):
    """fp8 weights on a V100 (sm_70): the page shows the service's error naming weights_dtype and what
    the GPU allows, clears the numbers and marks the choice; an allowed precision brings them back."""
    window.doc.update_workload(model="llama-3.1-8b")
    page = _open_serve(window, qtbot)
    page.hardware.setCurrentIndex(page.hardware.findData(hw_key("gpu", "v100-sxm2-32gb")))
    page.tp.setValue(1)
    page.weights_dtype.set_value("fp8")
    _settled(page, qtbot, lambda: page.error.text().startswith("weights_dtype:"))
    assert "sm_70" in page.error.text() and "allowed on it: bf16, int8, int4" in page.error.text()
    assert page.last_result is None and all(c.text() == "—" for c in page.cells.values())
    assert "d33" in page.weights_dtype.styleSheet() and page.kv_dtype.styleSheet() == ""
    page.weights_dtype.set_value("int4")
    _settled(page, qtbot, lambda: page.last_result is not None)
    assert not page.error.text() and page.weights_dtype.styleSheet() == ""
    assert page.last_result["deployment"]["weights_dtype"] == "int4"


def test_slo_search_says_what_it_skipped(window, qtbot):
    window.doc.update_workload(model="llama-3.1-8b")
    page = _open_serve(window, qtbot)
    page.engine.set_value("trtllm")
    page.search_options.widget("quantized_weights").setChecked(True)  # fp8 weights asked for, and skipped
    _search(page, qtbot, {hw_key("instance", "p4de.24xlarge"), hw_key("instance", "GN10Xp.20XLARGE320")}, 5000.0, 200.0)
    rows = page.search_result.cheapest
    assert rows and all(r["machine"] == "p4de.24xlarge" and "fp8" not in (r["weights_dtype"], r["kv_dtype"])
                        for r in rows)
    text = page.search_status.text()
    assert "GN10Xp.20XLARGE320: skipped" in text and "fp8 weights, fp8 KV cache skipped" in text


def test_slo_table_exports_to_csv_with_units(window, qtbot, tmp_path, monkeypatch):
    """File > Export Table as CSV on the Serve page writes the search's plans: every serving column,
    units in the headers, the raw numbers of the search."""
    import csv

    from PySide6.QtWidgets import QFileDialog

    window.doc.update_workload(model="llama-3.1-8b")
    page = _open_serve(window, qtbot)
    _search(page, qtbot, {hw_key("instance", "p5.48xlarge")}, 2000.0, 50.0)
    plans = page.search_result.cheapest
    assert plans
    out = tmp_path / "slo.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "CSV (*.csv)")))
    window.export_table_dialog()
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(plans)
    for head in ("TTFT (ms)", "TPOT (ms)", "End-to-end latency (ms)", "Output tokens/s per GPU", "Output tokens/s",
                 "Requests/s", "Max concurrency", "Saturated", "USD per million output tokens"):
        assert head in rows[0], head
    for row, p in zip(rows, plans):
        assert row["Machine"] == p["machine"] and int(row["GPUs"]) == p["gpus"]
        for head, key in (("TTFT (ms)", "ttft_ms"), ("TPOT (ms)", "tpot_ms"), ("End-to-end latency (ms)", "e2e_latency_ms"),
                          ("Output tokens/s per GPU", "output_tokens_per_s_per_gpu"),
                          ("Output tokens/s", "output_tokens_per_s"), ("Requests/s", "requests_per_s"),
                          ("USD per million output tokens", "usd_per_million_output_tokens")):
            assert float(row[head]) == pytest.approx(p[key], rel=1e-9), head
        assert int(row["Max concurrency"]) == p["max_concurrency"] and row["Saturated"] == str(p["saturated"])


def test_serve_inputs_round_trip_through_the_scenario(window, qtbot, tmp_path):
    from planner_app import scenario

    page = _open_serve(window, qtbot)
    page.load_kind.setCurrentIndex(1)
    page.request_rate.setText("")
    qtbot.keyClicks(page.request_rate, "12.5")
    page.weights_dtype.set_value("fp8")
    path = str(tmp_path / "s.json")
    window.doc.save(path)
    saved = scenario.load(path)["serve"]
    assert saved["request_rate"] == 12.5 and "concurrency" not in saved and saved["weights_dtype"] == "fp8"
    page.load_kind.setCurrentIndex(0)
    window.doc.open(path)
    assert page.load_kind.currentData() == "request_rate" and page.request_rate.value() == 12.5
    assert page.weights_dtype.value() == "fp8"
    # a file without the section still loads; a bad value in it names the field
    data = scenario.load(path)
    del data["serve"]
    scenario.validate(data)
    from planner_app.specdb.schema import SpecDataError
    for bad, field in (({"isl": 0}, "serve.isl"), ({"kv_dtype": "fp4"}, "serve.kv_dtype"),
                       ({"micro_batch": 1}, "serve.micro_batch")):
        data["serve"] = bad
        with pytest.raises(SpecDataError, match=field):
            scenario.validate(data)
