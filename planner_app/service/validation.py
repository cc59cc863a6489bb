"""Real-run validation: the settings of a validation run, the engine's estimate for it, and
the gap between the two (the probe CLI and the Probe page)."""
from __future__ import annotations

from planner_app.core.errors import InputError

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
    from planner_app.service.resolve import resolve_model

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
