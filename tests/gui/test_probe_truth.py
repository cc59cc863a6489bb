"""The Probe page tells the truth without a GPU (issue 29, item 10): a check mark only where a
measurement met a datasheet figure, "not compared" with its reason otherwise; roofline tick labels
at decades that never overlap; telemetry charts that say why they are empty instead of drawing
0-1 axes, and axes from 0 in the data's units when there are samples; "Use selected profile" only
with a profile selected."""
from __future__ import annotations

import json
import math
import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from textfit_checks import drawn_ticks  # tests/gui is on sys.path

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
PROBE_PAGE_ROW = 6  # the page list: Workload, Plan, Compare, Scaling, Search, Serve, Probe, Specs


def _h200_result() -> dict:
    with open(os.path.join(DATA, "probe_h200.json"), encoding="utf-8") as f:
        return json.load(f)


def overlapping(ticks, side: str) -> list[tuple[str, str]]:
    """Pairs of neighbouring labels whose rectangles overlap along the axis."""
    key = (lambda rt: rt[0].top()) if side == "left" else (lambda rt: rt[0].left())
    ordered = sorted(ticks, key=key)
    out = []
    for (a, ta), (b, tb) in zip(ordered, ordered[1:]):
        if (side == "left" and a.bottom() > b.top()) or (side == "bottom" and a.right() > b.left()):
            out.append((ta, tb))
    return out


def assert_decade_labels(qtbot, chart, min_labels: int = 2) -> None:
    """At least ``min_labels`` labels on each axis, whole decades, none overlapping its neighbour.
    (pyqtgraph widens an axis for its labels on the next layout pass: the count is waited for.)"""
    for side in ("left", "bottom"):
        axis = chart.plot.getAxis(side)
        qtbot.waitUntil(lambda axis=axis: len(drawn_ticks(axis)) >= min_labels, timeout=3000)
        ticks = drawn_ticks(axis)
        texts = [t for _r, t in ticks]
        assert len(texts) >= min_labels, (side, texts)
        assert not overlapping(ticks, side), (side, texts, [(r.top(), r.bottom(), r.left(), r.right())
                                                            for r, _t in ticks])
        for t in texts:  # whole decades, written as plain numbers
            v = float(t.replace(",", ""))
            assert v > 0 and abs(math.log10(v) - round(math.log10(v))) < 1e-9, (side, t)


@pytest.fixture(params=["nvml-missing", "nvml-no-gpu"])
def nogpu_window(request, qtbot, settings, userdb, monkeypatch):
    """The real main window on a machine without a GPU: NVML absent (CI), or loaded with no device."""
    from PySide6.QtCore import QThreadPool

    from planner_app.app import build_window
    from planner_app.probe import nvml

    available = request.param == "nvml-no-gpu"
    state = nvml.NvmlState(available, "NVML ready" if available else "no NVIDIA driver found")
    monkeypatch.setattr(nvml, "inventory", lambda: (state, []))
    win = build_window(settings=settings, userdb=userdb)
    win.resize(1366, 768)
    win.show()
    qtbot.waitUntil(lambda: win.plan_page.last_estimate is not None, timeout=20000)
    win.nav.setCurrentRow(PROBE_PAGE_ROW)
    win.nvml_available = available
    yield win
    win.doc._set_dirty(False)
    win.close()
    win.deleteLater()
    assert QThreadPool.globalInstance().activeThreadCount() == 0, "a test left worker threads running"


def _run_cpu_probe(pp, qtbot):
    pp.backend.set_value("numpy")
    pp.quick.setChecked(True)
    with qtbot.waitSignal(pp.slot.succeeded, timeout=120000):
        qtbot.mouseClick(pp.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: pp.run_button.isEnabled(), timeout=10000)


def test_without_a_gpu_nothing_is_checked_and_the_charts_say_why(nogpu_window, qtbot):
    pp = nogpu_window.probe_page
    # telemetry: a sentence in place of each chart's axes, naming why
    why = ("No GPU telemetry: NVML found no GPU" if nogpu_window.nvml_available
           else "No GPU telemetry: NVML is unavailable (see Devices)")
    for chart in (pp.util_chart, pp.power_chart, pp.mem_chart):
        assert not chart.plot_widget.isVisible(), "no 0-1 axes without data"
        assert chart.empty_label.isVisible() and chart.is_empty()
        assert why in chart.empty_label.text() and chart._title in chart.empty_label.text()
    # the roofline before a run: decade labels, none on another, and a hint instead of a legend
    assert pp.roofline.hint_shown() and pp.roofline.legend_names() == []
    assert_decade_labels(qtbot, pp.roofline, min_labels=3)

    _run_cpu_probe(pp, qtbot)
    texts = [pp.verdicts.item(i).text() for i in range(pp.verdicts.count())]
    assert texts and not any(t.startswith("✔") for t in texts), texts
    kinds = pp.verdict_kinds()
    gemm_dtypes = {r["dtype"] for r in pp.result["gemm"]}
    assert len(kinds) >= len(gemm_dtypes) + len(pp.result["bandwidth"])
    assert all(kind == "not_compared" for kind, _t in kinds), kinds
    assert not any(text.startswith("✔") for _k, text in kinds), kinds
    for dtype in gemm_dtypes:
        line = next(t for _k, t in kinds if t.startswith(f"– {dtype} GEMM"))
        assert "not compared — a CPU run (numpy backend) has no datasheet" in line
    for i in range(pp.verdicts.count()):  # grey, neutral
        assert pp.verdicts.item(i).foreground().color().name() == "#666666"
    # no datasheet roof for a CPU: the legend does not name one; the measured points and labels read
    assert pp.roofline.legend_names() == ["measured roof", "measured GEMMs"] and not pp.roofline.hint_shown()
    assert_decade_labels(qtbot, pp.roofline)
    assert not pp.save_button.isEnabled() and not pp.use_button.isEnabled()
    # still no telemetry after a run: the charts keep their sentence
    pp.refresh_telemetry()
    assert all(c.is_empty() for c in (pp.util_chart, pp.power_chart, pp.mem_chart))


def test_a_check_mark_only_where_the_datasheet_was_compared(window, qtbot):
    """An H200 result (tests/data/probe_h200.json): GEMM and copy rates met the datasheet (checked);
    the no-telemetry note and the triad row, compared with nothing, are not."""
    pp = window.probe_page
    res = _h200_result()
    pp._show_result(("bench", res))
    from planner_app.probe.verdicts import all_verdicts
    compared = {v["text"] for v in all_verdicts(res, pp.gpu, []) if v.get("datasheet") and v["status"] == "normal"}
    texts = [pp.verdicts.item(i).text() for i in range(pp.verdicts.count())]
    assert compared and {t[2:] for t in texts if t.startswith("✔ ")} == compared
    kinds = pp.verdict_kinds()
    assert all(t.startswith("✔ ") == (k == "passed") for k, t in kinds)
    telemetry = next(t for _k, t in kinds if "no telemetry" in t)
    assert telemetry.startswith("– ")
    triad = next(t for _k, t in kinds if t.startswith("– triad"))
    assert "not compared" in triad
    assert pp.roofline.legend_names() == ["datasheet roof", "measured roof", "measured GEMMs"]
    assert_decade_labels(qtbot, pp.roofline, min_labels=3)
    # a CPU result after it: the datasheet roof goes (it once stayed drawn from the GPU run)
    cpu = dict(res, device={"kind": "cpu", "name": "x86_64"}, backend="numpy")
    pp._show_result(("bench", cpu))
    assert "datasheet roof" not in pp.roofline.legend_names()
    xs = pp.roofline._roof.getData()[0]
    assert xs is None or len(xs) == 0


@pytest.mark.parametrize("point_size, height_px", [(10, 160), (10, 240), (18, 200), (24, 260)])
def test_roofline_labels_never_overlap(qtbot, point_size, height_px):
    """A short chart and meeting mode's large font: fewer decade labels, never stacked."""
    from planner_app.ui.charts.probe_charts import RooflineChart
    chart = RooflineChart()
    qtbot.addWidget(chart)
    f = QFont(chart.font())
    f.setPointSize(point_size)
    chart.setFont(f)
    chart.resize(420, height_px)
    chart.show()
    qtbot.waitExposed(chart)
    assert_decade_labels(qtbot, chart)
    res = _h200_result()
    pts = [(100.0, r["tflops"]) for r in res["gemm"]] + [(0.5, 0.002)]  # 0.001 to 10,000 TFLOP/s
    chart.set_data(989.0, 4800.0, pts, 800.0, 4000.0)
    assert_decade_labels(qtbot, chart)


def test_telemetry_axes_start_at_zero_in_the_datas_units(window, qtbot):
    """With samples (NVML's recorded H200 telemetry): % from 0 to 100, watts and GiB from 0 up to a
    round value above the data, seconds ago from 0 (now, at the right)."""
    pp = window.probe_page
    window.nav.setCurrentRow(PROBE_PAGE_ROW)
    qtbot.waitUntil(lambda: len(pp.sampler.snapshot()) >= 3, timeout=10000)
    def charted() -> bool:  # the page's 1 s timer has drawn at least two samples
        curve = pp.power_chart._curves.get(0)
        xs = None if curve is None else curve.getData()[0]
        return xs is not None and len(xs) >= 2

    qtbot.waitUntil(charted, timeout=5000)
    pp.refresh_telemetry()
    watts = [s["power_w"] for s in pp.sampler.snapshot()]
    def y_range(chart):
        return tuple(float(v) for v in chart.plot.getViewBox().viewRange()[1])

    assert y_range(pp.util_chart) == (0.0, 100.0)
    lo, hi = y_range(pp.power_chart)
    assert lo == 0.0 and max(watts) < hi <= 2 * 1.1 * max(watts)
    assert y_range(pp.mem_chart)[0] == 0.0
    for chart, unit in ((pp.util_chart, "%"), (pp.power_chart, "W"), (pp.mem_chart, "GiB")):
        assert chart.plot_widget.isVisible() and not chart.is_empty()
        assert chart.plot.getAxis("left").labelText == unit
        left = [t for _r, t in drawn_ticks(chart.plot.getAxis("left"))]
        assert "0" in left or "0.0" in left, left
        assert not overlapping(drawn_ticks(chart.plot.getAxis("left")), "left")
        xs = chart._curves[0].getData()[0]
        assert xs.min() >= 0  # seconds ago
        x_lo, x_hi = chart.plot.getViewBox().viewRange()[0]
        assert x_lo <= 0 < xs.max() <= x_hi
        bottom = [t for _r, t in drawn_ticks(chart.plot.getAxis("bottom"))]
        assert "0" in bottom, bottom


def test_use_selected_profile_needs_a_selected_profile(window, qtbot, userdb):
    pp = window.probe_page
    window.nav.setCurrentRow(PROBE_PAGE_ROW)
    assert pp.profiles.count() == 0
    assert not pp.use_button.isEnabled() and "No calibration profiles yet" in pp.use_button.toolTip()
    res = _h200_result()
    userdb.save_profile("h200-bench", {"bench": res}, gpu_id="h200-sxm", device=res["device"]["name"])
    pp.refresh_profiles()
    assert pp.profiles.count() == 1
    assert not pp.use_button.isEnabled() and "Select a profile" in pp.use_button.toolTip()
    item = pp.profiles.item(0)
    pp.profiles.scrollToItem(item)
    qtbot.mouseClick(pp.profiles.viewport(), Qt.LeftButton, pos=pp.profiles.visualItemRect(item).center())
    assert pp.use_button.isEnabled() and "h200-bench" in pp.use_button.toolTip()
    with qtbot.waitSignal(pp.calibration_chosen, timeout=5000) as sig:
        qtbot.mouseClick(pp.use_button, Qt.LeftButton)
    assert sig.args == ["h200-bench"]
    assert window.doc.data.get("calibration") == "h200-bench"
    # Ctrl+click takes the selection away again: the button follows
    qtbot.mouseClick(pp.profiles.viewport(), Qt.LeftButton, Qt.ControlModifier,
                     pp.profiles.visualItemRect(item).center())
    assert not pp.profiles.selectedItems() and not pp.use_button.isEnabled()
