"""Issue 29, item 4: meeting mode (F11) is readable. The real window on a 3-plan example plus one
machine added through Compare (4 plans), F11 pressed on the window: chart titles, axis labels and
the page list grow with the text; the plan columns' headers read whole; every Compare row is on
screen without scrolling; the chart labels of 4 plans are all drawn and none overlap; F11 again
gives back the window as it was (maximised stays maximised)."""
import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication
from textfit_checks import drawn_ticks  # tests/gui is on sys.path

from planner_app.paths import examples_dir

EXAMPLE = "china-70b-train-and-serve-aws-alibaba-tencent.json"


@pytest.fixture
def four_plans(window, qtbot):
    window.doc.open(os.path.join(examples_dir(), EXAMPLE))
    window.nav.setCurrentRow(2)
    window.compare_page.add_machines([("instance", "p5.48xlarge")])
    assert len(window.doc.data["plans"]) == 4
    qtbot.waitUntil(lambda: len(window.compare_page.results) == 4 and window.compare_page.serving is not None,
                    timeout=60000)
    return window


def press_f11(window, qtbot):
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key_F11)


def test_f11_meeting_mode_reads_well_with_four_plans(four_plans, qtbot):
    win = four_plans
    cp = win.compare_page
    chart = cp.memory_chart
    title_pt = chart.title_font().pointSizeF()
    tick_pt = chart.plot.getAxis("bottom").style["tickFont"].pointSizeF()
    nav_w = win.nav.width()
    press_f11(win, qtbot)
    assert win.meeting and win.meeting_action.isChecked()
    qtbot.waitUntil(lambda: bool(win.windowState() & Qt.WindowFullScreen))
    qtbot.wait(100)  # the full-screen geometry lands, then a meeting room's screen size replaces it
    win.resize(1920, 1080)  # (the offscreen platform's screen is smaller)
    qtbot.waitUntil(lambda: win.width() == 1920 and win.height() == 1080)
    qtbot.waitUntil(lambda: len(cp.results) == 4 and cp.serving is not None, timeout=60000)
    qtbot.wait(200)
    scale = win.settings.get("meeting_font_scale")
    # the charts and the page list grow with the text (they shrank relatively before)
    assert chart.title_font().pointSizeF() == pytest.approx(title_pt * scale, rel=0.02)
    assert chart.plot.getAxis("bottom").style["tickFont"].pointSizeF() == pytest.approx(tick_pt * scale, rel=0.02)
    assert win.nav.width() >= nav_w
    # every row is on screen: the table is as tall as its rows
    t = cp.table
    rows_px = sum(t.rowHeight(r) for r in range(cp.model.rowCount()))
    assert rows_px <= t.viewport().height(), (rows_px, t.viewport().height(), cp.model.rowCount())
    assert t.verticalScrollBar().maximum() == 0
    # the plan names in the header read whole (wrapped, never clipped)
    hh = t.horizontalHeader()
    fm = QFontMetrics(hh.font())
    from planner_app.ui.textfit import wrapped_size
    for j in range(1, cp.model.columnCount()):
        need = wrapped_size(fm, hh.label(j), hh.text_width_px(j))
        assert need.width() <= hh.text_width_px(j) and need.height() <= hh.height(), hh.label(j)
    # 4 labels under each chart, all drawn, none overlapping
    for c in (cp.memory_chart, cp.time_chart, cp.cost_chart):
        drawn = drawn_ticks(c.plot.getAxis("bottom"))
        assert len(drawn) == 4, [t for _r, t in drawn]
        rects = sorted((r for r, _t in drawn), key=lambda r: r.left())
        assert all(a.right() <= b.left() for a, b in zip(rects, rects[1:]))
    base_pt = win._base_font.pointSizeF()
    press_f11(win, qtbot)
    assert not win.meeting
    assert QApplication.font().pointSizeF() == pytest.approx(base_pt)
    qtbot.waitUntil(lambda: chart.title_font().pointSizeF() == pytest.approx(title_pt, rel=0.02))


def test_leaving_meeting_mode_gives_back_a_maximised_window(window, qtbot):
    window.showMaximized()
    qtbot.waitUntil(lambda: bool(window.windowState() & Qt.WindowMaximized))
    press_f11(window, qtbot)
    assert window.windowState() & Qt.WindowFullScreen
    press_f11(window, qtbot)
    assert window.windowState() & Qt.WindowMaximized and not window.windowState() & Qt.WindowFullScreen
