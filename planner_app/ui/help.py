"""The Help menu's own entries: Quick start (the app's workflow in five steps, each with a button
to its page), Keyboard shortcuts (read from the window's actions, so the list is never a stale
copy), Open example (the bundled example scenarios) and Validation (the summary of
docs/validation.md, or where that file is). About stays in main_window.py."""
from __future__ import annotations

import json
import os
import re
from functools import partial

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
)

from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.paths import data_dir, examples_dir

VALIDATION_FILE = "validation.md"  # docs/validation.md: every accuracy check of the engine


def _plain(text: str) -> str:
    """A menu text without its mnemonic ampersands ("&Save" -> "Save", "R&&D" -> "R&D")."""
    return re.sub(r"&(.)", r"\1", text)


def page_title(window, key: str) -> str:
    """The (translated) title the window's page list shows for page ``key``."""
    return dict(window._page_titles)[key]


def show_page(window, key: str) -> None:
    window.nav.setCurrentRow([k for k, _t in window._page_titles].index(key))


# ---- Quick start ------------------------------------------------------------------------------
class QuickStartDialog(QDialog):
    """The workflow in five steps; steps 1-4 have a button that shows their page."""

    def __init__(self, window, help_shortcut: str = ""):
        super().__init__(window)
        self.setWindowTitle(self.tr("Quick start"))
        self.setObjectName("quick-start")
        t = partial(page_title, window)
        steps = [
            ("workload", self.tr("<b>{page}</b>: choose the model and the job: training (tokens, sequence length, "
                                 "batch, precision, full fine-tuning, LoRA or QLoRA) or inference.")
             .format(page=t("workload"))),
            ("plan", self.tr("<b>{page}</b>: pick a GPU or a cloud instance and the parallel layout; read the memory "
                             "per GPU (does it fit?), the step time, the time to train and the cost. Every cost names "
                             "its price basis (on-demand, reserved or spot).").format(page=t("plan"))),
            ("search", self.tr("<b>{search}</b> and <b>{serve}</b>: let the planner rank layouts and machines under a "
                               "GPU limit, a deadline or a budget, or find the serving deployments that meet your "
                               "TTFT and TPOT targets. \"Open in Plan\" adds a result as a plan of its own.")
             .format(search=t("search"), serve=t("serve"))),
            ("compare", self.tr("<b>{compare}</b> and <b>{scaling}</b>: put the plans side by side at one price "
                                "basis, and see how throughput and efficiency change with the number of nodes.")
             .format(compare=t("compare"), scaling=t("scaling"))),
            ("", self.tr("<b>Report</b>: File ▸ Export Report… writes a PDF in English or Chinese with the inputs, the "
                         "assumptions and where each price comes from; File ▸ Save keeps the scenario as a JSON file "
                         "that the command line (gpu-planner report, estimate) reads too.")),
        ]
        lay = QVBoxLayout(self)
        intro = QLabel(self.tr("Size a GPU job in five steps:"))
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.step_labels: list[QLabel] = []
        self.go_buttons: dict[str, QPushButton] = {}
        for i, (key, text) in enumerate(steps, 1):
            row = QHBoxLayout()
            label = QLabel(f"{i}. {text}")
            label.setWordWrap(True)
            label.setTextFormat(Qt.RichText)
            label.setMinimumWidth(460)
            row.addWidget(label, 1)
            if key:
                b = QPushButton(self.tr("Go to {page}").format(page=t(key)))
                b.clicked.connect(partial(self._go, window, key))
                row.addWidget(b, 0, Qt.AlignTop)
                self.go_buttons[key] = b
            lay.addLayout(row)
            self.step_labels.append(label)
        more = self.tr("Help ▸ Keyboard Shortcuts lists every shortcut; Help ▸ Open Example opens a ready-made "
                       "scenario; {probe} measures your own GPUs and {specs} lists the GPUs, instances and prices.")\
            .format(probe=t("probe"), specs=t("specs"))
        if help_shortcut:
            more += " " + self.tr("{key} opens this guide again.").format(key=help_shortcut)
        tail = QLabel(more)
        tail.setWordWrap(True)
        lay.addWidget(tail)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def _go(self, window, key: str, *_checked) -> None:
        show_page(window, key)
        self.accept()


# ---- Keyboard shortcuts -----------------------------------------------------------------------
def shortcut_rows(window) -> list[tuple[str, str, str]]:
    """(menu, action, shortcut) of every action of the window that has a shortcut: those of its
    menus (submenus too) in menu order, then any others added to the window itself."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()

    def add(action: QAction, where: str) -> None:
        if id(action) in seen:
            return
        seen.add(id(action))
        keys = [k.toString(QKeySequence.NativeText) for k in action.shortcuts() if not k.isEmpty()]
        if keys and action.text():
            rows.append((where, _plain(action.text()), ", ".join(keys)))

    def walk(menu: QMenu, where: str) -> None:
        for a in menu.actions():
            if a.menu() is not None:
                walk(a.menu(), f"{where} ▸ {_plain(a.text())}")
            elif not a.isSeparator():
                add(a, where)

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), _plain(top.text()))
    for a in window.findChildren(QAction):
        add(a, "—")
    return rows


class ShortcutsDialog(QDialog):
    """A table of the window's shortcuts (shortcut_rows)."""

    def __init__(self, window):
        super().__init__(window)
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        self.setObjectName("keyboard-shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels([self.tr("Shortcut"), self.tr("Action"), self.tr("Menu")])
        for r, (where, text, keys) in enumerate(rows):
            for c, value in enumerate((keys, text, where)):
                item = QTableWidgetItem(value)
                item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)
                self.table.setItem(r, c, item)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.table.resizeColumnsToContents()
        width = sum(self.table.columnWidth(c) for c in range(3)) + 60
        self.resize(max(width, 420), min(120 + 30 * len(rows), 640))


# ---- Open example -----------------------------------------------------------------------------
def bundled_examples() -> list[tuple[str, str]]:
    """(title, path) of each example scenario shipped with the app, by file name; the title is
    the scenario's own (meta.title), else its file name."""
    try:
        folder = examples_dir()
    except FileNotFoundError:
        return []
    out = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as f:
                title = ((json.load(f).get("meta") or {}).get("title") or "").strip()
        except (OSError, ValueError, AttributeError):
            title = ""  # a damaged example still gets its entry; opening it names the problem
        out.append((title or name, path))
    return out


def _open_example(window, path: str, *_checked) -> None:
    if window.maybe_save():
        window.open_path(path)


# ---- Validation -------------------------------------------------------------------------------
def validation_path() -> str | None:
    """docs/validation.md of a checkout (PLANNER_DOCS overrides the folder), or None where it is
    not there (an installed wheel or a bundle ships no docs/)."""
    try:
        path = os.path.join(data_dir("docs"), VALIDATION_FILE)
    except FileNotFoundError:
        return None
    return path if os.path.isfile(path) else None


def validation_summary(text: str) -> list[tuple[str, str]]:
    """(section, headline result) of each "## " section of docs/validation.md; the headline is
    the section's first bold passage that states a result (a percentage, or "Not measured"),
    else ""."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            out.append((line[3:].strip(), ""))
        elif out and not out[-1][1]:
            for bold in re.findall(r"\*\*(.+?)\*\*", line):
                if "%" in bold or bold.lower().startswith("not measured"):
                    out[-1] = (out[-1][0], bold.strip().rstrip("."))
                    break
    return out


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ValidationDialog(QDialog):
    """The headline of each accuracy check in docs/validation.md, and the file's path (with a
    button that opens it); where the file is not installed, where to find it."""

    def __init__(self, window, path: str | None = None):
        super().__init__(window)
        self.setWindowTitle(self.tr("Validation"))
        self.setObjectName("validation")
        self.path = path
        lay = QVBoxLayout(self)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(False)
        lay.addWidget(self.browser)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        self.open_button = None
        if path:
            with open(path, encoding="utf-8") as f:
                sections = validation_summary(f.read())
            rows = "".join(f"<tr><td>{_html_escape(s)}</td><td>{_html_escape(h) if h else '—'}</td></tr>"
                           for s, h in sections)
            measured = sum(1 for _s, h in sections if h)
            self.browser.setHtml(
                "<p>" + _html_escape(self.tr("How far the estimates are from real runs and published numbers: "
                                             "{n} groups of checks, {m} with a headline result below; every case, "
                                             "its inputs and its error are in the file.")
                                     .format(n=len(sections), m=measured)) + "</p>"
                + "<p><b>" + _html_escape(self.tr("File:")) + "</b> " + _html_escape(path) + "</p>"
                + "<table border='1' cellspacing='0' cellpadding='3'><tr><th>"
                + _html_escape(self.tr("Accuracy check")) + "</th><th>" + _html_escape(self.tr("Result"))
                + "</th></tr>" + rows + "</table>")
            self.open_button = buttons.addButton(self.tr("Open the file"), QDialogButtonBox.ActionRole)
            self.open_button.clicked.connect(self._open_file)
        else:
            self.browser.setPlainText(self.tr(
                "The validation report is docs/validation.md in the app's source repository (it is not installed "
                "with the app): every accuracy check of the engine against real runs and published numbers, with "
                "its inputs, the estimate and the error. Regenerate it with python benchmarks/make_validation.py."))
        lay.addWidget(buttons)
        self.resize(820, 560)

    def _open_file(self, *_checked) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(self.path))


# ---- the menu ---------------------------------------------------------------------------------
def _show(dialog: QDialog) -> QDialog:
    """Window-modal and not blocking (``open``, not ``exec``); deleted when closed."""
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.open()
    return dialog


def install_help_menu(window, menu: QMenu) -> dict[str, QAction | QMenu]:
    """Quick start (F1), Keyboard shortcuts, Open example ▸ and Validation at the top of the Help
    menu ``menu`` of ``window`` (the main window), then a separator; returns them by name."""
    quick = QAction(translate("HelpMenu", "&Quick Start"), window)
    quick.setShortcut(QKeySequence(QKeySequence.HelpContents))
    quick.triggered.connect(lambda *_: _show(QuickStartDialog(
        window, quick.shortcut().toString(QKeySequence.NativeText))))
    menu.addAction(quick)
    keys = QAction(translate("HelpMenu", "&Keyboard Shortcuts"), window)
    keys.triggered.connect(lambda *_: _show(ShortcutsDialog(window)))
    menu.addAction(keys)
    examples = menu.addMenu(translate("HelpMenu", "Open E&xample"))
    for title, path in bundled_examples():
        a = examples.addAction(title)
        a.setToolTip(os.path.basename(path))
        a.setStatusTip(os.path.basename(path))
        a.triggered.connect(partial(_open_example, window, path))
    examples.setEnabled(bool(examples.actions()))
    validation = QAction(translate("HelpMenu", "&Validation…"), window)
    validation.triggered.connect(lambda *_: _show(ValidationDialog(window, validation_path())))
    menu.addAction(validation)
    menu.addSeparator()
    return {"quick_start": quick, "shortcuts": keys, "examples": examples, "validation": validation}

