"""Help menu (issue 29, item 16): Quick start, Keyboard shortcuts (read from the window's actions),
Open example (the bundled examples) and Validation, each opened through the real menu bar; and
``gpu-planner gui --page serve --lang zh_CN`` opening Serve in Chinese."""
import json
import os
import re
import subprocess
import sys
import textwrap

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QMenu

from planner_app.cli import GUI_LANGUAGES, GUI_PAGES, build_parser

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLES = os.path.join(ROOT, "examples")
VALIDATION = os.path.join(ROOT, "docs", "validation.md")


def _help_menu(win) -> QMenu:
    [menu] = [a.menu() for a in win.menuBar().actions()
              if a.menu() is not None and a.text() == QCoreApplication.translate("MainWindow", "&Help")]
    return menu


def _open_help_menu(qtbot, win) -> QMenu:
    """Click Help on the menu bar; the menu pops up."""
    bar = win.menuBar()
    menu = _help_menu(win)
    qtbot.mouseClick(bar, Qt.LeftButton, pos=bar.actionGeometry(menu.menuAction()).center())
    qtbot.waitUntil(menu.isVisible, timeout=5000)
    return menu


def _click_entry(qtbot, menu: QMenu, action: QAction) -> None:
    """Click an entry of an open menu (the menu closes and the entry is triggered)."""
    with qtbot.waitSignal(action.triggered, timeout=5000):
        qtbot.mouseClick(menu, Qt.LeftButton, pos=menu.actionGeometry(action).center())


def _entry(menu: QMenu, english: str):
    text = QCoreApplication.translate("HelpMenu", english)
    [a] = [a for a in menu.actions() if a.text() == text]
    return a


def _dialog(qtbot, win, name: str) -> QDialog:
    qtbot.waitUntil(lambda: win.findChild(QDialog, name) is not None and win.findChild(QDialog, name).isVisible(),
                    timeout=5000)
    return win.findChild(QDialog, name)


def _close(qtbot, win, dialog, name: str) -> None:
    dialog.reject()
    qtbot.waitUntil(lambda: win.findChild(QDialog, name) is None, timeout=5000)  # deleted on close


def test_help_menu_holds_more_than_about(window, qtbot):
    menu = _open_help_menu(qtbot, window)
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    for english in ("&Quick Start", "&Keyboard Shortcuts", "Open E&xample", "&Validation…"):
        assert QCoreApplication.translate("HelpMenu", english) in texts, texts
    assert QCoreApplication.translate("MainWindow", "&About") in texts
    menu.hide()


def test_quick_start_lists_five_steps_and_goes_to_their_pages(window, qtbot):
    menu = _open_help_menu(qtbot, window)
    _click_entry(qtbot, menu, _entry(menu, "&Quick Start"))
    dlg = _dialog(qtbot, window, "quick-start")
    assert len(dlg.step_labels) == 5
    titles = dict(window._page_titles)
    text = " ".join(label.text() for label in dlg.step_labels)
    for key in ("workload", "plan", "search", "serve", "compare", "scaling"):
        assert titles[key] in text, key
    assert [label.text().split(".")[0] for label in dlg.step_labels] == ["1", "2", "3", "4", "5"]
    # the guide names the key that opens it: the action's own shortcut
    quick = window.help_actions["quick_start"]
    assert quick.shortcut().toString(QKeySequence.NativeText) in " ".join(w.text() for w in dlg.findChildren(
        type(dlg.step_labels[0])))
    # a step's button shows its page and closes the guide
    qtbot.mouseClick(dlg.go_buttons["compare"], Qt.LeftButton)
    assert window.stack.currentWidget() is window.page("compare")
    qtbot.waitUntil(lambda: window.findChild(QDialog, "quick-start") is None, timeout=5000)


def test_f1_opens_the_quick_start(window, qtbot):
    window.activateWindow()
    window.help_actions["quick_start"].trigger()  # what F1 (the action's shortcut) does
    dlg = _dialog(qtbot, window, "quick-start")
    assert window.help_actions["quick_start"].shortcut() == QKeySequence(QKeySequence.HelpContents)
    _close(qtbot, window, dlg, "quick-start")


def _all_shortcut_actions(win):
    """Every action of the window with a shortcut, found independently of ui/help.py."""
    out = {}
    for a in win.findChildren(QAction):
        keys = [k.toString(QKeySequence.NativeText) for k in a.shortcuts() if not k.isEmpty()]
        if keys and a.text():
            out[a.text().replace("&", "")] = ", ".join(keys)
    return out


def test_keyboard_shortcuts_come_from_the_actions(window, qtbot):
    menu = _open_help_menu(qtbot, window)
    _click_entry(qtbot, menu, _entry(menu, "&Keyboard Shortcuts"))
    dlg = _dialog(qtbot, window, "keyboard-shortcuts")
    t = dlg.table
    shown = {t.item(r, 1).text(): t.item(r, 0).text() for r in range(t.rowCount())}
    expected = _all_shortcut_actions(window)
    assert shown == expected
    assert len(shown) >= 15  # File's, View's pages and meeting mode, F1
    meeting = window.meeting_action
    assert shown[meeting.text().replace("&", "")] == meeting.shortcut().toString(QKeySequence.NativeText)
    _close(qtbot, window, dlg, "keyboard-shortcuts")
    # a shortcut added to the window later is listed the next time: the list is read, not copied
    extra = QAction("Recompute everything", window)
    extra.setShortcut(QKeySequence("Ctrl+Alt+R"))
    window.addAction(extra)
    menu = _open_help_menu(qtbot, window)
    _click_entry(qtbot, menu, _entry(menu, "&Keyboard Shortcuts"))
    dlg = _dialog(qtbot, window, "keyboard-shortcuts")
    rows = [(dlg.table.item(r, 1).text(), dlg.table.item(r, 0).text()) for r in range(dlg.table.rowCount())]
    assert ("Recompute everything", QKeySequence("Ctrl+Alt+R").toString(QKeySequence.NativeText)) in rows
    _close(qtbot, window, dlg, "keyboard-shortcuts")


def test_open_example_submenu_lists_and_opens_the_bundled_examples(window, qtbot):
    menu = _open_help_menu(qtbot, window)
    sub = _entry(menu, "Open E&xample").menu()
    files = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".json"))
    titles = []
    for f in files:
        with open(os.path.join(EXAMPLES, f), encoding="utf-8") as fh:
            titles.append(json.load(fh)["meta"]["title"])
    assert [a.text() for a in sub.actions()] == titles
    assert [a.toolTip() for a in sub.actions()] == files
    # hover the submenu open, click the serving example
    qtbot.mouseMove(menu, menu.actionGeometry(sub.menuAction()).center())
    qtbot.mouseClick(menu, Qt.LeftButton, pos=menu.actionGeometry(sub.menuAction()).center())
    qtbot.waitUntil(sub.isVisible, timeout=5000)
    target = sub.actions()[files.index("inference-70b-service.json")]
    with qtbot.waitSignal(target.triggered, timeout=5000):
        qtbot.mouseClick(sub, Qt.LeftButton, pos=sub.actionGeometry(target).center())
    assert window.doc.example_name == "inference-70b-service.json"
    assert window.doc.data["meta"]["title"] == titles[files.index("inference-70b-service.json")]
    assert "inference-70b-service.json" in window.windowTitle()


def _bold_results(path):
    """The first bold passage with a percentage in each '## ' section of docs/validation.md."""
    out, section = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                section = line[3:].strip()
            elif section and section not in out:
                bold = [b for b in line.split("**")[1::2] if "%" in b]  # the odd pieces are bold
                if bold:
                    out[section] = bold[0].strip().rstrip(".")
    return out


def test_validation_shows_the_summary_of_docs_validation_md(window, qtbot):
    menu = _open_help_menu(qtbot, window)
    _click_entry(qtbot, menu, _entry(menu, "&Validation…"))
    dlg = _dialog(qtbot, window, "validation")
    text = dlg.browser.toPlainText()
    assert os.path.samefile(dlg.path, VALIDATION)
    with open(VALIDATION, encoding="utf-8") as f:
        headings = [line[3:].strip() for line in f if line.startswith("## ")]
    assert headings and all(h in text for h in headings)
    results = _bold_results(VALIDATION)
    assert len(results) >= 3
    for section, result in results.items():
        assert result in text, section
    assert dlg.open_button is not None and dlg.open_button.isVisible()
    _close(qtbot, window, dlg, "validation")


def test_validation_says_where_the_file_is_when_it_is_not_installed(window, qtbot, monkeypatch):
    from planner_app.ui import help as help_module
    monkeypatch.setattr(help_module, "validation_path", lambda: None)  # an installed wheel: no docs/
    menu = _open_help_menu(qtbot, window)
    _click_entry(qtbot, menu, _entry(menu, "&Validation…"))
    dlg = _dialog(qtbot, window, "validation")
    assert "docs/validation.md" in dlg.browser.toPlainText()
    assert dlg.open_button is None
    _close(qtbot, window, dlg, "validation")


def test_gui_page_choices_are_the_windows_pages(window):
    assert tuple(k for k, _t in window._page_titles) == GUI_PAGES
    from planner_app import i18n
    assert tuple(i18n.LANGUAGES) == GUI_LANGUAGES
    args = build_parser().parse_args(["gui", "--page", "serve", "--lang", "zh_CN"])
    assert (args.page, args.lang) == ("serve", "zh_CN")


def test_build_window_opens_the_page_asked_for(qtbot, settings, userdb):
    from PySide6.QtCore import QThreadPool

    from planner_app import i18n
    from planner_app.app import build_window, install_cjk_font
    assert i18n.install("zh_CN")
    install_cjk_font(QApplication.instance())
    win = build_window(settings=settings, userdb=userdb, page="serve")
    try:
        win.show()
        assert win.stack.currentWidget() is win.page("serve")
        serve_zh = QCoreApplication.translate("MainWindow", "Serve")
        assert serve_zh != "Serve" and win.nav.currentItem().text() == serve_zh
        qtbot.waitUntil(lambda: win.plan_page.last_estimate is not None, timeout=20000)
        # the quick start in Chinese too
        win.help_actions["quick_start"].trigger()
        dlg = _dialog(qtbot, win, "quick-start")
        assert all(re.search(r"[\u4e00-\u9fff]", label.text()) for label in dlg.step_labels)
        assert dlg.windowTitle() != "Quick start"
        dlg.reject()
    finally:
        win.doc._set_dirty(False)
        win.close()
        win.deleteLater()
        i18n.install("en")
    assert QThreadPool.globalInstance().activeThreadCount() == 0


ENTRY = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QCoreApplication, QTimer
    import planner_app.app as app_module
    from planner_app.cli import main

    app = app_module.create_app()
    made = []
    build = app_module.build_window
    app_module.build_window = lambda *a, **k: made.append(build(*a, **k)) or made[-1]

    def check():
        if not made or not made[0].isVisible():
            return QTimer.singleShot(50, check)
        win = made[0]
        print("PAGE", type(win.stack.currentWidget()).__name__)
        print("NAV", win.nav.currentItem().text(), QCoreApplication.translate("MainWindow", "Serve"), sep="\\t")
        win.doc._set_dirty(False)
        win.close()
        app.quit()

    QTimer.singleShot(0, check)
    sys.exit(main(sys.argv[1:]))
""")


def test_gui_command_opens_serve_in_chinese(tmp_path):
    """The real entry: ``gpu-planner gui --page serve --lang zh_CN`` (its own process, private settings)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PLANNER_USER_DIR=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", ENTRY, "gui", "--page", "serve", "--lang", "zh_CN"], env=env,
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "PAGE ServePage" in r.stdout, r.stdout
    nav = [line.split("\t")[1:] for line in r.stdout.splitlines() if line.startswith("NAV")][0]
    assert nav[0] == nav[1] and nav[0] != "Serve" and re.search(r"[\u4e00-\u9fff]", nav[0]), nav
    # a bad page is a usage error naming the allowed ones, not a crash
    r = subprocess.run([sys.executable, "-m", "planner_app", "gui", "--page", "nowhere"], env=env,
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2 and "--page" in r.stderr and "serve" in r.stderr
