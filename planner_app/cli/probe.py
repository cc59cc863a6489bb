"""``gpu-planner probe``: NVML inventory, microbenchmarks in a worker process, verdicts,
optional calibration profile and real-run validation."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict

from planner_app.probe import nvml
from planner_app.probe.runner import ProbeError, ProbeRunner
from planner_app.probe.verdicts import all_verdicts

from planner_app.service.validation import (compare_validation, match_gpu,  # noqa: F401 - the CLI's names
                                          parse_validate_args, validation_case)


def run(args) -> int:
    from planner_app.service.catalog import open_catalog

    db = open_catalog()
    state, gpus = nvml.inventory()
    out = {"nvml": asdict(state), "inventory": [g.to_dict() for g in gpus]}
    if not state.available:
        from planner_app.probe import amd

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

    try:
        result = runner.run("bench", {"backend": backend, "quick": args.quick}, progress=show)
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
               gemm_best_tflops=result["gemm_best_tflops"], bandwidth=result["bandwidth"], notes=result["notes"])
    out["device"]["spec_gpu_id"] = gpu.id if gpu else None
    out["verdicts"] = all_verdicts(result, gpu, out["inventory"])
    if args.validate:
        if gpu is None:
            print("gpu-planner probe: error: --validate needs a GPU that is in the spec database", file=sys.stderr)
            return 1
        settings = parse_validate_args(getattr(args, "validate_args", None))
        model, wargs, est = validation_case(db, args.validate, settings, gpu)
        try:
            measured = runner.run("validate", wargs, progress=show)
        except ProbeError as e:
            print(f"gpu-planner probe: error: validation: {e}", file=sys.stderr)
            return 1
        out["validation"] = dict(compare_validation(measured, est), model=model.name, settings=settings)
        try:
            from planner_app.specdb.userdb import UserDB, UserDBError

            v = out["validation"]
            UserDB.open_default().add_validation(gpu.id, settings["recipe"], model.name, measured,
                                                 v.get("estimate") or {}, v.get("peak_gap"), v.get("step_gap"))
        except (ImportError, UserDBError) as e:
            out["notes"].append(f"validation not stored: {e}")
    if args.save:
        from planner_app.specdb.userdb import UserDB

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
    print("Verdicts:")
    for v in out["verdicts"] or [{"text": "none (no datasheet to compare with)"}]:
        print(f"  - {v['text']}")
    for n in result["notes"]:
        print(f"  note: {n}")
    if "validation" in out:
        v = out["validation"]
        m = v["measured"]
        if m.get("oom"):
            print(f"Validation: {v['model']} ran out of memory on the GPU")
        elif v.get("estimate"):
            print(f"Validation ({v['model']}, {m['implementation']}): peak {m['peak_abs_bytes'] / 1e9:.2f} GB measured vs "
                  f"{v['estimate']['peak_bytes'] / 1e9:.2f} GB estimated ({v['peak_gap']:+.1%}); step "
                  f"{m['step_ms_median']:.0f} ms vs {v['estimate']['step_s'] * 1e3:.0f} ms ({v['step_gap']:+.1%})")
    if args.save:
        print(f"Saved calibration profile {args.save!r}: use it with --calibration {args.save}")
    return 0
