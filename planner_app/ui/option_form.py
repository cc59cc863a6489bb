"""A form of option rows generated from the requests' options (core/options.py): each row's
field follows the option's kind (a spin box for whole numbers, a number field, a choice, a check
box, a text field), its range, choices and help, with an "auto" entry where the default is a
stand-in the service resolves; the row's label is the option's, translated. A new option of a part
a page shows (a field added to ``ParallelPlan``) is a new row of that page without touching it.

``values()`` gives every row's value, None where it is the default (a scenario keeps only what
differs), ``set_values`` loads a scenario's; ``edited`` is emitted when the user changes one. A row
whose option ``requires`` another option of the form is enabled only when that option allows it."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QLineEdit, QWidget

from planner_app.core.options import Option, choice_label
from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.ui.fields import (
    QT_INT_MAX,
    ChoiceField,
    IntField,
    NumberField,
    option_tooltip,
)


def _table(options) -> dict:
    return {o.key: o for o in options}


def settings_text(values: dict, options: dict) -> str:
    """'Micro-batch 2, Precision recipe bf16-autocast': option labels (translated) with values."""
    return ", ".join(f"{translate('Options', options[k].label)} {choice_text(k, v)}"
                     for k, v in values.items() if k in options)


def choice_text(key: str, value) -> str:
    """Option ``key``'s choice ``value`` as the user reads it (core/options.CHOICE_LABELS, translated)."""
    return translate("Options", choice_label(key, value)) if isinstance(value, str) else str(value)


class OptionForm(QWidget):
    edited = Signal()

    def __init__(self, options: list[Option], custom: dict | None = None, parent=None):
        """``custom``: key -> a widget with ``value()`` and ``set_value(v)`` (and a change signal it
        connects to ``edited`` itself) for rows a page draws its own way."""
        super().__init__(parent)
        self.options = list(options)
        self.table = _table(self.options)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.fields: dict = {}
        self._loading = False
        for opt in self.options:
            w = (custom or {}).get(opt.key) or self._field(opt)
            w.setObjectName(f"option:{opt.key}")  # tests and accessibility find a field by its option
            tip = option_tooltip(opt.key, self.table)
            rule = w.toolTip()
            w.setToolTip(tip + (f"\n{rule}" if rule and rule not in tip else ""))
            label = QLabel(translate("Options", opt.label))
            label.setToolTip(tip)
            label.setBuddy(w)
            self.form.addRow(label, w)
            self.fields[opt.key] = w
            if (custom or {}).get(opt.key) is None:
                self._connect(w)
        self._enable_required()

    # ---- fields --------------------------------------------------------------------------------
    def _field(self, opt: Option):
        auto = translate("OptionForm", "auto")
        if opt.kind == "int":
            lo, hi = int(opt.minimum if opt.minimum is not None else 0), int(min(opt.maximum or QT_INT_MAX,
                                                                                 QT_INT_MAX))
            if opt.auto or opt.default is None:
                return _AutoInt(lo, hi, auto)
            return _Int(lo, hi, int(opt.default))
        if opt.kind == "float":
            f = _Number(translate("Options", opt.label), minimum=opt.minimum or 0.0,
                        maximum=opt.maximum if opt.maximum is not None else 1e30,
                        placeholder=auto if opt.auto else ("" if opt.default is None else f"{opt.default:g}"),
                        help_text=option_tooltip(opt.key, self.table))
            f.default = opt.default
            return f
        if opt.kind == "choice":
            items = ([(None, auto)] if opt.auto or opt.default is None else []) + \
                [(c, choice_text(opt.key, c)) for c in opt.choices]
            return _Choice(items, opt.default if not (opt.auto or opt.default is None) else None)
        if opt.kind == "bool":
            return _Check()
        return _Text(auto if opt.auto else "")

    def _connect(self, w) -> None:
        for name in ("valueChanged", "currentIndexChanged", "toggled", "value_changed", "editingFinished"):
            sig = getattr(w, name, None)
            if sig is not None:
                sig.connect(self._changed)
                return

    def _changed(self, *_):
        if self._loading:
            return
        self._enable_required()
        self.edited.emit()

    # ---- values --------------------------------------------------------------------------------
    def widget(self, key: str):
        return self.fields[key]

    def values(self) -> dict:
        """Every row's value by key; None where it is the option's default (or auto), and where the
        option it requires does not allow it (its row is disabled: given, it would be an error)."""
        out = {}
        for key, w in self.fields.items():
            v = w.value()
            d = self.table[key].default
            out[key] = None if v is None or (type(v) is type(d) and v == d) or not self._allowed(key) else v
        return out

    def set_values(self, values: dict) -> None:
        """Each row from ``values`` (a missing key: the option's default); no ``edited``."""
        self._loading = True
        try:
            for key, w in self.fields.items():
                v = values.get(key)
                w.set_value(self.table[key].default if v is None else v)
        finally:
            self._loading = False
        self._enable_required()

    def set_row_visible(self, key: str, visible: bool) -> None:
        self.form.setRowVisible(self.fields[key], visible)

    def _allowed(self, key: str) -> bool:
        req = self.table[key].requires
        if not req or req[0] not in self.fields:
            return True
        other = self.fields[req[0]].value()
        return other is not None if req[1] is None else other in req[1]

    def _enable_required(self) -> None:
        for key, w in self.fields.items():
            w.setEnabled(self._allowed(key))


# ---- fields with one protocol: value() / set_value(v) -------------------------------------------
class _Int(IntField):
    def set_value(self, v) -> None:
        self.setValue(int(v))


class _AutoInt(IntField):
    """A whole number or "auto" (one below the option's minimum)."""

    def __init__(self, lo: int, hi: int, auto: str):
        super().__init__(lo - 1, hi, lo - 1, special=auto)

    def value(self):  # noqa: D401 - Qt's name
        v = super().value()
        return None if v == self.minimum() else v

    def value_or_none(self):
        return self.value()

    def set_value(self, v) -> None:
        self.setValue(self.minimum() if v in (None, 0) else int(v))


class _Number(NumberField):
    default = None

    def set_value(self, v) -> None:
        super().set_value(None if v == self.default else v)

    def value(self):
        v = super().value()
        return self.default if v is None else v


class _Choice(ChoiceField):
    def set_value(self, v) -> None:
        i = self.findData(v) if v is not None else next(
            (j for j in range(self.count()) if self.itemData(j) is None), -1)
        if i >= 0:
            self.setCurrentIndex(i)


class _Check(QCheckBox):
    def value(self) -> bool:
        return self.isChecked()

    def set_value(self, v) -> None:
        self.setChecked(bool(v))


class _Text(QLineEdit):
    def __init__(self, placeholder: str):
        super().__init__()
        self.setMaxLength(200)
        self.setPlaceholderText(placeholder)

    def value(self):
        return self.text().strip() or None

    def set_value(self, v) -> None:
        self.setText("" if v is None else str(v))
