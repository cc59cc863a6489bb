"""Calibration profiles fitted on model-shaped GEMMs, and the never-worse rule against validated
runs (issue 14 item 6), on the committed H200 measurements (tests/data/probe_calibration_h200.json,
tests/data/probe_h200.json)."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from planner_app.core.hardware.compute import default_efficiency, gemm_time_s
from planner_app.probe.calibration import guard_profile, profile_from_result
from planner_app.service.resolve import resolve_model
from planner_app.service.validation import estimate_case, model_gemm_shapes, parse_validate_args

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DATA = os.path.join(ROOT, "tests", "data")


def _load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def db():
    from planner_app.service.catalog import open_catalog
    return open_catalog()


@pytest.fixture(scope="module")
def gpu(db):
    return db.gpu("h200-sxm")


@pytest.mark.parametrize("name", ["probe_calibration_h200.json", "probe_calibration_h200_2.json"])
def test_the_profile_is_fitted_on_the_model_shaped_gemms(gpu, name):
    res = _load(name)
    prof = profile_from_result("h200", res, gpu)
    assert prof.gemm_source == "model"
    (bits, xs, es), = prof.efficiency.gemm_curves
    assert bits == 16 and list(xs) == sorted(xs)
    by_flops = {}
    for r in res["model_gemm"]:
        f = 2.0 * r["m"] * r["n"] * r["k"]
        by_flops.setdefault(round(math.log(f), 6), []).append(r)
    for rows in by_flops.values():
        if len(rows) > 1:
            continue  # shapes of equal FLOPs are pooled into one point
        r = rows[0]
        f = 2.0 * r["m"] * r["n"] * r["k"]
        # forward, data and weight gradients: the engine charges 3 x the forward GEMM per layer
        want_s = (r["fwd_s"] + r["dgrad_s"] + r["wgrad_s"]) / 3
        assert gemm_time_s(f, gpu.bf16_tflops, prof.efficiency, 1.0, 16) == pytest.approx(want_s, rel=1e-9)
    # the isolated square sweep of the same probe runs faster than any model-shaped point
    best_square = max(r["tflops"] for r in res["gemm"] if r["dtype"] == "bf16") / gpu.bf16_tflops
    assert max(es) < best_square
    # other precisions keep the default law (the curve is 16-bit only)
    base = default_efficiency(gpu, "pytorch")
    assert gemm_time_s(1e12, gpu.fp32_tflops, prof.efficiency, 1.0, 32) == gemm_time_s(1e12, gpu.fp32_tflops, base)


def test_the_measured_curve_is_array_generic_and_continuous(gpu):
    prof = profile_from_result("h200", _load("probe_calibration_h200.json"), gpu).efficiency
    flops = np.array([1e6, 1e9, 5e9, 3e10, 2e11, 9e12, 1e14])
    vec = gemm_time_s(flops, 989.0, prof, np.full(flops.shape, 0.6), 16)
    one = [gemm_time_s(float(f), 989.0, prof, 0.6, 16) for f in flops]
    assert isinstance(one[0], float) and np.allclose(vec, one, rtol=1e-12)
    f0 = math.exp(prof.gemm_curves[0][1][0])
    assert gemm_time_s(f0 * (1 - 1e-9), 989.0, prof) == pytest.approx(gemm_time_s(f0, 989.0, prof), rel=1e-6)
    assert np.all(np.diff(vec) > 0)  # more FLOPs never take less time


def test_model_gemm_shapes_follow_the_layer_traces(db):
    s = model_gemm_shapes(db, "llama-3.1-8b", parse_validate_args("micro_batch=2,seq_len=4096"))
    assert (8192, 14336, 4096) in s and (8192, 4096, 14336) in s and (8192, 1024, 4096) in s
    assert (8192, 128256, 4096) in s  # the output layer
    assert {m for m, _, _ in model_gemm_shapes(db, "llama-3.2-1b", parse_validate_args("micro_batch=1"))} == {2048}


def _cases(db, gpu, runs):
    return [{"label": ref, "measured_s": ms, "step_s": _step_s(resolve_model(ref, db), settings, gpu)}
            for ref, settings, ms in runs]


def _step_s(model, settings, gpu):
    return lambda eff: estimate_case(model, settings, gpu, eff)["time"]["step_s"]


def _committed_runs():
    out = []
    for name in ("probe_calibration_h200.json", "probe_calibration_h200_2.json"):  # two device sessions
        cal = _load(name)
        out.append((cal, [(v["estimate"]["model_ref"], v["estimate"]["settings"],
                           v["measured"]["step_ms_median"] / 1e3) for v in cal["validation_runs"]]))
    old = _load("probe_h200.json")
    return out + [(old, [("llama-3.2-1b", old["validation"]["settings"],
                          old["validation"]["measured"]["step_ms_median"] / 1e3)])]


def test_no_validated_case_is_further_from_its_measurement_with_the_profile(db, gpu):
    """Every committed probe --validate run on the H200: the calibrated estimate (the profile of
    the same probe session, as the never-worse rule keeps it) is no further from the measured step
    time than the estimate without a profile."""
    checked = 0
    for result, runs in _committed_runs():
        prof = guard_profile(profile_from_result("h200", result, gpu), gpu, _cases(db, gpu, runs))
        for (ref, settings, measured_s), check in zip(runs, prof.checks):
            without = estimate_case(resolve_model(ref, db), settings, gpu)["time"]["step_s"] / measured_s - 1
            with_profile = estimate_case(resolve_model(ref, db), settings, gpu,
                                         prof.efficiency)["time"]["step_s"] / measured_s - 1
            assert check["error_without"] == pytest.approx(without)
            assert abs(with_profile) <= abs(without) + 1e-9, (ref, settings, with_profile, without)
            checked += 1
    assert checked == 9


def test_the_old_isolated_fit_made_every_validated_run_worse(db, gpu):
    """The bug of issue 14: e_max fitted to the isolated square sweep and the copy's fraction of
    the datasheet made every validated H200 run 5-10 points too fast."""
    from accuracy.calibration_accuracy import old_profile_efficiency

    for result, runs in _committed_runs():
        eff = old_profile_efficiency(result, gpu)
        for ref, settings, measured_s in runs:
            m = resolve_model(ref, db)
            without = estimate_case(m, settings, gpu)["time"]["step_s"] / measured_s - 1
            old = estimate_case(m, settings, gpu, eff)["time"]["step_s"] / measured_s - 1
            assert old < without - 0.05


def test_the_rule_keeps_a_profile_that_helps_and_moves_back_one_that_hurts(db, gpu):
    base = default_efficiency(gpu, "pytorch")
    m = resolve_model("llama-3.2-1b", db)
    settings = parse_validate_args(None)
    true_eff = base.with_changes(gemm_max=0.62, bw_elementwise=0.70)  # a slower GPU than the defaults assume
    measured_s = estimate_case(m, settings, gpu, true_eff)["time"]["step_s"]
    runs = [("llama-3.2-1b", settings, measured_s)]
    good = profile_from_result("p", _load("probe_calibration_h200.json"), gpu)
    good.efficiency = true_eff
    kept = guard_profile(good, gpu, _cases(db, gpu, runs))
    assert kept.kept_fraction == 1.0 and abs(kept.checks[0]["error_kept"]) < 1e-9
    assert "kept as measured" in kept.summary()
    bad = profile_from_result("p", _load("probe_calibration_h200.json"), gpu)
    bad.efficiency = base.with_changes(gemm_max=0.95, bw_elementwise=0.95)  # faster: away from the slow truth
    moved = guard_profile(bad, gpu, _cases(db, gpu, runs))
    assert moved.kept_fraction == 0.0 and moved.efficiency.gemm_max == base.gemm_max
    assert "discarded" in moved.summary()
    # a run measured between the defaults and an overshooting profile: part of it is kept
    half = base.with_changes(gemm_max=0.80)
    mid_s = estimate_case(m, settings, gpu, half)["time"]["step_s"]
    over = profile_from_result("p", _load("probe_calibration_h200.json"), gpu)
    over.efficiency = base.with_changes(gemm_max=0.95)
    part = guard_profile(over, gpu, _cases(db, gpu, [("llama-3.2-1b", settings, mid_s)]))
    assert 0.0 < part.kept_fraction < 1.0 and abs(part.checks[0]["error_kept"]) <= abs(part.checks[0]["error_without"])
    assert "back toward the defaults" in part.summary()


def test_load_profile_checks_the_profile_against_the_stored_validation_runs(db, tmp_path):
    from planner_app.service.calibration import load_calibration
    from planner_app.specdb.userdb import UserDB

    u = UserDB(str(tmp_path / "u.sqlite"))
    cal = _load("probe_calibration_h200.json")
    u.save_profile("lab", {"bench": cal}, gpu_id="h200-sxm", device="NVIDIA H200")
    unchecked = load_calibration("lab", db, userdb=u)
    assert unchecked.kept_fraction is None and "no validated run" in unchecked.summary()
    for v in cal["validation_runs"]:
        u.add_validation(v["gpu"], v["recipe"], v["model"], v["measured"], v["estimate"], v["peak_gap"], v["step_gap"])
    u.add_validation("h200-sxm", "bf16", "old record", {"step_ms_median": 1.0}, {}, None, None)  # no settings: skipped
    p = load_calibration("lab", db, userdb=u)
    assert p.kept_fraction is not None and len(p.checks) == len(cal["validation_runs"])
    assert all(abs(c["error_kept"]) <= abs(c["error_without"]) + 1e-9 for c in p.checks)


def test_probe_validate_reports_the_error_with_and_without_the_profile(monkeypatch, tmp_path, capsys):
    from planner_app.cli import main
    from planner_app.probe import runner as runner_mod

    cal = _load("probe_calibration_h200.json")
    run = cal["validation_runs"][0]
    seen = {}

    def fake_run(self, task, args=None, progress=None):
        if task == "bench":
            seen["shapes"] = args["model_shapes"]
            return {k: cal[k] for k in ("device", "backend", "gemm", "model_gemm", "gemm_best_tflops", "bandwidth",
                                        "notes")}
        return dict(run["measured"])
    monkeypatch.setattr(runner_mod.ProbeRunner, "run", fake_run)
    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path))
    assert main(["probe", "--validate", "llama-3.2-1b", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    v = out["validations"][0]
    assert (8192, 8192, 2048) in [tuple(s) for s in seen["shapes"]]
    measured_s = run["measured"]["step_ms_median"] / 1e3
    assert v["step_gap"] == pytest.approx(v["estimate"]["step_s"] / measured_s - 1)
    assert v["step_gap_calibrated"] == pytest.approx(v["estimate_calibrated"]["step_s"] / measured_s - 1)
    assert v["step_gap_calibrated"] != v["step_gap"]
    assert abs(v["step_gap_kept"]) <= abs(v["step_gap"]) + 1e-9
    assert out["calibration_check"]["gemm_source"] == "model"
    assert main(["probe", "--validate", "llama-3.2-1b"]) == 0
    text = capsys.readouterr().out
    assert "without a profile" in text and "with this probe's profile as measured" in text and "Calibration:" in text
    from planner_app.specdb.userdb import UserDB
    stored = UserDB.open_default().validations("h200-sxm")
    assert len(stored) == 2 and stored[0]["estimate"]["settings"]["micro_batch"] == 4


@pytest.mark.parametrize("key, value", [("fwd_s", 0.0), ("wgrad_s", float("nan")), ("m", 0), ("tflops", -1.0)])
def test_impossible_model_gemm_rows_are_refused(key, value):
    """The worker's model-shaped rows pass the same checks as its other measurements: a zero or
    NaN time never reaches a calibration curve."""
    from planner_app.probe.messages import MessageError, check_bench

    cal = _load("probe_calibration_h200_2.json")
    r = {k: cal[k] for k in ("device", "backend", "gemm", "model_gemm", "gemm_best_tflops", "bandwidth", "notes")}
    assert check_bench(r) is r
    r["model_gemm"][3][key] = value
    with pytest.raises(MessageError, match=rf"model_gemm\[3\]\.{key}"):
        check_bench(r)


def test_a_probed_host_scales_the_eager_dispatch_cost(db, gpu):
    """The probe's dispatch test (an HF-style RMSNorm module, bench.py) against the reference host:
    a host twice as slow per op doubles launch_s, which is what Hugging Face generate() waits for; the
    reference host's own figure leaves it as it is; the never-worse rule blends it back like the rest."""
    from planner_app.core.hardware.machine import Hardware
    from planner_app.core.inference.setup import InferenceSetup
    from planner_app.core.inference.timing import inference_time
    from planner_app.probe.calibration import REFERENCE_DISPATCH_US_PER_OP, blend_efficiency

    ref = _load("dispatch_h200.json")
    assert REFERENCE_DISPATCH_US_PER_OP == pytest.approx(ref["us_per_op"], abs=0.05)
    result = _load("probe_calibration_h200.json")
    base = default_efficiency(gpu, "pytorch")
    same = profile_from_result("same", {**result, "dispatch": {"us_per_op": REFERENCE_DISPATCH_US_PER_OP}}, gpu)
    slow = profile_from_result("slow", {**result, "dispatch": {"us_per_op": 2 * REFERENCE_DISPATCH_US_PER_OP}}, gpu)
    assert same.efficiency.launch_s == pytest.approx(base.launch_s)
    assert slow.efficiency.launch_s == pytest.approx(2 * base.launch_s)
    assert "eager dispatch" in slow.summary()
    assert blend_efficiency(base, slow.efficiency, 0.0, gpu).launch_s == pytest.approx(base.launch_s)
    model = resolve_model("llama-3.2-1b", db)
    setup = InferenceSetup(batch=1, prompt_len=128, new_tokens=64, attention="sdpa", inference_api="generate")
    t_base = inference_time(model, Hardware(gpu=gpu), setup)["decode_host_s_per_token"]
    t_slow = inference_time(model, Hardware(gpu=gpu, calibration=slow), setup)["decode_host_s_per_token"]
    assert t_slow > 1.8 * t_base


@pytest.mark.parametrize("value", [0, -3.0, float("nan"), "fast"])
def test_an_impossible_dispatch_figure_is_refused(gpu, value):
    from planner_app.core.errors import InputError

    result = _load("probe_calibration_h200.json")
    with pytest.raises(InputError, match="dispatch"):
        profile_from_result("bad", {**result, "dispatch": {"us_per_op": value}}, gpu)
