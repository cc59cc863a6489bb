"""Issue 29, item 12: the Specs page tells the truth. The sort arrow points the way the rows run
(up: A to Z, smallest first), read from the painted header after real clicks on it; memory is shown
as the datasheet gives it (GiB) and as the driver reports it (the GB figure Plan and Compare use),
each header saying which; prices more than a year old are marked amber with a tooltip naming their
date and counted in a line above the table; the detail pane says what to do when no row is selected."""
import datetime as dt

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QStyle

SPECS_ROW = 7  # the page list: Workload, Plan, Compare, Scaling, Search, Serve, Probe, Specs
TABS = {"gpus": 0, "instances": 1, "fabrics": 2}


@pytest.fixture
def specs(window, qtbot):
    window.nav.setCurrentRow(SPECS_ROW)
    page = window.specs_page
    qtbot.waitUntil(lambda: page.isVisible() and page.models["gpus"].rowCount() > 0, timeout=10000)
    return page


def _tab(page, qtbot, kind):
    bar = page.tabs.tabBar()
    qtbot.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(TABS[kind]).center())
    qtbot.waitUntil(lambda: page.kind() == kind, timeout=5000)
    return page.views[kind]


def _click_header(qtbot, view, column):
    h = view.horizontalHeader()
    x = h.sectionViewportPosition(column) + h.sectionSize(column) // 3
    qtbot.mouseClick(h.viewport(), Qt.LeftButton, pos=QPoint(x, h.height() // 2))


def _arrow(view, column) -> str | None:
    """'up' or 'down': the sort arrow as painted in the header section (the style draws it at the
    section's right end, beside the label); None when no arrow is drawn."""
    h = view.horizontalHeader()
    img = h.viewport().grab().toImage()
    mark = h.style().pixelMetric(QStyle.PM_HeaderMarkSize, None, h)
    right = h.sectionViewportPosition(column) + h.sectionSize(column) - 3  # inside the section's border
    left = right - mark - 6
    arr = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    ratio = img.devicePixelRatio()
    region = arr[2:int(h.height() * ratio) - 2, int(left * ratio):int(right * ratio), :3].astype(int)
    dark = region.sum(axis=2) < 3 * 140
    widths = [int(r.sum()) for r in dark if r.sum()]
    if len(widths) < 3:
        return None
    return "up" if widths[0] < widths[-1] else "down"  # a narrow top row: the apex is at the top


def _column_texts(view, column) -> list[str]:
    m = view.model()
    return [m.data(m.index(r, column), Qt.UserRole) for r in range(m.rowCount())]


def _runs(values) -> str:
    vals = [v for v in values if v is not None]
    if vals == sorted(vals):
        return "up"
    if vals == sorted(vals, reverse=True):
        return "down"
    return "unsorted"


def test_the_sort_arrow_points_the_way_the_rows_run(specs, qtbot):
    view = _tab(specs, qtbot, "gpus")
    # at the start: sorted by name, and the arrow says which way
    start = _arrow(view, 0)
    assert start is not None and _runs(_column_texts(view, 0)) == start == "up"
    names = _column_texts(view, 0)
    assert names[0] < names[-1]  # A to Z
    seen = []
    for _ in range(2):  # each click reverses the order; the arrow follows
        _click_header(qtbot, view, 0)
        qtbot.wait(50)
        arrow, order = _arrow(view, 0), _runs(_column_texts(view, 0))
        assert arrow == order, (arrow, order, _column_texts(view, 0)[:3])
        seen.append(arrow)
    assert seen == ["down", "up"]
    # a numeric column too: memory, first and last row
    col = [c.key for c in specs.models["gpus"].columns].index("memory_gb")
    _click_header(qtbot, view, col)
    qtbot.wait(50)
    vals = _column_texts(view, col)
    arrow = _arrow(view, col)
    assert (arrow == "up" and vals[0] <= vals[-1]) or (arrow == "down" and vals[0] >= vals[-1]), (arrow, vals[:3])
    assert _runs(vals) == arrow


def test_memory_says_which_unit_and_matches_the_plan(window, specs, qtbot):
    view = _tab(specs, qtbot, "gpus")
    model = specs.models["gpus"]
    keys = [c.key for c in model.columns]
    head = {k: model.headerData(i, Qt.Horizontal) for i, k in enumerate(keys)}
    tips = {k: model.headerData(i, Qt.Horizontal, Qt.ToolTipRole) for i, k in enumerate(keys)}
    assert head["memory_gb"] == "Memory (GiB, datasheet)"
    assert head["driver_total_gb"] == "Memory, driver total (GB)"
    assert "GiB" in tips["memory_gb"] and "driver" in tips["driver_total_gb"] and "Plan" in tips["driver_total_gb"]
    # the example plan's GPU (p5.48xlarge: H100 SXM): the Specs row and the Plan page say the same GB
    est = window.plan_page.last_estimate
    gpu = window.db.gpu(est["gpu"]["id"])
    proxy = view.model()
    row = next(r for r in range(proxy.rowCount()) if proxy.index(r, keys.index("name")).data() == gpu.name)
    datasheet = proxy.index(row, keys.index("memory_gb")).data(Qt.UserRole)
    driver = proxy.index(row, keys.index("driver_total_gb")).data()
    assert datasheet == gpu.memory_gb
    assert driver == f"{est['memory']['capacity_bytes'] / 1e9:,.2f}"
    assert f"of {driver} GB per GPU" in window.plan_page.verdict.text() or f"has {driver} GB" in \
        window.plan_page.verdict.text(), window.plan_page.verdict.text()
    assert "driver" in window.plan_page.verdict.toolTip() and "GiB" in window.plan_page.verdict.toolTip()
    # Compare calls the figure what it is
    from planner_app.ui.pages.compare_page import METRICS
    assert any(m[0] == "capacity_gb" and "driver total" in m[1] for m in METRICS)


def _expected_stale(db, today) -> set:
    """Instance rows whose hourly prices (price_date) or monthly price (price_sub_date) are over a year old."""
    hourly = ("price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr")
    out = set()
    for r in db.records_as_printed("instances"):
        for date_key, keys in (("price_date", hourly), ("price_sub_date", ("price_sub_month",))):
            try:
                d = dt.date.fromisoformat(str(r.get(date_key)))
            except ValueError:
                continue
            if today - d > dt.timedelta(days=365) and any(r.get(k) is not None for k in keys):
                out.add((r["provider"], r["region"], r["instance_id"]))
    return out


def test_prices_older_than_a_year_are_marked_and_counted(window, specs, qtbot):
    view = _tab(specs, qtbot, "instances")
    model = specs.models["instances"]
    today = dt.date.today()
    expected = _expected_stale(window.db, today)
    assert expected  # the shipped data has such rows (Tencent's, read on 2023-06-30)
    keys = [c.key for c in model.columns]
    date_col, od_col = keys.index("price_date"), keys.index("price_on_demand_hr")
    marked = {(model.rows[r]["provider"], model.rows[r]["region"], model.rows[r]["instance_id"])
              for r, _c in model.marked_cells}
    assert marked == expected
    # the line above the table counts them
    note = specs.stale_note
    assert note.isVisible() and f"{len(expected)} of {model.rowCount()} instance rows" in note.text()
    assert note.mapTo(specs, QPoint(0, 0)).y() < view.mapTo(specs, QPoint(0, 0)).y()
    # the oldest priced row: amber, a warning icon on its date, a tooltip with the date
    oldest = min((r for r, row in enumerate(model.rows) if row.get("price_on_demand_hr") is not None
                  and row.get("price_date")), key=lambda r: model.rows[r]["price_date"])
    date = model.rows[oldest]["price_date"]
    src = model.index(oldest, od_col)
    assert f"Price dated {date}, older than 1 year" in model.data(src, Qt.ToolTipRole)
    assert QColor(model.data(src, Qt.BackgroundRole)).name() != QColor("white").name()
    assert model.data(model.index(oldest, date_col), Qt.DecorationRole) is not None
    # a row priced within the year carries no mark
    fresh = next(r for r, row in enumerate(model.rows) if row.get("price_on_demand_hr") is not None
                 and (today - dt.date.fromisoformat(row["price_date"])).days < 300)
    assert model.data(model.index(fresh, od_col), Qt.BackgroundRole) is None
    # the row's details say it too, once it is clicked
    proxy = view.model()
    at = proxy.mapFromSource(src)
    view.scrollTo(at)
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=view.visualRect(at).center())
    qtbot.waitUntil(lambda: f"Price dated {date}" in specs.details.toPlainText(), timeout=5000)
    # the note is about instances: the GPU tab does not show it
    _tab(specs, qtbot, "gpus")
    assert not note.isVisible()


def test_the_age_is_counted_from_today(window, specs):
    from planner_app.ui.pages.specs_page import stale_price_marks
    model = specs.models["instances"]
    rows, cols = model.rows, model.columns
    newest = max(dt.date.fromisoformat(r["price_date"]) for r in rows if r.get("price_date"))
    _, none_yet = stale_price_marks(rows, cols, newest)
    _, all_later = stale_price_marks(rows, cols, newest + dt.timedelta(days=3 * 365))
    priced = sum(1 for r in rows if r.get("price_date") and any(
        r.get(k) is not None for k in ("price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr")))
    assert none_yet < all_later == priced


def test_the_detail_pane_says_what_to_do(specs, qtbot):
    view = _tab(specs, qtbot, "gpus")
    assert not view.selectionModel().selectedRows()
    assert "Select a row to see its details and sources" in specs.details.toPlainText()
    at = view.model().index(0, 0)
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=view.visualRect(at).center())
    name = at.data()
    qtbot.waitUntil(lambda: name in specs.details.toPlainText(), timeout=5000)
    assert "Source" in specs.details.toPlainText()
    # a tab with nothing selected gives the hint again
    _tab(specs, qtbot, "fabrics")
    assert "Select a row to see its details and sources" in specs.details.toPlainText()
