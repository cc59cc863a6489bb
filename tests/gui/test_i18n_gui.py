"""The Chinese UI: the report exported through File ▸ Export Report is Chinese (the report
language follows the UI unless Settings choose another); engine sentences on the Plan page
are Chinese."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "report"))
from report_helpers import pdf_text, squash  # noqa: E402


def _menu_action(win, text):
    for menu_action in win.menuBar().actions():
        for a in menu_action.menu().actions():
            if a.text().replace("&", "").startswith(text):
                return a
    raise AssertionError(f"no menu action {text!r}: " + ", ".join(
        a.text() for m in win.menuBar().actions() for a in m.menu().actions()))


def _export_through_the_menu(win, qtbot, monkeypatch, path):
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), "PDF (*.pdf)")))
    action = _menu_action(win, "导出报告")
    with qtbot.waitSignal(win.report_slot.succeeded, timeout=120000):
        action.trigger()
    qtbot.waitUntil(lambda: not win.report_slot.busy, timeout=5000)


def test_export_from_the_chinese_ui_writes_a_chinese_report(zh_window, qtbot, monkeypatch, tmp_path):
    from planner_app import i18n

    est = zh_window.plan_page.last_estimate
    out = tmp_path / "zh.pdf"
    _export_through_the_menu(zh_window, qtbot, monkeypatch, out)
    text = squash(pdf_text(str(out)))
    for heading in ("推荐方案", "每GPU显存", "假设", "数据来源"):
        assert heading in text, heading
    # engine sentences of the estimate, in Chinese (the example's first plan is the chosen one)
    assert squash(i18n.engine_text(est["assumptions"][-1], "zh_CN")) in text
    if est.get("advice"):
        assert "引擎建议" in text
        assert squash(i18n.engine_text(est["advice"]["text"], "zh_CN"))[:40] in text
    assert "training loop" not in text and "intra-node link" not in squash(text).lower()
    # the Plan page shows the same sentences in Chinese
    page = zh_window.plan_page
    assert page.assumptions.item(0).text() == i18n.engine_text(est["assumptions"][0])
    assert page.assumptions.item(0).text() != str(est["assumptions"][0])


def test_settings_choose_another_report_language(zh_window, qtbot, monkeypatch, tmp_path):
    zh_window.settings.set("report_language", "en")
    assert zh_window.report_language() == "en"
    out = tmp_path / "en.pdf"
    _export_through_the_menu(zh_window, qtbot, monkeypatch, out)
    text = pdf_text(str(out))
    assert "Recommendation" in text and "Assumptions" in text and "推荐方案" not in text


def test_specs_headers_are_human_and_every_price_shows_its_currency(zh_window):
    from PySide6.QtCore import Qt

    page = zh_window.specs_page
    gpus = page.models["gpus"]
    headers = [gpus.headerData(i, Qt.Horizontal) for i in range(gpus.columnCount())]
    assert "显存（GiB，规格表）" in headers and "显存，驱动报告总量（GB）" in headers, headers
    assert not any("_" in h for h in headers), headers
    inst = page.models["instances"]
    headers = [inst.headerData(i, Qt.Horizontal) for i in range(inst.columnCount())]
    assert "按需价格 / 小时" in headers, headers
    col = headers.index("按需价格 / 小时")
    assert "币种" in inst.headerData(col, Qt.Horizontal, Qt.ToolTipRole)
    marks = {}
    for r in range(inst.rowCount()):
        cur = inst.rows[r].get("currency")
        if inst.rows[r].get("price_on_demand_hr") is None:
            continue
        text = inst.data(inst.index(r, col))
        marks.setdefault(cur, set()).add(text[0])
    assert marks.get("CNY") == {"¥"} and marks.get("USD") == {"$"}, marks
    page.tabs.setCurrentIndex(1)
    assert page.price_note.isVisibleTo(page) and "¥" in page.price_note.text()


def test_yes_no_and_units_are_translated_in_tables(zh_window):
    from planner_app.ui.models.table_model import Column
    from planner_app.ui.pages.compare_page import compare_rows

    assert Column("fits", "x").text(True) == "是" and Column("fits", "x").text(False) == "否"
    est = zh_window.plan_page.last_estimate
    rows, _ = compare_rows([{"name": "a", "options": {}, "estimate": est}])
    labels = [r["metric"] for r in rows]
    assert "训练时间（天）" in labels, labels
    fits = next(r for r in rows if r["metric"] == "可容纳")
    assert fits["p0"] in ("是", "否")


def test_nvml_messages_are_shown_in_chinese(zh_window):
    import re

    from planner_app import i18n
    from planner_app.probe import nvml

    for name in ("NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded", "NVMLError_LibRmVersionMismatch",
                 "NVMLError_NoPermission", "NVMLError_Unknown"):
        msg = nvml._plain_error(type(name, (Exception,), {})("boom"))
        zh = i18n.engine_text(msg)
        assert re.search(r"[\u4e00-\u9fff]", zh) and zh != str(msg), (name, zh)
    page = zh_window.probe_page
    page.refresh_inventory()
    st, gpus = nvml.inventory()
    if not gpus:  # no NVIDIA GPU here: the page says why, in Chinese
        assert page.nvml_status.text() == i18n.engine_text(st.message) != str(st.message)


def _form_rows(form):
    """(label text, label tooltip, field) of every labelled row of a QFormLayout."""
    from PySide6.QtWidgets import QFormLayout
    rows = []
    for i in range(form.rowCount()):
        label = form.itemAt(i, QFormLayout.LabelRole)
        field = form.itemAt(i, QFormLayout.FieldRole)
        if label is not None and field is not None and label.widget() is not None and field.widget() is not None:
            rows.append((label.widget().text(), label.widget().toolTip(), field.widget()))
    return rows


def _option_rows(win):
    """The option-table rows of the Workload and Plan pages: {key: (label, label tooltip, field)}."""
    from PySide6.QtWidgets import QFormLayout, QWidget

    fields = {}
    for page in (win.workload_page, win.plan_page):
        for form in page.findChildren(QFormLayout):
            for label, tip, field in _form_rows(form):
                fields[id(field)] = (label, tip, field)
    out = {}
    for page in (win.workload_page, win.plan_page):
        for w in page.findChildren(QWidget):
            if w.objectName().startswith("option:") and id(w) in fields:
                out[w.objectName()[len("option:"):]] = fields[id(w)]
    return out


def test_form_labels_and_tooltips_come_from_the_option_table(window):
    """Every option field of the Workload and Plan pages is labelled with the table's label, and
    the label and the field both show the table's help (the CLI's --help text) and flag."""
    from planner_app.scenario import ESTIMATE_OPTIONS as BY_KEY
    rows = _option_rows(window)
    # at least every training and layout field of the two pages
    assert {"micro_batch", "seq_len", "global_batch", "tokens", "recipe", "optimizer", "optimizer_impl", "attention",
            "recompute", "framework", "offload", "batch", "prompt_len", "new_tokens", "weights_dtype", "kv_dtype",
            "gpus", "gpus_per_node", "tp", "pp", "cp", "ep", "zero", "pp_schedule", "fabric", "nics_per_node"} <= set(rows), sorted(rows)
    for key, (label, tip, field) in rows.items():
        opt = BY_KEY[key]
        assert label == opt.label, key
        assert opt.help in tip and opt.flag in tip, (key, tip)
        assert opt.help in field.toolTip(), (key, field.toolTip())


def test_form_labels_and_tooltips_are_chinese_in_the_chinese_ui(zh_window):
    from planner_app.scenario import ESTIMATE_OPTIONS as BY_KEY
    rows = _option_rows(zh_window)
    assert len(rows) >= 20
    for key, (label, tip, _field) in rows.items():
        opt = BY_KEY[key]
        assert any("\u4e00" <= ch <= "\u9fff" for ch in label + tip), (key, label, tip)
        assert opt.flag in tip  # the flag stays as typed on the command line
