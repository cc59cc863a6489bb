"""The serving service (issue 15): a typed ``ServeRequest`` (core/requests.py) -> its model and
machine resolved against the spec database -> one steady-state estimate of a continuous-batching
server (core/serving/deployment.py) or the SLO search over many (core/serving/search.py)."""
from __future__ import annotations

from planner_app.core.errors import InputError
from planner_app.core.requests import ServeRequest, ServeSearchRequest
from planner_app.core.serving.deployment import (
    ServeEstimate,
    check_traffic,
    serve_estimate,
)
from planner_app.core.serving.search import Machine, SloResult, slo_search
from planner_app.service.calibration import load_calibration
from planner_app.service.resolve import resolve_hardware, resolve_model


def run_serve(req: ServeRequest, db) -> ServeEstimate:
    """The steady-state estimate of one deployment; ``.to_json()`` is what ``serve --json`` prints."""
    check_traffic(req)
    model = resolve_model(req.model, db)
    hw, per_node, notes = resolve_hardware(db, gpu=req.gpu, instance=req.instance,
                                           calibration=load_calibration(req.calibration, db))
    return serve_estimate(req, model, hw, per_node, notes)


def run_slo_search(request: ServeSearchRequest, db) -> SloResult:
    """Every deployment of the request's model on each machine of its ``gpu`` / ``instance`` lists,
    ranked against its targets."""
    req = request.serve
    check_traffic(req)
    t = request.targets
    if t.ttft_ms is None or t.tpot_ms is None:
        raise InputError("ttft_ms" if t.ttft_ms is None else "tpot_ms", "the search needs both a TTFT and a TPOT "
                                                                        "target")
    names = [("instance", x.strip()) for x in (req.instance or "").split(",") if x.strip()] + \
        [("gpu", x.strip()) for x in (req.gpu or "").split(",") if x.strip()]
    if not names:
        raise InputError("gpu", "give one or more GPUs or instances, comma-separated")
    model = resolve_model(req.model, db)
    profile = load_calibration(req.calibration, db)
    machines = []
    for kind, name in names:
        hw, per_node, _ = resolve_hardware(db, **{kind: name}, calibration=profile)
        machines.append(Machine(name=name, kind=kind, hardware=hw, gpus_per_node=per_node))
    return slo_search(request, model, machines)
