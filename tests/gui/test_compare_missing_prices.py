"""Issue 29, item 15 (its other half): on Compare a plan without a price of a row's kind shows "—"
and why, never a blank cell that reads as a missing estimate; the cost chart draws no bar for it
and says why. The real window on the three-cloud China example (Alibaba Cloud and Tencent Cloud
list no spot or reserved prices), Compare opened by clicking its entry in the page list."""
import os

from PySide6.QtCore import Qt

from planner_app.paths import examples_dir


def click_page(window, qtbot, row: int) -> None:
    item = window.nav.item(row)
    qtbot.mouseClick(window.nav.viewport(), Qt.LeftButton, pos=window.nav.visualItemRect(item).center())


def cell(page, metric_prefix: str, col: int) -> str:
    m = page.model
    for r in range(m.rowCount()):
        if str(m.data(m.index(r, 0))).startswith(metric_prefix):
            return str(m.data(m.index(r, col)) or "")
    raise AssertionError(f"no row {metric_prefix!r}")


def test_missing_prices_say_so(window, qtbot):
    window.doc.open(os.path.join(examples_dir(), "china-70b-train-and-serve-aws-alibaba-tencent.json"))
    click_page(window, qtbot, 2)
    cp = window.compare_page
    assert window.stack.currentWidget() is cp
    qtbot.waitUntil(lambda: len(cp.results) == 3 and cp.serving is not None, timeout=60000)
    names = [r["name"] for r in cp.results]
    aws = next(j for j, n in enumerate(names) if n.startswith("AWS"))
    others = [j for j in range(3) if j != aws]
    # AWS p4d has all three kinds; the others only on-demand
    assert cell(cp, "Cost spot", aws + 1).replace(",", "").isdigit()
    for j in others:
        assert cell(cp, "Cost spot", j + 1) == "— no spot price"
        assert cell(cp, "Cost reserved 1 yr", j + 1) == "— no 1-year reserved price"
        assert cell(cp, "Cost on-demand", j + 1).replace(",", "").isdigit()
    # no cell of a price row is blank
    m = cp.model
    for r in range(m.rowCount()):
        if str(m.data(m.index(r, 0))).startswith("Cost"):
            assert all(str(m.data(m.index(r, c)) or "").strip() for c in range(1, m.columnCount()))
