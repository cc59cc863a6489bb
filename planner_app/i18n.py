"""Translation: Qt's translator with the compiled catalogues in ``resources/i18n``
(``planner_<lang>.qm``, made from the ``.ts`` files by pyside6-lrelease). Widgets use
``self.tr("...")``; code outside a QObject (reports, models of tables) uses
``tr("Context", "...")``. Languages: English (the source strings) and zh_CN."""
from __future__ import annotations

import os

LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
_installed: dict = {}


def qm_path(lang: str) -> str:
    from planner_app.paths import resources_dir
    return os.path.join(resources_dir(), "i18n", f"planner_{lang}.qm")


def install(lang: str | None) -> bool:
    """Load ``lang``'s catalogue into the running Qt application (creating a
    QCoreApplication when none exists, for headless reports). English needs none."""
    from PySide6.QtCore import QCoreApplication, QTranslator

    app = QCoreApplication.instance() or QCoreApplication([])
    old = _installed.pop("translator", None)
    if old is not None:
        app.removeTranslator(old)
    if not lang or lang == "en":
        return True
    if lang not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    t = QTranslator(app)
    if not t.load(qm_path(lang)):
        return False
    app.installTranslator(t)
    _installed["translator"] = t
    _installed["lang"] = lang
    return True


def current() -> str:
    return _installed.get("lang", "en") if "translator" in _installed else "en"


def tr(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """Translate ``text`` in ``context`` with the installed catalogue (English if none)."""
    from PySide6.QtCore import QCoreApplication
    return QCoreApplication.translate(context, text, disambiguation, n)
