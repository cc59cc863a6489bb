"""The scaling service: a typed request (core/requests.ScalingRequest: a training plan and the
curves to draw) -> throughput and efficiency against node count, one curve per inter-node network.
The CLI's ``scaling``, the GUI's Scaling page and the report all run it; the plan is resolved as the
estimate resolves it (same defaults, same calibration profile, same price), so the curve passes
through the plan's own estimate.

The plan's NIC count (its instance's, ``--nics-per-node``, else one per GPU) and a calibration's
measured network bandwidth describe the plan's own network only: another network compared beside it
gets the NIC count nodes on that network have (``typical_nics``), so 100 Gb/s TCP Ethernet is not
given p5.48xlarge's 32 EFA adapters."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from planner_app.core.errors import ImpossibleResult, InputError
from planner_app.core.hardware.machine import Hardware, MeasuredEfficiency
from planner_app.core.models.spec import ModelSpec
from planner_app.core.plans.scaling import ScalingPoint, group_size, scaling_curve
from planner_app.core.requests import MAX_NODES, ScalingRequest
from planner_app.core.results import check_quantities
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
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
    nics_from: dict[str, Text] = field(default_factory=dict)  # fabric id -> where its NIC count comes from

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
                "nics_per_node_by_fabric": dict(self.nics),
                "nics_from": {fid: str(t) for fid, t in self.nics_from.items()},
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


def _common_nics(rows: list[dict]) -> int | None:
    """The NIC count most instances in ``rows`` have (each instance id once: a shape sold in several
    regions counts once); a tie goes to the smaller count, the cautious one."""
    by_id = {r["instance_id"]: int(r["nics"]) for r in rows if r.get("nics")}
    if not by_id:
        return None
    counts = Counter(by_id.values())
    return min(counts, key=lambda n: (-counts[n], n))


def typical_nics(db, fabric_id: str, gpus_per_node: int, gpu=None) -> tuple[int, Text]:
    """(NICs per node, where that count comes from) for nodes of ``gpus_per_node`` GPUs on the network
    ``fabric_id``: what the catalogue's instances on that network have (spec_data/instances.csv
    ``nics``: e.g. 8 x 400 Gb/s NDR on Azure ND96isr H100 v5, 1 Ethernet NIC on every TCP-only
    instance), preferring those with the same GPU and GPU count; else instances on a network of the
    same family (the id's first part: ``eth``, ``ib``, ``roce``, ``efa``); else one per GPU, the
    engine's default for a node without an instance (service/resolve.resolve_hardware). ``gpu``: the
    plan's GpuSpec (or None)."""
    rows = [r for r in db.records["instances"] if r.get("nics")]
    family = fabric_id.split("-")[0]
    gpu_id = getattr(gpu, "id", None)
    name = db.fabric(fabric_id).name
    tiers = (
        (lambda r: r["fabric_id"] == fabric_id and r["gpu_count"] == gpus_per_node and r["gpu_id"] == gpu_id,
         QT_TRANSLATE_NOOP("Engine", "as instances on {fabric} with {gpus} {gpu} GPUs have (spec data)")),
        (lambda r: r["fabric_id"] == fabric_id and r["gpu_count"] == gpus_per_node,
         QT_TRANSLATE_NOOP("Engine", "as instances on {fabric} with {gpus} GPUs have (spec data)")),
        (lambda r: r["fabric_id"] == fabric_id,
         QT_TRANSLATE_NOOP("Engine", "as instances on {fabric} have (spec data)")),
        (lambda r: (r["fabric_id"] or "").split("-")[0] == family and r["gpu_count"] == gpus_per_node,
         QT_TRANSLATE_NOOP("Engine", "as instances with {gpus} GPUs on networks like {fabric} have (spec data)")),
    )
    for keep, template in tiers:
        n = _common_nics([r for r in rows if keep(r)])
        if n is not None:
            return n, Text(template, fabric=name, gpus=gpus_per_node, gpu=getattr(gpu, "name", ""))
    return max(1, gpus_per_node), Text(QT_TRANSLATE_NOOP("Engine", "one per GPU (no instance in the spec data "
                                                                   "uses {fabric})"), fabric=name)


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
    nics_from: dict[str, Text] = {}
    skipped: dict[int, str] = {}
    per = group_size(r.plan)
    own = r.hardware.inter.id if r.hardware.inter is not None else None
    where = r.hardware.instance.instance_id if r.hardware.instance is not None else None
    cal = r.hardware.calibration
    for i, fid in enumerate(fabric_ids):
        if cancelled is not None and cancelled():
            return None
        h = replace(r.hardware, inter=inter_fabric(db, fid))
        if fid != own and cal is not None and cal.inter_busbw_gb_s:
            # a measured network bandwidth is the plan's network's; another network keeps its datasheet rate
            h = replace(h, calibration=MeasuredEfficiency(cal.efficiency, cal.intra_busbw_gb_s, None))
        if req.machine.nics_per_node:  # a NIC count the user gave holds for every network compared
            nics_from[fid] = Text(QT_TRANSLATE_NOOP("Engine", "given (--nics-per-node)"))
        elif fid == own:  # the plan's own network: its hardware as estimated
            nics_from[fid] = (Text(QT_TRANSLATE_NOOP("Engine", "the plan's ({instance})"), instance=where) if where
                              else Text(QT_TRANSLATE_NOOP("Engine", "the plan's (one per GPU)")))
        else:
            n, nics_from[fid] = typical_nics(db, fid, r.plan.gpus_per_node, r.hardware.gpu)
            h = replace(h, nics_per_node=n)
        curves[fid], skipped = scaling_curve(r.model, h, r.setup, r.plan, nodes, request.curves.weak, r.price)
        nics[fid] = h.nics_per_node
        if progress:
            progress((i + 1) / len(fabric_ids), fid)
    assumptions = list(r.notes) + [f"each node: {per} GPUs and, on the plan's own network, {r.hardware.nics_per_node} "
                                   "NICs (--gpus-per-node, --nics-per-node)",
                                   *[f"{fid}: {nics[fid]} NICs per node, {nics_from[fid]}" for fid in fabric_ids],
                                   "fits: the per-GPU memory at that node count fits the GPU",
                                   "efficiency = throughput(n) / (n x throughput(1 node)); no_overlap_efficiency "
                                   "= 1/(1 + t_comm/t_compute), the special case with nothing overlapped",
                                   "step_s_plus_50us: every inter-node collective step 50 us slower"]
    try:
        return ScalingResult(request=request, model=r.model, hardware=r.hardware, plan=r.plan, curves=curves,
                             nics=nics, skipped=skipped, gpus_per_node=per, assumptions=assumptions,
                             nics_from=nics_from)
    except ImpossibleResult as e:
        raise ImpossibleResult("calibration" if profile is not None else "result", e.message) from None
