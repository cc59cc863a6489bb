"""Issue 29, item 3: the mouse wheel over a chart scrolls the page; only Ctrl+wheel zooms, and no
zoom or drag shows a negative axis for a quantity that cannot be negative."""
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QScrollArea


def _wheel(widget, steps: int, modifiers=Qt.NoModifier) -> bool:
    """``steps`` notches of a wheel over the middle of ``widget`` (negative: towards the user);
    whether the widget accepted the event. (Qt hands an event a widget leaves unaccepted to its
    parents only when it comes from the system, QApplication::notify: a synthetic one stops here,
    so the page's scrolling is checked by giving it the event the chart declined.)"""
    pos = QPointF(widget.width() / 2, widget.height() / 2)
    ev = QWheelEvent(pos, QPointF(widget.mapToGlobal(pos.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                     Qt.NoButton, modifiers, Qt.NoScrollPhase, False)
    ev.setAccepted(True)
    QApplication.sendEvent(widget, ev)
    QApplication.processEvents()
    return ev.isAccepted()


def _scroll_area(widget):
    w = widget.parent()
    while w is not None and not isinstance(w, QScrollArea):
        w = w.parent()
    return w


def test_the_wheel_over_a_chart_scrolls_the_page_and_ctrl_wheel_zooms(window, qtbot):
    window.resize(1366, 700)
    window.nav.setCurrentRow(1)
    page = window.plan_page
    qtbot.waitUntil(lambda: page.last_estimate is not None, timeout=10000)
    chart = page.memory_chart
    view = chart.plot_widget
    area = _scroll_area(chart)
    assert area is not None
    bar = area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)  # the results are taller than the window
    bar.setValue(0)
    before = chart.plot.getViewBox().viewRange()
    for _ in range(3):
        assert not _wheel(view.viewport(), -1), "the chart must leave a plain wheel to the page"
    assert chart.plot.getViewBox().viewRange() == before, "a plain wheel must not zoom the chart"
    for _ in range(3):  # what Qt does with the declined event: the page scrolls
        _wheel(area.viewport(), -1)
    assert bar.value() > 0
    # Ctrl+wheel is the explicit gesture: it zooms; zooming out never shows a negative GB axis
    for _ in range(6):
        assert _wheel(view.viewport(), -1, Qt.ControlModifier)
    after = chart.plot.getViewBox().viewRange()
    assert after != before
    assert after[1][0] >= 0, after


def test_dragging_a_chart_never_shows_a_negative_value_axis(window, qtbot):
    window.nav.setCurrentRow(1)
    page = window.plan_page
    qtbot.waitUntil(lambda: page.last_estimate is not None, timeout=10000)
    vb = page.time_chart.plot.getViewBox()
    y0, y1 = vb.viewRange()[1]
    vb.translateBy(y=-(y1 - y0) * 3)  # what a drag downwards does
    assert vb.viewRange()[1][0] >= 0
