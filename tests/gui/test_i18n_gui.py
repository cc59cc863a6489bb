"""The Chinese UI: the report exported through File ▸ Export Report is Chinese (the report
language follows the UI unless Settings choose another); engine sentences on the Plan page
are Chinese."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "report"))
from report_helpers import pdf_text, squash  # noqa: E402


@pytest.fixture
def zh_window(qtbot, settings, userdb):
    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QApplication

    from planner_app import i18n
    from planner_app.app import build_window, install_cjk_font

    assert i18n.install("zh_CN")
    install_cjk_font(QApplication.instance())
    win = build_window(settings=settings, userdb=userdb)
    win.resize(1440, 900)
    win.show()
    try:
        qtbot.waitUntil(lambda: win.plan_page.last_estimate is not None, timeout=20000)
        yield win
    finally:
        win.doc._set_dirty(False)
        win.close()
        win.deleteLater()
        i18n.install("en")
    assert QThreadPool.globalInstance().activeThreadCount() == 0, "a test left worker threads running"


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
