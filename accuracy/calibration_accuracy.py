"""Calibration against the H200 measurements: each validated run's step-time error without a
profile, with the profile as the code before issue 14 built it (one e_max and t_0 fitted to the
isolated square GEMM sweep, bandwidth = the copy's fraction of the datasheet), with the profile
as measured now (model-shaped sustained GEMMs, bandwidth relative to the reference copy) and as
kept by the never-worse rule (probe/calibration.py ``guard_profile``, checked against the
validated runs of the same probe session).

    python -m accuracy.calibration_accuracy      # prints markdown tables

Data: tests/data/probe_calibration_h200.json and probe_calibration_h200_2.json (two sessions of
probe --quick with model shapes and four validate runs each; their info says how they were made) and tests/data/probe_h200.json (an older full probe and
one validate run, no model-shaped rows). The second table applies the profile to the committed
single-GPU training runs (tests/data/training_runs_h200.json, finetune_runs_h200.json), which no
profile was checked against: a check of the profile outside the runs that guard it.
"""
from __future__ import annotations

import functools
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data")
# two device sessions of the same commands on H200 machines (each file's info)
CALIBRATION_RUNS = ("probe_calibration_h200.json", "probe_calibration_h200_2.json")


@functools.cache  # one object per file: profiles are keyed by the result's id
def _load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


def old_profile_efficiency(result, gpu):
    """The profile as built before issue 14: fit_gemm_curve over the 16-bit square sweep for
    e_max and t_0 (applied to every precision), bandwidth = copy / datasheet."""
    from planner_app.core.hardware.compute import default_efficiency
    from planner_app.probe.calibration import fit_gemm_curve

    base = default_efficiency(gpu, "pytorch")
    rows = [r for r in result["gemm"] if r["dtype"] == "bf16"]
    e_max, t0 = fit_gemm_curve(rows, gpu.bf16_tflops)
    copy = next(b["gbps"] for b in result["bandwidth"] if b["kind"] == "copy")
    frac = min(copy / gpu.mem_bw_gb_s, 1.0)
    return base.with_changes(gemm_max=e_max, gemm_overhead_s=t0, bw_elementwise=frac,
                             bw_reduction=frac * base.bw_reduction / base.bw_elementwise)


def validated_runs():
    """(label, model reference, settings, measured step s, probe result) of every committed
    probe --validate run."""
    runs = []
    for name in CALIBRATION_RUNS:
        cal = _load(name)
        runs += [(f"{v['estimate']['model_ref']} b{v['estimate']['settings']['micro_batch']}s"
                  f"{v['estimate']['settings']['seq_len']} (session {cal['info']['session']})",
                  v["estimate"]["model_ref"], v["estimate"]["settings"], v["measured"]["step_ms_median"] / 1e3, cal)
                 for v in cal["validation_runs"]]
    old = _load("probe_h200.json")
    v = old["validation"]
    runs.append((f"llama-3.2-1b b{v['settings']['micro_batch']}s{v['settings']['seq_len']} (older probe)",
                 "llama-3.2-1b", v["settings"], v["measured"]["step_ms_median"] / 1e3, old))
    return runs



def _step_s(model, settings, gpu):
    """The step time of one measured run's estimate at a profile's efficiencies ``eff``."""
    from planner_app.service.validation import estimate_case

    return lambda eff: estimate_case(model, settings, gpu, eff)["time"]["step_s"]


def guarded_profiles(db, gpu):
    """{id(probe result): the profile of that result as kept against its own session's runs}."""
    from planner_app.probe.calibration import guard_profile, profile_from_result
    from planner_app.service.resolve import resolve_model

    by_result = {}
    for label, ref, settings, measured_s, result in validated_runs():
        by_result.setdefault(id(result), (result, []))[1].append((label, ref, settings, measured_s))
    out = {}
    for key, (result, runs) in by_result.items():
        cases = [{"label": label, "measured_s": m, "step_s": _step_s(resolve_model(ref, db), settings, gpu)}
                 for label, ref, settings, m in runs]
        out[key] = guard_profile(profile_from_result("h200", result, gpu), gpu, cases)
    return out


def main() -> int:
    from planner_app.probe.calibration import profile_from_result
    from planner_app.service.catalog import open_catalog
    from planner_app.service.estimate import estimate_json
    from planner_app.service.resolve import resolve_model
    from planner_app.service.validation import estimate_case

    db = open_catalog()
    gpu = db.gpu("h200-sxm")
    kept = guarded_profiles(db, gpu)
    print("| validated run | measured ms | no profile | old profile | profile as measured | profile as kept |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, ref, settings, measured_s, result in validated_runs():
        model = resolve_model(ref, db)
        effs = [None, old_profile_efficiency(result, gpu), profile_from_result("h200", result, gpu).efficiency,
                kept[id(result)].efficiency]
        errs = [estimate_case(model, settings, gpu, e)["time"]["step_s"] / measured_s - 1 for e in effs]
        print(f"| {label} | {measured_s * 1e3:.1f} | " + " | ".join(f"{e:+.1%}" for e in errs) + " |")
    for p in kept.values():
        print(f"\nprofile ({p.gemm_source} GEMMs): kept fraction {p.kept_fraction:.2f}: {p.guard_text()}")

    # outside the guarding runs: the committed single-GPU training runs
    import planner_app.service.estimate as se

    last = _load(CALIBRATION_RUNS[-1])  # the latest session's profile
    prof = kept[id(last)]
    raw = profile_from_result("h200-raw", last, gpu)
    old = profile_from_result("h200-old", last, gpu)
    old.efficiency = old_profile_efficiency(last, gpu)
    profiles = {"kept": prof, "raw": raw, "old": old}
    se.load_calibration = lambda name, db=None: profiles.get(name) if name else None  # (name, db), as service/estimate.py calls it
    cases = []
    for c in _load("training_runs_h200.json")["cases"]:
        cases.append((c["name"], c, "foreach"))
    for c in _load("finetune_runs_h200.json")["cases"]:
        if c["name"].startswith(("adamw-", "longctx")):
            cases.append((c["name"], c, c["optimizer"].split("-")[1]))
    print("\n| training run (not validated) | measured ms | no profile | old profile | profile as measured | "
          "profile as kept |")
    print("|---|---:|---:|---:|---:|---:|")
    abs_err = {k: [] for k in (None, "old", "raw", "kept")}
    for name, c, impl in cases:
        opts = {"model": os.path.join(DATA, "hf_configs", c["config"] + ".json"), "gpu": "h200-sxm",
                "micro_batch": c["micro_batch"], "seq_len": c["seq_len"], "recipe": c["recipe"],
                "attention": c["attention"], "optimizer": "adamw" if c["optimizer"].startswith("adamw") else
                c["optimizer"], "optimizer_impl": impl, "framework": "pytorch",
                "recompute": c.get("recompute") or ("full" if c.get("grad_checkpointing") else "none")}
        row = []
        for cal in abs_err:
            e = estimate_json(dict(opts, calibration=cal), db)["time"]["step_s"] * 1e3 / c["step_ms_median"] - 1
            abs_err[cal].append(abs(e))
            row.append(e)
        print(f"| {name} | {c['step_ms_median']:.1f} | " + " | ".join(f"{e:+.1%}" for e in row) + " |")
    print("\nmedian |error| over these runs: " + ", ".join(
        f"{k or 'no profile'} {statistics.median(v):.1%}" for k, v in abs_err.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
