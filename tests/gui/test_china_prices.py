"""Issue 17 in the GUI: the Plan page names the currency, date and exchange rate of a plan's
price, says when a chosen instance has no published price, and tells apart an instance sold
in two regions."""
import os

import pytest

from planner_app import scenario

EXAMPLE = os.path.join(scenario.example_dir(), "china-70b-pretraining-aws-alibaba-tencent.json")


def _show(window, qtbot, index):
    page = window.plan_page
    with qtbot.waitSignal(page.estimated, timeout=30000):
        page.plan_combo.setCurrentIndex(index)
    return page.numbers["cost"].text()


@pytest.fixture
def china(window, qtbot):
    window.nav.setCurrentRow(1)
    with qtbot.waitSignal(window.plan_page.estimated, timeout=30000):
        window.doc.load_data(scenario.load(EXAMPLE), dirty=False)
    return window


def test_plan_page_names_currency_date_and_rate(china, qtbot):
    page = china.plan_page
    ali = _show(china, qtbot, 1)
    assert page.hardware.currentData() == "instance:Alibaba Cloud:cn-beijing:ecs.gn7-c13g1.26xlarge"
    assert "CNY&nbsp;price&nbsp;of&nbsp;2024\u201112\u201131" in ali and "7.10&nbsp;CNY/USD" in ali
    assert "default&nbsp;rate" in ali and "may&nbsp;be&nbsp;stale" in ali
    aws = _show(china, qtbot, 0)
    assert "USD&nbsp;price&nbsp;of" in aws and "CNY" not in aws
    tencent = _show(china, qtbot, 2)  # GT4: no price on either Tencent site
    assert "publishes no price" in tencent


def test_an_instance_in_two_regions_is_two_choices(china):
    keys = [china.plan_page.hardware.itemData(i) for i in range(china.plan_page.hardware.count())]
    both = [k for k in keys if k.endswith(":ecs.gn7e-c16g1.32xlarge")]
    assert both == ["instance:Alibaba Cloud:cn-beijing:ecs.gn7e-c16g1.32xlarge",
                    "instance:Alibaba Cloud:cn-shanghai:ecs.gn7e-c16g1.32xlarge"]
    assert "instance:p5.48xlarge" in keys  # a unique id keeps its short key


def _search_only(sp, qtbot, key):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    for i in range(sp.machines.list.count()):
        it = sp.machines.list.item(i)
        it.setCheckState(Qt.Checked if it.data(Qt.UserRole) == key else Qt.Unchecked)
    with qtbot.waitSignal(sp.slot.succeeded, timeout=60000):
        qtbot.mouseClick(sp.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: sp.run_button.isEnabled(), timeout=10000)
    QApplication.processEvents()
    heads = [sp.model.headerData(i, Qt.Horizontal) for i in range(sp.model.columnCount())]
    cost = next(i for i, h in enumerate(heads) if h.startswith("Cost (USD"))
    return [sp.model.index(r, cost).data() for r in range(sp.model.rowCount())], cost


def test_search_page_marks_costs_converted_from_cny(window, qtbot):
    from PySide6.QtCore import Qt

    sp = window.search_page
    window.nav.setCurrentRow(4)
    ali, col = _search_only(sp, qtbot, "instance:Alibaba Cloud:cn-beijing:ecs.gn7-c13g1.26xlarge")
    assert ali and all(c.startswith("¥→$ ") for c in ali)
    assert "7.10 CNY per USD" in sp.model.headerData(col, Qt.Horizontal, Qt.ToolTipRole)
    aws, _ = _search_only(sp, qtbot, "instance:p4d.24xlarge")
    assert aws and not any("¥" in c for c in aws)


def test_compare_names_each_plans_price_currency_date_and_rate(window):
    from planner_app.ui.pages.compare_page import compare_rows
    results = scenario.evaluate(scenario.load(EXAMPLE), window.db)
    rows, _ = compare_rows(results, db=window.db)
    last = rows[-1]
    assert last["metric"] == "Prices (currency, date)"
    assert last["p0"].startswith("USD ") and "→" not in last["p0"]  # AWS
    assert last["p1"] == "CNY 2024-12-31 → $ at 7.10"  # Alibaba, converted at the default rate
    assert last["p2"] == "no published price"  # Tencent GT4
    assert compare_rows(results)[0][-1]["metric"] != "Prices (currency, date)"  # no db, no row
