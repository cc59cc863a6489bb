"""Settings declared once (key, type, default), stored with QSettings; and the dialog."""
from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from planner_app import units
from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION
from planner_app.core.plans.cost import DEFAULT_CNY_PER_USD
from planner_app.core.training.setup import FRAMEWORKS
from planner_app.i18n import LANGUAGES
from planner_app.paths import user_data_dir
from planner_app.ui.fields import ChoiceField, NumberField

SETTINGS = {
    "language": (str, "system"),
    "report_language": (str, "ui"),  # ui (the interface's) | en | zh_CN
    "theme": (str, "system"),  # system | light | dark
    "meeting_font_scale": (float, 1.35),
    "autosave_s": (int, 60),
    "recent_files": (list, []),
    "last_dir": (str, ""),  # where file dialogs start (MainWindow.files_dir)
    "first_run_done": (bool, False),
    "currency": (str, "USD"),  # of new scenarios
    "cny_per_usd": (float, DEFAULT_CNY_PER_USD),
    "default_framework": (str, "pytorch"),
    "binary_units": (bool, False),  # GiB instead of GB
    # free GPU memory a plan must keep to be called comfortable (core/training/memory.py DEFAULT_MIN_HEADROOM_FRACTION)
    "min_headroom_pct": (float, DEFAULT_MIN_HEADROOM_FRACTION * 100),
}


class Settings:
    def __init__(self, qsettings: QSettings | None = None):
        self.q = qsettings or QSettings("gpu-capacity-planner", "gpu-planner")

    def get(self, key):
        typ, default = SETTINGS[key]
        v = self.q.value(key, default)
        if typ is bool:
            return v in (True, "true", "1", 1)
        if typ is list:
            if v is None:
                return []
            return [v] if isinstance(v, str) else list(v)
        try:
            return typ(v)
        except (TypeError, ValueError):
            return default

    def set(self, key, value) -> None:
        if key not in SETTINGS:
            raise KeyError(key)
        self.q.setValue(key, value)

    def reset(self) -> None:
        """Every setting back to its default (recent files and window geometry included)."""
        self.q.clear()

    def apply(self) -> None:
        """Settings that act at once: units of bytes."""
        units.set_binary(self.get("binary_units"))

    def add_recent(self, path: str, limit: int = 8) -> list[str]:
        recent = [p for p in self.get("recent_files") if p != path]
        recent.insert(0, path)
        self.set("recent_files", recent[:limit])
        return recent[:limit]


class SettingsDialog(QDialog):
    def __init__(self, settings: Settings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle(self.tr("Settings"))
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.language = ChoiceField([("system", self.tr("follow the system"))] + list(LANGUAGES.items()),
                                    settings.get("language"))
        self.report_language = ChoiceField([("ui", self.tr("same as the interface"))] + list(LANGUAGES.items()),
                                           settings.get("report_language"))
        self.theme = ChoiceField([("system", self.tr("follow the system")), ("light", self.tr("light")),
                                  ("dark", self.tr("dark"))], settings.get("theme"))
        self.scale = NumberField(self.tr("Meeting-mode font scale"), minimum=1.0, maximum=3.0, optional=False)
        self.scale.set_value(settings.get("meeting_font_scale"))
        self.currency = ChoiceField([("USD", "USD"), ("CNY", "CNY")], settings.get("currency"))
        self.rate = NumberField(self.tr("CNY per USD"), minimum=0.01, maximum=1000.0, optional=False)
        self.rate.set_value(settings.get("cny_per_usd"))
        self.framework = ChoiceField([(f, f) for f in FRAMEWORKS], settings.get("default_framework"))
        self.binary = QCheckBox(self.tr("show memory in GiB (2^30 bytes) instead of GB (10^9)"))
        self.binary.setChecked(settings.get("binary_units"))
        self.headroom = NumberField(self.tr("Memory margin (%)"), minimum=0.0, maximum=50.0, optional=False)
        self.headroom.set_value(settings.get("min_headroom_pct"))
        self.headroom.setToolTip(self.tr("Free GPU memory a plan must keep beyond the estimate (allocator "
                                         "fragmentation, framework versions); below it a plan that fits is "
                                         "marked tight, and the search does not pick it"))
        form.addRow(self.tr("Language"), self.language)
        form.addRow(self.tr("Report language"), self.report_language)
        form.addRow(self.tr("Theme"), self.theme)
        form.addRow(self.tr("Meeting-mode font scale"), self.scale)
        form.addRow(self.tr("Currency of new scenarios"), self.currency)
        form.addRow(self.tr("CNY per USD"), self.rate)
        form.addRow(self.tr("Default framework"), self.framework)
        form.addRow(self.tr("Units"), self.binary)
        form.addRow(self.tr("Memory margin (%)"), self.headroom)
        data_dir = QLabel(user_data_dir())
        data_dir.setTextInteractionFlags(Qt.TextSelectableByMouse)
        form.addRow(self.tr("Your data (database, autosave, logs)"), data_dir)
        lay.addLayout(form)
        self.reset_button = QPushButton(self.tr("Reset all settings"))
        self.reset_button.clicked.connect(self.reset)
        lay.addWidget(self.reset_button)
        lay.addWidget(QLabel(self.tr("A new language applies the next time the app starts.")))
        bb = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        bb.accepted.connect(self.save)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)

    def reset(self):
        self.settings.reset()
        self.settings.apply()
        self.accept()

    def save(self):
        if self.scale.error_text or self.rate.error_text or self.headroom.error_text:
            return
        self.settings.set("language", self.language.value())
        self.settings.set("report_language", self.report_language.value())
        self.settings.set("theme", self.theme.value())
        self.settings.set("meeting_font_scale", float(self.scale.value()))
        self.settings.set("currency", self.currency.value())
        self.settings.set("cny_per_usd", float(self.rate.value()))
        self.settings.set("default_framework", self.framework.value())
        self.settings.set("binary_units", self.binary.isChecked())
        self.settings.set("min_headroom_pct", float(self.headroom.value()))
        self.settings.apply()
        self.accept()
