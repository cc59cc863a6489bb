"""Settings declared once (key, type, default), stored with QSettings; and the dialog."""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout

from planner_app.i18n import LANGUAGES
from planner_app.ui.fields import ChoiceField, NumberField

SETTINGS = {
    "language": (str, "system"),
    "theme": (str, "system"),  # system | light | dark
    "meeting_font_scale": (float, 1.35),
    "autosave_s": (int, 60),
    "recent_files": (list, []),
    "first_run_done": (bool, False),
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
        self.theme = ChoiceField([("system", self.tr("follow the system")), ("light", self.tr("light")),
                                  ("dark", self.tr("dark"))], settings.get("theme"))
        self.scale = NumberField(self.tr("Meeting-mode font scale"), minimum=1.0, maximum=3.0, optional=False)
        self.scale.set_value(settings.get("meeting_font_scale"))
        form.addRow(self.tr("Language"), self.language)
        form.addRow(self.tr("Theme"), self.theme)
        form.addRow(self.tr("Meeting-mode font scale"), self.scale)
        lay.addLayout(form)
        lay.addWidget(QLabel(self.tr("A new language applies the next time the app starts.")))
        bb = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        bb.accepted.connect(self.save)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)

    def save(self):
        if self.scale.error_text:
            return
        self.settings.set("language", self.language.value())
        self.settings.set("theme", self.theme.value())
        self.settings.set("meeting_font_scale", float(self.scale.value()))
        self.accept()
