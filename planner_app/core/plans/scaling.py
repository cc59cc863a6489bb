"""Multi-node scaling: throughput and efficiency against node count, per fabric.

Strong scaling keeps the global batch (fewer micro-batches per GPU as nodes grow); weak
scaling grows the global batch with the nodes. Efficiency = throughput(n) / (n x
throughput(1 node)). Beside the engine's overlap-aware model, the simple model
efficiency = 1 / (1 + t_comm / t_compute) is shown: it is the special case in which no
communication overlaps with compute. Latency sensitivity: the step time when every
inter-node hop gets +50 us.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from planner_app.core.errors import InputError
from planner_app.core.training.memory import training_memory
from planner_app.core.training.timing import step_time


@dataclass
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


def scaling_curve(model, hw, setup, plan, nodes: list[int], weak: bool = False) -> list[ScalingPoint]:
    """Scale the data-parallel degree over ``nodes`` (tp, pp, cp, ep kept)."""
    per_node = plan.gpus_per_node
    inner = plan.tp * plan.pp * plan.cp * plan.ep
    if per_node % inner and inner % per_node:
        raise InputError("gpus_per_node", f"a node of {per_node} GPUs does not hold whole tp x pp x cp x ep "
                                          f"groups of {inner}")
    base_gbs = setup.global_batch or setup.micro_batch * plan.dp * plan.ep
    points = []
    ref = None
    for n in nodes:
        gpus = n * per_node
        if gpus % inner:
            continue
        dp = gpus // inner
        gbs = base_gbs * n if weak else base_gbs
        per_step = setup.micro_batch * dp * plan.ep
        if gbs % per_step:
            gbs = max(per_step, (gbs // per_step) * per_step)  # strong scaling past the batch: one micro-batch
        p = replace(plan, dp=dp)
        s = replace(setup, global_batch=gbs)
        st = step_time(model, hw, s, p)
        topo = hw.topology(p.gpus_per_node).with_latency_added(50e-6)
        st_lat = step_time(model, hw, s, p, topo=topo)
        tps = st.tokens_per_s
        if ref is None:
            ref = tps / n
        mem = training_memory(model, s, p, hw.gpu.capacity_bytes)
        points.append(ScalingPoint(nodes=n, gpus=gpus, tokens_per_s=tps, efficiency=tps / (n * ref),
                                   no_overlap_efficiency=st.no_overlap_efficiency, step_s=st.step_s,
                                   step_s_plus_50us=st_lat.step_s, global_batch=gbs, fits=bool(mem.fits),
                                   device_bytes=mem.device_bytes))
    return points


def skipped_node_counts(nodes: list[int], plan) -> dict[int, str]:
    """The node counts ``scaling_curve`` leaves out, each with the reason (to say so, not
    drop them silently)."""
    inner = plan.tp * plan.pp * plan.cp * plan.ep
    return {n: f"{n} node(s) x {plan.gpus_per_node} GPUs do not hold whole tp x pp x cp x ep groups of {inner}"
            for n in nodes if (n * plan.gpus_per_node) % inner}
