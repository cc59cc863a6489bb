"""A small job's input pipeline on the Plan page's host panel (issue 29, item 17, as the CLI):
its rate to two significant digits, never "0 samples/s per node", in English and Chinese."""
import os
import re

import pytest

from planner_app import units

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "qlora-8b-one-gpu.json")


def _input_line(win, qtbot) -> tuple[str, dict]:
    assert win.open_path(EXAMPLE)
    pp = win.plan_page
    qtbot.waitUntil(lambda: (pp.last_estimate or {}).get("host") is not None
                    and pp.last_estimate["setup"].get("finetune") == "qlora", timeout=20000)
    return pp.host_panel.labels["input"].text(), pp.last_estimate["host"]["input"]


def test_the_host_panel_shows_a_small_jobs_real_rate(window, qtbot):
    text, demand = _input_line(window, qtbot)
    need = demand["samples_per_s_per_node"]
    assert 0 < need < 10  # one GPU, QLoRA at 4K context: a few samples a second at most
    shown = float(re.search(r"([\d.,]+) samples/s per node", text).group(1).replace(",", ""))
    assert shown == pytest.approx(need, rel=0.05)
    assert units.fmt_bytes(demand["read_gb_s_per_node"] * 1e9) + "/s" in text
    assert " 0 samples/s" not in text and "0.00 GB/s" not in text


def test_the_same_in_chinese(zh_window, qtbot):
    text, demand = _input_line(zh_window, qtbot)
    assert f"每节点 {units.fmt_rate(demand['samples_per_s_per_node'])} 样本/秒" in text
    assert "每节点 0 样本/秒" not in text
