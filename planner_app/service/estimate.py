"""The estimate service: a typed request (core/requests.py) -> resolved against the spec database
(service/resolve.py) -> the engine -> an ``EstimateResult`` that carries its request. Every face
(CLI, GUI pages, report, scenario files) estimates here, so a plan gives the same numbers
everywhere; a face that needs the plan again (a scaling curve, a report's prices) runs its request
again."""
from __future__ import annotations

from planner_app.core.errors import ImpossibleResult, InputError
from planner_app.core.inference.estimate import estimate_inference
from planner_app.core.options import build, options_of
from planner_app.core.requests import (
    ESTIMATE_REQUESTS,
    InferenceRequest,
    TrainingRequest,
)
from planner_app.core.training.estimate import estimate_training
from planner_app.service.calibration import load_calibration
from planner_app.service.host import host_section
from planner_app.service.resolve import resolve_inference, resolve_training
from planner_app.service.results import EstimateResult, check_achieved_tflops


def estimate_request(values: dict, mode: str = "training") -> TrainingRequest | InferenceRequest:
    """The estimate request of flat option values (the CLI's names): ``mode`` "training" or
    "inference"; an option of the other mode is an error naming it, not silently ignored
    (``weights_dtype`` on a training run once changed nothing)."""
    if mode not in ESTIMATE_REQUESTS:
        raise InputError("mode", f"must be one of {', '.join(ESTIMATE_REQUESTS)}; got {mode!r}")
    cls = ESTIMATE_REQUESTS[mode]
    mine = options_of(cls)
    for other_mode, other in ESTIMATE_REQUESTS.items():
        for key, value in values.items():
            if other is not cls and key in options_of(other) and key not in mine and value not in (None, False):
                raise InputError(key, f"applies to {other_mode} estimates only (this is {mode}); leave it out")
    return build(cls, values, f"a {mode} estimate")


def _cause(request) -> str:
    """The option that set the numbers when the engine returns an impossible one."""
    speed = getattr(request, "speed", None)
    if speed is not None and speed.mfu:
        return "mfu"
    if speed is not None and speed.achieved_tflops:
        return "achieved_tflops"
    return "calibration" if request.calibration else "result"


def run_estimate(request, db) -> EstimateResult:
    """The estimate of a training or inference request."""
    calibration = load_calibration(request.calibration, db)
    try:
        if isinstance(request, InferenceRequest):
            r = resolve_inference(request, db, calibration)
            return EstimateResult(request=request, estimate=estimate_inference(r.model, r.hardware, r.setup, r.price),
                                  notes=r.notes)
        t = resolve_training(request, db, calibration)
        est = estimate_training(t.model, t.hardware, t.setup, t.plan, request.speed, t.price)
        check_achieved_tflops(request.speed.achieved_tflops, est)
        return EstimateResult(request=request, estimate=est, notes=t.notes,
                              host=host_section(request.host, est))
    except ImpossibleResult as e:
        raise ImpossibleResult(_cause(request), e.message) from None


def estimate_json(values: dict, db) -> dict:
    """``gpu-planner estimate --json`` for flat option values (the CLI's names, ``mode`` among them:
    "training" when not given), for scripts and checks."""
    values = dict(values)
    mode = values.pop("mode", None) or "training"
    return run_estimate(estimate_request(values, mode), db).to_json()
