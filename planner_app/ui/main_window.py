"""Main window: wiring only. A page list on the left, the pages in a stack, the File /
View / Help menus, shortcuts, autosave, meeting mode, and the guard against losing unsaved
changes."""
from __future__ import annotations

import os
import re
from functools import partial

from PySide6.QtCore import QByteArray, QSize, QStandardPaths, Qt, QThreadPool, QTimer
from PySide6.QtGui import QAction, QFont, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QMessageBox,
    QProgressDialog,
    QStackedWidget,
    QTableView,
    QWidget,
)

from planner_app import __version__, i18n
from planner_app.atomic import atomic_write_text
from planner_app.paths import examples_dir
from planner_app.report.model import build_report
from planner_app.report.writer import write_report
from planner_app.specdb.schema import SpecDataError
from planner_app.ui.charts.base import ChartBase
from planner_app.ui.document import ScenarioDocument, clear_autosave, is_example
from planner_app.ui.help import install_help_menu
from planner_app.ui.pages.compare_page import ComparePage
from planner_app.ui.pages.plan_page import PlanPage
from planner_app.ui.pages.probe_page import ProbePage
from planner_app.ui.pages.scaling_page import ScalingPage
from planner_app.ui.pages.search_page import SearchPage
from planner_app.ui.pages.serve_page import ServePage
from planner_app.ui.pages.specs_page import SpecsPage
from planner_app.ui.pages.workload_page import WorkloadPage
from planner_app.ui.settings import Settings, SettingsDialog
from planner_app.ui.workers import TaskSlot

SCENARIO_FILTER = "Scenario (*.json)"


# The first window: this size where the screen has room, else 94% of the screen's free area
# (a 1366x768 laptop gets about 1284x680); every page is laid out to work down to 1024x640.
DEFAULT_WINDOW_SIZE = (1440, 900)
SCREEN_FRACTION = 0.94


def default_window_size(available: QSize) -> QSize:
    w, h = DEFAULT_WINDOW_SIZE
    return QSize(min(w, int(available.width() * SCREEN_FRACTION)), min(h, int(available.height() * SCREEN_FRACTION)))


class MainWindow(QMainWindow):
    def __init__(self, db, settings: Settings | None = None, userdb=None, sample_fn=None, parent=None):
        super().__init__(parent)
        self.db = db
        self.settings = settings or Settings()
        self.settings.apply()
        self.doc = ScenarioDocument(self)
        self.meeting = False
        self._closing = False
        self._base_font = QApplication.font()
        self.setWindowTitle("GPU Capacity Planner")
        central = QWidget()
        lay = QHBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        self.nav = QListWidget()
        self.nav.setFixedWidth(150)
        self.stack = QStackedWidget()
        lay.addWidget(self.nav)
        lay.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        # Workload and Plan are built now; the other pages when first shown or, at the latest, one by
        # one once the first estimate is on screen (start-up to results: benchmarks/speed/gui_speed.py).
        self._userdb, self._sample_fn = userdb, sample_fn
        self._built: dict[str, QWidget] = {}
        self._page_titles = [(k, t) for k, t in (
            ("workload", self.tr("Workload")), ("plan", self.tr("Plan")), ("compare", self.tr("Compare")),
            ("scaling", self.tr("Scaling")), ("search", self.tr("Search")), ("serve", self.tr("Serve")),
            ("probe", self.tr("Probe")),
            ("specs", self.tr("Specs")))]
        self.workload_page = WorkloadPage(self.doc, db)
        self.plan_page = PlanPage(self.doc, db)
        self._built.update(workload=self.workload_page, plan=self.plan_page)
        for key, title in self._page_titles:
            self.nav.addItem(title)
            self.stack.addWidget(self._built.get(key) or QWidget())
        self._style_nav(1.0)
        self.nav.currentRowChanged.connect(self._show_page)
        self.nav.setCurrentRow(1)
        self.plan_page.estimated.connect(self._build_pages_when_idle)

        self._apply_margin()
        self.doc.dirty_changed.connect(lambda _d: self._update_title())
        self.doc.path_changed.connect(lambda _p: self._update_title())
        self.report_slot = TaskSlot(self)
        self._build_menus()
        self.statusBar().showMessage(self.tr("Ready"))
        self.plan_page.estimated.connect(lambda e: self.statusBar().showMessage(
            self.tr("Estimate updated"), 2000))
        self._show_user_problems()

        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(max(10, self.settings.get("autosave_s")) * 1000)
        self.autosave_timer.timeout.connect(self.doc.autosave)
        self.autosave_timer.start()
        geo = self.settings.q.value("geometry")
        avail = self.screen().availableGeometry().size()
        if not (isinstance(geo, QByteArray) and self.restoreGeometry(geo)) or \
                self.width() > avail.width() or self.height() > avail.height():
            self.resize(default_window_size(avail))  # first start, or saved on a larger screen
        self._update_title()

    def _show_user_problems(self) -> None:
        """Rows of the user's database that were kept but skipped (they do not match the catalog, or
        are damaged): a permanent note in the status bar, each row in its tooltip, as the CLI warns
        on stderr (service/catalog.py)."""
        problems = list(getattr(self.db, "user_problems", []) or [])
        self.user_problems_label = QLabel()
        self.user_problems_label.setObjectName("user-problems")
        if problems:
            self.user_problems_label.setText(self.tr("⚠ {n} row(s) of your database skipped").format(n=len(problems)))
            self.user_problems_label.setToolTip("\n".join(problems))
            self.user_problems_label.setStyleSheet("color: #a60;")
        self.user_problems_label.setVisible(bool(problems))
        self.statusBar().addPermanentWidget(self.user_problems_label)

    # ---- pages ------------------------------------------------------------------------------
    def _make_page(self, key: str) -> QWidget:
        doc, db = self.doc, self.db
        if key == "compare":
            return ComparePage(doc, db)
        if key == "scaling":
            return ScalingPage(doc, db)
        if key == "search":
            page = SearchPage(doc, db)
            page.open_plan.connect(self.open_search_plan)
            return page
        if key == "serve":
            return ServePage(doc, db)
        if key == "probe":
            return ProbePage(doc, db, userdb=self._userdb, sample_fn=self._sample_fn)
        if key == "specs":
            page = SpecsPage(doc, db, userdb=self._userdb)
            page.database_changed.connect(self.plan_page.schedule_recompute)
            return page
        raise KeyError(key)

    def page(self, key: str) -> QWidget:
        """The page ``key``, built (and put in its place in the stack) on first use."""
        built = self._built.get(key)
        if built is None:
            index = [k for k, _t in self._page_titles].index(key)
            built = self._make_page(key)
            self._built[key] = built
            placeholder = self.stack.widget(index)
            current = self.stack.currentIndex()
            self.stack.insertWidget(index, built)
            self.stack.removeWidget(placeholder)
            placeholder.deleteLater()
            self.stack.setCurrentIndex(current)
            if hasattr(built, "set_min_headroom"):
                built.set_min_headroom(self.settings.get("min_headroom_pct") / 100)
        return built

    compare_page = property(lambda self: self.page("compare"))
    scaling_page = property(lambda self: self.page("scaling"))
    search_page = property(lambda self: self.page("search"))
    serve_page = property(lambda self: self.page("serve"))
    probe_page = property(lambda self: self.page("probe"))
    specs_page = property(lambda self: self.page("specs"))

    @property
    def pages(self) -> list[tuple[str, QWidget]]:
        return [(title, self.page(key)) for key, title in self._page_titles]

    def _show_page(self, index: int) -> None:
        self.page(self._page_titles[index][0])
        self.stack.setCurrentIndex(index)

    def _build_pages_when_idle(self, *_args) -> None:
        """After the first estimate is on screen: the remaining pages, one per event-loop turn."""
        self.plan_page.estimated.disconnect(self._build_pages_when_idle)
        keys = [k for k, _t in self._page_titles if k not in self._built]

        def next_page():
            if keys and not self._closing:
                self.page(keys.pop(0))
                QTimer.singleShot(0, next_page)
        QTimer.singleShot(0, next_page)

    # ---- menus ------------------------------------------------------------------------------
    def _action(self, menu, text, slot, shortcut=None, checkable=False):
        a = QAction(text, self)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        a.setCheckable(checkable)
        a.triggered.connect(slot)
        menu.addAction(a)
        return a

    def _build_menus(self):
        mb = self.menuBar()
        f = mb.addMenu(self.tr("&File"))
        self._action(f, self.tr("&New"), self.new_file, "Ctrl+N")
        self._action(f, self.tr("&Open…"), self.open_dialog, "Ctrl+O")
        self.recent_menu = f.addMenu(self.tr("Open &Recent"))
        self._action(f, self.tr("Open &Example"), self.open_example)
        self._action(f, self.tr("&Save"), self.save, "Ctrl+S")
        self._action(f, self.tr("Save &As…"), self.save_as, "Ctrl+Shift+S")
        f.addSeparator()
        self._action(f, self.tr("&Export Report…"), self.export_report_dialog, "Ctrl+E")
        self._action(f, self.tr("Export &Table as CSV…"), self.export_table_dialog)
        self._action(f, self.tr("Export &Chart…"), self.export_chart_dialog)
        f.addSeparator()
        self._action(f, self.tr("Se&ttings…"), self.settings_dialog, "Ctrl+,")
        self._action(f, self.tr("&Quit"), self.close, "Ctrl+Q")
        v = mb.addMenu(self.tr("&View"))
        for i, (_key, title) in enumerate(self._page_titles):
            self._action(v, title, partial(self._go_page, i), f"Ctrl+{i + 1}")
        v.addSeparator()
        self.meeting_action = self._action(v, self.tr("&Meeting Mode"), self.toggle_meeting, "F11", checkable=True)
        h = mb.addMenu(self.tr("&Help"))
        self.help_actions = install_help_menu(self, h)  # ui/help.py: quick start, shortcuts, examples, validation
        self._action(h, self.tr("&About"), self.about)
        self._refresh_recent()

    def _go_page(self, index: int, *_checked) -> None:
        self.nav.setCurrentRow(index)

    def _open_recent(self, path: str, *_checked) -> None:
        if self.maybe_save():
            self.open_path(path)

    def _refresh_recent(self):
        self.recent_menu.clear()
        for p in self.settings.get("recent_files"):
            a = QAction(p, self)
            a.triggered.connect(partial(self._open_recent, p))
            self.recent_menu.addAction(a)
        self.recent_menu.setEnabled(bool(self.settings.get("recent_files")))

    def _update_title(self):
        if self.doc.path:
            name = os.path.basename(self.doc.path)
        elif self.doc.example_name:
            name = self.tr("{name} (example copy)").format(name=self.doc.example_name)
        else:
            name = self.tr("Untitled")
        self.setWindowTitle(f"{name}{' *' if self.doc.dirty else ''} — GPU Capacity Planner")

    # ---- files ------------------------------------------------------------------------------
    def maybe_save(self) -> bool:
        """True when it is fine to discard the current scenario."""
        if not self.doc.dirty:
            return True
        r = QMessageBox.question(self, self.tr("Unsaved changes"),
                                 self.tr("The scenario has unsaved changes. Save them first?"),
                                 QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
        if r == QMessageBox.Save:
            return self.save()
        return r == QMessageBox.Discard

    def new_file(self):
        if self.maybe_save():
            st = self.settings
            self.doc.new({"currency": st.get("currency"), "cny_per_usd": st.get("cny_per_usd"),
                          "framework": st.get("default_framework")})

    def open_dialog(self):
        if not self.maybe_save():
            return
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Open scenario"), self.files_dir(), SCENARIO_FILTER)
        if path:
            self.open_path(path)

    def open_example(self):
        if not self.maybe_save():
            return
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Open example"), examples_dir(), SCENARIO_FILTER)
        if path:
            self.open_path(path)

    def files_dir(self) -> str:
        """Where file dialogs start: the folder last used, else the user's Documents (never
        the folder the app happened to be started from)."""
        last = self.settings.get("last_dir")
        if last and os.path.isdir(last):
            return last
        docs = QStandardPaths.writableLocation(QStandardPaths.DocumentsLocation)
        return docs if docs and os.path.isdir(docs) else os.path.expanduser("~")

    def remember_dir(self, path: str) -> None:
        self.settings.set("last_dir", os.path.dirname(os.path.abspath(path)))

    def suggested_path(self, suffix: str) -> str:
        """A file name from the scenario's title in ``files_dir()``."""
        title = (self.doc.data.get("meta") or {}).get("title") or "sizing"
        stem = re.sub(r"[^\w.-]+", "-", title, flags=re.UNICODE).strip("-.")[:80] or "sizing"
        return os.path.join(self.files_dir(), stem + suffix)

    def open_path(self, path: str) -> bool:
        try:
            self.doc.open(path)
        except SpecDataError as e:
            QMessageBox.warning(self, self.tr("Cannot open"), str(e))
            return False
        self.settings.add_recent(os.path.abspath(path))
        self._refresh_recent()
        if not is_example(path):
            self.remember_dir(path)
        return True

    def save(self) -> bool:
        if not self.doc.path:
            return self.save_as()
        return self._save_to(self.doc.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save scenario"),
                                              self.doc.path or self.suggested_path(".json"),
                                              SCENARIO_FILTER)
        if not path:
            return False
        if not path.endswith(".json"):
            path += ".json"
        return self._save_to(path)

    def _save_to(self, path: str) -> bool:
        try:
            self.doc.save(path)
        except (OSError, SpecDataError, ValueError) as e:
            QMessageBox.warning(self, self.tr("Cannot save"), str(e))
            return False
        self.settings.add_recent(os.path.abspath(path))
        self._refresh_recent()
        self.remember_dir(path)
        self.statusBar().showMessage(self.tr("Saved {path}").format(path=os.path.abspath(path)), 6000)
        return True

    def open_search_plan(self, plan: dict):
        try:
            idx = self.doc.add_plan(plan)
        except ValueError as e:
            QMessageBox.warning(self, self.tr("Cannot add the plan"), str(e))
            return
        self.doc.set_chosen(idx)
        self.plan_page.show_plan(idx)
        self.nav.setCurrentRow(1)

    # ---- exports ----------------------------------------------------------------------------
    def report_language(self) -> str:
        """The language reports are written in: the one chosen in Settings, else the UI's."""
        lang = self.settings.get("report_language")
        return lang if lang in i18n.LANGUAGES else i18n.current()

    def export_report(self, path: str, fmt: str | None = None, lang: str | None = None, paper: str = "A4"):
        """Build and write the report (in ``lang``, default ``report_language()``) on a worker
        thread; returns the TaskSlot to wait on."""
        sc, db = self.doc.snapshot(), self.db
        lang = lang or self.report_language()
        i18n.translator(lang)  # load the catalogue here, on the GUI thread, not on the worker

        def task(progress, cancelled):
            progress(0.05, "building")
            rep = build_report(sc, db, lang=lang)
            return write_report(rep, path, fmt, paper, progress=lambda f, t="": progress(0.2 + 0.8 * f, t))

        if self.report_slot.busy:
            return self.report_slot
        self.report_slot.start(task)
        return self.report_slot

    def export_report_dialog(self):
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export report"), self.suggested_path(".pdf"),
                                              "PDF (*.pdf);;HTML (*.html);;JSON (*.json);;CSV (*.csv)")
        if not path:
            return
        dlg = QProgressDialog(self.tr("Writing the report…"), self.tr("Cancel"), 0, 100, self)
        dlg.setWindowModality(Qt.WindowModal)
        slot = self.export_report(path)
        slot.progressed.connect(lambda f, _t: dlg.setValue(int(f * 100)))
        dlg.canceled.connect(slot.cancel)

        def done(result):
            dlg.close()
            self.remember_dir(path)
            self.statusBar().showMessage(self.tr("Report written: {path}").format(path=os.path.abspath(path)),
                                         10000)

        def failed(e):
            dlg.close()
            QMessageBox.warning(self, self.tr("Report not written"), str(e))
        slot.succeeded.connect(done)
        slot.failed.connect(failed)

    def _current_tables(self):
        page = self.stack.currentWidget()
        return [v for v in page.findChildren(QTableView) if v.isVisibleTo(page)]

    def _current_charts(self):
        page = self.stack.currentWidget()
        return [c for c in page.findChildren(ChartBase) if c.isVisibleTo(page)]

    def export_table_dialog(self):
        tables = self._current_tables()
        if not tables:
            self.statusBar().showMessage(self.tr("This page has no table"), 4000)
            return
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export table"), self.suggested_path(".csv"),
                                              "CSV (*.csv)")
        if path:
            model = tables[0].model()
            model = model.sourceModel() if hasattr(model, "sourceModel") else model
            try:
                atomic_write_text(path, model.to_csv())
            except OSError as e:
                QMessageBox.warning(self, self.tr("Cannot save"), str(e))
                return
            self.remember_dir(path)
            self.statusBar().showMessage(self.tr("Table written: {path}").format(path=os.path.abspath(path)), 10000)

    def export_chart_dialog(self):
        charts = self._current_charts()
        if not charts:
            self.statusBar().showMessage(self.tr("This page has no chart"), 4000)
            return
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export chart"), self.suggested_path(".png"),
                                              "PNG (*.png);;SVG (*.svg)")
        if path:
            try:
                charts[0].export(path)
            except OSError as e:
                QMessageBox.warning(self, self.tr("Cannot save"), str(e))
                return
            self.remember_dir(path)
            self.statusBar().showMessage(self.tr("Chart written: {path}").format(path=os.path.abspath(path)), 10000)

    # ---- view ---------------------------------------------------------------------------------
    def toggle_meeting(self, checked=None):
        """Meeting mode: larger fonts, the Compare page, full screen (F11 again leaves)."""
        self.meeting = (not self.meeting) if checked is None else bool(checked)
        self.meeting_action.setChecked(self.meeting)
        f = QFont(self._base_font)
        scale = self.settings.get("meeting_font_scale") if self.meeting else 1.0
        size = self._base_font.pointSizeF() if self._base_font.pointSizeF() > 0 else 10.0
        f.setPointSizeF(size * scale)
        QApplication.setFont(f)
        self._style_nav(scale)
        if self.meeting:
            self._state_before_meeting = self.windowState() & ~Qt.WindowFullScreen
            self.nav.setCurrentRow(2)
            self.showFullScreen()
        else:  # back to the window as it was: maximised stays maximised
            before = getattr(self, "_state_before_meeting", Qt.WindowNoState)
            if before & Qt.WindowMaximized:
                self.showMaximized()
            else:
                self.showNormal()
        compare = self._built.get("compare")
        if compare is not None:
            compare.set_meeting(self.meeting)

    # the page list's text, relative to the body text (11 pt over 10 pt), and its item padding (px)
    NAV_FONT_SCALE = 1.1
    NAV_PADDING_PX = (8, 10)

    def _style_nav(self, scale: float) -> None:
        """The page list in the body font times NAV_FONT_SCALE (and ``scale`` in meeting mode), its
        width grown to its longest title."""
        size = self._base_font.pointSizeF() if self._base_font.pointSizeF() > 0 else 10.0
        pt = size * scale * self.NAV_FONT_SCALE
        v, h = (int(round(p * scale)) for p in self.NAV_PADDING_PX)
        self.nav.setStyleSheet(f"QListWidget {{ font-size: {pt:.1f}pt; padding-top: {v}px; }} "
                               f"QListWidget::item {{ padding: {v}px {h}px; }}")
        f = QFont(self._base_font)
        f.setPointSizeF(pt)
        fm = QFontMetrics(f)
        titles = [t for _k, t in getattr(self, "_page_titles", ())]
        widest = max((fm.horizontalAdvance(t) for t in titles), default=0)
        self.nav.setFixedWidth(max(int(150 * scale), widest + 2 * h + 24))

    def _apply_margin(self):
        """The user's memory margin (Settings) on every page that calls a plan tight."""
        fraction = self.settings.get("min_headroom_pct") / 100
        for page in self._built.values():
            if hasattr(page, "set_min_headroom"):
                page.set_min_headroom(fraction)

    def settings_dialog(self):
        if SettingsDialog(self.settings, self).exec():
            self._apply_margin()
            self.plan_page.schedule_recompute()  # units may have changed

    def about(self):
        QMessageBox.about(self, self.tr("About"),
                          self.tr("GPU Capacity Planner {v}\nSizes GPU clusters and cloud GPU servers: memory, time, "
                                  "cost, scaling; probes local GPUs.").format(v=__version__))

    # ---- closing ------------------------------------------------------------------------------
    def closeEvent(self, event):  # noqa: N802 - Qt override
        if not self.maybe_save():
            event.ignore()
            return
        self.shutdown()
        event.accept()

    def shutdown(self):
        """Stop timers, threads and subprocesses; forget the autosave (closed cleanly)."""
        self._closing = True
        self.autosave_timer.stop()
        if "probe" in self._built:
            self._built["probe"].stop_telemetry()
        for page in self._built.values():
            if getattr(page, "slot", None) is not None:
                page.slot.cancel()
        self.report_slot.cancel()
        QThreadPool.globalInstance().waitForDone(10000)
        self.settings.q.setValue("geometry", self.saveGeometry())
        clear_autosave()
