"""The Plan page's host-side panel (issue 19): the checkpoint, host RAM and input pipeline
lines come from the estimate's ``host`` key; an offload plan that does not fit the host says so,
in English and in Chinese; Compare gets the host rows."""
import pytest

from planner_app import i18n, units


@pytest.fixture(scope="module")
def offload_estimate():
    from planner_app.service.catalog import open_catalog
    from planner_app.service.estimate import estimate_json

    # Llama-3.1-405B with ZeRO-Infinity-style offload of parameters, gradients and optimizer states on one
    # 8-GPU node: ~18 bytes a parameter on the host (the node holds every shard), ~7 TB against 2 TB of RAM
    return estimate_json({"model": "llama-3.1-405b", "instance": "p5.48xlarge", "gpus": 8, "zero": 3,
                                  "offload": "params", "recipe": "mixed-bf16", "recompute": "full"}, open_catalog())


def test_the_panel_shows_the_plan_estimate(window, qtbot):
    pp = window.plan_page
    qtbot.waitUntil(lambda: (pp.last_estimate or {}).get("host") is not None, timeout=20000)
    h = pp.last_estimate["host"]
    text = pp.host_panel.labels["checkpoint"].text()
    assert units.fmt_bytes(h["checkpoint"]["resumable_bytes"]) in text
    assert units.fmt_bytes(h["checkpoint"]["weights_bytes"]) in text
    assert units.fmt_bytes(h["ram"]["needed_bytes"]) in pp.host_panel.labels["ram"].text()
    assert f"{h['input']['workers_per_gpu']} loader workers" in pp.host_panel.labels["input"].text()
    assert not pp.host_panel.isHidden()


def test_an_offload_plan_that_does_not_fit_the_host_says_so(window, offload_estimate):
    from planner_app.ui.pages.host_panel import HostPanel

    ram = offload_estimate["host"]["ram"]
    assert ram["fits"] is False and ram["parts"]["offloaded_states"] > ram["ram_bytes"] * 0.5
    advice = offload_estimate["host"]["advice"]
    assert any(a.startswith("the CPU offload does not fit the host") for a in advice)
    panel = HostPanel()
    panel.set_estimate(offload_estimate)
    assert "DOES NOT FIT the host" in panel.labels["ram"].text()
    assert i18n.install("zh_CN")
    try:
        zh = HostPanel()
        zh.set_estimate(offload_estimate)
        assert "主机内存放不下" in zh.labels["ram"].text()
        assert zh.title() == "主机侧"
        assert i18n.engine_text(advice[0], "zh_CN").startswith("CPU 卸载放不下主机内存")
    finally:
        i18n.install("en")


def test_compare_has_the_host_rows(window, offload_estimate):
    from planner_app.ui.pages.compare_page import compare_rows

    rows, _ = compare_rows([{"name": "a", "options": {}, "estimate": offload_estimate}])
    by = {r["metric"].split(" (")[0]: r["p0"] for r in rows}
    assert by["Checkpoint"] == pytest.approx(offload_estimate["host"]["checkpoint"]["resumable_bytes"] / 1e9)
    assert by["Host RAM per node"].endswith("NO")
    assert by["Input pipeline"] in ("fed", "CPU-bound", "storage-bound")


def test_the_checkpoint_fields_are_plan_options(window, qtbot):
    pp = window.plan_page
    qtbot.waitUntil(lambda: (pp.last_estimate or {}).get("host") is not None, timeout=20000)
    before = pp.last_estimate["host"]["checkpoint"]
    f = pp.host_panel.fields["checkpoint_interval_min"]
    f.clear()
    qtbot.keyClicks(f, "30")
    k = pp.host_panel.fields["checkpoints_kept"]
    k.clear()
    qtbot.keyClicks(k, "5")
    qtbot.waitUntil(lambda: pp.last_estimate["host"]["checkpoint"]["interval_s"] == 1800
                    and pp.last_estimate["host"]["checkpoint"]["kept"] == 5, timeout=20000)
    after = pp.last_estimate["host"]["checkpoint"]
    assert after["overhead_fraction"] == pytest.approx(before["overhead_fraction"] * before["interval_s"] / 1800)
    plan = window.doc.data["plans"][pp.index]
    assert plan["checkpoint_interval_min"] == 30 and plan["checkpoints_kept"] == 5
    assert "5 kept" in pp.host_panel.labels["checkpoint"].text()
