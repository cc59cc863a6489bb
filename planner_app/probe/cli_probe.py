"""``gpu-planner probe``: NVML inventory, microbenchmarks in a worker process, verdicts,
optional calibration profile and real-run validation."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict

from planner_app.core.errors import InputError
from planner_app.probe import nvml
from planner_app.probe.runner import ProbeError, ProbeRunner
from planner_app.probe.verdicts import all_verdicts

VALIDATE_DEFAULTS = {"recipe": "bf16", "micro_batch": 4, "seq_len": 2048, "attention": "sdpa", "recompute": "none",
                     "optimizer": "adamw", "steps": 6}


def match_gpu(db, name: str | None):
    """The spec-database GPU for a device name ("NVIDIA H200" -> H200 SXM), or None."""
    if not name:
        return None
    try:
        return db.gpu(name)
    except InputError:
        return None


def parse_validate_args(text: str | None) -> dict:
    out = dict(VALIDATE_DEFAULTS)
    for part in (text or "").split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise InputError("validate", f"expected key=value, got {part!r}")
        k, v = (s.strip() for s in part.split("=", 1))
        if k not in VALIDATE_DEFAULTS:
            raise InputError("validate", f"unknown setting {k!r}; allowed: {', '.join(VALIDATE_DEFAULTS)}")
        out[k] = int(v) if k in ("micro_batch", "seq_len", "steps") else v
    return out


def validation_case(db, model_name: str, settings: dict, gpu):
    """(worker args, engine estimate) for a real-run validation of ``model_name``."""
    from planner_app.core.estimate import Hardware, estimate_training
    from planner_app.core.hf_config import model_to_hf_config
    from planner_app.core.setup import ParallelPlan, TrainingSetup
    from planner_app.resolve import resolve_model

    model = resolve_model(model_name, db)
    setup = TrainingSetup(micro_batch=settings["micro_batch"], seq_len=settings["seq_len"], recipe=settings["recipe"],
                          optimizer=settings["optimizer"], attention=settings["attention"],
                          recompute=settings["recompute"], framework="pytorch")
    est = estimate_training(model, Hardware(gpu=gpu), setup, ParallelPlan(), extras=False) if gpu else None
    args = dict(settings, hf_config=model_to_hf_config(model))
    return model, args, est


def compare_validation(measured: dict, est: dict | None) -> dict:
    if est is None or measured.get("oom"):
        return {"measured": measured, "estimate": None}
    peak_m = measured["peak_abs_bytes"]
    step_m = measured.get("step_ms_median", 0) / 1e3
    peak_e = est["memory"]["peak_bytes"]
    step_e = est["time"]["step_s"]
    return {"measured": measured, "estimate": {"peak_bytes": peak_e, "step_s": step_e, "fits": est["memory"]["fits"]},
            "peak_gap": peak_e / peak_m - 1 if peak_m else None, "step_gap": step_e / step_m - 1 if step_m else None}


def run(args) -> int:
    from planner_app.cli import _user_db_catalog

    db = _user_db_catalog()
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
