"""Training memory per GPU: the step's timeline and its peak, broken down.

The peak is the moment of the step where the most is live, as
``torch.cuda.max_memory_allocated`` reports it on the most loaded GPU. The step is walked
moment by moment for the most loaded pipeline stages: the forward through the embedding,
every layer and the loss; the backward in reverse; the optimizer step. Activations and
transients come from the simulated layer profiles (``activations.py``); model states from
the recipe's byte table, sharded as ZeRO (Rajbhandari et al. 2020, sec. 5.1-5.3) or FSDP
shards them; the pipeline's first stage holds the activations of its in-flight
micro-batches (1F1B: min(pp, micro-batches); interleaved: pp(1 + (pp-1)/(pp v)),
Korthikanti et al. 2022 sec. 4.2.3).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from planner_app.core.activations import model_profiles
from planner_app.core.errors import InputError
from planner_app.core.setup import (ParallelPlan, TrainingSetup, grad_accum_steps, optimizer_state_bytes_per_param,
                                    recipe_bytes, validate_plan_for_model)
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.trace import SLOTS, W, factors

# Components of the breakdown, in display order. "other" holds workspaces and buffers.
COMPONENTS = ("parameters", "gradients", "optimizer_states", "master_weights", "activations",
              "logits_and_loss", "autocast_weight_cache", "zero_gather_buffers", "temporaries",
              "optimizer_temporaries", "other")

from planner_app.core.states import (CUBLAS_WORKSPACE_BYTES, CUDA_CONTEXT_BYTES, DS_BUCKET_ELEMS,  # noqa: E402,F401
                                     FRAGMENTATION, FRAGMENTATION_RECOMPUTE, adafactor_state_bytes, device_bytes,
                                     device_overhead, model_states, nccl_buffer_bytes, shard, stage_layers,
                                     stage_params)

# Free memory a plan should keep beyond the estimate before it is called comfortable (users
# set their own in Settings): 2.5x the engine's largest memory error on the 21 measured H200
# runs (2.0%, docs/validation.md), for allocator fragmentation and framework-version variance
# the estimate cannot see. Below it a plan that fits is "tight".
DEFAULT_MIN_HEADROOM_FRACTION = 0.05
MEMORY_VERDICTS = ("fits", "tight", "does_not_fit")


def memory_verdict(device_bytes: float, capacity_bytes: float,
                   min_headroom_fraction: float = DEFAULT_MIN_HEADROOM_FRACTION) -> str:
    """"fits" (at least ``min_headroom_fraction`` of the GPU stays free), "tight" (fits with
    less free than that) or "does_not_fit"."""
    if not 0 <= min_headroom_fraction < 1:
        raise InputError("min_headroom", f"must be from 0 to 99%; got {min_headroom_fraction * 100:g}%")
    if device_bytes > capacity_bytes:
        return "does_not_fit"
    return "fits" if capacity_bytes - device_bytes >= min_headroom_fraction * capacity_bytes else "tight"


@dataclass
class MemoryResult:
    """Per-GPU training memory. ``breakdown`` sums exactly to ``peak_bytes``."""

    peak_bytes: float
    breakdown: dict
    peak_phase: str
    peak_stage: str
    phase_peaks: dict
    activations_per_layer_bytes: float
    overhead: dict  # outside the allocator's peak: CUDA context, NCCL, fragmentation reserve
    device_bytes: float  # peak + overhead: what the GPU must have
    host_bytes: float  # CPU memory for offloaded states
    capacity_bytes: float | None = None
    assumptions: list = field(default_factory=list)

    @property
    def fits(self) -> bool | None:
        if self.capacity_bytes is None:
            return None
        return self.device_bytes <= self.capacity_bytes

    @property
    def headroom_bytes(self) -> float | None:
        if self.capacity_bytes is None:
            return None
        return self.capacity_bytes - self.device_bytes


def _zero() -> dict:
    return dict.fromkeys(COMPONENTS, 0.0)


def _total(d: dict) -> float:
    return sum(d.values())


_COMPACT: dict = {}


def _undominated(tot: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``tot`` (events, SLOTS) that no other row dominates: row j
    dominates row i when it is >= in every slot and > in one (of equal rows the first
    stays). All pairs at once: a Python loop over pairs cost ~50 ms of a 0.1 s estimate."""
    n = len(tot)
    ge = (tot[:, None, :] >= tot[None, :, :]).all(axis=2)  # ge[j, i]: row j >= row i everywhere
    gt = (tot[:, None, :] > tot[None, :, :]).any(axis=2)
    order = np.arange(n)
    earlier = order[:, None] < order[None, :]  # j before i: the tie-break between equal rows
    dominated = (ge & (gt | earlier) & (order[:, None] != order[None, :])).any(axis=0)
    return np.flatnonzero(~dominated)


def _compact(events: np.ndarray) -> np.ndarray:
    """(events, 4, SLOTS): the events no other event dominates in every slot (with
    non-negative factors they can never be the peak), split into activations (W slot
    zeroed), weight cache (W slot only), parameter gradients and everything else."""
    key = id(events)
    hit = _COMPACT.get(key)
    if hit is not None and hit[0] is events:
        return hit[1]
    ev = events[_undominated(events.sum(axis=1))]
    acts = ev[:, 0, :].copy()
    acts[:, W] = 0.0
    cache = np.zeros_like(acts)
    cache[:, W] = ev[:, 0, W]
    out = np.stack([acts, cache, ev[:, 1, :], ev[:, 2, :]], axis=1)
    _COMPACT[key] = (events, out)
    return out


_PROFILE_MATRIX: dict = {}


def _profile_matrix(p):
    """One matrix whose product with a factor vector gives everything ``_Eval`` needs:
    saved, saved (W slot), output, checkpointed input, then the compact fwd, no-grad and
    bwd events (4 rows each)."""
    hit = _PROFILE_MATRIX.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1], hit[2]
    w_only = np.zeros(SLOTS)
    w_only[W] = p.saved[W]
    rows = [p.saved, w_only, p.output, p.ckpt_input]
    spans = []
    for events in (p.fwd_events, p.nograd_events, p.bwd_events):
        comp = _compact(events)
        start = len(rows)
        rows.extend(comp.reshape(-1, SLOTS))
        spans.append((start, len(comp)))
    m = np.array(rows)
    _PROFILE_MATRIX[id(p)] = (p, m, spans)
    return m, spans


class _Eval:
    """A profile evaluated at one configuration's factor vector."""

    def __init__(self, p, f: np.ndarray):
        m, spans = _profile_matrix(p)
        v = (m @ f).tolist()
        self.saved, self.saved_w, self.output, self.ckpt_input = v[0], v[1], v[2], v[3]
        self.wgrads = float(p.weight_grads * f[W])
        self.fwd, self.nograd, self.bwd = (self._peak(v, start, n) for start, n in spans)

    @staticmethod
    def _peak(v: list, start: int, n: int) -> dict:
        """The event with the highest level, split into activations / cache / grads / other."""
        best, best_i = -1.0, start
        for i in range(start, start + 4 * n, 4):
            t = v[i] + v[i + 1] + v[i + 2] + v[i + 3]
            if t > best:
                best, best_i = t, i
        return {"act": v[best_i], "cache": v[best_i + 1], "grads": v[best_i + 2], "other": v[best_i + 3]}


def training_memory(model, setup: TrainingSetup, plan: ParallelPlan, capacity_bytes: float | None = None,
                    host_memory_limit: float | None = None) -> MemoryResult:
    """Peak memory per GPU of one training step (see the module docstring)."""
    validate_plan_for_model(model, setup, plan)
    rb = recipe_bytes(setup.recipe, setup.framework)
    n_acc = grad_accum_steps(setup, plan)
    assumptions = []
    if not model.is_transformer:
        return _cnn_memory(model, setup, plan, rb, n_acc, capacity_bytes)

    stages = [("first pipeline stage", True, plan.pp == 1)]
    if plan.pp > 1:
        stages.append(("last pipeline stage", False, True))
    results = [_stage_memory(model, setup, plan, rb, n_acc, name, first, last, assumptions)
               for name, first, last in stages]
    best = max(results, key=lambda r: r[0])
    peak, breakdown, phase, stage_name, phase_peaks, host, per_layer = best
    overhead = _overhead(setup, plan, peak)
    device = device_bytes(peak, overhead)
    return MemoryResult(peak_bytes=peak, breakdown=breakdown, peak_phase=phase, peak_stage=stage_name,
                        phase_peaks=phase_peaks, activations_per_layer_bytes=per_layer, overhead=overhead,
                        device_bytes=device, host_bytes=host, capacity_bytes=capacity_bytes,
                        assumptions=assumptions)


def _overhead(setup: TrainingSetup, plan: ParallelPlan, peak: float) -> dict:
    return {k: float(v) for k, v in device_overhead(peak, plan.gpus, setup.recompute == "full").items()}


def _stage_layers(model, pp: int, first: bool) -> tuple[int, int]:
    return tuple(int(x) for x in stage_layers(model, pp, first))


def _stage_params(model, plan: ParallelPlan, first: bool, last: bool) -> tuple[float, float]:
    dense, expert = stage_params(model, plan.pp, plan.tp, plan.ep, first, last)
    return float(dense), float(expert)


def _stage_memory(model, setup, plan, rb, n_acc, stage_name, first, last, assumptions):
    fw = setup.framework
    dense_p, expert_p = _stage_params(model, plan, first, last)
    d_dense, d_exp = plan.dense_replicas, plan.expert_replicas
    z = plan.zero
    n_local = dense_p + expert_p
    params, grads, master, opt = (float(x) for x in model_states(dense_p, expert_p, rb, setup.optimizer, z,
                                                                  d_dense, d_exp))
    if setup.optimizer == "adafactor":
        opt = adafactor_state_bytes(model) / plan.tp / plan.pp / (d_dense if z >= 1 else 1)
    host = 0.0
    if setup.offload in ("optimizer", "params"):
        host += master + opt + grads  # ZeRO-Offload keeps fp32 states and gradients on the CPU
        master = opt = 0.0
        grads_on_gpu = 0.0
    else:
        grads_on_gpu = grads
    if setup.offload == "params":
        host += params
        params = 0.0

    # Optimizer-step temporaries. PyTorch's foreach AdamW (torch/optim/adam.py,
    # _multi_tensor_adam) allocates sqrt(exp_avg_sq) for all parameters at once; fused
    # Adam kernels (Megatron/Apex, DeepSpeed) need none; Adafactor builds grad^2 per tensor.
    opt_temp = 0.0
    if setup.offload == "none" and fw == "pytorch":
        if setup.optimizer in ("adam", "adamw"):
            opt_temp = float(shard(dense_p, expert_p, d_dense, d_exp, z >= 1)) * rb.state
        elif setup.optimizer == "adafactor":
            opt_temp = 2 * 4.0 * model.vocab * model.hidden / plan.tp

    # Framework buffers inside the allocator (only where gradients are communicated)
    buffers = CUBLAS_WORKSPACE_BYTES
    communicating = d_dense > 1
    if communicating and fw == "pytorch" and z == 0:
        buffers += n_local * rb.grad  # DDP gradient buckets (gradient_as_bucket_view=False)
    if communicating and fw == "deepspeed":
        # reduce bucket (reduce_bucket_size; the contiguous IPG buffer of ZeRO-1/2, the flattened
        # all-reduce bucket of stage 0). Updated partitions are all-gathered in place into the
        # flat 16-bit parameter groups (stage_1_and_2.py), needing no extra buffer.
        buffers += min(DS_BUCKET_ELEMS, n_local) * rb.grad
    gather = 0.0
    if (z == 3 and communicating) or setup.offload == "params":
        layer_p = max(model.dense_layer_params() if model.dense_mlp_layers else 0,
                      model.moe_layer_params() if model.moe_layers else 0) / plan.tp
        gather = 2 * layer_p * rb.param  # the layer in use and the prefetched next one (FSDP/ZeRO-3)

    mask_needed = bool(model.sliding_window) and setup.seq_len >= model.sliding_window
    prof = model_profiles(model, rb.act_kind, rb.grad, setup.attention, fw, mask_needed,
                          setup.recompute == "selective", setup.recipe == "fp8")
    tokens = setup.micro_batch * setup.seq_len / plan.cp
    f = factors(tokens, setup.seq_len, plan.tp, plan.sequence_parallel, plan.tp)
    nd, nm = _stage_layers(model, plan.pp, first)
    blocks = [(prof.dense, nd), (prof.moe, nm)]
    blocks = [(_Eval(p, f), c) for p, c in blocks if p is not None and c > 0]
    emb = _Eval(prof.embed, f) if first else None
    head = _Eval(prof.head, f) if last else None
    mask = prof.mask_bytes * tokens * setup.seq_len

    # In-flight micro-batches on this stage
    if plan.pp > 1:
        n_micro = max(n_acc, 1)
        if plan.pp_schedule == "interleaved":
            inflight = plan.pp * (1 + (plan.pp - 1) / (plan.pp * plan.vp))
        else:
            inflight = plan.pp if first else 1
        inflight = min(inflight, n_micro) if first else 1
    else:
        inflight = 1

    ckpt = setup.recompute == "full"
    per_mb_saved = (emb.saved if emb else 0.0) + sum(
        (b.ckpt_input if ckpt else b.saved) * c for b, c in blocks)
    earlier = (inflight - 1) * per_mb_saved
    grads_present = n_acc > 1 or plan.pp > 1
    # Gradients that stay after a layer's backward: its share of the (sharded) gradients, or
    # nothing new when they accumulate into buffers that already exist (accumulation steps,
    # pipeline micro-batches) or leave for the CPU (offload).
    wgrad_shard = 1.0 / (d_dense if z >= 2 else 1)
    if setup.offload != "none" or grads_present:
        wgrad_shard = 0.0

    static = _zero()
    static["parameters"] = params
    static["optimizer_states"] = opt
    static["master_weights"] = master
    static["other"] = buffers
    static["gradients"] = grads_on_gpu if grads_present else 0.0
    moments = []

    def moment(phase, act=0.0, logits=0.0, cache=0.0, grads=0.0, temp=0.0, gath=0.0):
        d = dict(static)
        d["activations"] = act + earlier
        d["logits_and_loss"] = logits
        d["autocast_weight_cache"] = cache
        d["gradients"] += grads
        d["temporaries"] = temp
        d["zero_gather_buffers"] = gath
        moments.append((phase, d))

    amp_cache = prof.autocast_weight_cache
    # ---- forward ------------------------------------------------------------------------
    carry = 0.0  # activations kept from earlier parts of this micro-batch
    cache = 0.0  # autocast's weight cache under recomputation (cleared when autocast exits)
    fmask = mask
    if emb:
        e = emb.fwd
        moment("forward", act=e["act"], temp=e["other"] + fmask, cache=e["cache"])
        carry += emb.saved
    for b, c in blocks:
        if ckpt:
            ev = b.nograd
            if amp_cache:
                cache_here = cache + c * max(b.saved_w, 0.0)
            else:
                cache_here = 0.0
            moment("forward", act=carry + (c - 1) * b.ckpt_input, temp=ev["act"] + ev["other"] + fmask,
                   cache=cache_here, gath=gather)
            carry += c * b.ckpt_input
            cache = cache_here
        else:
            ev = b.fwd
            moment("forward", act=carry + (c - 1) * (b.saved - b.saved_w) + ev["act"],
                   cache=(c - 1) * b.saved_w + ev["cache"] + cache, temp=ev["other"] + fmask, gath=gather)
            carry += c * (b.saved - b.saved_w)
            cache += c * b.saved_w
    if head:
        ev = head.fwd
        moment("forward", act=carry, logits=ev["act"], cache=cache + ev["cache"], temp=ev["other"] + fmask)
    # ---- backward -----------------------------------------------------------------------
    if ckpt:
        cache = 0.0  # autocast exited: the forward's weight copies are gone
    bmask = mask if ckpt else 0.0  # recomputation keeps the mask alive in its closures
    wg_done = 0.0
    if head:
        ev = head.bwd
        moment("backward", act=carry, logits=ev["act"], cache=cache + ev["cache"], grads=ev["grads"],
               temp=ev["other"] + bmask)
        wg_done += head.wgrads * wgrad_shard
    for b, c in reversed(blocks):
        per = b.ckpt_input if ckpt else (b.saved - b.saved_w)
        per_w = 0.0 if ckpt else b.saved_w
        carry_before = carry - c * per
        cache_before = cache - c * per_w
        for j in (c - 1, 0):  # the block's last and first layer bound the linear ramp
            if ckpt:
                rc = b.fwd  # the recompute forward, with the incoming gradient alive
                moment("backward (recompute)", act=carry_before + j * per + rc["act"],
                       cache=rc["cache"], grads=wg_done + (c - 1 - j) * b.wgrads * wgrad_shard,
                       temp=rc["other"] + b.output + bmask, gath=gather)
            ev = b.bwd
            moment("backward", act=carry_before + j * per + ev["act"],
                   cache=cache_before + j * per_w + ev["cache"],
                   grads=wg_done + (c - 1 - j) * b.wgrads * wgrad_shard + ev["grads"],
                   temp=ev["other"] + bmask, gath=gather)
        carry = carry_before
        cache = cache_before
        wg_done += c * b.wgrads * wgrad_shard
    if emb:
        ev = emb.bwd
        moment("backward", act=ev["act"], grads=wg_done + ev["grads"], temp=ev["other"])
    # ---- optimizer step -----------------------------------------------------------------
    d = dict(static)
    d["gradients"] = grads_on_gpu
    d["optimizer_temporaries"] = opt_temp
    moments.append(("optimizer step", d))

    phase_peaks = {}
    for phase, d in moments:
        key = phase.split(" ")[0]
        phase_peaks[key] = max(phase_peaks.get(key, 0.0), _total(d))
    phase, best = max(moments, key=lambda m: _total(m[1]))
    per_layer = blocks[0][0].saved if blocks else 0.0
    return _total(best), best, phase, stage_name, phase_peaks, host, per_layer


def _cnn_memory(model, setup, plan, rb, n_acc, capacity_bytes) -> MemoryResult:
    """Non-transformer models: states from the parameter count, activations from the
    given bytes per sample (fp32; halved when activations are 16-bit)."""
    p = model.params_total
    d = plan.dp
    z = plan.zero
    act = model.act_bytes_per_sample_fp32 * setup.micro_batch * (1.0 if rb.act_kind == "fp32" else 0.5)
    br = _zero()
    br["parameters"] = p * rb.param / (d if z >= 3 else 1)
    br["gradients"] = p * rb.grad / (d if z >= 2 else 1)
    br["optimizer_states"] = p * optimizer_state_bytes_per_param(setup.optimizer, rb.state) / (d if z >= 1 else 1)
    br["master_weights"] = p * rb.master / (d if z >= 1 else 1)
    br["activations"] = act
    br["other"] = CUBLAS_WORKSPACE_BYTES
    peak = _total(br)
    overhead = _overhead(setup, plan, peak)
    return MemoryResult(peak_bytes=peak, breakdown=br, peak_phase="backward", peak_stage="single stage",
                        phase_peaks={"backward": peak}, activations_per_layer_bytes=0.0, overhead=overhead,
                        device_bytes=device_bytes(peak, overhead), host_bytes=0.0, capacity_bytes=capacity_bytes,
                        assumptions=[Text(QT_TRANSLATE_NOOP("Engine", "non-transformer: activations from the preset's "
                                                                       "bytes per sample"))])


__all__ = ["training_memory", "MemoryResult", "COMPONENTS", "SLOTS"]
