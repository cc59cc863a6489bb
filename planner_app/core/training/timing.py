"""Step time, throughput, time to train, cost; inference speed.

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

import math
from dataclasses import dataclass, field

import numpy as np

from planner_app.core.arrays import is_array, maximum, where
from planner_app.core.hardware import compute, network
from planner_app.core.hardware.network import group_per_node
from planner_app.core.models.flops import forward_flops_per_token, training_flops_per_token
from planner_app.core.models.trace import factors
from planner_app.core.plans.cost import DEFAULT_CNY_PER_USD, DEFAULT_MIX, energy_kwh, hourly_prices_usd, mix_price
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training import checkpoint, memory
from planner_app.core.training.activations import model_profiles, window_mask
from planner_app.core.training.memory import RECOMPUTE_CODES, Layout
from planner_app.core.training.setup import grad_accum_steps, recipe_bytes, validate_plan_for_model
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
    parts: dict = field(default_factory=dict)  # where the time goes (seconds per step)
    micro_batches: int = 1
    global_batch: int = 1
    tokens_per_step: float = 0.0
    model_flops_per_step: float = 0.0
    hw_flops_per_step: float = 0.0
    peak_tflops: float = 0.0
    gpus: int = 1
    no_overlap_efficiency: float = 1.0
    comm_s: float = 0.0
    compute_s: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.step_s

    @property
    def mfu(self) -> float:
        return self.model_flops_per_step / (self.step_s * self.gpus * self.peak_tflops * 1e12)

    @property
    def hfu(self) -> float:
        return self.hw_flops_per_step / (self.step_s * self.gpus * self.peak_tflops * 1e12)


def step_time(model, hw, setup, plan, topo=None) -> StepTime:
    """Time of one optimizer step over the global batch."""
    validate_plan_for_model(model, setup, plan)
    rb = recipe_bytes(setup.recipe, setup.framework)
    eff = hw.efficiency(setup.framework)
    topo = topo or hw.topology(plan.gpus_per_node)
    n_acc = grad_accum_steps(setup, plan)
    global_batch = setup.global_batch or setup.micro_batch * plan.dp * plan.ep
    tokens_step = global_batch * setup.seq_len
    lora = setup.lora(model)
    model_f, hw_f = training_flops_per_token(model, setup.seq_len, setup.recompute, lora)
    peak = hw.gpu.peak_tflops(rb.gemm_bits)
    if not model.is_transformer:
        return _cnn_step(model, hw, setup, plan, rb, eff, topo, n_acc, global_batch, peak)
    c = Layout.of(setup, plan, n_acc)
    s = step_breakdown(model, hw, rb, eff, topo, c, _layer_times(model, hw.gpu, eff, setup, plan, rb, lora),
                       setup.optimizer, setup.framework, setup.offload, plan.gpus_per_node, setup.optimizer_impl, lora)
    slow = s["slow"]
    compute_s = n_acc * (slow["compute"] + slow["recompute"]) + s["opt_s"]
    comm_total = n_acc * (slow["tp_comm"] + slow["ep_comm"] + slow["cp_comm"] + s["p2p"]) + s["dp_comm"] + s["gather"]
    return StepTime(step_s=s["step_s"], parts=s["parts"], micro_batches=n_acc, global_batch=global_batch,
                    tokens_per_step=tokens_step, model_flops_per_step=model_f * tokens_step,
                    hw_flops_per_step=hw_f * tokens_step, peak_tflops=peak, gpus=plan.gpus,
                    no_overlap_efficiency=compute_s / (compute_s + comm_total) if comm_total else 1.0,
                    comm_s=comm_total, compute_s=compute_s)


def _layer_times(model, gpu, eff, setup, plan, rb, lora=None) -> dict:
    """The parts' layer times at this configuration (``part_times`` on Python numbers)."""
    prof = model_profiles(model, rb.act_kind, rb.grad, setup.attention, setup.framework,
                          window_mask(model, setup.seq_len), setup.recompute == "selective", setup.recipe == "fp8",
                          lora)
    tokens_mb = setup.micro_batch * setup.seq_len / plan.cp
    f = factors(tokens_mb, setup.seq_len, plan.tp, plan.sequence_parallel, plan.tp)
    return part_times(model, prof, gpu, eff, rb, tokens_mb, setup.seq_len, plan.cp, plan.tp, f,
                      RECOMPUTE_CODES[setup.recompute])


def part_times(model, prof, gpu, eff, rb, tokens, seq, cp, tp, f, recompute) -> dict:
    """(fwd, bwd, recompute) seconds per layer and micro-batch of each part, or None for a
    part the model lacks; array-generic (``compute.layer_time``). Context parallelism splits
    the queries; every query still attends to the whole sequence (ring attention), so
    attention FLOPs use the full length; embedding and head see the local tokens and are
    not recomputed."""
    head_dim = model.head_dim if model.arch != "deepseek" else model.qk_nope_dim + model.qk_rope_dim
    out = {}
    for part, seq_attn, rec in (("dense", seq, recompute), ("moe", seq, recompute),
                                ("embed", seq / cp, 0), ("head", seq / cp, 0)):
        p = getattr(prof, part)
        out[part] = p and compute.layer_time(p, gpu, eff, tokens, seq_attn, tp, rb.gemm_bits, head_dim, rec, f,
                                             model.arch != "bert")
    return out


def _pick(cond, a, b):
    """``a()`` where ``cond`` holds, else ``b()``: per column for arrays; for a scalar condition
    only the branch taken runs (the single estimate skips collectives it does not need)."""
    if is_array(cond):
        return np.where(cond, a(), b())
    return float(a() if cond else b())


def _when(cond, a):
    return _pick(cond, a, lambda: 0.0)


def layer_comm(model, rb, c, topo, gpus_per_node: int, first_fwd):
    """Exposed communication per layer and micro-batch: (tp, ep, cp) seconds. Tensor
    parallelism: 2 all-reduces forward and 2 backward; with sequence parallelism 2 all-gathers
    and 2 reduce-scatters each way, the bytes of 4 all-reduces (Korthikanti et al. 2022 sec.
    4.2.2). Experts: dispatch and combine all-to-alls, forward and backward. Context
    parallelism: the K/V ring (every query attends to the whole sequence), partly hidden
    behind attention."""
    act_bytes = 2.0 if rb.act_kind != "fp32" else 4.0
    msg = c.tokens * model.hidden * act_bytes
    tp_node = group_per_node(c.tp, 1, gpus_per_node)
    tp_layer = _when(c.tp > 1, lambda: _pick(c.sp, lambda: 8 * network.all_gather_s(msg, c.tp, topo, tp_node),
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


def pipeline(c, t_mb, msg, topo, gpus_per_node: int):
    """(p2p, schedule, bubble) seconds: 1F1B runs m + p - 1 micro-batch slots; interleaving
    with v stages per rank cuts the bubble to (p - 1)/v slots and sends v times as often
    (Narayanan et al. 2021 sec. 2.2)."""
    v = where(c.interleaved, c.vp, 1)
    across = c.tp * c.cp * c.ep * c.dp >= gpus_per_node  # one stage spans whole nodes
    p2p = _when(c.pp > 1, lambda: 2 * network.send_recv_s(msg / where(c.sp, c.tp, 1), across, topo) * v)
    slots = where(c.pp > 1, c.n_acc + (c.pp - 1) / v, c.n_acc)
    return p2p, slots * (t_mb + p2p), (slots - c.n_acc) * (t_mb + p2p)


def replica_params(model, c):
    """(dense, expert) parameters of the larger of the first and last stage's GPUs."""
    d1, e1 = stage_params(model, c.pp, c.tp, c.ep, True, c.pp == 1)
    if not is_array(c.pp) and c.pp == 1:
        return d1, e1
    d2, e2 = stage_params(model, c.pp, c.tp, c.ep, False, True)
    return where(c.pp > 1, maximum(d1, d2), d1), where(c.pp > 1, maximum(e1, e2), e1)


def data_parallel_traffic(model, rb, c, topo, gpus_per_node: int, dense_p, expert_p):
    """(gradient reduction, parameter all-gather) seconds per step: an all-reduce, or under
    ZeRO >= 1 a reduce-scatter then an all-gather of the updated parameters; experts reduce
    over their own replicas."""
    comm = c.d_dense > 1
    dp_node = group_per_node(c.d_dense, c.tp, gpus_per_node)
    dp_comm = _when(comm, lambda: _pick(c.zero == 0,
                                        lambda: network.all_reduce_s(dense_p * rb.grad, c.d_dense, topo, dp_node),
                                        lambda: network.reduce_scatter_s(dense_p * rb.grad, c.d_dense, topo,
                                                                         dp_node)))
    gather = _when(comm & (c.zero > 0), lambda: network.all_gather_s(dense_p * rb.param, c.d_dense, topo, dp_node))
    if model.is_moe:
        e_node = group_per_node(c.d_exp, c.tp * c.cp * c.ep, gpus_per_node)
        dp_comm = dp_comm + _when(comm & (expert_p > 0) & (c.d_exp > 1), lambda: network.all_reduce_s(
            expert_p * rb.grad, c.d_exp, topo, e_node))
    return dp_comm, gather


def exposed_traffic(c, framework: str, dp_comm, gather, t_mb, compute_mb):
    """(reduction, gather) seconds not hidden behind compute. The reduction overlaps the last
    micro-batch's backward (DDP, Megatron's --overlap-grad-reduce) but for a bucket tail;
    ZeRO-3 gathers each layer twice and reduce-scatters once per micro-batch, overlapped
    with the layer's compute (prefetch). DeepSpeed's ZeRO-3 gathers parameter by parameter:
    in Narayanan et al. 2021's Table 2 runs (175B and 530B, 384-2240 A100s) its collectives
    moved ~0.3 of what the fabric's bus bandwidth allows (docs/validation.md)."""
    per_mb = 2 * gather + dp_comm
    if framework == "deepspeed":
        per_mb = per_mb / DEEPSPEED_ZERO3_BW_FRACTION
    overlap = ZERO3_OVERLAP.get(framework, ZERO3_OVERLAP_DEFAULT)
    zero3 = (c.zero == 3) & (c.d_dense > 1)
    dp_exposed = where(zero3, c.n_acc * maximum(0.0, per_mb - overlap * t_mb),
                       maximum(0.0, dp_comm - compute_mb * LAST_BACKWARD_SHARE) + DP_EXPOSED_FRACTION * dp_comm)
    gather_exposed = where(zero3 | (gather <= 0), 0.0, maximum(0.0, gather - PARAM_GATHER_OVERLAP * t_mb))
    return dp_exposed, gather_exposed


def optimizer_s(c, params, optimizer: str, rb, framework: str, gpu, eff, offload: str, impl: str = "foreach",
                tensors=0):
    """The optimizer step over this GPU's (ZeRO-sharded) parameters; none on the GPU under
    ZeRO-Offload. ``tensors``: the trainable parameter tensors of the model (a pipeline stage holds
    its share)."""
    if offload != "none":
        return 0.0
    local = params / where(c.zero >= 1, c.d_dense, 1)
    return compute.optimizer_step_s(local, optimizer, rb, framework, gpu, eff, impl, tensors / c.pp)


def lora_replica(model, rb, c, lora):
    """(trainable parameters, byte table of what is trained, frozen bytes) of the larger of the first
    and last stage's GPUs under LoRA: only the adapters' gradients are reduced and their states
    stepped; ZeRO-3 gathers the frozen base too."""
    first = memory.adapter_params(model, lora, c, True), memory.frozen_bytes(model, rb, lora, c, True, c.pp == 1)
    last = memory.adapter_params(model, lora, c, False), memory.frozen_bytes(model, rb, lora, c, False, True)
    n, frozen = (where(c.pp > 1, maximum(a, b), a) for a, b in zip(first, last))
    return n, memory.trainable_bytes(rb, lora), frozen


def step_breakdown(model, hw, rb, eff, topo, c, times: dict, optimizer, framework, offload, gpus_per_node,
                   impl: str = "foreach", lora=None) -> dict:
    """The step from the per-layer times, shared by ``step_time`` and ``sweep_time``."""
    first_fwd = (times["dense"] or times["moe"])[0]
    comm = layer_comm(model, rb, c, topo, gpus_per_node, first_fwd)
    slow = slowest_stage(c, stage_parts(model, c, times, comm, True, c.pp == 1),
                         stage_parts(model, c, times, comm, False, True))
    t_mb = sum(slow.values())
    p2p, pipeline_s, bubble_s = pipeline(c, t_mb, comm[3], topo, gpus_per_node)
    if lora is None:
        dense_p, expert_p = replica_params(model, c)
        dp_comm, gather = data_parallel_traffic(model, rb, c, topo, gpus_per_node, dense_p, expert_p)
    else:
        dense_p, rb, frozen = lora_replica(model, rb, c, lora)
        expert_p = 0.0
        dp_comm, gather = data_parallel_traffic(model, rb, c, topo, gpus_per_node, dense_p, expert_p)
        dp_node = group_per_node(c.d_dense, c.tp, gpus_per_node)
        gather = where((c.zero == 3) & (c.d_dense > 1),
                       gather + network.all_gather_s(frozen, maximum(c.d_dense, 2), topo, dp_node), gather)
    dp_exposed, gather_exposed = exposed_traffic(c, framework, dp_comm, gather, t_mb, slow["compute"])
    if offload != "none":  # ZeRO-Offload: gradients to the host and parameters back over PCIe each step
        dp_exposed = dp_exposed + (dense_p + expert_p) * (rb.grad + rb.param) / (pcie_gb_s(hw.gpu.pcie_gen) * 1e9)
    tensors = (checkpoint.param_tensor_count(model) if lora is None
               else lora.adapter_tensors(model.dense_mlp_layers, model.moe_layers))
    opt = optimizer_s(c, dense_p + expert_p, optimizer, rb, framework, hw.gpu, eff, offload, impl, tensors)
    n = c.n_acc
    parts = {"compute": n * slow["compute"], "recompute": n * slow["recompute"],
             "tensor_parallel_comm": n * slow["tp_comm"], "expert_parallel_comm": n * slow["ep_comm"],
             "context_parallel_comm": n * slow["cp_comm"], "pipeline_p2p": n * p2p, "pipeline_bubble": bubble_s,
             "data_parallel_comm_exposed": dp_exposed + gather_exposed, "optimizer_step": opt}
    return {"step_s": pipeline_s + dp_exposed + gather_exposed + opt, "parts": parts, "slow": slow, "t_mb": t_mb,
            "p2p": p2p, "bubble_s": bubble_s, "dp_comm": dp_comm, "gather": gather, "opt_s": opt,
            "dp_exposed_s": dp_exposed + gather_exposed}


def _cnn_step(model, hw, setup, plan, rb, eff, topo, n_acc, global_batch, peak) -> StepTime:
    """Non-transformers: FLOPs at a large-GEMM efficiency x CNN_GEMM_SHARE, plus the
    gradient all-reduce overlapped with backward."""
    flops_mb = 3 * model.fwd_flops_per_sample * setup.micro_batch
    t_mb = flops_mb / (peak * 1e12 * eff.gemm_max * CNN_GEMM_SHARE)
    grads = model.params_total * rb.grad
    dp_comm = float(network.all_reduce_s(grads, plan.dp, topo, min(plan.dp, plan.gpus_per_node))) if plan.dp > 1 else 0
    opt_s = compute.optimizer_step_s(model.params_total, setup.optimizer, rb, setup.framework, hw.gpu, eff)
    step = n_acc * t_mb + max(0.0, dp_comm - LAST_BACKWARD_SHARE * t_mb) + opt_s
    return StepTime(step_s=step, parts={"compute": n_acc * t_mb, "data_parallel_comm_exposed": step - n_acc * t_mb - opt_s,
                                        "optimizer_step": opt_s},
                    micro_batches=n_acc, global_batch=global_batch, tokens_per_step=global_batch,
                    model_flops_per_step=flops_mb * n_acc * plan.dp, hw_flops_per_step=flops_mb * n_acc * plan.dp,
                    peak_tflops=peak, gpus=plan.gpus, comm_s=dp_comm, compute_s=n_acc * t_mb + opt_s)


def add_training_time(out: dict, model, hw, setup, plan, overrides) -> StepTime:
    """Fill the ``flops``, ``time`` and ``cost`` keys of an estimate; returns the model's
    step time (before any --mfu / --achieved-tflops override) for the advice to compare with."""
    st = step_time(model, hw, setup, plan)
    step_s = st.step_s
    assumptions = out["assumptions"]
    if overrides.mfu:
        step_s = st.model_flops_per_step / (overrides.mfu * st.gpus * st.peak_tflops * 1e12)
        assumptions.append(Text(QT_TRANSLATE_NOOP("Engine", "step time from --mfu {mfu:g} (model FLOPs over peak), "
                                                            "not the model"), mfu=overrides.mfu))
    elif overrides.achieved_tflops:
        step_s = st.hw_flops_per_step / (overrides.achieved_tflops * 1e12 * st.gpus)
        assumptions.append(Text(QT_TRANSLATE_NOOP("Engine", "step time from --achieved-tflops {tflops:g} per GPU, "
                                                            "counting hardware FLOPs (recomputation included) as "
                                                            "Narayanan et al. 2021 do"),
                                tflops=overrides.achieved_tflops))
    scale = step_s / st.step_s
    fwd_tok = forward_flops_per_token(model, setup.seq_len) if model.is_transformer else model.fwd_flops_per_sample
    out["flops"] = {"per_step": st.model_flops_per_step, "hardware_per_step": st.hw_flops_per_step,
                    "per_token_forward": fwd_tok,
                    "six_nd_per_step": 6.0 * model.params_active * st.tokens_per_step,
                    "peak_tflops_per_gpu": st.peak_tflops}
    tokens_per_s = st.tokens_per_step / step_s
    mfu = st.model_flops_per_step / (step_s * st.gpus * st.peak_tflops * 1e12)
    time = {"step_s": step_s, "tokens_per_s": tokens_per_s, "tokens_per_s_per_gpu": tokens_per_s / st.gpus,
            "mfu": mfu, "hfu": st.hw_flops_per_step / (step_s * st.gpus * st.peak_tflops * 1e12),
            "tflops_per_gpu": st.model_flops_per_step / step_s / st.gpus / 1e12,
            "micro_batches_per_step": st.micro_batches, "global_batch": st.global_batch,
            "breakdown_s": {k: v * scale for k, v in st.parts.items()},
            "no_overlap_efficiency": st.no_overlap_efficiency}
    out["time"] = time
    cost = {}
    if setup.tokens:
        train_s = setup.tokens / tokens_per_s
        time["train_s"] = train_s
        time["train_days"] = train_s / 86400
        hours = train_s / 3600
        cost["gpu_hours"] = hours * st.gpus
        cost["energy_kwh"] = energy_kwh(st.gpus, hw.gpu.tdp_w or 700.0, hours)
        if hw.instance is not None:
            inst = hw.instance
            n_inst = math.ceil(st.gpus / inst.gpu_count)
            per_hour = hourly_prices_usd(inst.prices, getattr(overrides, "cny_per_usd", DEFAULT_CNY_PER_USD))
            cost["instances"] = n_inst
            cost["instance_hours"] = n_inst * hours
            cost["usd_by_price"] = {k: (v * n_inst * hours if v is not None else None) for k, v in per_hour.items()}
            mix = getattr(overrides, "price_mix", None) or DEFAULT_MIX
            blended = mix_price(per_hour, mix)
            cost["mix"] = {k: getattr(mix, k) for k in ("on_demand", "reserved_1yr", "reserved_3yr", "spot")}
            cost["usd_mix"] = blended * n_inst * hours if blended is not None else None
            basis = getattr(overrides, "price_basis", None)
            if basis is not None:  # asked for one price: that price or none, never another one
                usd = per_hour.get(basis)
                cost["usd"] = usd * n_inst * hours if usd is not None else None
                cost["usd_price_basis"] = basis
            else:
                od = per_hour.get("on_demand")
                usd = od if od is not None else next((v for v in per_hour.values() if v is not None), None)
                if usd is not None:
                    cost["usd"] = usd * n_inst * hours
                    cost["usd_price_basis"] = "on_demand" if od is not None else "first known price"
            cost["currency_source"] = inst.prices.currency
            cost["price_date"] = inst.prices.date
        elif getattr(overrides, "usd_per_gpu_hour", None):
            cost["usd"] = overrides.usd_per_gpu_hour * cost["gpu_hours"]
    out["cost"] = cost
    if "gpu_hours" not in cost and setup.tokens == 0:
        out["assumptions"].append(Text(QT_TRANSLATE_NOOP("Engine", "no --tokens: time to train and cost need a token "
                                                                   "budget")))
    return st
