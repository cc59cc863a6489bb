"""The machine chooser of Search, Serve's SLO search and Compare's "Add machines…": the ~200 GPUs
and instances of the spec database as a ticked list with a search box (every word must appear in
the row: "h100 aws", "gn7e beijing"), provider, GPU and region filters, "ticked only", and a count
of what is ticked and shown (issue 29, item 8). Filtering hides rows; it never unticks one."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QGridLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QStyledItemDelegate,
    QVBoxLayout,
    QWidget,
)

from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.ui.fields import CheckList
from planner_app.ui.pages.hardware import hardware_rows, hw_key
from planner_app.ui.textfit import WrapLabel


class MachineChooser(QWidget):
    """``checked_keys()``, ``set_checked()`` and ``labels()`` as CheckList's; ``defaults``: the keys
    ticked at the start and by ``reset()`` (a new or opened scenario)."""

    changed = Signal()

    def __init__(self, db, defaults=(), parent=None):
        super().__init__(parent)
        self.rows = hardware_rows(db)
        self.defaults = set(defaults)
        self.plan_keys: set[str] = set()
        self.list = CheckList([(hw_key(r["kind"], r["id"]), r["label"]) for r in self.rows], checked=self.defaults)
        self._haystack = [" ".join((r["label"], r["id"], r["provider"], r["region"], r["gpu"])).lower()
                          for r in self.rows]
        self.search = QLineEdit()
        self.search.setPlaceholderText(translate("Machines", "Search: name, GPU, provider, region"))
        self.search.setClearButtonEnabled(True)
        self.provider = self._filter(translate("Machines", "All providers"), [r["provider"] for r in self.rows])
        self.gpu = self._filter(translate("Machines", "All GPUs"), [r["gpu"] for r in self.rows])
        self.region = self._filter(translate("Machines", "All regions"), [r["region"] for r in self.rows])
        self.ticked_only = QCheckBox(translate("Machines", "Ticked only"))
        self.count = WrapLabel()
        clear = QPushButton(translate("Machines", "Untick all"))
        clear.clicked.connect(lambda: self.set_checked(set()))
        self.plans_button = QPushButton(translate("Machines", "Tick the plans' machines"))
        self.plans_button.setToolTip(translate("Machines", "Tick the machines of this scenario's plans"))
        self.plans_button.clicked.connect(lambda: self.set_checked(set(self.checked_keys()) | self.plan_keys))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.search)
        grid = QGridLayout()
        grid.addWidget(self.provider, 0, 0)
        grid.addWidget(self.gpu, 0, 1)
        grid.addWidget(self.region, 1, 0)
        grid.addWidget(self.ticked_only, 1, 1)
        lay.addLayout(grid)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.count)
        foot = QHBoxLayout()
        foot.addWidget(self.plans_button)
        foot.addWidget(clear)
        foot.addStretch(1)
        lay.addLayout(foot)
        self.search.textChanged.connect(self.apply_filter)
        for combo in (self.provider, self.gpu, self.region):
            combo.currentIndexChanged.connect(self.apply_filter)
        self.ticked_only.toggled.connect(self.apply_filter)
        self.list.itemChanged.connect(lambda _it: self._ticks_changed())
        self.apply_filter()

    def _filter(self, everything: str, values) -> QComboBox:
        combo = QComboBox()
        combo.addItem(everything, "")
        for v in sorted({v for v in values if v}, key=str.lower):
            combo.addItem(v, v)
        combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(10)
        return combo

    # ---- CheckList's interface ----------------------------------------------------------------
    def checked_keys(self) -> list:
        return self.list.checked_keys()

    def set_checked(self, keys) -> None:
        self.list.blockSignals(True)
        try:
            self.list.set_checked(keys)
        finally:
            self.list.blockSignals(False)
        self._ticks_changed()

    def labels(self) -> dict:
        return self.list.labels()

    def set_plan_keys(self, keys) -> None:
        """The scenario's plans' machines (what "Tick the plans' machines" adds)."""
        self.plan_keys = set(keys)
        self._update_count()

    def reset(self, plan_keys=()) -> None:
        """A new or opened scenario: the defaults ticked again, the filters cleared; ``plan_keys``:
        its plans' machines (the "Tick the plans' machines" button)."""
        self.plan_keys = set(plan_keys)
        self.search.clear()
        for combo in (self.provider, self.gpu, self.region):
            combo.setCurrentIndex(0)
        self.ticked_only.setChecked(False)
        self.set_checked(self.defaults)

    # ---- filtering ----------------------------------------------------------------------------
    def shown_keys(self) -> list:
        return [self.list.item(i).data(Qt.UserRole) for i in range(self.list.count()) if not self.list.item(i).isHidden()]

    def apply_filter(self, *_args) -> None:
        words = self.search.text().lower().split()
        want = {"provider": self.provider.currentData(), "gpu": self.gpu.currentData(),
                "region": self.region.currentData()}
        ticked_only = self.ticked_only.isChecked()
        for i, r in enumerate(self.rows):
            item = self.list.item(i)
            show = (all(w in self._haystack[i] for w in words)
                    and all(not v or r[k] == v for k, v in want.items())
                    and (not ticked_only or item.checkState() == Qt.Checked))
            item.setHidden(not show)
        self._update_count()

    def _ticks_changed(self) -> None:
        if self.ticked_only.isChecked():
            self.apply_filter()
        else:
            self._update_count()
        self.changed.emit()

    def _update_count(self) -> None:
        ticked, shown = len(self.checked_keys()), len(self.shown_keys())
        self.count.setText(translate("Machines", "{ticked} ticked · {shown} of {total} shown").format(
            ticked=ticked, shown=shown, total=len(self.rows)))
        self.plans_button.setEnabled(bool(self.plan_keys - set(self.checked_keys())))


def plan_machine_keys(doc_data: dict) -> set:
    """The chooser keys of a scenario's plans' machines."""
    out = set()
    for p in doc_data.get("plans") or []:
        if p.get("instance"):
            out.add(hw_key("instance", p["instance"]))
        elif p.get("gpu"):
            out.add(hw_key("gpu", p["gpu"]))
    return out



# the full label of a machine (GPUs, price) in the "GPU or instance" box's items: what its lists show
# and what typing matches; the box itself shows the short name (provider, id, region), which fits
FULL_LABEL_ROLE = Qt.UserRole + 1


class FullLabelDelegate(QStyledItemDelegate):
    """Draws an item's FULL_LABEL_ROLE text (the drop-down and the completion list)."""

    def initStyleOption(self, option, index):  # noqa: N802 - Qt override
        super().initStyleOption(option, index)
        full = index.data(FULL_LABEL_ROLE)
        if full:
            option.text = full


def short_label(row: dict) -> str:
    """'AWS p5.48xlarge', 'Alibaba Cloud ecs.gn7e-c16g1.32xlarge cn-beijing' (the region when the id
    is sold in several); a GPU's label as it is ('GPU H100 SXM (80 GB)')."""
    if row["kind"] == "gpu":
        return row["label"]
    return row["label"].split(" (")[0]


def machine_combo(db, min_chars: int = 18) -> QComboBox:
    """The editable "GPU or instance" box of Plan and Serve: typing shows a list of the machines whose
    full label (name, GPUs, price) contains what was typed (any case), never an inline completion
    spliced into the text; the box shows the machine's short name and its tooltip the full label."""
    combo = QComboBox()
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.NoInsert)
    combo.setMaxVisibleItems(25)
    # long machine labels must not widen the input panel past what a laptop screen has
    combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(min_chars)
    for r in hardware_rows(db):
        combo.addItem(short_label(r), hw_key(r["kind"], r["id"]))
        combo.setItemData(combo.count() - 1, r["label"], FULL_LABEL_ROLE)
        combo.setItemData(combo.count() - 1, r["label"], Qt.ToolTipRole)
    delegate = FullLabelDelegate(combo)
    comp = combo.completer()
    comp.setCompletionMode(QCompleter.PopupCompletion)  # a list of matches (inline + contains garbles)
    comp.setFilterMode(Qt.MatchContains)
    comp.setCaseSensitivity(Qt.CaseInsensitive)
    comp.setCompletionRole(FULL_LABEL_ROLE)
    comp.setMaxVisibleItems(15)
    comp.popup().setItemDelegate(delegate)
    view = combo.view()
    view.setItemDelegate(delegate)
    # the lists as wide as the longest full label (a combo's list is otherwise elided to its width)
    view.setTextElideMode(Qt.ElideNone)
    fm = view.fontMetrics()
    widest = max((fm.horizontalAdvance(combo.itemData(i, FULL_LABEL_ROLE) or "") for i in range(combo.count())),
                 default=0) + 40
    view.setMinimumWidth(widest)
    comp.popup().setMinimumWidth(widest)
    combo.currentIndexChanged.connect(lambda i: combo.setToolTip(combo.itemData(i, FULL_LABEL_ROLE) or ""))
    return combo
