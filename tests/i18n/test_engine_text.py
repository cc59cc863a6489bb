"""The engine's advice and assumption sentences: English byte for byte as before (JSON and
the CLI), and every one of them renders in zh_CN from a finished catalogue entry."""
from __future__ import annotations

import copy
import json
import os
import pickle
import re
import xml.etree.ElementTree as ET

import pytest

from planner_app.core.text import QT_TRANSLATE_NOOP, Text, TextList, render, texts_in

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASELINE = os.path.join(ROOT, "tests", "data", "engine_text_en.json")
TS = os.path.join(ROOT, "resources", "i18n", "planner_zh_CN.ts")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _cases():
    with open(BASELINE, encoding="utf-8") as f:
        return json.load(f)["cases"]


def _engine_catalogue() -> dict:
    """source -> translation of the finished "Engine" messages of the committed .ts."""
    out = {}
    for ctx in ET.parse(TS).getroot().iter("context"):
        if ctx.findtext("name") != "Engine":
            continue
        for msg in ctx.iter("message"):
            tr = msg.find("translation")
            if tr is not None and tr.get("type") is None and tr.text:
                out[msg.findtext("source")] = tr.text
    return out


@pytest.fixture(scope="module")
def estimates(db, tmp_path_factory):
    """Every baseline case estimated by the current code (a calibration profile saved in a
    private user database for the calibrated one)."""
    from planner_app.service.estimate import estimate_json
    from planner_app.specdb.userdb import UserDB

    user_dir = str(tmp_path_factory.mktemp("user"))
    old = os.environ.get("PLANNER_USER_DIR")
    os.environ["PLANNER_USER_DIR"] = user_dir
    try:
        with open(os.path.join(ROOT, "tests", "data", "probe_h200.json"), encoding="utf-8") as f:
            bench = json.load(f)
        UserDB.open_default().save_profile("lab-h200", {"bench": bench}, gpu_id="h200-sxm", device="NVIDIA H200")
        return {name: estimate_json(c["options"], db) for name, c in _cases().items()}
    finally:
        if old is None:
            del os.environ["PLANNER_USER_DIR"]
        else:
            os.environ["PLANNER_USER_DIR"] = old


def _sentences(est) -> list:
    out = [est["model"]["summary"]] + list(est["assumptions"])
    if est.get("advice"):
        out.append(est["advice"]["text"])
        out += [c["change"] for c in est["advice"]["changes"]]
    return out


def test_english_is_unchanged(estimates):
    for name, case in _cases().items():
        est = json.loads(json.dumps(estimates[name]))  # what --json prints
        assumptions = est["assumptions"]
        if name == "cal":  # the profile's date is the day it was saved
            assumptions = [re.sub(r"\d{4}-\d\d-\d\d:", "DATE:", a) for a in assumptions]
            case = {**case, "assumptions": [re.sub(r"\d{4}-\d\d-\d\d:", "DATE:", a) for a in case["assumptions"]]}
        assert assumptions == case["assumptions"], name
        assert (est.get("advice") or {}).get("text") == case["advice"], name
        assert [c["change"] for c in (est.get("advice") or {}).get("changes", [])] == case["changes"], name


def test_every_sentence_is_translatable_and_renders_in_chinese(estimates, qapp):
    from planner_app import i18n

    catalogue = _engine_catalogue()
    seen = set()
    for name, est in estimates.items():
        for s in _sentences(est):
            assert isinstance(s, Text), f"{name}: a plain string the faces cannot translate: {s!r}"
            for t in texts_in(s):
                seen.add(t.template)
                assert t.template in catalogue, f"{name}: no finished zh_CN entry for {t.template!r}"
            zh = i18n.engine_text(s, "zh_CN")
            if catalogue[s.template] != s.template:  # "ZeRO-{z}" is the same in Chinese
                assert zh != str(s) and CJK.search(zh), (name, zh)
            # no nested sentence left in English (unless its Chinese is the same text, e.g. "ZeRO-{z}")
            for t in texts_in(s):
                if catalogue[t.template] != t.template and len(str(t)) > 3:
                    assert str(t) not in zh, f"{name}: {str(t)!r} stayed English in {zh!r}"
    # the spread covers the engine's sentences: advice with and without changes, several
    # frameworks, inference, overrides, calibration, defaults of hardware
    for must in ("fits; no single change makes it faster", "does not fit by {gb:.1f} GB: {changes}",
                 "fits; faster with: {changes}", "activations follow Megatron-LM with fused kernels "
                 "(Korthikanti et al. 2022, generalised)", "weights in {dtype}; embeddings, output layer and norms "
                 "in 16 bits", "step time from --mfu {mfu:g} (model FLOPs over peak), not the model",
                 "calibration profile {name!r} ({summary})", "no --tokens: time to train and cost need a token budget",
                 "{instance}: the network is not in the spec data; {fabric} assumed"):
        assert must in seen, must


def test_chinese_keeps_the_numbers(estimates, qapp):
    from planner_app import i18n

    adv = estimates["pt_nofit"]["advice"]["text"]
    zh = i18n.engine_text(adv, "zh_CN")
    assert re.findall(r"\d+\.\d GB", str(adv)) == re.findall(r"\d+\.\d GB", zh)
    assert zh.startswith("无法容纳") and "；" in zh and "; " not in zh
    cap = next(a for a in estimates["pt_small"]["assumptions"] if "2^30" in a)
    assert "80 GB x 2^30" in str(cap) and "80 GB x 2^30" in i18n.engine_text(cap, "zh_CN")


def test_the_ui_language_is_the_default(estimates, qapp):
    from planner_app import i18n

    a = estimates["pt_small"]["assumptions"][0]
    assert i18n.engine_text(a) == str(a)
    try:
        assert i18n.install("zh_CN")
        assert i18n.engine_text(a) == i18n.engine_text(a, "zh_CN") != str(a)
        assert i18n.engine_text(a, "en") == str(a)
    finally:
        i18n.install("en")


def test_text_is_a_str_that_keeps_its_template():
    t = Text(QT_TRANSLATE_NOOP("Engine", "saves {gb:.1f} GB"), gb=12.345)
    assert t == "saves 12.3 GB" and json.dumps(t) == '"saves 12.3 GB"' and hash(t) == hash("saves 12.3 GB")
    joined = TextList("; ", [t, Text("x {n}", n=2)])
    outer = Text("head: {rest}", rest=joined)
    assert outer == "head: saves 12.3 GB; x 2"
    for copied in (copy.deepcopy(outer), pickle.loads(pickle.dumps(outer))):
        assert copied == outer and copied.template == "head: {rest}" and isinstance(copied.params["rest"], TextList)
    zh = {"head: {rest}": "头：{rest}", "; ": "；", "saves {gb:.1f} GB": "节省 {gb:.1f} GB"}
    assert render(outer, lambda ctx, s: zh.get(s, s)) == "头：节省 12.3 GB；x 2"
    # a broken translation (a placeholder renamed) falls back to the English sentence
    assert render(t, lambda ctx, s: "省 {x} GB") == "saves 12.3 GB"
