"""The scaling service: one plan (estimate options, CLI-named) -> throughput and efficiency
against node count, one curve per inter-node network. The CLI's ``scaling`` and the GUI's
Scaling page both run it; the plan is built by the estimate service (same defaults, same
calibration profile), with the data-parallel degree left to the curve."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import SimpleNamespace

from planner_app.core.errors import InputError
from planner_app.core.plans.scaling import ScalingPoint, scaling_curve, skipped_node_counts

DEFAULT_NODES = (1, 2, 4, 8, 16, 32, 64)
MAX_NODES = 1 << 17  # x 8 GPUs: the option table's largest GPU count (MAX_GPUS = 2^20)


@dataclass(frozen=True)
class ScalingRequest:
    """``options``: estimate options (``OPTION_DEFAULTS`` names; missing ones take its
    defaults); ``fabrics``: inter-node network ids (none: the plan's own); ``nodes``: node
    counts; ``weak``: the global batch grows with the nodes."""

    options: dict
    fabrics: tuple = ()
    nodes: tuple = DEFAULT_NODES
    weak: bool = False


@dataclass
class ScalingOutput:
    model: object
    hardware: object  # the plan's hardware (its own network)
    curves: dict  # fabric id -> [ScalingPoint]
    nics: dict  # fabric id -> NICs per node
    skipped: dict  # node count -> why the plan's groups do not fit it
    gpus_per_node: int
    assumptions: list = field(default_factory=list)


def _options(options: dict) -> SimpleNamespace:
    from planner_app.service.estimate import apply_cli_defaults
    from planner_app.service.options import OPTION_DEFAULTS

    unknown = sorted(set(options) - set(OPTION_DEFAULTS))
    if unknown:
        raise InputError(unknown[0], f"is not an estimate option; allowed: {', '.join(sorted(OPTION_DEFAULTS))}")
    if (options.get("mode") or "training") != "training":
        raise InputError("mode", "scaling curves are for training plans; the workload is inference")
    for key in ("mfu", "achieved_tflops"):
        if options.get(key):
            # a fixed MFU or rate fixes the step time: no communication model, a flat 100% curve
            raise InputError(key, "sets the step time directly, so every node count would scale perfectly; "
                                  "scaling curves come from the engine's time model: remove it")
    return apply_cli_defaults(SimpleNamespace(**{k: v for k, v in options.items() if k != "mode"}), mode="training")


def run_scaling(request: ScalingRequest, db, progress=None, cancelled=None) -> ScalingOutput | None:
    """The curves of ``request`` (None when ``cancelled()`` says so between networks)."""
    from planner_app.service.estimate import build_request, training_setup_and_plan
    from planner_app.service.resolve import inter_fabric
    from planner_app.service.results import check_estimate

    nodes = sorted({int(n) for n in request.nodes})
    if not nodes or nodes[0] < 1 or nodes[-1] > MAX_NODES:
        raise InputError("nodes", f"must be whole numbers from 1 to {MAX_NODES:,}")
    args = _options(request.options)
    model, hw, per_node, _overrides, notes = build_request(args, db)
    setup, plan = training_setup_and_plan(args, model, hw, per_node, db, dp=1)
    fabric_ids = list(request.fabrics) or [hw.inter.id]
    curves: dict[str, list[ScalingPoint]] = {}
    nics = {}
    for i, fid in enumerate(fabric_ids):
        if cancelled is not None and cancelled():
            return None
        h = replace(hw, inter=inter_fabric(db, fid))
        curves[fid] = scaling_curve(model, h, setup, plan, nodes, weak=request.weak)
        for point in curves[fid]:
            check_estimate({"scaling": vars(point)}, "calibration" if args.calibration else "result")
        nics[fid] = h.nics_per_node
        if progress:
            progress((i + 1) / len(fabric_ids), fid)
    assumptions = notes + [f"each node: {plan.gpus_per_node} GPUs and {hw.nics_per_node} NICs "
                           "(--gpus-per-node, --nics-per-node)",
                           "fits: the per-GPU memory at that node count fits the GPU",
                           "efficiency = throughput(n) / (n x throughput(1 node)); no_overlap_efficiency "
                           "= 1/(1 + t_comm/t_compute), the special case with nothing overlapped",
                           "step_s_plus_50us: every inter-node collective step 50 us slower"]
    return ScalingOutput(model=model, hardware=hw, curves=curves, nics=nics,
                         skipped=skipped_node_counts(nodes, plan), gpus_per_node=plan.gpus_per_node,
                         assumptions=assumptions)
