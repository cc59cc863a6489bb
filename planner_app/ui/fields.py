"""Input fields that refuse bad input at the field: spin boxes bound to the allowed range,
and text fields for numbers like ``1e12`` that turn red and say what is allowed."""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
)

from planner_app import units
from planner_app.core.options import choice_label
from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.scenario import ESTIMATE_OPTIONS


class IntField(QSpinBox):
    """An integer in [minimum, maximum]; ``special`` text shown at the minimum (e.g. "auto")."""

    def __init__(self, minimum: int, maximum: int, value: int, special: str | None = None, parent=None):
        super().__init__(parent)
        self.setRange(minimum, maximum)
        self.setValue(value)
        self.setKeyboardTracking(True)
        self.setAccelerated(True)
        if special:
            self.setSpecialValueText(special)
        self.setToolTip(translate("Fields", "whole number from {lo} to {hi}").format(lo=f"{minimum:,}", hi=f"{maximum:,}")
                        + (translate("Fields", "; {lo} means {special}").format(lo=minimum, special=special) if special else ""))

    def value_or_none(self):
        v = self.value()
        return None if self.specialValueText() and v == self.minimum() else v


class NumberField(QLineEdit):
    """A positive number (``1e12``, ``1,000,000``, ``2.5``) or empty when ``optional``.
    Invalid text turns the field red, shows the rule in ``error_text`` and keeps the last
    valid value."""

    value_changed = Signal(object)

    def __init__(self, name: str, minimum: float = 0.0, maximum: float = 1e30, optional: bool = True,
                 placeholder: str = "", parent=None, help_text: str = ""):
        super().__init__(parent)
        self.name, self.minimum, self.maximum, self.optional = name, minimum, maximum, optional
        self.help_text = help_text  # what the number means, shown above the rule in the tooltip
        self._value = None
        self.error_text = ""
        self.setPlaceholderText(placeholder)
        self.setMaxLength(40)
        self.textEdited.connect(self._parse)
        self.setToolTip((help_text + "\n" if help_text else "") + self._rule())

    def value(self):
        return self._value

    def set_value(self, v) -> None:
        self._value = v
        self.setText("" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v)))
        self._mark(True)

    def _rule(self) -> str:
        lo = f"{self.minimum:g}"
        rule = translate("Fields", "{name}: a number greater than {lo}").format(name=self.name, lo=lo) if self.minimum == 0 else \
            translate("Fields", "{name}: a number from {lo} to {hi}").format(name=self.name, lo=lo, hi=f"{self.maximum:g}")
        return rule + (translate("Fields", " (or empty)") if self.optional else "") + translate("Fields", ", e.g. 1e12 or 2,500")

    def _parse(self, text: str) -> None:
        t = text.strip().replace(",", "").replace("_", "")
        if not t:
            ok = self.optional
            value = None
        else:
            try:
                value = float(t)
                ok = math.isfinite(value) and (value > self.minimum if self.minimum == 0 else value >= self.minimum) \
                    and value <= self.maximum
            except ValueError:
                ok, value = False, None
        self._mark(ok)
        if ok and value != self._value:
            self._value = value
            self.value_changed.emit(value)

    def _mark(self, ok: bool) -> None:
        self.error_text = "" if ok else self._rule()
        self.setStyleSheet("" if ok else "QLineEdit { border: 2px solid #d33; background: #fff0f0; }")
        self.setToolTip((self.help_text + "\n" if self.help_text else "") + (self.error_text or self._rule()))


class ChoiceField(QComboBox):
    """A fixed set of choices (value, label); ``value()`` returns the value."""

    def __init__(self, choices, value=None, parent=None):
        super().__init__(parent)
        for v, label in choices:
            self.addItem(label, v)
        if value is not None:
            self.set_value(value)

    def value(self):
        return self.currentData()

    def set_value(self, v) -> None:
        i = self.findData(v)
        if i >= 0:
            self.setCurrentIndex(i)


class CheckList(QListWidget):
    """A list of (key, label) rows with check boxes; ``checked_keys()`` in list order."""

    def __init__(self, items, checked=(), parent=None):
        super().__init__(parent)
        for key, label in items:
            it = QListWidgetItem(label)
            it.setData(Qt.UserRole, key)
            it.setFlags(it.flags() | Qt.ItemIsUserCheckable)
            it.setCheckState(Qt.Checked if key in checked else Qt.Unchecked)
            self.addItem(it)

    def checked_keys(self) -> list:
        return [self.item(i).data(Qt.UserRole) for i in range(self.count())
                if self.item(i).checkState() == Qt.Checked]

    def set_checked(self, keys) -> None:
        for i in range(self.count()):
            it = self.item(i)
            it.setCheckState(Qt.Checked if it.data(Qt.UserRole) in keys else Qt.Unchecked)

    def labels(self) -> dict:
        return {self.item(i).data(Qt.UserRole): self.item(i).text() for i in range(self.count())}


# ---- fields from the requests' options (core/options.py, core/requests.py) -------------------
QT_INT_MAX = 2**31 - 1  # QSpinBox holds a C int


def _option(key: str, table: dict | None):
    """Option ``key`` of ``table`` (key -> Option; default: the estimate requests' options)."""
    return (ESTIMATE_OPTIONS if table is None else table)[key]


def option_label(key: str, table: dict | None = None) -> str:
    """The form label of option ``key``: the table's label in the user's language."""
    return translate("Options", _option(key, table).label)


def option_tooltip(key: str, table: dict | None = None) -> str:
    """What option ``key`` means (the table's help, which is also the CLI's), in the user's language."""
    opt = _option(key, table)
    text = translate("Options", opt.help)
    return text + (f" [{opt.unit}]" if opt.unit else "") + f"\n{opt.flag}"


def with_option_tooltip(key: str, widget, table: dict | None = None):
    """``widget`` with option ``key``'s help before the tooltip it has (its allowed range)."""
    rule = widget.toolTip()
    widget.setObjectName(f"option:{key}")  # tests and accessibility find a field by its option
    widget.setToolTip(option_tooltip(key, table) + (f"\n{rule}" if rule else ""))
    return widget


def add_option_row(form, key: str, widget, table: dict | None = None) -> None:
    """A QFormLayout row for option ``key``: the table's label, and its help as the label's tooltip."""
    label = QLabel(option_label(key, table))
    label.setToolTip(option_tooltip(key, table))
    label.setBuddy(widget)
    form.addRow(label, widget)


def option_int_field(key: str, auto: str | None = None, value: int | None = None,
                     table: dict | None = None) -> IntField:
    """A spin box for option ``key`` with the table's range and help; ``auto``: the text shown one
    below the table's minimum, meaning "unset" (the engine's default)."""
    opt = _option(key, table)
    lo, hi = int(opt.minimum), int(min(opt.maximum, QT_INT_MAX))
    if auto:
        return with_option_tooltip(key, IntField(lo - 1, hi, lo - 1 if value is None else value, special=auto), table)
    start = value if value is not None else (opt.default if opt.default is not None else lo)
    return with_option_tooltip(key, IntField(lo, hi, int(start)), table)


def option_choice_field(key: str, auto: str | None = None, labels: dict | None = None,
                        table: dict | None = None) -> ChoiceField:
    """A choice box for option ``key`` with the table's choices, default and help; ``auto``: a first
    entry meaning "unset" (the engine picks); ``labels``: shown text for some values."""
    opt = _option(key, table)
    items = ([(None, auto)] if auto else []) + [
        (c, (labels or {}).get(c) or translate("Options", choice_label(key, c))) for c in opt.choices]
    return with_option_tooltip(key, ChoiceField(items, opt.default if not auto else None), table)


def option_number_field(key: str, placeholder: str = "", table: dict | None = None) -> NumberField:
    """A text field for a positive number option ``key`` (``1e12``), empty meaning unset."""
    opt = _option(key, table)
    field = NumberField(option_label(key, table), minimum=opt.minimum or 0.0, maximum=opt.maximum or 1e30,
                        placeholder=placeholder, help_text=option_tooltip(key, table))
    field.setObjectName(f"option:{key}")
    return field


def duration_text(s: float | None) -> str:
    """A duration in its natural unit (units.fmt_seconds) with the unit in the user's language."""
    return units.fmt_seconds(s, names={
        "us": translate("Fields", "µs"), "ms": translate("Fields", "ms"), "s": translate("Fields", "s"),
        "min": translate("Fields", "min"), "h": translate("Fields", "h"), "days": translate("Fields", "days")})


def price_basis_labels() -> dict:
    """The price kinds (core/plans/cost.PRICE_KINDS) as every page names them (translated)."""
    return {"on_demand": translate("SearchPage", "on-demand"),
            "reserved_1yr": translate("SearchPage", "1-year reserved"),
            "reserved_3yr": translate("SearchPage", "3-year reserved"),
            "spot": translate("SearchPage", "spot")}
