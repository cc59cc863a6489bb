"""The report's Serving section (issue 15 item 4): a scenario's ``serve`` section served on each
plan's machine. Its numbers are what ``gpu-planner serve --json`` prints for the same options (the
CLI run in-process here); both languages show them; a scenario without a serve section gives the
report it gave before; a bad serve section is refused naming ``serve.<field>``."""
import contextlib
import copy
import io
import json
import os

import pytest
from report_helpers import pdf_text, squash

from planner_app import scenario
from planner_app.cli import main
from planner_app.core.errors import InputError
from planner_app.specdb.schema import SpecDataError

EXAMPLE = os.path.join(scenario.example_dir(), "china-70b-train-and-serve-aws-alibaba-tencent.json")
TRAINING = os.path.join(scenario.example_dir(), "llama-70b-pretraining-three-clouds.json")


def _cli_serve(sc: dict, hardware: dict) -> dict:
    """``gpu-planner serve --json`` for the scenario's model and serve section on ``hardware``."""
    from planner_app.service.serving_plans import section_options

    argv = ["serve", "--model", sc["workload"]["model"], "--json"]
    for k, v in {**section_options(sc["serve"]), **hardware}.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


def _report(db, sc, lang="en"):
    from planner_app.report.model import build_report

    return build_report(sc, db, lang=lang)


def _html(db, sc, lang="en"):
    from planner_app.report.html import render

    return render(_report(db, sc, lang))


@pytest.fixture(scope="module")
def example():
    return scenario.load(EXAMPLE)


def test_each_plan_machine_gets_the_serve_commands_numbers(db, example):
    rep = _report(db, example)
    deps = rep.serving["deployments"]
    # the section names a plan's machine (p4d): no separate column, one per plan
    assert [d["plan_index"] for d in deps] == [0, 1, 2]
    for d, plan in zip(deps, example["plans"]):
        assert d["hardware"] == {"instance": plan["instance"]} and d["error"] is None
        cli = _cli_serve(example, d["hardware"])
        assert json.loads(json.dumps(d["serve"])) == cli  # every key, assumptions included
        slo = d["slo"]
        assert slo["ttft_met"] == (cli["ttft_ms"] <= example["serve"]["ttft_ms"])
        assert slo["tpot_met"] == (cli["tpot_ms"] <= example["serve"]["tpot_ms"])
        assert slo["met"] == (slo["ttft_met"] and slo["tpot_met"])
    # the example asks something with a real answer: the A100 machines meet the targets, the V100 does not
    assert [d["slo"]["met"] for d in deps] == [True, True, False]
    for a in deps[0]["serve"]["assumptions"]:
        assert a in rep.assumptions
    assert rep.to_dict()["serving"]["deployments"][2]["serve"]["tpot_ms"] == deps[2]["serve"]["tpot_ms"]


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_both_languages_show_the_numbers(app, db, example, lang):
    from planner_app.report.serving import ms
    from planner_app.report.text import Strings, usd_per_m

    text = _html(db, example, lang)
    s = Strings(lang)
    assert f"<h2>{s('Serving')}</h2>" in text
    for label in ("TTFT", "TPOT", "Tokens/s per user", "Output tokens/s per GPU", "USD per million output tokens",
                  "Saturated (requests queue)", "Serving memory per GPU", "Time per output token by part (ms)",
                  "Attention (KV cache)"):
        assert s(label) in text, label
    if lang == "zh_CN":
        assert "<h2>Serving</h2>" not in text and "推理服务部署" in text and "满足 TTFT ≤ 1000 ms" in text
    for d in _report(db, example, lang).serving["deployments"]:
        out = d["serve"]
        for cell in (ms(out["ttft_ms"]), ms(out["tpot_ms"]), f"{out['tokens_per_s_per_user']:,.1f}",
                     f"{out['output_tokens_per_s_per_gpu']:,.0f}", f"{out['requests_per_s']:,.2f}",
                     f"{out['max_concurrency']:,}", usd_per_m(out["cost"]["usd_per_million_output_tokens"]),
                     f"{d['price']['date']} "):
            assert cell in text, (d["name"], cell)
        # where the TPOT goes: serve's step_breakdown_ms, each part as the command gives it
        for v in out["step_breakdown_ms"].values():
            if v > 0:
                assert f"{v:,.2f}" in text, (d["name"], v)
    assert "CNY 2024-12-31" in text and "¥→$" in text  # Alibaba's CNY price, converted


def test_chinese_pdf_holds_the_serving_section(app, db, example, tmp_path):
    from planner_app.report.model import build_report
    from planner_app.report.writer import write_report

    out = str(tmp_path / "zh.pdf")
    rep = build_report(example, db, lang="zh_CN")
    write_report(rep, out, "pdf", "A4")
    text = squash(pdf_text(out))
    assert "推理服务部署" in text and "推理服务每GPU显存" in text
    for d in rep.serving["deployments"]:
        assert squash(f"{d['serve']['tpot_ms']:,.1f} ms") in text
        assert f"${d['serve']['cost']['usd_per_million_output_tokens']:,.3f}" in text


def test_a_scenario_without_serve_gives_the_same_report(db):
    plain = scenario.load(TRAINING)
    assert "serve" not in plain
    with_serve = copy.deepcopy(plain)
    with_serve["serve"] = {"isl": 1024, "osl": 256, "concurrency": 16, "tp": 8}
    a, b = _report(db, plain).to_dict(), _report(db, with_serve).to_dict()
    assert "serving" not in a and b["serving"]["deployments"]
    assert a["plans"] == b["plans"] and a["scaling"] == b["scaling"] and a["sources"] == b["sources"]
    assert a["assumptions"] == b["assumptions"][:len(a["assumptions"])]  # the serve ones come after
    html = _html(db, plain)
    assert "<h2>Serving</h2>" not in html and "gpu-planner serve" not in html


def test_the_sections_own_machine_gets_its_own_column(db, example):
    sc = copy.deepcopy(example)
    sc["serve"]["instance"] = "p5.48xlarge"  # no plan has it
    rep = _report(db, sc)
    first = rep.serving["deployments"][0]
    assert first["name"] is None and first["plan_index"] is None and first["hardware"] == {"instance": "p5.48xlarge"}
    assert json.loads(json.dumps(first["serve"])) == _cli_serve(sc, {"instance": "p5.48xlarge"})
    assert any(s.kind == "instance" and "p5.48xlarge" in s.name for s in rep.sources)
    assert "Serve page deployment" in _html(db, sc)


def test_a_layout_one_machine_cannot_hold_is_that_columns_error(db, example):
    sc = copy.deepcopy(example)
    sc["serve"].update(tp=1, pp=1, replicas=1)  # 141 GB of bf16 weights on one GPU
    rep = _report(db, sc)
    errs = [d["error"] for d in rep.serving["deployments"]]
    assert all(e and e.startswith("serve.tp: weights need") for e in errs), errs
    html = _html(db, sc)
    assert "serve.tp: weights need" in html and rep.plans[0].ok  # the training plans still render


@pytest.mark.parametrize("change, field", [
    ({"tp": 3}, "serve.tp"),  # does not divide Llama-3.1-70B's 64 heads
    ({"ep": 2}, "serve.ep"),  # expert parallel on a dense model
    ({"request_rate": 2.0}, "serve.concurrency"),  # both loads given
])
def test_an_invalid_serve_section_names_the_field(db, example, change, field):
    sc = copy.deepcopy(example)
    sc["serve"].update(change)
    with pytest.raises(InputError) as e:
        _report(db, sc)
    assert e.value.field == field and str(e.value).startswith(field + ": ")


@pytest.mark.parametrize("change, field", [({"isl": 0}, "serve.isl"), ({"weights_dtype": "fp6"}, "serve.weights_dtype"),
                                           ({"model": "llama-2-7b"}, "serve.model")])
def test_a_bad_serve_value_is_refused_on_load(change, field, example):
    sc = copy.deepcopy(example)
    sc["serve"].update(change)
    with pytest.raises(SpecDataError) as e:
        scenario.validate(sc)
    assert e.value.column == field


def test_the_report_command_exits_2_naming_the_field(tmp_path, example, capsys):
    sc = copy.deepcopy(example)
    sc["serve"]["tp"] = 3
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(sc, ensure_ascii=False), encoding="utf-8")
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "serve.tp" in err and "64" in err, err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_bare_gpu_plans_serve_without_a_price(db, lang):
    from planner_app.report.text import Strings

    sc = scenario.load(os.path.join(scenario.example_dir(), "1b-v100-vs-a100.json"))
    sc["serve"] = {"tp": 1, "isl": 512, "osl": 128, "concurrency": 8}
    rep = _report(db, sc, lang)
    deps = rep.serving["deployments"]
    bare = [d for d in deps if "gpu" in d["hardware"]]
    assert bare and all(d["price"] is None and d["serve"]["cost"] == {} for d in bare)
    assert all(d["serve"]["cost"]["usd_per_million_output_tokens"] > 0 for d in deps if d not in bare)
    assert all(d["slo"]["met"] is None for d in deps)  # no targets set: nothing to meet
    html = _html(db, sc, lang)
    assert Strings(lang)("no price (bare GPU)") in html and Strings(lang)("No latency targets set.") in html
