"""Issue 29, items 18 and 6 (the PDF): what a meeting reads in the sizing report is true and plain.

Read back from the real PDF with poppler's pdftotext, in English and Chinese:
- a short job's time is in its natural unit ("3.1 min", "3.1 分钟"), never "0.0 days" / "0.0 天";
- a job of minutes is not told to take more GPUs, and the advice says why;
- the recommended plan follows a stated rule (the cheapest that fits at the on-demand price, else
  the fastest that fits), whichever plan was open in the planner, and the report names the rule;
- no page is a page of leftovers, and no price note is said twice;
- the scaling table's latency column says what its 50 µs is, and a note explains it;
- no JSON field name of the estimate (``memory.peak_bytes``) reaches the reader;
- the Chinese title does not leave its last character alone on a line.
"""
import copy
import re
import shutil
import subprocess

import pytest
from report_helpers import pdf_text, squash

from planner_app import scenario, units
from planner_app.core.plans.scaling import LATENCY_ADDED_S

LANGS = ("en", "zh_CN")
EXAMPLES = scenario.examples()

# Llama-3.1-70B LoRA on three 8-GPU machines, a token budget of minutes (the meeting's small job):
# an H100 instance, an H200 instance that has only a spot price, and an Alibaba instance priced in CNY.
MEETING = {
    "schema_version": 2,
    "meta": {"title": "Llama-3.1-70B LoRA 微调：AWS、阿里云对比", "project": "会议", "author": "ML", "notes": ""},
    "workload": {"mode": "training", "model": "llama-3.1-70b", "framework": "pytorch", "finetune": "lora",
                 "seq_len": 4096, "tokens": 2e6},
    "plans": [
        {"name": "AWS p5.48xlarge", "instance": "p5.48xlarge", "gpus": 8, "tp": 4, "sequence_parallel": True},
        {"name": "AWS p5e.48xlarge", "instance": "p5e.48xlarge", "gpus": 8, "tp": 2},
        {"name": "Alibaba gn7e", "instance": "Alibaba Cloud:cn-beijing:ecs.gn7e-c16g1.32xlarge", "gpus": 8, "tp": 4,
         "sequence_parallel": True},
    ],
    "calibration": None, "currency": "USD", "price_mix": None, "cny_per_usd": None, "chosen_plan": 0,
}


def _write(sc, db, lang, path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    rep = build_report(sc, db, lang=lang)
    write_report(rep, str(path), "pdf", "A4")
    return rep, pdf_text(str(path))


def _strings(lang):
    from planner_app.report.text import Strings

    return Strings(lang)


def _lines(pdf) -> list[list[tuple[float, float, float, float, str]]]:
    """Per page: (x0, y0, x1, y1, text) of every text line, from ``pdftotext -bbox-layout``, and the
    page height as the first entry's y1 (x0 = x1 = -1)."""
    assert shutil.which("pdftotext"), "these tests read the PDF with poppler's pdftotext"
    out = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    pages = []
    for pg in out.split("<page ")[1:]:
        height = float(re.search(r'height="([\d.]+)"', pg).group(1))
        rows = [(-1.0, 0.0, -1.0, height, "")]
        for attrs, body in re.findall(r"<line ([^>]*)>(.*?)</line>", pg, flags=re.S):
            box = [float(re.search(rf'{k}="([\d.]+)"', attrs).group(1)) for k in ("xMin", "yMin", "xMax", "yMax")]
            rows.append((*box, " ".join(re.findall(r">([^<]*)</word>", body))))
        pages.append(rows)
    return pages


def _fills(pdf) -> list[float]:
    """How far down its body each page's text reaches (0: empty, 1: full): the body lies between
    the running header (the page's first line) and the footer (its last)."""
    out = []
    for rows in _lines(pdf):
        lines = rows[1:]
        top = min(y0 for _, y0, _, _, _ in lines)
        bottom = max(y1 for _, _, _, y1, _ in lines)
        body = [y1 for _, y0, _, y1, _ in lines if y0 > top + 20 and y1 < bottom - 12]
        out.append(0.0 if not body else (max(body) - (top + 24)) / ((bottom - 20) - (top + 24)))
    return out


@pytest.fixture(scope="module")
def meeting_pdfs(app, db, tmp_path_factory):
    out = tmp_path_factory.mktemp("truth")
    return {lang: (out / f"meeting.{lang}.pdf", *_write(MEETING, db, lang, out / f"meeting.{lang}.pdf"))
            for lang in LANGS}


@pytest.fixture(scope="module")
def example_pdfs_both(app, db, tmp_path_factory):
    """Every example scenario's PDF in English and Chinese, with the meeting's."""
    out = tmp_path_factory.mktemp("truth_examples")
    made = {}
    for path in EXAMPLES:
        name = path.rsplit("/", 1)[-1][:-5]
        for lang in LANGS:
            pdf = out / f"{name}.{lang}.pdf"
            made[(name, lang)] = (pdf, *_write(scenario.load(path), db, lang, pdf))
    return made


# ---- item 6: a short job --------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_a_job_of_minutes_reads_in_minutes(meeting_pdfs, db, lang):
    pdf, rep, text = meeting_pdfs[lang]
    s = _strings(lang)
    names = {w: s(w) for w in ("min", "h", "days")}
    results = scenario.evaluate(MEETING, db)
    for r in results:
        train_s = r["estimate"]["time"]["train_s"]
        assert 60 < train_s < 3600  # the case: a job of minutes
        assert units.fmt_seconds(train_s, names) in text, r["name"]  # "3.1 min" / "3.1 分钟"
    assert s("min") in text
    for zero in ("0.0 days", "0.0 天", "0.0天", "需要 0.0"):
        assert zero not in text, zero
    # GPU-hours of a short job keep their decimal (0.4, not 0)
    gpuh = results[0]["estimate"]["cost"]["gpu_hours"]
    assert gpuh < 100 and f"{gpuh:,.1f}" in text


def test_fmt_seconds_uses_the_natural_unit_in_both_languages():
    zh = {"min": "分钟", "h": "小时", "days": "天"}
    assert units.fmt_seconds(156) == "2.6 min" and units.fmt_seconds(156, zh) == "2.6 分钟"
    assert units.fmt_seconds(5 * 3600) == "5.0 h" and units.fmt_seconds(5 * 3600, zh) == "5.0 小时"
    assert units.fmt_seconds(59.5 * 86400) == "59.5 days" and units.fmt_seconds(59.5 * 86400, zh) == "59.5 天"
    assert units.fmt_seconds(0.7) == "700.0 ms" and units.fmt_seconds(0.7, zh) == "700.0 ms"


@pytest.mark.parametrize("lang", LANGS)
def test_a_job_of_minutes_is_not_told_to_take_more_gpus(meeting_pdfs, db, lang):
    from planner_app.core.training.advice import SHORT_RUN_S

    pdf, rep, text = meeting_pdfs[lang]
    plan = rep.recommended_plan
    est = plan.estimate
    assert est["memory"]["fits"] and est["time"]["train_s"] < SHORT_RUN_S
    assert all(c["gpus"] <= est["parallel"]["gpus"] for c in est["advice"]["changes"])
    advice = squash(_strings(lang).engine(est["advice"]["text"]))
    assert advice in squash(text)
    # the reason is given, with the threshold
    assert f"{SHORT_RUN_S / 60:.0f}" in advice and ("minutes" in advice or "分钟" in advice)
    assert "2x the GPUs" not in text and "GPU 数翻倍" not in text


def test_advice_offers_more_gpus_only_to_a_long_enough_run(db):
    """The same plan: a run of an hour or more still hears of more GPUs, a run of minutes does not."""
    from planner_app.core.training.advice import SHORT_RUN_S, advice_text, advise

    r = scenario.evaluate({**MEETING, "plans": [MEETING["plans"][1]]}, db)[0]["result"]
    e = r.estimate
    args = (e.model, e.hardware, e.setup, e.plan)
    _, long_run = advise(*args, run_s=SHORT_RUN_S)
    summary, short_run = advise(*args, run_s=SHORT_RUN_S / 20)
    assert any(c.gpus > e.plan.gpus for c in long_run)  # faster with more GPUs...
    assert short_run and all(c.gpus <= e.plan.gpus for c in short_run)  # ...not offered for minutes
    assert "no more GPUs" in str(advice_text(summary, short_run))


# ---- item 6: the recommendation follows a stated rule -------------------------------------
def _rule_pick(sc, db) -> str:
    """The rule, applied here to the estimates: the cheapest at the on-demand price of the plans
    that fit, else the fastest that fits."""
    fit = [(i, r) for i, r in enumerate(scenario.evaluate(sc, db))
           if r.get("estimate") and r["estimate"]["memory"]["fits"]]
    priced = [(r["estimate"]["cost"]["usd_by_price"]["on_demand"], -r["estimate"]["time"]["tokens_per_s"], i, r)
              for i, r in fit if (r["estimate"]["cost"].get("usd_by_price") or {}).get("on_demand") is not None]
    if priced:
        return min(priced, key=lambda x: x[:3])[3]["name"]
    return max(fit, key=lambda x: (x[1]["estimate"]["time"]["tokens_per_s"], -x[0]))[1]["name"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_recommendation_is_the_rule_not_the_plan_opened_last(app, db, tmp_path, lang):
    from planner_app.report.html import RULE_TEXT

    s = _strings(lang)
    want = _rule_pick(MEETING, db)
    for opened in range(len(MEETING["plans"])):  # whichever plan the planner had open
        sc = copy.deepcopy(MEETING)
        sc["chosen_plan"] = opened
        rep, text = _write(sc, db, lang, tmp_path / f"r{opened}.pdf")
        flat = squash(text)
        assert rep.recommended_plan.name == want
        assert squash(s(RULE_TEXT["training"])) in flat  # the rule, stated
        n = sum(1 for p in rep.plans if p.ok and p.estimate["memory"]["fits"])
        assert squash(s.f("{plan} is the cheapest of the {n} of {total} plans that qualify.", plan=want, n=n,
                          total=len(sc["plans"]))) in flat  # and the branch of it that chose
        assert squash(f'{want} ({s("recommended")})') in flat  # the compared-plans table marks the same plan
        assert flat.count(squash(f'({s("recommended")})')) == 1


def test_the_recommendation_falls_back_to_the_fastest_and_says_so(app, db, tmp_path):
    """No plan that fits has an on-demand price (the H200 instance has only a spot price): the fastest."""
    sc = copy.deepcopy(MEETING)
    sc["plans"] = [MEETING["plans"][1], {**MEETING["plans"][1], "name": "p5e tp 4", "tp": 4}]
    rep, text = _write(sc, db, "en", tmp_path / "fast.pdf")
    assert rep.rule["rule"] == "fastest" and rep.recommended_plan.name == _rule_pick(sc, db)
    assert squash(f"{rep.recommended_plan.name} is the fastest of the 2 of 2 plans that qualify; none of them "
                  "has an on-demand price.") in squash(text)


def test_no_plan_fits_no_recommendation(app, db, tmp_path):
    sc = copy.deepcopy(MEETING)
    sc["workload"]["finetune"] = "full"  # 70B full fine-tuning on one node fits nowhere
    sc["chosen_plan"] = 2
    rep, text = _write(sc, db, "en", tmp_path / "none.pdf")
    assert not any(p.ok and p.estimate["memory"]["fits"] for p in rep.plans)
    assert "so none is recommended" in text and "(recommended)" not in text
    assert squash(f"shown: {sc['plans'][2]['name']}, the plan open in the planner") in squash(text)


# ---- item 18: pages, notes, the latency column, internal keys, the title --------------------
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [p.rsplit("/", 1)[-1][:-5] for p in EXAMPLES])
def test_no_page_is_a_page_of_leftovers(example_pdfs_both, name, lang):
    pdf, rep, text = example_pdfs_both[(name, lang)]
    fills = _fills(pdf)
    assert len(fills) <= 6, fills
    assert min(fills) >= 0.15, fills  # a few lines alone on a page (the old page 4 held 3-7% of one)


@pytest.mark.parametrize("lang", LANGS)
def test_the_meeting_report_has_no_page_of_leftovers(meeting_pdfs, lang):
    pdf, rep, text = meeting_pdfs[lang]
    fills = _fills(pdf)
    assert min(fills) >= 0.15, fills


@pytest.mark.parametrize("lang", LANGS)
def test_each_price_note_is_said_once(example_pdfs_both, lang):
    """The train-and-serve example prices in CNY and with old prices in its cost table and its serving
    table: the conversion and staleness notes are said once, not again pages later."""
    pdf, rep, text = example_pdfs_both[("china-70b-train-and-serve-aws-alibaba-tencent", lang)]
    s = _strings(lang)
    flat = squash(text)
    conversion = squash(s("¥→$: the provider quotes this price in CNY; converted to USD at {rate} CNY per USD "
                          "({how}).").split("{rate}")[0])
    stale = squash(s("Prices more than {days} days old may be stale: {plans}.").split("{days}")[0])
    assert flat.count(conversion) == 1
    assert flat.count(stale) == 1


@pytest.mark.parametrize("lang", LANGS)
def test_the_latency_column_says_what_its_50_us_is(meeting_pdfs, lang):
    pdf, rep, text = meeting_pdfs[lang]
    s = _strings(lang)
    us = f"{LATENCY_ADDED_S * 1e6:g}"
    flat = squash(text)
    assert squash(s.f("Step change at +{us} µs per hop", us=us)) in flat
    note = s.f("Last column, latency sensitivity: how much longer a step takes when every step of every "
               "inter-node collective waits {us} µs more (a slower switch, or TCP in place of RDMA); a few "
               "percent or less: the plan is bound by bandwidth and compute, not by network latency.", us=us)
    assert squash(note) in flat
    assert "+50 微秒延迟" not in text and "+50 µs latency" not in text


def _field_names(obj, prefix=""):
    """Every key of a JSON object with an underscore, and every "section.key" path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str):
                if "_" in k:
                    yield k
                if prefix:
                    yield f"{prefix}.{k}"
                yield from _field_names(v, k)
    elif isinstance(obj, list):
        for v in obj:
            yield from _field_names(v, prefix)


# vLLM's own argument (LLM(gpu_memory_utilization=0.9)), which the serving assumption names as vLLM does
ENGINE_ARGUMENTS = {"gpu_memory_utilization"}


@pytest.mark.parametrize("lang", LANGS)
def test_no_internal_key_reaches_the_reader(example_pdfs_both, meeting_pdfs, lang):
    reports = [v for (n, lg), v in example_pdfs_both.items() if lg == lang] + [meeting_pdfs[lang]]
    for _pdf, rep, text in reports:
        keys = {k for p in rep.plans if p.ok for k in _field_names(p.estimate)}
        keys |= set(_field_names(rep.serving or {}))
        keys = {k for k in keys if ("_" in k or "." in k) and k not in ENGINE_ARGUMENTS}
        found = sorted(k for k in keys if re.search(r"(?<![\w/.-])" + re.escape(k) + r"(?![\w/-])", text))
        assert not found, (rep.title, found)
        assert "peak_bytes" not in text


def test_the_peak_memory_assumption_names_the_memory_table_column(meeting_pdfs):
    for lang in LANGS:
        pdf, rep, text = meeting_pdfs[lang]
        s = _strings(lang)
        assert s("the peak allocated memory") in text and s("Peak allocated") in text


def _title_lines(pdf) -> list[tuple[float, float]]:
    """(width, height) of the lines of page 1 in the title's type size (the largest on the page)."""
    rows = _lines(pdf)[0][1:]
    tallest = max(y1 - y0 for _, y0, _, y1, _ in rows)
    return [(x1 - x0, y1 - y0) for x0, y0, x1, y1, t in rows if y1 - y0 >= 0.85 * tallest]


@pytest.mark.parametrize("name", ["china-70b-train-and-serve-aws-alibaba-tencent",
                                  "china-70b-pretraining-aws-alibaba-tencent"])
def test_the_chinese_title_leaves_no_character_alone(example_pdfs_both, name):
    pdf, rep, text = example_pdfs_both[(name, "zh_CN")]
    lines = _title_lines(pdf)
    assert lines, "no title found on page 1"
    widths = [w for w, _ in lines]
    assert len(lines) == 1 or widths[-1] >= 0.25 * max(widths), lines
    assert rep.title in text.replace("\n", "")


def test_a_title_too_long_for_one_line_wraps_with_a_full_last_line(app, db, tmp_path):
    sc = copy.deepcopy(MEETING)
    sc["meta"]["title"] = "Llama-3.1-70B 预训练与推理服务：AWS、阿里云、腾讯云对比以及国内外各家云厂商价格与交付周期的全面比较分析"
    rep, text = _write(sc, db, "zh_CN", tmp_path / "long.pdf")
    widths = [w for w, _ in _title_lines(tmp_path / "long.pdf")]
    assert len(widths) >= 2 and widths[-1] >= 0.25 * max(widths), widths
