"""Issue 29, items 6 and 14 on the Plan page: durations in their natural unit, a plan that does not
fit marked as hypothetical, the capacity line drawn over the bars, and a step-time chart that
never reads 600,000 ms."""
import copy

SC = {"schema_version": 2, "meta": {"title": "plan truth"},
      "workload": {"mode": "training", "model": "llama-3.1-8b", "tokens": 2e8, "seq_len": 4096, "micro_batch": 1,
                   "recompute": "full", "finetune": "lora", "lora_rank": 16, "global_batch": 16},
      "plans": [{"name": "one H100", "gpu": "h100-sxm", "gpus": 1}],
      "calibration": None, "currency": "USD", "price_mix": None, "cny_per_usd": None, "chosen_plan": 0}


def _plain(text: str) -> str:
    return text.replace("&nbsp;", " ").replace("\u2011", "-")


def _show(window, qtbot, sc):
    window.nav.setCurrentRow(1)
    page = window.plan_page
    with qtbot.waitSignal(page.estimated, timeout=30000):
        window.doc.load_data(copy.deepcopy(sc), dirty=False)
    return page


def test_a_short_job_reads_in_minutes_not_zero_days(window, qtbot):
    sc = copy.deepcopy(SC)
    sc["workload"]["tokens"] = 5e6
    page = _show(window, qtbot, sc)
    t = page.last_estimate["time"]
    assert 120 < t["train_s"] < 7200  # a 5M-token LoRA job on one H100 takes minutes
    text = page.numbers["train"].text()
    assert text.endswith(" min") and not text.startswith("0.0"), text
    assert "(if it fit)" not in text


def test_a_plan_that_does_not_fit_says_its_time_is_hypothetical(window, qtbot):
    sc = copy.deepcopy(SC)
    sc["workload"].update(model="llama-3.1-70b", finetune="full", tokens=1e10)
    sc["workload"].pop("lora_rank")
    page = _show(window, qtbot, sc)
    assert not page.last_estimate["memory"]["fits"]
    for key in ("step", "tokens_s", "train", "gpu_hours"):
        assert "(if it fit)" in page.numbers[key].text(), key
    # the capacity line is drawn over the bar that exceeds it
    chart = page.memory_chart
    assert chart.totals[0] > page.last_estimate["memory"]["capacity_bytes"] / 1e9
    assert chart._limit.zValue() > max(b.zValue() for b in chart._bars.values())


def test_a_long_step_is_charted_in_seconds(window, qtbot):
    sc = copy.deepcopy(SC)
    sc["workload"].update(model="llama-3.1-70b", finetune="full", tokens=1e10, global_batch=4096,
                          micro_batch=1)
    sc["workload"].pop("lora_rank")
    sc["plans"] = [{"name": "8 H100", "gpu": "h100-sxm", "gpus": 8, "zero": 3}]
    page = _show(window, qtbot, sc)
    step = page.last_estimate["time"]["step_s"]
    assert step > 100
    assert page.time_chart.unit == "s"
    assert abs(page.time_chart.totals[0] - step) < 1e-6 * step
