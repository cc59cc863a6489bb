"""Multi-node scaling: throughput and efficiency against node count, per fabric.

Strong scaling keeps the plan's global batch (fewer micro-batches per GPU as nodes grow); weak
scaling keeps its global batch per node. Efficiency = throughput(n) / (n x throughput(1 node)).
Beside the engine's overlap-aware model, the simple model efficiency = 1 / (1 + t_comm / t_compute)
is shown: it is the special case in which no communication overlaps with compute. Latency
sensitivity: the step time when every inter-node hop gets +50 us. Each point is the estimate's own
engine call at that node count (``step_time``, ``training_memory``, ``training_cost``), so at the
plan's own count it is the plan's estimate, number for number.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from planner_app.core.errors import InputError
from planner_app.core.plans.cost import PriceChoice
from planner_app.core.training.estimate import training_cost
from planner_app.core.training.memory import training_memory
from planner_app.core.training.setup import ParallelPlan, TrainingSetup
from planner_app.core.training.timing import step_time

LATENCY_ADDED_S = 50e-6  # the latency-sensitivity variant: every inter-node collective step this much slower


@dataclass(frozen=True)
class ScalingPoint:
    nodes: int
    gpus: int
    tokens_per_s: float
    efficiency: float
    no_overlap_efficiency: float
    step_s: float
    step_s_plus_50us: float
    global_batch: int
    fits: bool  # the per-GPU memory at this count fits the GPU (ZeRO shards shrink with dp)
    device_bytes: float
    train_s: float | None  # with a token budget
    gpu_hours: float | None
    usd: float | None  # at the plan's price basis, on an instance with a price there


def group_size(plan: ParallelPlan) -> int:
    """GPUs of one "node" of the curve: the machine's node, or the plan itself when it is smaller
    (a one-GPU plan scales in ones)."""
    return min(plan.gpus_per_node, plan.gpus)


def scaling_curve(model, hw, setup: TrainingSetup, plan: ParallelPlan, nodes: list[int], weak: bool,
                  price: PriceChoice) -> tuple[list[ScalingPoint], dict[int, str]]:
    """The plan with its data-parallel degree grown over ``nodes`` (tp, pp, cp, ep and the rest of the
    layout kept): (points, {node count: why it is left out})."""
    per_node = group_size(plan)
    inner = plan.tp * plan.pp * plan.cp * plan.ep
    if per_node % inner and inner % per_node:
        raise InputError("gpus_per_node", f"a node of {per_node} GPUs does not hold whole tp x pp x cp x ep "
                                          f"groups of {inner}")
    own_gbs = setup.global_batch or plan.micro_batch * plan.dp * plan.ep
    own_nodes = plan.gpus / per_node
    points: list[ScalingPoint] = []
    skipped: dict[int, str] = {}
    ref = None
    for n in nodes:
        gpus = n * per_node
        if gpus % inner:
            skipped[n] = (f"{n} node(s) x {per_node} GPUs do not hold whole tp x pp x cp x ep groups of "
                          f"{inner}")
            continue
        dp = gpus // inner
        p = replace(plan, dp=dp, gpus_per_node=plan.gpus_per_node)
        gbs = round(own_gbs * n / own_nodes) if weak else own_gbs
        per_step = plan.micro_batch * dp * plan.ep
        if gbs % per_step:
            gbs = max(per_step, (gbs // per_step) * per_step)  # strong scaling past the batch: one micro-batch
        s = setup if p == plan and gbs == own_gbs else replace(setup, global_batch=gbs)
        try:
            st = step_time(model, hw, s, p)
            st_lat = step_time(model, hw, s, p, topo=hw.topology(p.gpus_per_node).with_latency_added(LATENCY_ADDED_S))
            mem = training_memory(model, s, p, hw.gpu.capacity_bytes)
        except InputError as e:
            skipped[n] = e.message
            continue
        tps = st.tokens_per_s
        if ref is None:
            ref = tps / n
        train_s = setup.tokens / tps if setup.tokens else None
        cost = training_cost(hw, st.gpus, train_s, price)
        points.append(ScalingPoint(nodes=n, gpus=gpus, tokens_per_s=tps, efficiency=tps / (n * ref),
                                   no_overlap_efficiency=st.no_overlap_efficiency, step_s=st.step_s,
                                   step_s_plus_50us=st_lat.step_s, global_batch=gbs, fits=bool(mem.fits),
                                   device_bytes=mem.device_bytes, train_s=train_s, gpu_hours=cost.gpu_hours,
                                   usd=cost.usd))
    return points, skipped
