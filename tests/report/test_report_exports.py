"""HTML, JSON and CSV exports; the report model without Qt; costs the report adds."""
import csv
import io
import json
import os
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from planner_app import scenario

EXAMPLES = scenario.examples()
TRAINING = [p for p in EXAMPLES if "llama-70b" in p][0]
INFERENCE = [p for p in EXAMPLES if "inference" in p][0]
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _report(db, path, lang="en"):
    from planner_app.report.model import build_report

    return build_report(scenario.load(path), db, lang=lang)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.srcs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.srcs += [v for k, v in attrs if k in ("src", "href") and tag in ("img", "script", "link")]


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_html_is_self_contained_with_inline_svg_charts(app, db, tmp_path, path):
    from planner_app.report.writer import write_report

    rep = _report(db, path)
    out = tmp_path / "r.html"
    assert write_report(rep, str(out)) == "html"  # format from the suffix
    text = out.read_text(encoding="utf-8")
    p = _Tags()
    p.feed(text)
    assert p.srcs == []  # nothing fetched from elsewhere
    n_svg = text.count("<svg")
    assert n_svg == (2 if rep.mode == "training" else 1)
    assert p.tags.count("svg") == n_svg and "<rect" in text
    assert "@@CHART" not in text and "<!--page-break-->" not in text
    assert rep.title in text
    for r in scenario.evaluate(scenario.load(path), db):
        e = r["estimate"]
        key = e["time"]["tokens_per_s"] if e["mode"] == "training" else e["time"]["decode_tokens_per_s"]
        assert f"{key:,.0f}" in text


def test_html_in_chinese(app, db, tmp_path):
    from planner_app.report.writer import write_report
    from planner_app.report.zh_cn import STRINGS

    sc = scenario.load(TRAINING)
    sc["meta"]["title"] = "七百亿参数模型预训练"
    from planner_app.report.model import build_report

    out = tmp_path / "r.html"
    write_report(build_report(sc, db, lang="zh_CN"), str(out), "html")
    text = out.read_text(encoding="utf-8")
    assert "七百亿参数模型预训练" in text and STRINGS["Recommendation"] in text and 'lang="zh-CN"' in text


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_json_holds_the_scenario_and_the_estimates(db, tmp_path, path):
    from planner_app.report.writer import write_report

    rep = _report(db, path)
    out = tmp_path / "r.json"
    write_report(rep, str(out), "json")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["scenario"] == scenario.load(path)
    expected = scenario.evaluate(scenario.load(path), db)
    assert [p["name"] for p in data["plans"]] == [r["name"] for r in expected]
    for got, want in zip(data["plans"], expected):
        assert got["options"] == want["options"]
        assert got.get("estimate") == json.loads(json.dumps(want.get("estimate")))
    assert data["report"]["chosen_plan"] == scenario.load(path)["chosen_plan"]
    assert data["sources"] and all(s["url"] and s["retrieved"] for s in data["sources"])


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_csv_one_row_per_plan(db, tmp_path, path):
    from planner_app.report.writer import write_report

    rep = _report(db, path)
    out = tmp_path / "r.csv"
    write_report(rep, str(out))
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    expected = scenario.evaluate(scenario.load(path), db)
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        assert row["plan"] == want["name"] and row["status"] == "ok"
        e = want["estimate"]
        assert float(row["peak_memory_gb"]) == pytest.approx(e["memory"]["peak_bytes"] / 1e9, rel=1e-12)
        assert row["fits"] == str(int(e["memory"]["fits"]))
        if e["mode"] == "training":
            assert float(row["tokens_per_s"]) == pytest.approx(e["time"]["tokens_per_s"], rel=1e-12)
            assert float(row["train_days"]) == pytest.approx(e["time"]["train_days"], rel=1e-12)
            od = (e["cost"].get("usd_by_price") or {}).get("on_demand")
            assert (row["usd_on_demand"] == "") == (od is None)
            if od is not None:
                assert float(row["usd_on_demand"]) == pytest.approx(od, rel=1e-12)
        else:
            assert float(row["decode_tokens_per_s"]) == pytest.approx(e["time"]["decode_tokens_per_s"], rel=1e-12)
            per_m = e["cost"].get("usd_per_million_tokens")  # None: the provider publishes no price
            assert (row["usd_on_demand"] == "") == (per_m is None)
            if per_m is not None:
                assert float(row["usd_on_demand"]) == pytest.approx(per_m, rel=1e-12)
    assert sum(int(r["recommended"]) for r in rows) == 1


def test_csv_marks_failed_plans(db, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    sc = scenario.load(TRAINING)
    sc["plans"].append({"name": "bad", "instance": "no-such-instance"})
    out = tmp_path / "r.csv"
    write_report(build_report(sc, db), str(out))
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[-1]["status"] == "error" and "no-such-instance" in rows[-1]["error"]


def test_inference_costs_at_every_price_follow_the_instance_prices(db):
    """The estimate gives the on-demand cost per million tokens; the report scales it by
    each hourly price of the instance in the spec database."""
    rep = _report(db, INFERENCE)
    for p in rep.plans:
        inst = db.instance(p.options["instance"])
        per_m = p.estimate["cost"]["usd_per_million_tokens"]
        tps = p.estimate["time"]["decode_tokens_per_s"]
        assert per_m == pytest.approx(inst.prices.on_demand / (tps * 3600) * 1e6, rel=1e-9)
        for kind in ("reserved_1yr", "reserved_3yr", "spot"):
            price = getattr(inst.prices, kind)
            got = p.cost_by_price[kind]
            if price is None:
                assert got is None
            else:
                assert got == pytest.approx(price / (tps * 3600) * 1e6, rel=1e-9)


def test_training_costs_are_the_estimates(db):
    rep = _report(db, TRAINING)
    for p in rep.plans:
        assert p.cost_by_price == p.estimate["cost"]["usd_by_price"]


def test_scaling_curve_contains_the_recommended_plan(db):
    rep = _report(db, TRAINING)
    sc = rep.scaling
    est = rep.recommended_plan.estimate
    pt = [x for x in sc["points"] if x["gpus"] == est["parallel"]["gpus"]]
    assert len(pt) == 1
    # same layout, same global batch: the curve's point is the estimate's step
    assert pt[0]["step_s"] == pytest.approx(est["time"]["step_s"], rel=1e-6)
    assert [x["nodes"] for x in sc["points"]] == sorted(x["nodes"] for x in sc["points"])


def test_inference_report_has_no_scaling(db):
    assert _report(db, INFERENCE).scaling is None


def test_report_model_does_not_import_qt():
    code = ("import sys; from planner_app import scenario; from planner_app.report.model import build_report; "
            "from planner_app.report.exports import to_csv, to_json; "
            "from planner_app.specdb.catalog import shipped_db; "
            f"r = build_report(scenario.load({TRAINING!r}), shipped_db()); to_csv(r); to_json(r); "
            "assert not any(m.startswith('PySide6') for m in sys.modules), 'Qt imported'")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-800:]


def test_calibration_section(app, db, tmp_path, monkeypatch):
    from report_helpers import pdf_text

    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report
    from planner_app.specdb.userdb import UserDB

    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path))
    with open(os.path.join(ROOT, "tests", "data", "probe_h200.json"), encoding="utf-8") as f:
        bench = json.load(f)
    UserDB.open_default().save_profile("lab-h200", {"bench": bench}, gpu_id="h200-sxm", device="NVIDIA H200")
    sc = scenario.new_scenario("Calibrated", model="llama-2-7b")
    sc["plans"] = [{"name": "H200 box", "gpu": "h200", "gpus": 8}]
    sc["workload"]["tokens"] = 1e10
    sc["calibration"] = "lab-h200"
    rep = build_report(sc, db)
    assert rep.plans[0].ok, rep.plans[0].error
    c = rep.calibration
    assert c["name"] == "lab-h200" and 0 < c["gemm_max"] <= 1
    out = str(tmp_path / "cal.pdf")
    write_report(rep, out, "pdf")
    text = pdf_text(out)
    assert "Calibration" in text and "lab-h200" in text and f"{c['gemm_max'] * 100:.1f}%" in text
    assert any("calibration profile 'lab-h200'" in a for a in rep.assumptions)
    sc["calibration"] = "missing-profile"
    rep = build_report(sc, db)
    assert "error" in rep.calibration and "missing-profile" in rep.calibration["error"]
    write_report(rep, out, "pdf")
    assert "could not be used" in pdf_text(out)


SERVE_EXAMPLE = [p for p in EXAMPLES if "train-and-serve" in p][0]


def _csv_of(db, sc, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    out = tmp_path / "r.csv"
    write_report(build_report(sc, db), str(out))
    return list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))


def test_csv_carries_each_plans_serving_numbers(db, tmp_path):
    """The serve_* columns of a plan's row are ``gpu-planner serve --json`` for the serve section on
    that plan's machine (run here through the CLI, not through the report)."""
    from planner_app.cli import main

    sc = scenario.load(SERVE_EXAMPLE)
    rows = _csv_of(db, sc, tmp_path)
    header = list(rows[0])
    for col in ("serve_ttft_ms", "serve_tpot_ms", "serve_output_tokens_per_s_per_gpu",
                "serve_usd_per_million_output_tokens", "serve_fits", "serve_saturated", "serve_slo_met"):
        assert col in header
    s = sc["serve"]
    checked = 0
    for row, plan in zip(rows, sc["plans"]):
        argv = ["serve", "--model", sc["workload"]["model"], "--json", "--instance", plan["instance"]]
        for k in ("tp", "pp", "replicas", "isl", "osl", "concurrency", "weights_dtype", "kv_dtype", "engine"):
            argv += [f"--{k.replace('_', '-')}", str(s[k])]
        buf = io.StringIO()
        import contextlib
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            rc = main(argv)
        if rc != 0:  # the deployment does not run there: the row says why
            assert row["serve_error"] and row["serve_ttft_ms"] == ""
            continue
        out = json.loads(buf.getvalue())
        assert row["serve_hardware"] == plan["instance"] and row["serve_engine"] == s["engine"]
        for k in ("ttft_ms", "tpot_ms", "e2e_latency_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu",
                  "tokens_per_s_per_user", "requests_per_s"):
            assert float(row[f"serve_{k}"]) == pytest.approx(out[k], rel=1e-12), k
        assert int(row["serve_kv_cache_tokens"]) == out["kv_cache_tokens"]
        assert row["serve_fits"] == str(int(out["fits"])) and row["serve_saturated"] == str(int(out["saturated"]))
        per_m = out["cost"].get("usd_per_million_output_tokens")
        assert (row["serve_usd_per_million_output_tokens"] == "") == (per_m is None)
        if per_m is not None:
            assert float(row["serve_usd_per_million_output_tokens"]) == pytest.approx(per_m, rel=1e-12)
        met = out["ttft_ms"] is not None and out["ttft_ms"] <= s["ttft_ms"] and out["tpot_ms"] <= s["tpot_ms"]
        assert row["serve_slo_met"] == str(int(met))
        checked += 1
    assert checked >= 2


def test_csv_serving_errors_unbounded_queues_and_the_sections_own_machine(db, tmp_path):
    sc = scenario.load(SERVE_EXAMPLE)
    # fp8 weights: the V100 plan (sm_70) cannot run them; a request rate far above what one replica serves
    sc["serve"] = {**sc["serve"], "weights_dtype": "fp8", "instance": "p5.48xlarge", "replicas": 1,
                   "request_rate": 1000.0}
    sc["serve"].pop("concurrency")
    rows = _csv_of(db, sc, tmp_path)
    assert len(rows) == len(sc["plans"]) + 1
    own = rows[-1]
    assert own["status"] == "serve_only" and own["hardware"] == own["serve_hardware"] == "p5.48xlarge"
    assert own["peak_memory_gb"] == "" and float(own["serve_tpot_ms"]) > 0
    v100 = [r for r, p in zip(rows, sc["plans"]) if "GN10X" in p["instance"]]
    assert v100 and "serve.weights_dtype" in v100[0]["serve_error"] and v100[0]["serve_tpot_ms"] == ""
    assert v100[0]["status"] == "ok"  # the plan itself (training) is fine
    saturated = [r for r in rows if r["serve_saturated"] == "1"]
    assert saturated and all(r["serve_ttft_ms"] == "inf" and r["serve_slo_met"] == "0" for r in saturated)


def test_csv_without_a_serve_section_has_empty_serving_columns(db, tmp_path):
    rows = _csv_of(db, scenario.load(TRAINING), tmp_path)
    assert "serve_tpot_ms" in rows[0]
    assert all(v == "" for r in rows for k, v in r.items() if k.startswith("serve_"))
