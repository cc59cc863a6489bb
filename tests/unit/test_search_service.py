"""The search and scaling services (planner_app/service/search.py, scaling.py): the defaults
of ``estimate`` for the same workload, and a calibration profile that reaches estimate,
search and scaling alike."""
import contextlib
import dataclasses
import io
import json
import os
import shlex

import pytest

from planner_app.cli import main
from planner_app.core.errors import InputError
from planner_app.core.options import build, options_of
from planner_app.core.requests import ScalingRequest, SearchRequest, TrainingRequest
from planner_app.service.estimate import estimate_json
from planner_app.service.resolve import default_attention, default_recipe
from planner_app.service.scaling import run_scaling
from planner_app.service.search import run_search

OPTION_DEFAULTS = {k: o.default for k, o in options_of(TrainingRequest).items()}

DATA = os.path.join(os.path.dirname(__file__), "..", "data")


def cli_json(*argv) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(argv))
    assert rc == 0
    return json.loads(out.getvalue())


@pytest.fixture
def catalog():
    from planner_app.specdb.catalog import shipped_db
    return shipped_db()


@pytest.fixture
def profile(tmp_path, monkeypatch):
    """A calibration profile 'lab' (the H200 probe run kept as test data) in a temporary user
    database, where ``load_profile`` and the CLI look for it."""
    from planner_app.specdb.userdb import UserDB

    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path))
    with open(os.path.join(DATA, "probe_h200.json")) as f:
        bench = json.load(f)
    u = UserDB.open_default()
    u.save_profile("lab", {"bench": bench}, gpu_id="h200-sxm", device="NVIDIA H200")
    u.close()
    return "lab"


def _request(**kw):
    base = dict(model="llama-2-7b", tokens=1e12, gpu="h200-sxm", max_gpus=16, seq_len=4096,
                global_batch=256, top=5)
    return build(SearchRequest, {**base, **kw}, "search")


def test_the_request_is_frozen_and_checked():
    r = _request()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.setup.tokens = 1.0
    assert r.machines == (("gpu", "h200-sxm"),)
    with pytest.raises(InputError, match="max_gpus"):
        _request(max_gpus=-1)
    with pytest.raises(InputError, match="not an option of search"):
        _request(dp=2)


def test_unset_workload_options_take_the_estimate_defaults(catalog):
    out = run_search(_request(), catalog)
    fw = OPTION_DEFAULTS["framework"]
    assert (out.framework, out.optimizer) == (fw, OPTION_DEFAULTS["optimizer"])
    assert out.recipe == default_recipe(catalog.gpu("h200-sxm"), fw, OPTION_DEFAULTS["finetune"])
    assert out.attention == default_attention(fw)
    assert any(a.startswith(f"recipe {out.recipe} (default for H200 SXM with {fw}") for a in out.assumptions)
    row = out.result.plans[0]
    # the row's plan states what the engine resolved (recipe, attention) and leaves defaults out
    assert (row["plan"]["recipe"], row["plan"]["attention"]) == (out.recipe, out.attention)
    assert "framework" not in row["plan"] and "optimizer" not in row["plan"]
    # the same workload through estimate, with only the row's layout given, gives the row
    layout = {k: v for k, v in row["plan"].items() if k not in ("recipe", "attention")}
    est = estimate_json(layout, catalog)
    assert est["setup"]["recipe"] == out.recipe and est["setup"]["framework"] == fw
    assert est["memory"]["peak_bytes"] == row["memory"]["peak_bytes"]
    assert est["time"]["step_s"] == pytest.approx(row["time"]["step_s"], rel=1e-12)


def test_given_options_are_kept(catalog):
    out = run_search(_request(framework="megatron", recipe="bf16", attention="flash"), catalog)
    assert (out.framework, out.recipe, out.attention) == ("megatron", "bf16", "flash")
    assert not any("(default for" in a for a in out.assumptions)


def test_machines_whose_default_recipes_differ_each_take_their_own(catalog):
    """A V100 has no bf16 (fp16 autocast), an H100 does: each machine's rows carry its default,
    as ``estimate`` on that machine would, in one ranking."""
    machines = ("v100-sxm2-32gb", "h100-sxm")
    out = run_search(_request(gpu=",".join(machines), top=2000, max_gpus=8), catalog)
    by_gpu = {p["gpu"]: p["plan"]["recipe"] for p in out.result.plans}
    assert by_gpu == {"v100-sxm2-32gb": "amp-fp16", "h100-sxm": "amp-bf16"}
    # each machine's best plan at each GPU count first, then the others, each part fastest first
    lead = [p for p in out.result.plans if p["best_for_gpus"]]
    rest = out.result.plans[len(lead):]
    assert lead and not any(p["best_for_gpus"] for p in rest)
    for part in (lead, rest):
        days = [p["time"]["train_days"] for p in part]
        assert days == sorted(days)
    singles = [run_search(_request(gpu=m, top=2000, max_gpus=8), catalog).result for m in machines]
    assert out.result.evaluated == sum(r.evaluated for r in singles)
    assert len(out.result.plans) == min(2000, sum(len(r.plans) for r in singles))
    for p in (out.result.plans[0], out.result.plans[-1]):
        est = estimate_json(p["plan"], catalog)
        assert est["time"]["step_s"] == pytest.approx(p["time"]["step_s"], rel=1e-6)
    front = [(p["time"]["train_s"], p["cost"][out.result.pareto_y]) for p in out.result.pareto]
    assert front == sorted(front) and all(a[1] > b[1] for a, b in zip(front, front[1:]))
    # a recipe given applies to all
    assert {p["plan"]["recipe"] for p in run_search(_request(gpu=",".join(machines), recipe="amp-fp16"),
                                                     catalog).result.plans} == {"amp-fp16"}


def test_cancelled_before_scoring_returns_none(catalog):
    assert run_search(_request(), catalog, cancelled=lambda: True) is None


def _same_numbers(a, b):
    assert a["memory"]["peak_bytes"] == pytest.approx(b["memory"]["peak_bytes"], rel=1e-6)
    assert a["memory"]["device_bytes"] == pytest.approx(b["memory"]["device_bytes"], rel=1e-6)
    assert a["time"]["step_s"] == pytest.approx(b["time"]["step_s"], rel=1e-6)
    assert a["time"]["train_days"] == pytest.approx(b["time"]["train_days"], rel=1e-6)


def test_a_calibrated_search_row_is_its_calibrated_estimate(profile):
    from planner_app.service.catalog import open_catalog

    db = open_catalog()
    cal = run_search(_request(calibration=profile), db)
    plain = run_search(_request(), db)
    assert any(a.startswith("calibration profile 'lab'") for a in cal.assumptions)
    row = cal.result.plans[0]
    assert row["plan"]["calibration"] == "lab" and row["estimate_command"].endswith("--calibration lab")
    # the row's own command (calibration included) reproduces it through the CLI
    est = cli_json(*shlex.split(row["estimate_command"])[1:], "--json")
    _same_numbers(est, row)
    assert any("calibration profile 'lab'" in a for a in est["assumptions"])
    # the same layout uncalibrated: same memory, another step time; and the search differs too
    bare = estimate_json({k: v for k, v in row["plan"].items() if k != "calibration"}, db)
    assert bare["memory"]["peak_bytes"] == pytest.approx(row["memory"]["peak_bytes"], rel=1e-6)
    assert bare["time"]["step_s"] != pytest.approx(row["time"]["step_s"], rel=1e-3)
    assert "calibration" not in plain.result.plans[0]["plan"]
    assert [p["time"]["step_s"] for p in plain.result.plans] != \
        pytest.approx([p["time"]["step_s"] for p in cal.result.plans], rel=1e-3)


def test_scaling_sees_the_calibration_profile(profile):
    from planner_app.service.catalog import open_catalog

    db = open_catalog()
    opts = {"model": "llama-2-7b", "gpu": "h200-sxm", "tp": 2, "seq_len": 4096, "micro_batch": 1}
    cal = run_scaling(build(ScalingRequest, {**opts, "calibration": profile, "nodes": "1,2,4"}), db)
    plain = run_scaling(build(ScalingRequest, {**opts, "nodes": "1,2,4"}), db)
    (fab,) = cal.curves
    assert [p.step_s for p in cal.curves[fab]] != pytest.approx([p.step_s for p in plain.curves[fab]], rel=1e-3)
    assert any("calibration profile 'lab'" in a for a in cal.assumptions)
    # a plan smaller than a node scales in copies of itself: the first point is the plan's own
    # estimate (2 GPUs, dp 1), calibrated alike, number for number
    est = estimate_json({**opts, "calibration": profile}, db)
    assert cal.gpus_per_node == 2 and cal.plan_nodes == 1
    assert cal.curves[fab][0].step_s == est["time"]["step_s"]
    # and the CLI prints the service's curves
    j = cli_json("scaling", "--model", "llama-2-7b", "--gpu", "h200-sxm", "--tp", "2", "--seq-len", "4096",
                 "--nodes", "1,2,4", "--calibration", profile, "--json")
    assert [p["step_s"] for p in j["curves"][fab]] == [p.step_s for p in cal.curves[fab]]


def test_scaling_refuses_an_inference_plan():
    with pytest.raises(InputError, match="mode"):
        build(ScalingRequest, {"model": "llama-2-7b", "gpu": "h100-sxm", "mode": "inference"})
