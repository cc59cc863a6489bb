"""Training step time, throughput, time to train and cost.

A training step is the slowest pipeline stage's micro-batches through the pipeline
schedule, plus the communication that does not overlap with compute, plus the optimizer
step:

* per micro-batch and stage: forward + backward (+ recomputation) of its layers
  (``compute.layer_time``) and the tensor-parallel collectives of each layer (2
  all-reduces forward and 2 backward; with sequence parallelism 2 all-gathers and 2
  reduce-scatters each way, Korthikanti et al. 2022 sec. 4.2.2), expert all-to-alls
  (dispatch and combine, forward and backward) and the context-parallel ring (overlapped
  with attention);
* pipeline: 1F1B runs m + p - 1 micro-batch slots; interleaving with v stages per rank
  cuts the bubble to (p - 1)/v slots (Narayanan et al. 2021 sec. 2.2);
* data parallelism: gradient all-reduce (ZeRO >= 1: reduce-scatter, then all-gather of the
  updated parameters) overlapped with the last micro-batch's backward as DDP and
  Megatron's ``--overlap-grad-reduce`` do; ZeRO-3 gathers each layer's parameters in
  forward and backward and reduce-scatters its gradients, overlapped with the layer's
  compute (prefetch); only the excess is exposed.
The simple model efficiency = 1 / (1 + t_comm/t_compute) is the no-overlap special case
(``scaling.py`` shows it beside this model).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner_app.core.arrays import is_array, maximum, where
from planner_app.core.hardware import compute, network
from planner_app.core.hardware.network import group_per_node
from planner_app.core.models.flops import training_flops_per_token
from planner_app.core.models.trace import factors
from planner_app.core.training import checkpoint, memory
from planner_app.core.training.activations import model_profiles, window_mask
from planner_app.core.training.setup import (
    Layout,
    TrainingSetup,
    recipe_bytes,
    validate_plan_for_model,
)
from planner_app.core.training.states import stage_layers, stage_params

DEEPSPEED_ZERO3_BW_FRACTION = 0.3  # see step_time's ZeRO-3 comment (Narayanan et al. 2021 Table 2 fit)
# Overlap of communication with compute (estimates; docs/validation.md checks the sums):
CP_RING_ATTENTION_OVERLAP = 0.3  # ring steps hide behind this share of the attention blocks they feed
FULL_RECOMPUTE_TP_FACTOR = 1.5  # full recomputation repeats the forward's tp collectives (2 of 4)
LAST_BACKWARD_SHARE = 0.6  # backward share of the last micro-batch that overlaps the gradient reduction
DP_EXPOSED_FRACTION = 0.05  # of the reduction stays exposed even when it overlaps (bucket tail)
PARAM_GATHER_OVERLAP = 0.5  # share of a micro-batch that hides the ZeRO-1/2 parameter all-gather
ZERO3_OVERLAP = {"deepspeed": 0.5}  # share of a micro-batch that hides ZeRO-3 traffic (prefetch)
ZERO3_OVERLAP_DEFAULT = 0.8
CNN_GEMM_SHARE = 0.6  # convolutions reach this share of a large GEMM's efficiency
# Host link per direction by PCIe generation, x16, achievable GB/s (ZeRO-Offload traffic)
PCIE_GB_S = {3: 12.0, 4: 24.0, 5: 48.0, 6: 96.0}
PCIE_DEFAULT_GB_S = 24.0


def pcie_gb_s(gen) -> float:
    return PCIE_GB_S.get(gen, PCIE_DEFAULT_GB_S) if gen else PCIE_DEFAULT_GB_S


@dataclass
class StepTime:
    step_s: float
    parts: dict  # where the time goes (seconds per step)
    micro_batches: int
    global_batch: int
    tokens_per_step: float
    model_flops_per_step: float
    hw_flops_per_step: float
    peak_tflops: float
    gpus: int
    no_overlap_efficiency: float
    comm_s: float
    compute_s: float

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.step_s

    @property
    def mfu(self) -> float:
        return self.model_flops_per_step / (self.step_s * self.gpus * self.peak_tflops * 1e12)

    @property
    def hfu(self) -> float:
        return self.hw_flops_per_step / (self.step_s * self.gpus * self.peak_tflops * 1e12)


def step_time(model, hw, setup: TrainingSetup, plan, topo=None) -> StepTime:
    """Time of one optimizer step over the global batch (``topo``: the network, where it differs from
    the hardware's own: the scaling curve's latency sensitivity)."""
    validate_plan_for_model(model, setup, plan)
    c = Layout.of(setup, plan)
    rb = recipe_bytes(setup.recipe, setup.framework)
    eff = hw.efficiency(setup.framework)
    topo = topo or hw.topology(c.gpus_per_node)
    n_acc = c.n_acc
    global_batch = setup.global_batch or c.micro_batch * c.dp * c.ep
    tokens_step = global_batch * setup.seq_len
    lora = setup.lora(model)
    model_f, hw_f = training_flops_per_token(model, setup.seq_len, c.recompute, lora)
    peak = hw.gpu.peak_tflops(rb.gemm_bits)
    if not model.is_transformer:
        return _cnn_step(model, hw, setup, c, rb, eff, topo, global_batch, peak)
    s = step_breakdown(model, hw, setup, eff, topo, c, _layer_times(model, hw.gpu, eff, setup, c, rb, lora))
    slow = s["slow"]
    compute_s = n_acc * (slow["compute"] + slow["recompute"]) + s["opt_s"]
    comm_total = n_acc * (slow["tp_comm"] + slow["ep_comm"] + slow["cp_comm"] + s["p2p"]) + s["dp_comm"] + s["gather"]
    return StepTime(step_s=s["step_s"], parts=s["parts"], micro_batches=n_acc, global_batch=global_batch,
                    tokens_per_step=tokens_step, model_flops_per_step=model_f * tokens_step,
                    hw_flops_per_step=hw_f * tokens_step, peak_tflops=peak, gpus=c.gpus,
                    no_overlap_efficiency=compute_s / (compute_s + comm_total) if comm_total else 1.0,
                    comm_s=comm_total, compute_s=compute_s)


def _layer_times(model, gpu, eff, setup: TrainingSetup, c: Layout, rb, lora) -> dict:
    """The parts' layer times at this configuration (``part_times`` on Python numbers)."""
    prof = model_profiles(model, rb.act_kind, rb.grad, setup.attention, setup.framework,
                          window_mask(model, setup.seq_len), c.selective, setup.recipe == "fp8", lora)
    f = factors(c.tokens, setup.seq_len, c.tp, c.sequence_parallel, c.tp)
    return part_times(model, prof, gpu, eff, rb, c.tokens, setup.seq_len, c.cp, c.tp, f, c.recompute_code,
                      host_kernel_s(model, setup, c, eff))


def host_kernel_s(model, setup: TrainingSetup, c: Layout, eff):
    """(forward, backward, checkpointing) host seconds per kernel of a layer issued through DTensor's tensor
    parallelism (memory.dtensor_tp; compute.dtensor_kernel_host_s), zeros where the layers are eager PyTorch's or a
    fused framework's."""
    on = memory.dtensor_tp(model, setup, c)
    if np.ndim(on) == 0 and on == 0:
        return 0.0, 0.0, 0.0
    f, b, ckpt = compute.dtensor_kernel_host_s(c.sequence_parallel, eff)
    return on * f, on * b, on * ckpt


def part_times(model, prof, gpu, eff, rb, tokens, seq, cp, tp, f, recompute, host=(0.0, 0.0, 0.0)) -> dict:
    """(fwd, bwd, recompute) seconds per layer and micro-batch of each part, or None for a
    part the model lacks; array-generic (``compute.layer_time``). Context parallelism splits
    the queries; every query still attends to the whole sequence (ring attention), so
    attention FLOPs use the full length; embedding and head see the local tokens and are
    not recomputed. ``host``: (forward, backward, checkpointing) host seconds per kernel (``host_kernel_s``)."""
    head_dim = model.head_dim if model.arch != "deepseek" else model.qk_nope_dim + model.qk_rope_dim
    out = {}
    for part, seq_attn, rec in (("dense", seq, recompute), ("moe", seq, recompute),
                                ("embed", seq / cp, 0), ("head", seq / cp, 0)):
        p = getattr(prof, part)
        out[part] = p and compute.layer_time(p, gpu, eff, tokens, seq_attn, tp, rb.gemm_bits, head_dim, rec, f,
                                             model.arch != "bert", host)
    return out


def _pick(cond, a, b):
    """``a()`` where ``cond`` holds, else ``b()``: per column for arrays; for a scalar condition
    only the branch taken runs (the single estimate skips collectives it does not need)."""
    if is_array(cond):
        return np.where(cond, a(), b())
    return float(a() if cond else b())


def _when(cond, a):
    return _pick(cond, a, lambda: 0.0)


def layer_comm(model, rb, c: Layout, topo, first_fwd):
    """Exposed communication per layer and micro-batch: (tp, ep, cp) seconds. Tensor
    parallelism: 2 all-reduces forward and 2 backward; with sequence parallelism 2 all-gathers
    and 2 reduce-scatters each way, the bytes of 4 all-reduces (Korthikanti et al. 2022 sec.
    4.2.2). Experts: dispatch and combine all-to-alls, forward and backward. Context
    parallelism: the K/V ring (every query attends to the whole sequence), partly hidden
    behind attention."""
    gpus_per_node = c.gpus_per_node
    act_bytes = 2.0 if rb.act_kind != "fp32" else 4.0
    msg = c.tokens * model.hidden * act_bytes
    tp_node = group_per_node(c.tp, 1, gpus_per_node)
    tp_layer = _when(c.tp > 1, lambda: _pick(c.sequence_parallel, lambda: 8 * network.all_gather_s(msg, c.tp, topo, tp_node),
                                             lambda: 4 * network.all_reduce_s(msg, c.tp, topo, tp_node)))
    ep_layer = 0.0
    if model.is_moe:
        ep_node = group_per_node(c.ep, c.tp * c.cp, gpus_per_node)
        ep_layer = _when(c.ep > 1, lambda: 4 * network.all_to_all_s(
            c.tokens * model.top_k * model.hidden * act_bytes / c.tp, c.ep, topo, ep_node))

    def cp_ring():
        cp_node = group_per_node(c.cp, c.tp, gpus_per_node)
        kv_bytes = c.tokens * 2 * model.kv_width * act_bytes / c.tp
        ring = (c.cp - 1) * network.send_recv_s(kv_bytes, cp_node < c.cp, topo)
        return 3 * maximum(0.0, ring - CP_RING_ATTENTION_OVERLAP * first_fwd)

    return tp_layer, ep_layer, _when(c.cp > 1, cp_ring), msg


def stage_parts(model, c, times: dict, comm, first: bool, last) -> dict:
    """Seconds per micro-batch of one pipeline stage: compute, recomputation and each
    per-layer communication of its layers (``times``: (fwd, bwd, recompute) per part)."""
    tp_layer, ep_layer, cp_layer = comm[:3]
    nd, nm = stage_layers(model, c.pp, first)
    tp_factor = where(c.ckpt, FULL_RECOMPUTE_TP_FACTOR, 1.0)
    parts = dict.fromkeys(("compute", "recompute", "tp_comm", "ep_comm", "cp_comm"), 0.0)
    for t, n, moe in ((times["dense"], nd, False), (times["moe"], nm, True)):
        if t is None:
            continue
        parts["compute"] = parts["compute"] + n * (t[0] + t[1])
        parts["recompute"] = parts["recompute"] + n * t[2]
        parts["tp_comm"] = parts["tp_comm"] + n * tp_layer * tp_factor
        if moe:
            parts["ep_comm"] = parts["ep_comm"] + n * ep_layer
        parts["cp_comm"] = parts["cp_comm"] + n * cp_layer
    if first:
        parts["compute"] = parts["compute"] + times["embed"][0] + times["embed"][1]
    parts["compute"] = parts["compute"] + where(last, times["head"][0] + times["head"][1], 0.0)
    return parts


def slowest_stage(c, first: dict, last: dict) -> dict:
    """The stage whose micro-batch takes longest (the first one on a tie)."""
    use_last = (c.pp > 1) & (sum(last.values()) > sum(first.values()))
    return {k: where(use_last, last[k], first[k]) for k in first}


def pipeline(c: Layout, t_mb, msg, topo):
    """(p2p, schedule, bubble) seconds: 1F1B runs m + p - 1 micro-batch slots; interleaving
    with v stages per rank cuts the bubble to (p - 1)/v slots and sends v times as often
    (Narayanan et al. 2021 sec. 2.2)."""
    v = where(c.interleaved, c.vp, 1)
    across = c.tp * c.cp * c.ep * c.dp >= c.gpus_per_node  # one stage spans whole nodes
    p2p = _when(c.pp > 1, lambda: 2 * network.send_recv_s(msg / where(c.sequence_parallel, c.tp, 1), across, topo) * v)
    slots = where(c.pp > 1, c.n_acc + (c.pp - 1) / v, c.n_acc)
    return p2p, slots * (t_mb + p2p), (slots - c.n_acc) * (t_mb + p2p)


def replica_params(model, c):
    """(dense, expert) parameters of the larger of the first and last stage's GPUs."""
    d1, e1 = stage_params(model, c.pp, c.tp, c.ep, True, c.pp == 1)
    if not is_array(c.pp) and c.pp == 1:
        return d1, e1
    d2, e2 = stage_params(model, c.pp, c.tp, c.ep, False, True)
    return where(c.pp > 1, maximum(d1, d2), d1), where(c.pp > 1, maximum(e1, e2), e1)


def data_parallel_traffic(model, rb, c: Layout, topo, dense_p, expert_p):
    """(gradient reduction, parameter all-gather) seconds per step: an all-reduce, or under
    ZeRO >= 1 a reduce-scatter then an all-gather of the updated parameters; experts reduce
    over their own replicas. Under hybrid sharding (HSDP) the reduce-scatter and the gather run
    within the shard group and the reduced shard is all-reduced across the replicas, as FSDP2
    does over a 2-D mesh (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py,
    foreach_reduce: reduce_scatter on the shard dim, then all_reduce on the replicate dim)."""
    gpus_per_node = c.gpus_per_node
    comm = c.d_dense > 1
    dp_node = group_per_node(c.d_dense, c.tp, gpus_per_node)
    shard_node = group_per_node(c.s_dense, c.tp, gpus_per_node)
    dp_comm = _when(comm, lambda: _pick(c.zero == 0,
                                        lambda: network.all_reduce_s(dense_p * rb.grad, c.d_dense, topo, dp_node),
                                        lambda: network.reduce_scatter_s(dense_p * rb.grad, c.s_dense, topo,
                                                                         shard_node)))
    # the replicate dim: one rank of each shard group, tp x s_dense ranks apart
    dp_comm = dp_comm + _when(comm & (c.zero > 0) & (c.replicas > 1), lambda: network.all_reduce_s(
        dense_p * rb.grad / c.s_dense, c.replicas, topo, group_per_node(c.replicas, c.tp * c.s_dense, gpus_per_node)))
    gather = _when(comm & (c.zero > 0) & (c.s_dense > 1),
                   lambda: network.all_gather_s(dense_p * rb.param, c.s_dense, topo, shard_node))
    if model.is_moe:
        e_node = group_per_node(c.d_exp, c.tp * c.cp * c.ep, gpus_per_node)
        dp_comm = dp_comm + _when(comm & (expert_p > 0) & (c.d_exp > 1), lambda: network.all_reduce_s(
            expert_p * rb.grad, c.d_exp, topo, e_node))
    return dp_comm, gather


def exposed_traffic(c: Layout, setup: TrainingSetup, dp_comm, gather, t_mb, compute_mb):
    """(reduction, gather) seconds not hidden behind compute. The reduction overlaps the last
    micro-batch's backward (DDP, Megatron's --overlap-grad-reduce) but for a bucket tail;
    ZeRO-3 gathers each layer twice and reduce-scatters once per micro-batch, overlapped
    with the layer's compute (prefetch); once when FSDP keeps the gathered layers from the
    forward to the backward (reshard_after_forward=False). DeepSpeed's ZeRO-3 gathers parameter by parameter:
    in Narayanan et al. 2021's Table 2 runs (175B and 530B, 384-2240 A100s) its collectives
    moved ~0.3 of what the fabric's bus bandwidth allows (docs/validation.md)."""
    per_mb = where(c.no_reshard_after_forward, 1, 2) * gather + dp_comm
    if setup.framework == "deepspeed":
        per_mb = per_mb / DEEPSPEED_ZERO3_BW_FRACTION
    overlap = ZERO3_OVERLAP.get(setup.framework, ZERO3_OVERLAP_DEFAULT)
    zero3 = (c.zero == 3) & (c.s_dense > 1)
    dp_exposed = where(zero3, c.n_acc * maximum(0.0, per_mb - overlap * t_mb),
                       maximum(0.0, dp_comm - compute_mb * LAST_BACKWARD_SHARE) + DP_EXPOSED_FRACTION * dp_comm)
    gather_exposed = where(zero3 | (gather <= 0), 0.0, maximum(0.0, gather - PARAM_GATHER_OVERLAP * t_mb))
    return dp_exposed, gather_exposed


def local_params(c: Layout, params):
    """This GPU's share of the replica's parameters: ZeRO-1 and above shard them over the shard group."""
    return params / where(c.zero >= 1, c.s_dense, 1)


def optimizer_s(c: Layout, setup: TrainingSetup, params, rb, gpu, eff, tensors):
    """The optimizer step over this GPU's (ZeRO-sharded) parameters: on the GPU, or on the host under
    CPU offload (compute.host_optimizer_step_s: FSDP2's CPUOffloadPolicy and ZeRO-Offload step the
    offloaded shard there, and the next step waits for it). ``tensors``: the trainable parameter
    tensors of the model (a pipeline stage holds its share)."""
    local = local_params(c, params)
    if setup.offload != "none":
        return compute.host_optimizer_step_s(local, setup.optimizer_impl, setup.framework, rb.state)
    return compute.optimizer_step_s(local, setup.optimizer, rb, setup.framework, gpu, eff, setup.optimizer_impl,
                                    tensors / c.pp)


def offload_transfer_s(c: Layout, setup: TrainingSetup, params, rb, gpu):
    """Host-device traffic of CPU offload per step, over PCIe (PCIE_GB_S), not overlapped: this GPU's
    shard of the parameters comes in at each gather under ZeRO-3/FSDP or parameter offload (twice per micro-batch, once
    with the gathered layers kept to the backward: FSDP2's all_gather_inputs copies the pinned CPU
    shard to the GPU) and once per step otherwise (the updated 16-bit copy), and its gradient shard
    goes out once per micro-batch (FSDP2's foreach_reduce copies the reduce-scatter output to the
    CPU; ZeRO-Offload its partition). Measured under the fake group: 681 pinned host-to-device copies
    and 292 device-to-host copies at 51 GB/s in an FSDP2 offload step (tests/data/fake_pg_profile2_h200.json)."""
    if setup.offload == "none":
        return 0.0
    local = local_params(c, params)
    gathered = (c.zero >= 3) | (setup.offload == "params")  # the 16-bit weights themselves live on the host
    param_in = where(gathered, c.n_acc * where(c.no_reshard_after_forward, 1, 2), 1) * rb.param
    return local * (param_in + c.n_acc * rb.grad) / (pcie_gb_s(gpu.pcie_gen) * 1e9)


def lora_replica(model, rb, c, lora):
    """(trainable parameters, byte table of what is trained, frozen bytes) of the larger of the first
    and last stage's GPUs under LoRA: only the adapters' gradients are reduced and their states
    stepped; ZeRO-3 gathers the frozen base too."""
    first = memory.adapter_params(model, lora, c, True), memory.frozen_bytes(model, rb, lora, c, True, c.pp == 1)
    last = memory.adapter_params(model, lora, c, False), memory.frozen_bytes(model, rb, lora, c, False, True)
    n, frozen = (where(c.pp > 1, maximum(a, b), a) for a, b in zip(first, last))
    return n, memory.trainable_bytes(rb, lora), frozen


def step_breakdown(model, hw, setup: TrainingSetup, eff, topo, c: Layout, times: dict) -> dict:
    """The step from the per-layer times, shared by ``step_time`` (numbers) and the search (columns,
    plans/sweep_time.py)."""
    rb = recipe_bytes(setup.recipe, setup.framework)
    lora = setup.lora(model)
    first_fwd = (times["dense"] or times["moe"])[0]
    comm = layer_comm(model, rb, c, topo, first_fwd)
    slow = slowest_stage(c, stage_parts(model, c, times, comm, True, c.pp == 1),
                         stage_parts(model, c, times, comm, False, True))
    t_mb = sum(slow.values())
    p2p, pipeline_s, bubble_s = pipeline(c, t_mb, comm[3], topo)
    if lora is None:
        dense_p, expert_p = replica_params(model, c)
        dp_comm, gather = data_parallel_traffic(model, rb, c, topo, dense_p, expert_p)
    else:
        dense_p, rb, frozen = lora_replica(model, rb, c, lora)
        expert_p = 0.0
        dp_comm, gather = data_parallel_traffic(model, rb, c, topo, dense_p, expert_p)
        shard_node = group_per_node(c.s_dense, c.tp, c.gpus_per_node)
        gather = where((c.zero == 3) & (c.s_dense > 1),
                       gather + network.all_gather_s(frozen, maximum(c.s_dense, 2), topo, shard_node), gather)
    dp_exposed, gather_exposed = exposed_traffic(c, setup, dp_comm, gather, t_mb, slow["compute"])
    offload_s = offload_transfer_s(c, setup, dense_p + expert_p, rb, hw.gpu)
    tensors = (checkpoint.param_tensor_count(model) if lora is None
               else lora.adapter_tensors(model.dense_mlp_layers, model.moe_layers))
    opt = optimizer_s(c, setup, dense_p + expert_p, rb, hw.gpu, eff, tensors)
    n = c.n_acc
    parts = {"compute": n * slow["compute"], "recompute": n * slow["recompute"],
             "tensor_parallel_comm": n * slow["tp_comm"], "expert_parallel_comm": n * slow["ep_comm"],
             "context_parallel_comm": n * slow["cp_comm"], "pipeline_p2p": n * p2p, "pipeline_bubble": bubble_s,
             "data_parallel_comm_exposed": dp_exposed + gather_exposed, "offload_transfer": offload_s,
             "optimizer_step": opt}
    return {"step_s": pipeline_s + dp_exposed + gather_exposed + offload_s + opt, "parts": parts, "slow": slow, "t_mb": t_mb,
            "p2p": p2p, "bubble_s": bubble_s, "dp_comm": dp_comm, "gather": gather, "opt_s": opt,
            "dp_exposed_s": dp_exposed + gather_exposed}


def _cnn_step(model, hw, setup: TrainingSetup, c: Layout, rb, eff, topo, global_batch, peak) -> StepTime:
    """Non-transformers: FLOPs at a large-GEMM efficiency x CNN_GEMM_SHARE, plus the
    gradient all-reduce overlapped with backward."""
    plan, n_acc = c, c.n_acc
    flops_mb = 3 * model.fwd_flops_per_sample * c.micro_batch
    t_mb = flops_mb / (peak * 1e12 * eff.gemm_max * CNN_GEMM_SHARE)
    grads = model.params_total * rb.grad
    dp_comm = float(network.all_reduce_s(grads, plan.dp, topo, min(plan.dp, plan.gpus_per_node))) if plan.dp > 1 else 0
    opt_s = compute.optimizer_step_s(model.params_total, setup.optimizer, rb, setup.framework, hw.gpu, eff,
                                     setup.optimizer_impl, 0)
    step = n_acc * t_mb + max(0.0, dp_comm - LAST_BACKWARD_SHARE * t_mb) + opt_s
    return StepTime(step_s=step, parts={"compute": n_acc * t_mb, "data_parallel_comm_exposed": step - n_acc * t_mb - opt_s,
                                        "optimizer_step": opt_s},
                    micro_batches=n_acc, global_batch=global_batch, tokens_per_step=global_batch,
                    model_flops_per_step=flops_mb * n_acc * plan.dp, hw_flops_per_step=flops_mb * n_acc * plan.dp,
                    peak_tflops=peak, gpus=plan.gpus,
                    no_overlap_efficiency=(n_acc * t_mb + opt_s) / (n_acc * t_mb + opt_s + dp_comm),
                    comm_s=dp_comm, compute_s=n_acc * t_mb + opt_s)
