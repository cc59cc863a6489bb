"""``gpu-planner probe``: NVML inventory, microbenchmarks in a worker process, verdicts,
optional calibration profile and real-run validation."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict

from planner_app.probe import amd, nvml
from planner_app.probe.calibration import guard_profile, profile_from_result
from planner_app.probe.runner import ProbeError, ProbeRunner
from planner_app.probe.verdicts import all_verdicts
from planner_app.service.catalog import open_catalog
from planner_app.service.resolve import resolve_model
from planner_app.service.validation import (
    compare_validation,
    estimate_case,
    match_gpu,
    model_gemm_shapes,
    parse_validate_args,
    record_validation,
    validation_case,
)


def _names(text) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def run(args) -> int:
    db = open_catalog()
    state, gpus = nvml.inventory()
    out = {"nvml": asdict(state), "inventory": [g.to_dict() for g in gpus]}
    if not state.available:
        out["inventory"] = amd.inventory()
        out["amdsmi"] = amd.init()[1]
        if not out["inventory"]:
            print(f"gpu-planner probe: {state.message}; trying the other backends (PyTorch ROCm/MPS, CuPy, then "
                  "the CPU)", file=sys.stderr)
    runner = ProbeRunner(python=args.python, timeout_s=args.timeout)
    backend = args.backend  # auto: the worker tries torch (CUDA, ROCm, MPS), then CuPy, then numpy

    def show(f, text):
        if not args.json:
            print(f"\r  [{f:4.0%}] {text[:60]:60s}", end="", file=sys.stderr, flush=True)

    settings = parse_validate_args(getattr(args, "validate_args", None))
    shapes = []
    for name in _names(getattr(args, "model_shapes", None)) + _names(args.validate):
        shapes += [s for s in model_gemm_shapes(db, name, settings) if s not in shapes]  # InputError: exit 2
    try:
        result = runner.run("bench", {"backend": backend, "quick": args.quick, "model_shapes": shapes},
                            progress=show)
    except ProbeError as e:
        if not args.json:
            print(file=sys.stderr)
        print(f"gpu-planner probe: error: {e}", file=sys.stderr)
        return 1
    if not args.json:
        print(file=sys.stderr)
    dev_name = result["device"].get("name")
    gpu = match_gpu(db, dev_name) if result["device"].get("kind") != "cpu" else None
    out.update(device=result["device"], backend=result["backend"], gemm=result["gemm"],
               model_gemm=result.get("model_gemm", []),
               gemm_best_tflops=result["gemm_best_tflops"], bandwidth=result["bandwidth"],
               dispatch=result.get("dispatch"), notes=result["notes"])
    out["device"]["spec_gpu_id"] = gpu.id if gpu else None
    out["verdicts"] = all_verdicts(result, gpu, out["inventory"])
    if args.validate:
        if gpu is None:
            print("gpu-planner probe: error: --validate needs a GPU that is in the spec database", file=sys.stderr)
            return 1
        out["validations"] = []
        for name in _names(args.validate):
            v = _validate_one(db, runner, name, settings, gpu, result, show, out["notes"])
            if v is None:
                return 1
            out["validations"].append(v)
        out["validation"] = out["validations"][0]
        out["calibration_check"] = _check_profile(db, gpu, result, out["validations"])
    if args.save:
        from planner_app.specdb.userdb import UserDB  # lazy: sqlite3 is optional (a Python built without it)

        if gpu is None:
            print("gpu-planner probe: error: --save needs a GPU from the spec database (CPU results do not "
                  "calibrate GPU estimates)", file=sys.stderr)
            return 1
        UserDB.open_default().save_profile(args.save, {"bench": result, "inventory": out["inventory"]},
                                           gpu_id=gpu.id, device=dev_name)
        out["saved_profile"] = args.save
    if args.json:
        print(json.dumps(out, indent=1, default=str))
        return 0
    print(f"Device: {dev_name} ({result['backend']})" + (f" = {gpu.name} in the spec database" if gpu else ""))
    for dtype, tf in sorted(result["gemm_best_tflops"].items()):
        print(f"  GEMM {dtype:5s} best {tf * (1000 if result['device'].get('kind') == 'cpu' else 1):10,.1f} "
              f"{'GFLOP/s' if result['device'].get('kind') == 'cpu' else 'TFLOP/s'}")
    for b in result["bandwidth"]:
        print(f"  {b['kind']:12s} {b['gbps']:10,.1f} GB/s  ({b['convention']})")
    if result.get("dispatch"):
        print(f"  {'dispatch':12s} {result['dispatch']['us_per_op']:10,.1f} us per eager op (host)")
    print("Verdicts:")
    for v in out["verdicts"] or [{"text": "none (no datasheet to compare with)"}]:
        print(f"  - {v['text']}")
    for n in result["notes"]:
        print(f"  note: {n}")
    for v in out.get("validations", []):
        m = v["measured"]
        if m.get("oom"):
            print(f"Validation: {v['model']} ran out of memory on the GPU")
        elif v.get("estimate"):
            print(f"Validation ({v['model']}, {m['implementation']}): peak {m['peak_abs_bytes'] / 1e9:.2f} GB measured vs "
                  f"{v['estimate']['peak_bytes'] / 1e9:.2f} GB estimated ({v['peak_gap']:+.1%}); step "
                  f"{m['step_ms_median']:.0f} ms vs {v['estimate']['step_s'] * 1e3:.0f} ms ({v['step_gap']:+.1%}) "
                  f"without a profile, {_pct(v.get('step_gap_calibrated'))} with this probe's profile as measured, "
                  f"{_pct(v.get('step_gap_kept'))} as kept")
    if out.get("calibration_check"):
        print(f"Calibration: {out['calibration_check']['rule']}")
    if args.save:
        print(f"Saved calibration profile {args.save!r}: use it with --calibration {args.save}")
    return 0


def _pct(x) -> str:
    return "–" if x is None else f"{x:+.1%}"


def _validate_one(db, runner, name, settings, gpu, bench, show, notes):
    """Train ``name`` on the GPU; its gaps without a profile and with this probe's profile."""
    model, wargs, est = validation_case(db, name, settings, gpu)
    try:
        measured = runner.run("validate", wargs, progress=show)
    except ProbeError as e:
        print(f"gpu-planner probe: error: validation: {e}", file=sys.stderr)
        return None
    prof = profile_from_result("this probe", bench, gpu)
    v = dict(compare_validation(measured, est, estimate_case(model, settings, gpu, prof.efficiency)),
             model=model.name, model_ref=name, settings=settings)
    try:
        # lazy: sqlite3 is optional (a Python built without it)
        from planner_app.specdb.userdb import UserDB, UserDBError

        record_validation(UserDB.open_default(), gpu, model, name, settings, measured, v)
    except (ImportError, UserDBError) as e:
        notes.append(f"validation not stored: {e}")
    return v


def _check_profile(db, gpu, bench, validations) -> dict:
    """This probe's profile under the never-worse rule against the runs just validated: the
    fraction kept and each run's error as kept (``step_gap_kept`` in each validation)."""
    cases = []
    for v in validations:
        if not v.get("estimate"):
            continue
        model = resolve_model(v["model_ref"], db)
        cases.append({"label": v["model_ref"], "measured_s": v["measured"]["step_ms_median"] / 1e3,
                      "step_s": lambda eff, m=model, s=v["settings"]: estimate_case(m, s, gpu, eff)["time"]["step_s"]})
    prof = guard_profile(profile_from_result("this probe", bench, gpu), gpu, cases)
    for v, c in zip([v for v in validations if v.get("estimate")], prof.checks):
        v["step_gap_kept"] = c["error_kept"]
    return {"kept_fraction": prof.kept_fraction, "gemm_source": prof.gemm_source, "checks": prof.checks,
            "rule": str(prof.guard_text())}
