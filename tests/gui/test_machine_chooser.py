"""Issue 29, item 8: choosing machines. Search, Serve's SLO search and Compare's "Add machines…"
list ~200 machines; each now has a search box and provider/GPU/region filters that hide rows (never
untick them); the "GPU or instance" box lists the matches of what is typed instead of splicing an
inline completion into the text; a new scenario (File > New) starts the ticks again."""
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from planner_app.ui.pages.hardware import hw_key


def visible(chooser):
    return [chooser.list.item(i).text() for i in range(chooser.list.count()) if not chooser.list.item(i).isHidden()]


def test_search_box_and_filters_narrow_the_list(window, qtbot):
    window.nav.setCurrentRow(4)
    ch = window.search_page.machines
    total = ch.list.count()
    assert total > 150
    ticked = set(ch.checked_keys())
    qtbot.keyClicks(ch.search, "h200 aws")
    shown = visible(ch)
    assert 0 < len(shown) < 10 and all("AWS" in s and "h200" in s.lower() for s in shown), shown
    assert set(ch.checked_keys()) == ticked  # filtering never unticks
    ch.search.clear()
    ch.provider.setCurrentIndex(ch.provider.findText("Alibaba Cloud"))
    shown = visible(ch)
    assert shown and all(s.startswith("Alibaba Cloud") for s in shown)
    ch.region.setCurrentIndex(ch.region.findText("cn-beijing"))
    assert visible(ch) and all("Alibaba Cloud" in s for s in visible(ch)) and len(visible(ch)) < len(shown)
    # tick one of the filtered rows with the mouse: it joins the ticks, the count says so
    item = next(ch.list.item(i) for i in range(ch.list.count()) if not ch.list.item(i).isHidden())
    rect = ch.list.visualItemRect(item)
    qtbot.mouseClick(ch.list.viewport(), Qt.LeftButton, pos=QPoint(rect.left() + 10, rect.center().y()))
    assert item.checkState() == Qt.Checked and len(ch.checked_keys()) == len(ticked) + 1
    assert ch.count.text().startswith(f"{len(ticked) + 1} ticked")
    ch.provider.setCurrentIndex(0)
    ch.region.setCurrentIndex(0)
    qtbot.mouseClick(ch.ticked_only, Qt.LeftButton)
    assert len(visible(ch)) == len(ticked) + 1


def test_file_new_starts_the_ticks_again(window, qtbot):
    ch = window.search_page.machines
    defaults = set(ch.checked_keys())
    ch.set_checked({hw_key("instance", "p4d.24xlarge")})
    window.doc.new()
    assert set(ch.checked_keys()) == defaults
    # the plans' machines are one click away
    plan_keys = ch.plan_keys
    assert plan_keys
    qtbot.mouseClick(ch.plans_button, Qt.LeftButton)
    assert plan_keys <= set(ch.checked_keys())


def test_add_machines_dialog_has_the_search_box(window, qtbot):
    from planner_app.ui.pages.compare_page import AddInstancesDialog
    d = AddInstancesDialog(window.db, window)
    qtbot.addWidget(d)
    qtbot.keyClicks(d.list.search, "p5.48xlarge")
    assert visible(d.list) and all("p5.48xlarge" in s for s in visible(d.list))


def test_typing_a_machine_lists_the_matches(window, qtbot):
    combo = window.plan_page.hardware
    window.nav.setCurrentRow(1)
    combo.lineEdit().selectAll()
    qtbot.keyClicks(combo.lineEdit(), "p5.48")
    comp = combo.completer()
    QApplication.processEvents()
    assert combo.lineEdit().text() == "p5.48"  # what was typed, no inline completion spliced in
    assert comp.popup().isVisible()
    matches = [comp.completionModel().index(i, 0).data() for i in range(comp.completionCount())]
    assert matches and all("p5.48" in m.lower() for m in matches)
    # pick the first match from the list: the plan takes that machine
    qtbot.keyClick(comp.popup(), Qt.Key_Down)
    qtbot.keyClick(comp.popup(), Qt.Key_Return)
    qtbot.waitUntil(lambda: window.doc.data["plans"][window.doc.data.get("chosen_plan", 0)].get("instance")
                    == "p5.48xlarge", timeout=5000)
