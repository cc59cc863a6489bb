"""Translation: Qt's translator with the compiled catalogues in ``resources/i18n``
(``planner_<lang>.qm``, made from ``planner_<lang>.ts`` by ``tools/update_translations.py``:
pyside6-lupdate, a glossary fill, pyside6-lrelease). Languages: English (the source
strings) and zh_CN.

How to write a string so that pyside6-lupdate (Qt 6.12's Python parser) extracts it into
the context it is looked up in at run time. Only string literals are extracted (no
f-strings, no variables); ``.format(...)`` or ``.replace("%1", ...)`` after the call is fine.

- In a QObject subclass: ``self.tr("Save")``. lupdate files it under the name of the
  class whose body holds the call; PySide 6.12 looks it up under the class of ``self``
  and then its base classes, so a base class's strings also work from its subclasses.
- Everywhere else (reports, table models, helpers, plain functions)::

      from planner_app.i18n import tr as translate
      translate("ReportPage", "Assumptions")

  lupdate reads every call *named* ``translate`` (also ``QCoreApplication.translate``)
  as ``translate(context, text, disambiguation, n)``.
- Do not call this module's ``tr`` under the name ``tr`` with a context:
  lupdate reads any call named ``tr`` as ``tr(text, disambiguation, n)``, so
  ``tr("Report", "Assumptions")`` is extracted as the text "Report" and
  ``i18n.tr("Report", ...)`` lands in a context named "i18n"; neither is ever translated.
- A helper such as ``def tr(text): return QCoreApplication.translate("Fields", text)``
  does not work either: lupdate files its calls under the empty context "" while the
  lookup uses "Fields". Put the context in each call (``translate("Fields", "...")``).

``tools/update_translations.py`` warns about the wrong forms, and tests/i18n checks that
every extracted string has a finished zh_CN translation and that no string lands in the
empty context."""
from __future__ import annotations

import os

from planner_app.core.text import render
from planner_app.paths import resources_dir

LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
_installed: dict = {}
_loaded: dict = {}  # lang -> QTranslator not installed (translator())


def qm_path(lang: str) -> str:
    return os.path.join(resources_dir(), "i18n", f"planner_{lang}.qm")


def qt_catalogue_dir() -> str:
    """Where Qt's own catalogues (``qtbase_<lang>.qm``: standard buttons and dialogs) are:
    PySide6's ``Qt/translations`` (kept by packaging/gpu_planner.spec in the bundle)."""
    from PySide6.QtCore import QLibraryInfo  # lazy: keeps Qt off the CLI and the headless reports

    return QLibraryInfo.path(QLibraryInfo.TranslationsPath)


def install(lang: str | None) -> bool:
    """Load ``lang``'s catalogue into the running Qt application (creating a
    QCoreApplication when none exists, for headless reports), with Qt's own catalogue for
    the standard dialogs and buttons. English needs none."""
    from PySide6.QtCore import QCoreApplication, QTranslator  # lazy: keeps Qt off the CLI and the headless reports

    app = QCoreApplication.instance() or QCoreApplication([])
    for key in ("translator", "qt_translator", "qt_supplement"):
        old = _installed.pop(key, None)
        if old is not None:
            app.removeTranslator(old)
    _installed.pop("lang", None)
    if not lang or lang == "en":
        return True
    if lang not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    t = QTranslator(app)
    if not t.load(qm_path(lang)):
        return False
    qt = QTranslator(app)
    if qt.load(f"qtbase_{lang}", qt_catalogue_dir()):  # missing: Qt's dialogs stay English
        app.installTranslator(qt)
        _installed["qt_translator"] = qt
    if QT_SUPPLEMENT.get(lang):
        sup = _supplement(lang, app)
        app.installTranslator(sup)  # installed after qtbase: asked first
        _installed["qt_supplement"] = sup
    app.installTranslator(t)
    _installed["translator"] = t
    _installed["lang"] = lang
    return True


# Qt's own strings that its shipped catalogue does not translate: Qt 6.11's QFileDialog labels gained
# mnemonics ("&Look in:") that qtbase_zh_CN.qm (PySide6 6.11.3, Qt/translations) still has only
# without them ("Look in:" -> 查找范围：), so the file dialog showed them in English (issue 29, item 9).
# tests/gui/test_zh_values.py opens Qt's own file dialog in zh_CN and fails on any English label.
QT_SUPPLEMENT = {"zh_CN": {("QFileDialog", "&Look in:"): "查找范围(&L)：",
                           ("QFileDialog", "Files of &type:"): "文件类型(&T)："}}


def _supplement(lang: str, parent):
    """A translator answering QT_SUPPLEMENT[lang] (and nothing else: other strings fall through)."""
    from PySide6.QtCore import QTranslator  # lazy: keeps Qt off the CLI and the headless reports

    table = QT_SUPPLEMENT[lang]

    class Supplement(QTranslator):
        def translate(self, context, source, disambiguation=None, n=-1):  # noqa: ARG002 - Qt's signature
            # None (a null QString) when it has no entry: "" would be taken as the translation, and
            # every other string of the app (the zh report's headings) would come out empty
            return table.get((context, source))

        def isEmpty(self):  # noqa: N802 - Qt override
            return False

    return Supplement(parent)


def translator(lang: str):
    """The app's catalogue for ``lang`` as a QTranslator that is *not* installed (a report
    in a language other than the UI's); None for English or when it cannot be loaded."""
    from PySide6.QtCore import QTranslator  # lazy: keeps Qt off the CLI and the headless reports

    if not lang or lang == "en":
        return None
    if lang not in _loaded:
        t = QTranslator()
        _loaded[lang] = t if t.load(qm_path(lang)) else None
    return _loaded[lang]


def tr_in(lang: str | None, context: str, text: str) -> str:
    """``text`` of ``context`` in ``lang`` (None: the UI's installed language), whatever the
    UI's language is."""
    if lang is None:
        return tr(context, text)
    t = translator(lang)
    return (t.translate(context, text) or text) if t is not None else text


def engine_text(value, lang: str | None = None) -> str:
    """An engine or probe sentence (``planner_app.core.text.Text``: advice, assumptions,
    NVML messages) in ``lang`` (None: the UI's language); a plain string is returned as it is."""
    if lang == "en":
        return str(value)
    return render(value, lambda context, text: tr_in(lang, context, text))


def current() -> str:
    return _installed.get("lang", "en") if "translator" in _installed else "en"


def tr(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """Translate ``text`` in ``context`` with the installed catalogue (English if none)."""
    from PySide6.QtCore import QCoreApplication  # lazy: keeps Qt off the CLI and the headless reports
    return QCoreApplication.translate(context, text, disambiguation, n)
