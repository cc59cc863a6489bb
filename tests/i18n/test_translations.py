"""The zh_CN catalogue: compiled, complete for the current code, loadable, placeholders kept.

When a test here fails after a GUI change, run ``python tools/update_translations.py``,
add what it lists as untranslated to ``resources/i18n/zh_CN_glossary.json`` and run it
again; commit the .ts, .qm and glossary.
"""
from __future__ import annotations

import os
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import translate_zh_cn as tz  # noqa: E402
import update_translations as ut  # noqa: E402

TS = ut.TS_PATH
QM = ut.QM_PATH

try:
    ut.tool("pyside6-lupdate")
    ut.tool("pyside6-lrelease")
    HAVE_TOOLS = True
except FileNotFoundError:
    HAVE_TOOLS = False
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="pyside6-lupdate/lrelease not installed")
HOW_TO_FIX = ("run `python tools/update_translations.py`, add what it lists to "
              "resources/i18n/zh_CN_glossary.json, run it again and commit resources/i18n/")


def messages(ts_path):
    """(context, source, translation, finished) for each live message of a .ts file."""
    out = []
    for ctx in ET.parse(ts_path).getroot().iter("context"):
        name = ctx.findtext("name") or ""
        for msg in ctx.iter("message"):
            tr = msg.find("translation")
            kind = tr.get("type") if tr is not None else "unfinished"
            if kind in ("vanished", "obsolete"):
                continue
            if msg.get("numerus") == "yes":
                text = tr.findtext("numerusform") or "" if tr is not None else ""
            else:
                text = (tr.text or "") if tr is not None else ""
            out.append((name, msg.findtext("source") or "", text, kind is None and bool(text)))
    return out


@pytest.fixture(scope="module")
def fresh_ts(tmp_path_factory):
    """The committed .ts merged with what lupdate finds in the current code."""
    ts = tmp_path_factory.mktemp("i18n") / "planner_zh_CN.ts"
    shutil.copyfile(TS, ts)
    ut.run_lupdate(str(ts))
    return str(ts)


@needs_tools
def test_committed_qm_is_compiled_from_committed_ts(tmp_path):
    qm = tmp_path / "fresh.qm"
    ut.run_lrelease(TS, str(qm))
    with open(QM, "rb") as a:
        committed = a.read()
    assert qm.read_bytes() == committed, f"planner_zh_CN.qm is older than planner_zh_CN.ts: {HOW_TO_FIX}"


@needs_tools
def test_every_string_in_the_code_has_a_finished_translation(fresh_ts):
    todo = [(c, s) for c, s, _, done in messages(fresh_ts) if not done]
    assert not todo, (f"{len(todo)} strings without a zh_CN translation ({HOW_TO_FIX}):\n"
                      + "\n".join(f"  [{c}] {s!r}" for c, s in todo))


@needs_tools
def test_no_string_is_extracted_into_a_context_it_is_never_looked_up_in(fresh_ts):
    # See planner_app/i18n.py: tr("Context", "text") and module-level tr() helpers are
    # misread by lupdate; their strings end up in the empty context and stay English.
    empty = [s for c, s, _, _ in messages(fresh_ts) if c == ""]
    problems = ut.misread_calls()
    assert not problems and not empty, (
        "strings lupdate files under a context the code never uses (see planner_app/i18n.py):\n"
        + "\n".join(problems + [f"  [empty context] {s!r}" for s in empty]))


def test_loading_zh_cn_translates_a_known_string(qapp):
    from PySide6.QtCore import QCoreApplication

    from planner_app import i18n

    done = [(c, s, t) for c, s, t, ok in messages(TS) if ok and c and t != s]
    assert done, "the committed catalogue has no finished translation"
    context, source, zh = done[0]
    try:
        assert i18n.install("zh_CN")
        assert i18n.current() == "zh_CN"
        assert i18n.tr(context, source) == zh
        assert QCoreApplication.translate(context, source) == zh
    finally:
        i18n.install("en")
    assert i18n.tr(context, source) == source


def test_placeholders_are_kept_in_the_catalogue():
    bad = [(c, s, t) for c, s, t, ok in messages(TS) if ok and tz.placeholders(s) != tz.placeholders(t)]
    assert not bad, "translations that lose or add placeholders:\n" + "\n".join(
        f"  [{c}] {s!r} -> {t!r}" for c, s, t in bad)


def test_placeholders_are_kept_in_the_glossary():
    g = tz.load_glossary()
    pairs = list(g.terms.items()) + [kv for ctx in g.contexts.values() for kv in ctx.items()]
    bad = [(s, t) for s, t in pairs if tz.placeholders(s) != tz.placeholders(t)]
    assert not bad, bad
    assert all(t.strip() for _, t in pairs), "empty translations in the glossary"


def test_placeholder_patterns():
    assert tz.placeholders("Step %1 of %2, %n GPUs") == ["%1", "%2", "%n"]
    assert tz.placeholders("{name}: {0} {} {x:.1f} %(k)s %d %.2f") == \
        sorted(["{name}", "{0}", "{}", "{x:.1f}", "%(k)s", "%d", "%.2f"])
    assert tz.placeholders("100% fits") == []


def test_glossary_lookup_handles_mnemonics_ellipses_colons_and_units():
    g = tz.Glossary(terms={"File": "文件", "Save As": "另存为", "Memory per GPU": "每 GPU 显存",
                           "Reserved": "预留实例", "1 yr": "1 年", "Model": "模型"},
                    contexts={"Menu": {"Model": "模型菜单"}})
    assert g.lookup("&File") == "文件(&F)"
    assert g.lookup("Save &As...") == "另存为(&A)..."
    assert g.lookup("Save As…") == "另存为…"
    assert g.lookup("Model:") == "模型："
    assert g.lookup("Memory per GPU (GiB)") == "每 GPU 显存 (GiB)"
    assert g.lookup("Reserved (1 yr)") == "预留实例（1 年）"
    assert g.lookup("memory per gpu") == "每 GPU 显存"
    assert g.lookup("Model", "Menu") == "模型菜单"
    assert g.lookup("Nothing like it") is None
    assert g.lookup("Model (something unknown)") is None


SAMPLE_TS = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>PlanPage</name>
    <message><source>Fits</source><translation type="unfinished"></translation></message>
    <message><source>Step time: {seconds} s</source><translation type="unfinished"></translation></message>
    <message><source>Kept by hand</source><translation>手工译文</translation></message>
    <message numerus="yes"><source>%n GPU(s)</source><translation type="unfinished"><numerusform></numerusform></translation></message>
    <message><source>Bad placeholder {x}</source><translation type="unfinished"></translation></message>
</context>
</TS>
"""


def test_fill_leaves_unknown_strings_unfinished_and_reports_them(tmp_path):
    ts = tmp_path / "t.ts"
    ts.write_text(SAMPLE_TS, encoding="utf-8")
    g = tz.Glossary(terms={"Fits": "可容纳", "%n GPU(s)": "%n 个 GPU", "Kept by hand": "词表",
                           "Bad placeholder {x}": "占位符丢失"})
    res = tz.fill(str(ts), g)
    got = {s: (t, ok) for _, s, t, ok in messages(str(ts))}
    assert got["Fits"] == ("可容纳", True)
    assert got["%n GPU(s)"] == ("%n 个 GPU", True)
    assert got["Kept by hand"] == ("手工译文", True)  # no --refresh: hand-made text stays
    assert got["Step time: {seconds} s"][1] is False
    assert got["Bad placeholder {x}"][1] is False
    assert ("PlanPage", "Step time: {seconds} s") in res.missing
    assert res.refused and res.refused[0][1] == "Bad placeholder {x}"
    assert res.filled == 2
    tz.fill(str(ts), g, refresh=True)
    assert {s: t for _, s, t, _ in messages(str(ts))}["Kept by hand"] == "词表"


@needs_tools
def test_lupdate_reads_calls_as_planner_app_i18n_documents(tmp_path):
    # The rule written in planner_app/i18n.py's docstring, checked against this Qt's lupdate.
    src = tmp_path / "pkg" / "sample.py"
    src.parent.mkdir()
    src.write_text(
        "from PySide6.QtCore import QCoreApplication\n"
        "from PySide6.QtWidgets import QWidget\n"
        "from planner_app.i18n import tr as translate\n"
        "class PlanPage(QWidget):\n"
        "    def f(self):\n"
        "        return self.tr('Fits'), translate('ReportText', 'Assumptions'), \\\n"
        "            QCoreApplication.translate('Models', 'Cost')\n"
        "def tr(text):\n"
        "    return text\n"
        "def g():\n"
        "    return tr('Helper text'), tr('Ctx', 'Misread')\n", encoding="utf-8")
    ts = tmp_path / "out.ts"
    import subprocess

    subprocess.run([ut.tool("pyside6-lupdate"), "-locations", "none", str(src), "-ts", str(ts)],
                   check=True, capture_output=True)
    found = {(c, s) for c, s, _, _ in messages(str(ts))}
    assert {("PlanPage", "Fits"), ("ReportText", "Assumptions"), ("Models", "Cost")} <= found
    assert ("", "Helper text") in found and ("", "Ctx") in found  # the misread forms
    assert all(s != "Misread" for _, s in found)


def test_installing_zh_cn_also_translates_qts_own_buttons(qapp):
    from PySide6.QtWidgets import QDialogButtonBox, QMessageBox

    from planner_app import i18n

    try:
        assert i18n.install("zh_CN")
        bb = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        assert bb.button(QDialogButtonBox.Cancel).text() == "取消"
        box = QMessageBox()
        box.setStandardButtons(QMessageBox.Yes | QMessageBox.No)
        assert {box.button(QMessageBox.Yes).text(), box.button(QMessageBox.No).text()} == {"是(&Y)", "否(&N)"}
        bb.deleteLater()
        box.deleteLater()
    finally:
        i18n.install("en")
    bb = QDialogButtonBox(QDialogButtonBox.Cancel)
    assert bb.button(QDialogButtonBox.Cancel).text() == "Cancel"
    bb.deleteLater()
