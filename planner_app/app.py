"""The desktop application: QApplication, theme, translation, the exception hook, the
first-run and crash-restore prompts, the main window; and ``--smoke-test``."""
from __future__ import annotations

import logging
import os
import sys
import time
import traceback

from PySide6.QtCore import QEvent, QEventLoop, QLocale, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox

from planner_app import STARTED_S, i18n
from planner_app.paths import examples_dir, user_data_dir
from planner_app.report.pdf import report_font_family
from planner_app.service.catalog import open_catalog
from planner_app.ui.document import pending_autosave
from planner_app.ui.main_window import MainWindow
from planner_app.ui.settings import Settings

log = logging.getLogger("planner_app")
UNEXPECTED_ERRORS: list[str] = []  # every exception the hook saw (the smoke test fails on any)


def _log_path() -> str:
    d = os.path.join(user_data_dir(), "logs")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "gpu-planner.log")


def install_exception_hook(app) -> dict:
    """Unexpected exceptions: one dialog (never two at once) and the log file; the app stays up.
    Returns the hook's state (``state["smoke"] = True``: no dialog, the smoke test reports them)."""
    state = {"showing": False}
    try:
        logging.basicConfig(filename=_log_path(), level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(message)s")
    except OSError:
        pass

    def hook(exc_type, exc, tb):
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("unexpected error\n%s", text)
        print(text, file=sys.stderr)
        UNEXPECTED_ERRORS.append(f"{exc_type.__name__}: {exc}")
        if state["showing"] or os.environ.get("PLANNER_NO_ERROR_DIALOG") or state.get("smoke"):
            return
        state["showing"] = True
        try:
            QMessageBox.critical(None, "GPU Capacity Planner",
                                 f"Something went wrong: {exc}\n\nDetails were written to {_log_path()}.")
        finally:
            state["showing"] = False

    sys.excepthook = hook
    return state


def apply_theme(app, theme: str) -> None:
    app.setStyle("Fusion")
    dark = theme == "dark"
    if theme == "system":
        try:
            dark = app.styleHints().colorScheme() == Qt.ColorScheme.Dark
        except AttributeError:
            dark = False
    if not dark:
        app.setPalette(app.style().standardPalette())
        return
    p = QPalette()
    for role, color in ((QPalette.Window, "#2b2d31"), (QPalette.WindowText, "#e8e8e8"), (QPalette.Base, "#1f2023"),
                        (QPalette.AlternateBase, "#2b2d31"), (QPalette.Text, "#e8e8e8"), (QPalette.Button, "#35373c"),
                        (QPalette.ButtonText, "#e8e8e8"), (QPalette.Highlight, "#4e79a7"),
                        (QPalette.HighlightedText, "#ffffff"), (QPalette.ToolTipBase, "#35373c"),
                        (QPalette.ToolTipText, "#e8e8e8"), (QPalette.PlaceholderText, "#9a9a9a")):
        p.setColor(role, QColor(color))
    app.setPalette(p)


def create_app(argv=None):
    app = QApplication.instance() or QApplication(argv or [sys.argv[0]])
    app.setApplicationName("GPU Capacity Planner")
    app.setOrganizationName("gpu-capacity-planner")
    return app


def install_cjk_font(app) -> str | None:
    """Make Chinese text render on machines without a CJK system font: the bundled
    WenQuanYi Micro Hei joins the application font's fallback families."""
    family = report_font_family()
    if not family or family == "Sans Serif":
        return None
    f = QFont(app.font())
    fams = [x for x in f.families() if x != family] or [f.family()]
    f.setFamilies(fams + [family])
    app.setFont(f)
    return family


def choose_language(settings) -> str:
    lang = settings.get("language")
    if lang == "system":
        return "zh_CN" if QLocale.system().name().startswith("zh") else "en"
    return lang


def build_window(files=(), settings=None, userdb=None, sample_fn=None, page: str | None = None):
    """The main window with the bundled spec database and a scenario loaded: the first file
    given, or the example (the 70B plan across three clouds) on a first run; ``page``: the key
    of the page shown first (``gpu-planner gui --page``; None: Plan)."""
    settings = settings or Settings()
    db = open_catalog(userdb)  # the same user database for the catalog, the Specs page and the probe
    win = MainWindow(db, settings=settings, userdb=userdb, sample_fn=sample_fn)
    if files:
        win.open_path(files[0])
    else:
        example = os.path.join(examples_dir(), "llama-70b-pretraining-three-clouds.json")
        if os.path.exists(example):
            win.doc.open(example)  # an untitled copy of the example, and the title says which
    if page:
        keys = [key for key, _title in win._page_titles]
        if page not in keys:
            raise ValueError(f"page {page!r}; allowed: {', '.join(keys)}")
        win.nav.setCurrentRow(keys.index(page))
    return win


def run(files=(), smoke_test: bool = False, page: str | None = None, lang: str | None = None) -> int:
    """The app's event loop; ``page`` the page shown first, ``lang`` the language of this session
    (None: the one chosen in Settings; a given one is not saved)."""
    app = create_app()
    settings = Settings()
    hook_state = install_exception_hook(app)
    hook_state["smoke"] = smoke_test  # a smoke test reports errors and exits; a dialog would wait forever
    lang = lang or choose_language(settings)
    i18n.install(lang)
    install_cjk_font(app)
    apply_theme(app, settings.get("theme"))
    restore = None if smoke_test or files else pending_autosave()
    win = build_window(files, settings, page=page)
    if restore is not None:
        r = QMessageBox.question(win, win.tr("Restore unsaved work?"),
                                 win.tr("The last session ended without saving. Restore its scenario?"))
        if r == QMessageBox.Yes:
            win.doc.load_data(restore, path=restore.get("meta", {}).get("autosave_of", ""), dirty=True)
    if smoke_test:
        return smoke(app, win)
    if os.environ.get("PLANNER_EXIT_AFTER_RESULTS"):
        _exit_after_results(app, win)  # benchmarks/speed/gui_speed.py: launch to results on screen
    win.show()
    if not settings.get("first_run_done"):
        settings.set("first_run_done", True)
        win.statusBar().showMessage(win.tr("Welcome: an example scenario is open. Edit the Workload and Plan pages, "
                                           "or File ▸ Open Example for more."), 15000)
    return app.exec()


def _exit_after_results(app, win) -> None:
    """Print ``RESULTS <unix time>`` once the Plan page's first estimate has been painted, then
    quit: what benchmarks/speed/gui_speed.py times from the launch of ``gpu-planner gui``."""
    class Painted(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802 - Qt override
            if ev.type() == QEvent.Paint and win.plan_page.last_estimate is not None:
                print(f"RESULTS {time.time():.6f}", flush=True)
                QTimer.singleShot(0, app.quit)
                obj.removeEventFilter(self)
            return False

    f = Painted(win)
    win.plan_page.estimated.connect(lambda _e: win.plan_page.verdict.installEventFilter(f))


def smoke(app, win) -> int:
    """Open the window, visit every page, wait for the plan's estimate, exit 0 (1 on error)."""
    win.resize(1440, 900)
    win.show()
    failures = []
    first_paint_s = time.perf_counter() - STARTED_S
    for i in range(win.stack.count()):
        win.nav.setCurrentRow(i)
        loop = QEventLoop()
        QTimer.singleShot(150, loop.quit)
        loop.exec()
    win.nav.setCurrentRow(1)
    deadline = time.perf_counter() + 20
    while win.plan_page.last_estimate is None and time.perf_counter() < deadline:
        app.processEvents(QEventLoop.AllEvents, 50)
        if win.plan_page.error.text():
            failures.append(win.plan_page.error.text())
            break
    if win.plan_page.last_estimate is None:
        failures.append("no estimate on the Plan page within 20 s")
    failures += [f"unexpected error: {e}" for e in UNEXPECTED_ERRORS[:3]]
    win.doc._set_dirty(False)
    win.shutdown()
    win.close()
    print(f"smoke test: platform {app.platformName()}, {win.stack.count()} pages visited, first paint "
          f"{first_paint_s:.2f} s after start, "
          + ("OK" if not failures else "FAILED: " + "; ".join(failures)))
    return 0 if not failures else 1
