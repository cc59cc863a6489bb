"""Real-run validation: the settings of a validation run, the engine's estimate for it (with
and without a calibration profile), the gap between estimate and measurement (the probe CLI and
the Probe page), the model-shaped GEMMs a probe measures for it, and the validated runs a
calibration profile is checked against (probe/calibration.py ``guard_profile``)."""
from __future__ import annotations

from planner_app.core.errors import InputError
from planner_app.core.hardware.machine import Hardware, MeasuredEfficiency
from planner_app.core.models.hf_config import model_to_hf_config
from planner_app.core.plans.cost import DEFAULT_MIX, PriceChoice
from planner_app.core.requests import SpeedOverrides
from planner_app.core.training.activations import model_profiles, window_mask
from planner_app.core.training.estimate import estimate_training
from planner_app.core.training.setup import ParallelPlan, TrainingSetup, recipe_bytes
from planner_app.service.resolve import resolve_model

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


def _setup(settings: dict) -> tuple[TrainingSetup, ParallelPlan]:
    # the validation loop's optimizer is torch.optim.AdamW with no arguments: foreach on CUDA
    # (torch/optim/adamw.py, _default_to_fused_or_foreach), as probe/validate.py says
    setup = TrainingSetup(seq_len=settings["seq_len"], recipe=settings["recipe"], optimizer=settings["optimizer"],
                          attention=settings["attention"], framework="pytorch", optimizer_impl="foreach")
    return setup, ParallelPlan(micro_batch=settings["micro_batch"], recompute=settings["recompute"], dp=1)


# A validation run is a single GPU's: no price, no speed override
NO_PRICE = PriceChoice(basis=None, mix=DEFAULT_MIX, cny_per_usd=None)


def estimate_case(model, settings: dict, gpu, efficiency=None) -> dict:
    """The engine's estimate of a validation run (its JSON); ``efficiency``: a calibration profile's
    efficiencies (None: the defaults)."""
    cal = MeasuredEfficiency(efficiency) if efficiency is not None else None
    setup, plan = _setup(settings)
    return estimate_training(model, Hardware(gpu=gpu, calibration=cal), setup, plan, SpeedOverrides(), NO_PRICE,
                             extras=False).to_json()


def validation_case(db, model_name: str, settings: dict, gpu):
    """(model, worker args, engine estimate) for a real-run validation of ``model_name``."""
    model = resolve_model(model_name, db)
    est = estimate_case(model, settings, gpu) if gpu else None
    args = dict(settings, hf_config=model_to_hf_config(model))
    return model, args, est


def model_gemm_shapes(db, model_name: str, settings: dict) -> list[tuple[int, int, int]]:
    """The (M, N, K) of every distinct 16-bit GEMM of ``model_name``'s layers under ``settings``:
    M = tokens per micro-batch, N and K the layer's output and input widths (the engine's
    layer traces, core/models/trace.py ``gemms``)."""
    model = resolve_model(model_name, db)
    setup, plan = _setup(settings)
    rb = recipe_bytes(setup.recipe, setup.framework)
    prof = model_profiles(model, rb.act_kind, rb.grad, setup.attention, setup.framework,
                          window_mask(model, setup.seq_len), False, False, None)
    m = plan.micro_batch * setup.seq_len
    shapes = []
    for part in (prof.dense, prof.moe, prof.embed, prof.head):
        for g in (part.gemms if part else []):
            k, n, _split, bits = g[:4]
            shape = (int(m), int(n), int(k))
            if bits in (16, 0) and rb.gemm_bits == 16 and shape not in shapes:
                shapes.append(shape)
    return shapes


def compare_validation(measured: dict, est: dict | None, est_calibrated: dict | None = None) -> dict:
    """Measured against estimated: ``step_gap`` without a profile, ``step_gap_calibrated`` with
    the profile (as measured and as kept by the never-worse rule) when one is given."""
    if est is None or measured.get("oom"):
        return {"measured": measured, "estimate": None}
    peak_m = measured["peak_abs_bytes"]
    step_m = measured.get("step_ms_median", 0) / 1e3
    peak_e = est["memory"]["peak_bytes"]
    step_e = est["time"]["step_s"]
    out = {"measured": measured, "estimate": {"peak_bytes": peak_e, "step_s": step_e, "fits": est["memory"]["fits"]},
           "peak_gap": peak_e / peak_m - 1 if peak_m else None, "step_gap": step_e / step_m - 1 if step_m else None}
    if est_calibrated is not None and step_m:
        out["estimate_calibrated"] = {"step_s": est_calibrated["time"]["step_s"]}
        out["step_gap_calibrated"] = est_calibrated["time"]["step_s"] / step_m - 1
    return out


def validated_cases(db, validations: list[dict], gpu) -> list[dict]:
    """The stored validation runs on ``gpu`` that can be re-estimated (model and settings kept
    with them), as ``guard_profile`` cases: {"label", "measured_s", "step_s"(efficiency)}."""
    cases = []
    for v in validations:
        est = v.get("estimate") or {}
        settings, ref = est.get("settings"), est.get("model_ref")
        step_ms = (v.get("measured") or {}).get("step_ms_median")
        if not settings or not ref or not step_ms or (v.get("measured") or {}).get("oom"):
            continue
        try:
            model = resolve_model(ref, db)
        except InputError:
            continue

        def step_s(eff, model=model, settings=settings):
            return estimate_case(model, settings, gpu, eff)["time"]["step_s"]
        cases.append({"label": f"{ref} b{settings['micro_batch']}s{settings['seq_len']} {settings['recipe']}",
                      "measured_s": step_ms / 1e3, "step_s": step_s})
    return cases


def record_validation(udb, gpu, model, model_ref: str, settings: dict, measured: dict, v: dict) -> None:
    """Store a validation run with what re-estimating it needs (model reference and settings),
    so that calibration profiles of this GPU are checked against it (``validated_cases``)."""
    udb.add_validation(gpu.id, settings["recipe"], model.name, measured,
                       dict(v.get("estimate") or {}, model_ref=model_ref, settings=settings),
                       v.get("peak_gap"), v.get("step_gap"))
