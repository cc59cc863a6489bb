"""The scaling service: a typed request (core/requests.ScalingRequest: a training plan and the
curves to draw) -> throughput and efficiency against node count, one curve per inter-node network.
The CLI's ``scaling``, the GUI's Scaling page and the report all run it; the plan is resolved as the
estimate resolves it (same defaults, same calibration profile, same price), so the curve passes
through the plan's own estimate."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from planner_app.core.errors import ImpossibleResult, InputError
from planner_app.core.hardware.machine import Hardware
from planner_app.core.models.spec import ModelSpec
from planner_app.core.plans.scaling import ScalingPoint, group_size, scaling_curve
from planner_app.core.requests import MAX_NODES, ScalingRequest
from planner_app.core.results import check_quantities
from planner_app.core.training.setup import ParallelPlan
from planner_app.service.calibration import load_calibration
from planner_app.service.resolve import inter_fabric, resolve_training


@dataclass(frozen=True)
class ScalingResult:
    request: ScalingRequest
    model: ModelSpec
    hardware: Hardware  # the plan's hardware (its own network)
    plan: ParallelPlan  # the resolved plan (its own node count is plan_nodes)
    curves: dict[str, list[ScalingPoint]]  # fabric id -> [ScalingPoint]
    nics: dict[str, int | None]  # fabric id -> NICs per node
    skipped: dict[int, str]  # node count -> why the plan's groups do not fit it
    gpus_per_node: int  # GPUs of one node of the curve (the plan itself when it is smaller)
    assumptions: list = field(default_factory=list)

    def __post_init__(self):
        for pts in self.curves.values():
            for p in pts:
                check_quantities(p)

    @property
    def plan_nodes(self) -> int:
        return max(1, -(-self.plan.gpus // self.gpus_per_node))

    def to_json(self) -> dict:
        """The JSON ``gpu-planner scaling --json`` prints."""
        return {"model": self.model.name, "gpu": self.hardware.gpu.id,
                "mode": "weak" if self.request.curves.weak else "strong",
                "curves": {fid: [vars(p) for p in pts] for fid, pts in self.curves.items()},
                "gpus_per_node": self.gpus_per_node, "nics_per_node": self.hardware.nics_per_node,
                "plan_nodes": self.plan_nodes, "plan_gpus": self.plan.gpus,
                "skipped_nodes": [{"nodes": n, "reason": r} for n, r in self.skipped.items()],
                "assumptions": self.assumptions}


def node_counts(text: str) -> list[int]:
    """Node counts from "1,2,4": whole numbers from 1 to MAX_NODES, sorted, each once."""
    try:
        nodes = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise InputError("nodes", f"must be whole numbers separated by commas; got {text!r}") from None
    if not nodes or nodes[0] < 1 or nodes[-1] > MAX_NODES:
        raise InputError("nodes", f"must be whole numbers from 1 to {MAX_NODES:,}")
    return nodes


def run_scaling(request: ScalingRequest, db, progress=None, cancelled=None) -> ScalingResult | None:
    """The curves of ``request`` (None when ``cancelled()`` says so between networks)."""
    req = request.plan
    for key in ("mfu", "achieved_tflops"):
        if getattr(req.speed, key):
            # a fixed MFU or rate fixes the step time: no communication model, a flat 100% curve
            raise InputError(key, "sets the step time directly, so every node count would scale perfectly; "
                                  "scaling curves come from the engine's time model: leave it out")
    nodes = node_counts(request.curves.nodes)
    profile = load_calibration(req.calibration, db)
    r = resolve_training(req, db, profile)
    fabric_ids = [f.strip() for f in (request.curves.fabrics or "").split(",") if f.strip()]
    if not fabric_ids:
        if r.hardware.inter is None:  # resolve_hardware always sets one
            raise InputError("fabrics", "the plan names no inter-node network; give one or more fabric ids")
        fabric_ids = [r.hardware.inter.id]
    curves: dict[str, list[ScalingPoint]] = {}
    nics: dict[str, int | None] = {}
    skipped: dict[int, str] = {}
    for i, fid in enumerate(fabric_ids):
        if cancelled is not None and cancelled():
            return None
        h = replace(r.hardware, inter=inter_fabric(db, fid))
        curves[fid], skipped = scaling_curve(r.model, h, r.setup, r.plan, nodes, request.curves.weak, r.price)
        nics[fid] = h.nics_per_node
        if progress:
            progress((i + 1) / len(fabric_ids), fid)
    per = group_size(r.plan)
    assumptions = list(r.notes) + [f"each node: {per} GPUs and {r.hardware.nics_per_node} NICs "
                                   "(--gpus-per-node, --nics-per-node)",
                                   "fits: the per-GPU memory at that node count fits the GPU",
                                   "efficiency = throughput(n) / (n x throughput(1 node)); no_overlap_efficiency "
                                   "= 1/(1 + t_comm/t_compute), the special case with nothing overlapped",
                                   "step_s_plus_50us: every inter-node collective step 50 us slower"]
    try:
        return ScalingResult(request=request, model=r.model, hardware=r.hardware, plan=r.plan, curves=curves,
                             nics=nics, skipped=skipped, gpus_per_node=per, assumptions=assumptions)
    except ImpossibleResult as e:
        raise ImpossibleResult("calibration" if profile is not None else "result", e.message) from None
