"""PDF reports of the example scenarios: the numbers are the engine's (formatted here
independently of the report code), every section is there, charts are vector drawings,
page count and paper size, Chinese text survives the round trip."""
import os
import re

import pytest
from pypdf import PdfReader
from report_helpers import pdf_text, squash

from planner_app import scenario, units

EXAMPLES = scenario.examples()
HEADINGS = ("Recommendation", "Inputs", "Compared plans", "Memory per GPU", "Assumptions", "Data sources", "Notes")


def _usd(v):
    return f"${v:,.0f}" if abs(v) >= 100 else f"${v:,.2f}"


def _in_pieces(url: str, hay: str, pieces: int = 3, least: int = 8) -> bool:
    """``url`` found in ``hay`` as at most ``pieces`` runs of ``least`` or more characters, in order: a table
    row split across a page puts the footer, the next page's header and the repeated table header inside it."""
    at, rest = 0, url
    for _ in range(pieces):
        n = len(rest)
        while n >= least and hay.find(rest[:n], at) < 0:
            n -= 1
        if n < least:
            return False
        at = hay.find(rest[:n], at) + n
        rest = rest[n:]
        if not rest:
            return True
    return False


def test_there_are_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_numbers_in_the_pdf_are_the_estimates(path, example_pdfs, db):
    pdf, rep, text = example_pdfs[path]
    results = scenario.evaluate(scenario.load(path), db)  # evaluated again, not taken from the report
    flat = squash(text)
    assert rep.title in text
    for r in results:
        assert r["name"] in text
        if "error" in r:
            continue
        e = r["estimate"]
        t, c = e["time"], e.get("cost", {})
        expected = []
        if e["mode"] == "training":
            expected += [f"{t['tokens_per_s']:,.0f}", f"{t['mfu'] * 100:.1f}%"]
            if "train_s" in t:  # the time to train in its natural unit (2.6 min, 10.2 h, 59.5 days)
                gpuh = c["gpu_hours"]
                expected += [units.fmt_seconds(t["train_s"]), f"{gpuh:,.1f}" if gpuh < 100 else f"{gpuh:,.0f}"]
            for v in (c.get("usd_by_price") or {}).values():
                if v is not None:
                    expected.append(_usd(v))
        else:
            expected += [f"{t['decode_tokens_per_s']:,.0f}", f"{t['decode_tokens_per_s_per_user']:,.0f}",
                         units.fmt_seconds(t["serving_engine_decode_s_per_token"])]  # the vLLM column
            if c.get("usd_per_million_tokens") is not None:  # None: the provider publishes no price
                expected.append(f"${c['usd_per_million_tokens']:,.3f}")
        for s in expected:
            assert s in text, (r["name"], s)
        # pdftotext joins a hyphen at a line end with the next line: compare without hyphens. A
        # sources row can break across a page (Qt splits table rows), putting the page footer and
        # header inside a long URL: then its two ends are found apart.
        url, hay = squash(e["gpu"]["source"]).replace("-", ""), flat.replace("-", "")
        assert url in hay or _in_pieces(url, hay), url
        assert e["gpu"]["retrieved"] in text
    for h in HEADINGS:
        assert h in text, h
    if rep.mode == "training":
        assert "Scaling of the recommended plan" in text and "Time to train" in text
    else:
        assert "Serving performance" in text and "Cost per million generated tokens" in text
    assert rep.notes.split()[0] in text


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_page_count_numbers_and_paper(path, example_pdfs):
    pdf, rep, text = example_pdfs[path]
    reader = PdfReader(pdf)
    n = len(reader.pages)
    assert 2 <= n <= 8
    assert f"Page {n} of {n}" in text
    assert f"Page 1 of {n}" in text
    assert len(re.findall(r"Page \d+ of \d+", text)) == n
    box = reader.pages[0].mediabox
    assert abs(float(box.width) - 595.3) < 2 and abs(float(box.height) - 841.9) < 2  # A4 in points


def _stream(page) -> bytes:
    return page.get_contents().get_data()


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_charts_are_vector_drawings(path, example_pdfs):
    """The memory chart's bars are filled rectangles in the bar colours; the scaling chart
    is stroked paths: both as PDF drawing operators, not images."""
    from planner_app.report.charts import PALETTE

    pdf, rep, _ = example_pdfs[path]
    data = b"".join(_stream(p) for p in PdfReader(pdf).pages)

    fills = {tuple(round(float(x), 3) for x in m)
             for m in re.findall(rb"([\d.]+) ([\d.]+) ([\d.]+) (?:scn|rg)\b", data)}
    ok = [p for p in rep.plans if p.ok]
    used = {k for p in ok for k, _ in p.memory_groups()}
    assert "parameters" in used
    for k in used:
        colour = PALETTE[k]
        rgb = tuple(round(int(colour[i:i + 2], 16) / 255, 3) for i in (1, 3, 5))
        assert rgb in fills, (k, colour)
    assert data.count(b" re") >= 2 * len(ok)  # rectangles
    if rep.mode == "training" and rep.scaling and "points" in rep.scaling:
        assert len(re.findall(rb"[\d.]+ [\d.]+ l\b", data)) > 20  # line segments of curves and axes


def test_letter_paper(app, db, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    rep = build_report(scenario.load(EXAMPLES[0]), db)
    out = str(tmp_path / "letter.pdf")
    write_report(rep, out, "pdf", "Letter")
    box = PdfReader(out).pages[0].mediabox
    assert abs(float(box.width) - 612) < 2 and abs(float(box.height) - 792) < 2


def _zh_scenario():
    sc = scenario.load([p for p in EXAMPLES if "llama-70b" in p][0])
    sc["meta"]["title"] = "七百亿参数模型预训练"
    sc["meta"]["project"] = "基础模型"
    sc["meta"]["notes"] = "价格按 80% 一年预留计算。"
    return sc


def test_chinese_title_and_fixed_strings_survive_the_round_trip(app, db, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.text import Strings
    from planner_app.report.writer import write_report
    from planner_app.report.zh_cn import STRINGS

    out = str(tmp_path / "zh.pdf")
    write_report(build_report(_zh_scenario(), db, lang="zh_CN"), out, "pdf", "A4")
    text = pdf_text(out)
    assert "七百亿参数模型预训练" in text
    assert "价格按 80% 一年预留计算。" in text
    zh = Strings("zh_CN")  # a compiled catalogue's translation when there is one, else zh_cn.py's
    for en in ("Recommendation", "Memory per GPU", "Data sources", "Assumptions", "Time to train"):
        assert en in STRINGS and zh(en) != en
        assert zh(en) in text, en
        assert en not in text, en
    n = len(PdfReader(out).pages)
    assert f"第 {n} 页，共 {n} 页" in text
    fonts = set()
    for page in PdfReader(out).pages:
        for f in (page["/Resources"].get("/Font") or {}).values():
            fonts.add(str(f.get_object()["/BaseFont"]))
    assert any("WenQuanYi" in f for f in fonts), fonts


def test_chinese_title_in_an_english_report(app, db, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    out = str(tmp_path / "en.pdf")
    write_report(build_report(_zh_scenario(), db, lang="en"), out, "pdf", "A4")
    text = pdf_text(out)
    assert "七百亿参数模型预训练" in text and "Recommendation" in text


def test_every_fixed_string_has_a_chinese_translation(app, db, monkeypatch, tmp_path):
    """Render every kind of report in zh_CN and record strings with no Chinese."""
    from planner_app.report import text
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report
    from planner_app.report.zh_cn import STRINGS

    missing = set()
    real = text.Strings.__call__

    def spy(self, s):
        if self.lang != "en" and s not in STRINGS:
            missing.add(s)
        return real(self, s)

    monkeypatch.setattr(text.Strings, "__call__", spy)
    for i, path in enumerate(EXAMPLES):
        sc = scenario.load(path)
        if i == 0:
            sc["plans"].append({"name": "broken", "gpu": "no-such-gpu"})
        write_report(build_report(sc, db, lang="zh_CN"), str(tmp_path / f"{i}.pdf"), "pdf", "A4")
        write_report(build_report(sc, db, lang="zh_CN"), str(tmp_path / f"{i}.html"), "html", "A4")
    assert not missing, sorted(missing)


def test_a_failing_plan_shows_its_error(app, db, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    sc = scenario.load(EXAMPLES[0])
    sc["plans"].append({"name": "Mystery GPU", "gpu": "no-such-gpu-9000", "gpus": 8})
    rep = build_report(sc, db)
    bad = rep.plans[-1]
    assert not bad.ok and bad.error
    out = str(tmp_path / "err.pdf")
    write_report(rep, out, "pdf", "A4")
    text = pdf_text(out)
    assert "Mystery GPU" in text and "Estimate failed" in text
    assert squash(bad.error)[:30] in squash(text)
    sc["chosen_plan"] = len(sc["plans"]) - 1  # the recommendation itself failed
    write_report(build_report(sc, db), out, "pdf", "A4")
    assert "could not be estimated" in pdf_text(out)


def test_progress_is_reported(app, db, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    seen = []
    write_report(build_report(scenario.load(EXAMPLES[0]), db), str(tmp_path / "p.pdf"), "pdf", "A4",
                 progress=lambda f, t: seen.append((f, t)))
    fr = [f for f, _ in seen]
    assert fr == sorted(fr) and fr[-1] == 1.0 and len(seen) >= 3 and all(isinstance(t, str) for _, t in seen)


def test_every_input_label_of_the_report_has_a_chinese_name():
    """The report's inputs table names the workload's options by the option table's labels; each
    has a zh_CN entry in the report's catalogue (a new option cannot land untranslated)."""
    from planner_app.report.html import WORKLOAD_LABELS
    from planner_app.report.zh_cn import STRINGS
    missing = [label for _, label, _ in WORKLOAD_LABELS if label not in STRINGS]
    assert not missing, missing
