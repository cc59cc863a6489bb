"""Training memory per GPU: the step's timeline and its peak, broken down.

The peak is the moment of the step where the most is live, as
``torch.cuda.max_memory_allocated`` reports it on the most loaded GPU. The step is walked
moment by moment for the most loaded pipeline stages: the forward through the embedding,
every layer and the loss; the backward in reverse; the optimizer step. Activations and
transients come from the simulated layer profiles (``activations.py``); model states from
the recipe's byte table, sharded as ZeRO (Rajbhandari et al. 2020, sec. 5.1-5.3) or FSDP
shards them, over all data-parallel ranks or, under hybrid sharding (HSDP), over the shard group
(Layout.s_dense); the pipeline's first stage holds the activations of its in-flight
micro-batches (1F1B: min(pp, micro-batches); interleaved: pp(1 + (pp-1)/(pp v)),
Korthikanti et al. 2022 sec. 4.2.3).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from planner_app.core.arrays import logical_not, maximum, minimum, where
from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
from planner_app.core.memo import IdentityMemo
from planner_app.core.models.trace import SLOTS, W, factors
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training.activations import model_profiles, window_mask
from planner_app.core.training.lora import NF4_BYTES_PER_PARAM
from planner_app.core.training.setup import (
    PAGED_OPTIMIZERS,
    Layout,
    ParallelPlan,
    TrainingSetup,
    optimizer_state_bytes_per_param,
    recipe_bytes,
    validate_plan_for_model,
)
from planner_app.core.training.states import (
    ADAFACTOR_STATE_BYTES,
    DS_BUCKET_ELEMS,
    adafactor_state_bytes,
    device_bytes,
    device_overhead,
    model_states,
    root_params,
    shard,
    stage_layers,
    stage_params,
)

# Components of the breakdown, in display order. "other" holds workspaces and buffers.
COMPONENTS = ("parameters", "gradients", "optimizer_states", "master_weights", "activations",
              "logits_and_loss", "autocast_weight_cache", "zero_gather_buffers", "temporaries",
              "optimizer_temporaries", "other")


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
    paged_bytes: float = 0.0  # paged optimizer states in CUDA managed memory (outside the peak and fits)

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


# Memos keyed by the identity of a layer profile's arrays (unhashable), as many as the profile
# cache holds (activations.model_profiles: 512 models x 4 parts x 3 event groups).
MEMO_ENTRIES = 4096
_COMPACT = IdentityMemo(MEMO_ENTRIES)


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
    hit = _COMPACT.get(events)
    if hit is not None:
        return hit
    ev = events[_undominated(events.sum(axis=1))]
    acts = ev[:, 0, :].copy()
    acts[:, W] = 0.0
    cache = np.zeros_like(acts)
    cache[:, W] = ev[:, 0, W]
    out = np.stack([acts, cache, ev[:, 1, :], ev[:, 2, :]], axis=1)
    _COMPACT.put(events, out)
    return out


_PROFILE_MATRIX = IdentityMemo(MEMO_ENTRIES)


def _profile_matrix(p):
    """One matrix whose product with a factor vector gives everything ``_Eval`` needs:
    saved, saved (W slot), output, checkpointed input, then the compact fwd, no-grad and
    bwd events (4 rows each)."""
    hit = _PROFILE_MATRIX.get(p)
    if hit is not None:
        return hit
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
    _PROFILE_MATRIX.put(p, (m, spans))
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


def training_memory(model, setup: TrainingSetup, plan: ParallelPlan, capacity_bytes: float | None = None
                    ) -> MemoryResult:
    """Peak memory per GPU of one training step (see the module docstring)."""
    validate_plan_for_model(model, setup, plan)
    rb = recipe_bytes(setup.recipe, setup.framework)
    c = Layout.of(setup, plan)
    if not model.is_transformer:
        return _cnn_memory(model, setup, c, rb, capacity_bytes)

    stages = [("first pipeline stage", True, c.pp == 1)]
    if c.pp > 1:
        stages.append(("last pipeline stage", False, True))
    results = [_stage_memory(model, setup, c, rb, name, first, last) for name, first, last in stages]
    best = max(results, key=lambda r: r[0])
    peak, breakdown, phase, stage_name, phase_peaks, host, per_layer, paged = best
    overhead = _overhead(c, peak)
    device = device_bytes(peak, overhead)
    return MemoryResult(peak_bytes=peak, breakdown=breakdown, peak_phase=phase, peak_stage=stage_name,
                        phase_peaks=phase_peaks, activations_per_layer_bytes=per_layer, overhead=overhead,
                        device_bytes=device, host_bytes=host, capacity_bytes=capacity_bytes, paged_bytes=paged)


def _overhead(c: Layout, peak: float) -> dict:
    return {k: float(v) for k, v in device_overhead(peak, c.gpus, c.ckpt).items()}


def _stage_layers(model, pp: int, first: bool) -> tuple[int, int]:
    dense, moe = stage_layers(model, pp, first)
    return int(dense), int(moe)


def stage_states(model, setup: TrainingSetup, rb, c: Layout, first: bool, last, lora) -> dict:
    """Parameters, gradients, master weights and optimizer states on one GPU of the stage, and
    what offloading moves to the host (ZeRO-Offload keeps fp32 states and gradients on the
    CPU; parameter offload the 16-bit weights too)."""
    dense_p, expert_p = stage_params(model, c.pp, c.tp, c.ep, first, last)
    if lora is not None:
        return lora_states(model, setup, rb, c, first, last, lora)
    params, grads, master, opt = model_states(dense_p, expert_p, rb, setup.optimizer, c.zero, c.s_dense, c.s_exp)
    fm = fsdp_master_shards(setup, c, rb, lora)  # the fp32 shards are the parameters (no 16-bit shard)
    params, master, grads = (where(fm, master, params), where(fm, 0.0, master),
                             where(fm, grads * FSDP_MASTER_REDUCE_BYTES / rb.grad, grads))
    if setup.optimizer == "adafactor":
        opt = adafactor_state_bytes(model) / c.tp / c.pp / where(c.zero >= 1, c.s_dense, 1)
    host = 0.0
    if setup.offload in ("optimizer", "params"):
        host, master, opt, grads = master + opt + grads, 0.0, 0.0, 0.0
    if setup.offload == "params":
        host, params = host + params, 0.0
    return {"parameters": params, "gradients": grads, "master_weights": master, "optimizer_states": opt,
            "host": host, "dense": dense_p, "expert": expert_p}


def frozen_bytes(model, rb, lora, c: Layout, first: bool, last):
    """Bytes of the frozen base on one GPU of the stage before ZeRO-3: 16- or 32-bit weights as
    the recipe loads them; under QLoRA the layers' linear weights in NF4
    (lora.NF4_BYTES_PER_PARAM) and the rest in 16 bits, or fp32 after
    prepare_model_for_kbit_training."""
    dense_p, expert_p = stage_params(model, c.pp, c.tp, c.ep, first, last)
    nd, nm = stage_layers(model, c.pp, first)
    quant = lora.linear_params(nd, nm) / c.tp if lora.quant else 0.0
    other = 4 if lora.prepare else rb.param
    return (dense_p + expert_p - quant) * other + quant * NF4_BYTES_PER_PARAM


def adapter_params(model, lora, c: Layout, first: bool):
    """LoRA adapter parameters on one GPU of the stage (split like their layers' weights)."""
    return lora.adapter_params(*stage_layers(model, c.pp, first)) / c.tp


def trainable_bytes(rb, lora):
    """The recipe's byte table for what is trained: the adapters (their dtype for weights,
    gradients and torch.optim's states; no master copy)."""
    ab = lora.adapter_bytes
    return replace(rb, param=ab, grad=ab, master=0, state=ab)


def lora_states(model, setup: TrainingSetup, rb, c: Layout, first: bool, last, lora) -> dict:
    """The frozen base (no gradients, no optimizer states) and the adapters with their
    gradients and optimizer states; ZeRO shards them over the data-parallel ranks as for full
    fine-tuning (stage 3 also the frozen base, as FSDP FULL_SHARD does)."""
    base = frozen_bytes(model, rb, lora, c, first, last)
    n = adapter_params(model, lora, c, first)
    ab, d = lora.adapter_bytes, c.s_dense
    params = where(c.zero >= 3, (base + n * ab) / d, base + n * ab)
    grads = where(c.zero >= 2, n / d, n) * ab
    opt = where(c.zero >= 1, n / d, n) * optimizer_state_bytes_per_param(setup.optimizer, ab)
    return {"parameters": params, "gradients": grads, "master_weights": 0.0, "optimizer_states": opt,
            "host": 0.0, "dense": n, "expert": 0.0}


def optimizer_temporaries(model, setup: TrainingSetup, rb, c: Layout, st: dict, lora):
    """PyTorch's foreach AdamW (torch/optim/adam.py, _multi_tensor_adam) allocates
    sqrt(exp_avg_sq) for all parameters at once; the fused kernel (_fused_adamw_) and the fused
    Adam kernels of Megatron/Apex and DeepSpeed need none; the for-loop AdamW
    (_single_tensor_adam) builds sqrt(exp_avg_sq) and its quotient for one tensor at a time, so
    two copies of the largest tensor (H200, Llama-2-7B bf16: +0.51 GB over fused against 0.52
    predicted, tests/data/finetune_runs_h200.json); Adafactor builds grad^2 per tensor (the
    largest: the embedding)."""
    if setup.offload != "none" or setup.framework != "pytorch":
        return 0.0
    if setup.optimizer in ("adam", "adamw"):
        if setup.optimizer_impl == "fused":
            return 0.0
        if setup.optimizer_impl == "forloop":  # the largest trained tensor: an adapter's under LoRA
            largest = lora.largest_adapter_elems / c.tp if lora is not None else largest_tensor_elems(model, c.tp)
            return FORLOOP_TEMP_COPIES * largest * rb.state
        return shard(st["dense"], st["expert"], c.s_dense, c.s_exp, c.zero >= 1) * rb.state
    if setup.optimizer == "adafactor":
        return 2 * ADAFACTOR_STATE_BYTES * model.vocab * model.hidden / c.tp
    return 0.0


FORLOOP_TEMP_COPIES = 2  # sqrt(exp_avg_sq) and its quotient by bias_correction2 (_single_tensor_adam)


def largest_tensor_elems(model, tp):
    """Elements of the model's largest weight on one tensor-parallel rank: the embedding or
    output layer (vocab x hidden), an MLP matrix, or the fused attention projection."""
    ffn = max(model.ffn_hidden or 0, model.expert_ffn_hidden or 0)
    return max(model.vocab * model.hidden, ffn * model.hidden, model.hidden * model.hidden) / tp


def framework_buffers(setup: TrainingSetup, rb, c: Layout, st: dict):
    """Buffers inside the allocator: cuBLAS workspaces, and where gradients are communicated
    DDP's gradient buckets (gradient_as_bucket_view=False) or DeepSpeed's reduce bucket
    (reduce_bucket_size; the contiguous IPG buffer of ZeRO-1/2, the flattened all-reduce bucket
    of stage 0; updated partitions are all-gathered in place, stage_1_and_2.py)."""
    n_local = st["dense"] + st["expert"]
    comm = c.d_dense > 1
    if setup.framework == "pytorch":
        return CUBLAS_WORKSPACE_BYTES + where(comm & (c.zero == 0), n_local * rb.grad, 0.0)
    if setup.framework == "deepspeed":
        return CUBLAS_WORKSPACE_BYTES + where(comm, minimum(DS_BUCKET_ELEMS, n_local) * rb.grad, 0.0)
    return CUBLAS_WORKSPACE_BYTES


def gathered_layer_params(model, c: Layout):
    """Parameters of the largest decoder layer on one tensor-parallel rank (what one all-gather unshards)."""
    return max(model.dense_layer_params() if model.dense_mlp_layers else 0,
               model.moe_layer_params() if model.moe_layers else 0) / c.tp


def gathers_params(setup: TrainingSetup, c: Layout):
    """Parameters are sharded and all-gathered per layer: ZeRO-3/FSDP over more than one rank, or offloaded."""
    return ((c.zero == 3) & (c.s_dense > 1)) | (setup.offload == "params")


def gather_buffers(model, setup: TrainingSetup, rb, c: Layout):
    """FSDP/ZeRO-3 (or parameter offload): the layer in use and the prefetched next one."""
    return where(gathers_params(setup, c), 2 * gathered_layer_params(model, c) * rb.param, 0.0)


# The reduce dtype of FSDP under a master-weight recipe: fp32, MixedPrecisionPolicy(param_dtype=bf16,
# reduce_dtype=float32) as torchtitan configures it (mixed_precision_reduce = "float32",
# torchtitan/config/job_config.py); the sharded parameter is then the fp32 master itself.
FSDP_MASTER_REDUCE_BYTES = 4


@dataclass(frozen=True)
class FsdpTerms:
    """What FSDP2 (``torch.distributed.fsdp.fully_shard`` on each decoder layer, then on the model: the
    root) holds beyond the engine's two gathered layers, from torch/distributed/fsdp/_fully_shard:
    - ``root``: the root group's parameters (embedding, final norm, output layer) stay unsharded from the
      root's pre-forward to its post-backward at the end of the backward: _fsdp_state._lazy_init sets
      the root's ``post_forward_mesh_info = None`` ("the parameters would be freed and all-gathered
      immediately"); FSDP1 keeps the root unsharded after forward too (_runtime_utils._post_forward_reshard);
    - ``layer``: one layer's all-gather output. In the forward, wait_for_unshard keeps the previous
      all-gather's result (comm_ctx.all_gather_state) until the next copy-out, so the last layer's is
      still there at the loss; in the backward the root's pre_backward prefetches the last layer
      (_backward_prefetch) before the output layer's backward;
    - ``rs``: one layer's reduce-scatter input (reduce dtype; foreach_reduce's copy of its unsharded
      gradients), kept in comm_ctx.reduce_scatter_states until the next layer's post_backward and the
      last one until the root's final callback;
    - ``on``: FSDP applies; then also the output layer's gradient stays unsharded until the root's
      post_backward;
    - ``keep``: reshard_after_forward=False, every layer stays unsharded from its forward to its
      post_backward (no all-gather in the backward)."""

    root: Any = 0.0  # bytes (a number, or a column in a search)
    layer: Any = 0.0
    rs: Any = 0.0
    on: Any = False
    keep: Any = False


def fsdp_terms(model, setup: TrainingSetup, rb, c: Layout, first: bool, last, lora, gather) -> FsdpTerms:
    """FsdpTerms of the stage (zeros unless the framework is pytorch and parameters are gathered);
    ``gather``: the engine's two gathered layers, in the dtype they are gathered in."""
    on = (setup.framework == "pytorch") & gathers_params(setup, c)
    if lora is None:
        pb, rs_p, reduce_bytes = rb.param, gathered_layer_params(model, c), (
            FSDP_MASTER_REDUCE_BYTES if rb.master > 0 else rb.grad)
    else:  # the frozen base in its loaded dtype (fp32 after prepare_model_for_kbit_training); adapters reduced
        pb = 4 if lora.prepare else rb.param
        rs_p, reduce_bytes = max(lora.dense_adapter_params, lora.moe_adapter_params) / c.tp, lora.adapter_bytes
    return FsdpTerms(root=where(on, root_params(model, c.pp, c.tp, first, last) * pb, 0.0),
                     layer=where(on, gather / 2, 0.0), rs=where(on, rs_p * reduce_bytes, 0.0),
                     on=on, keep=on & c.no_reshard_after_forward)


def dtensor_tp(model, setup: TrainingSetup, c: Layout):
    """1.0 where tensor parallelism is DTensor's (torch's parallelize_module with torchtitan's Llama plan: a
    PyTorch job, tp > 1), else 0.0: the terms below are what its ops allocate beyond the engine's
    Megatron-like layers."""
    if setup.framework != "pytorch" or model.arch == "bert":
        return 0.0
    return where(c.tp > 1, 1.0, 0.0)


# torch's vocabulary-parallel cross-entropy (torch/distributed/tensor/parallel/loss.py, loss_parallel(),
# what a DTensor tensor-parallel job computes its loss with: torchtitan) runs the nll and log_softmax
# backward as one op, ``(zeros_like(x) + exp(x)) * grad``: beside the saved log_softmax output it holds
# the zeros, their sum with exp(x) and the product, three fp32 logits shards where Hugging Face's loss
# (nll_loss_backward, then _log_softmax_backward_data) holds two (hf_ops.cross_entropy_hf).
LOSS_PARALLEL_EXTRA_SHARDS = 1


def loss_parallel_bytes(model, setup: TrainingSetup, c: Layout):
    """Bytes the vocabulary-parallel loss adds at its backward over the engine's Hugging Face loss: a
    PyTorch (DTensor) job with tensor parallelism; the logits are sharded over the vocabulary."""
    return dtensor_tp(model, setup, c) * LOSS_PARALLEL_EXTRA_SHARDS * model.vocab * c.tokens / c.tp * 4.0


def embedding_full_grad_factor(model, setup: TrainingSetup, c: Layout):
    """How many local embedding gradients the embedding's backward holds beside its own under DTensor
    tensor parallelism: ``tp`` (the whole vocabulary's), else 0. The embedding is vocabulary-sharded
    (RowwiseParallel, weight Shard(0)), but DTensor has no row-wise strategy for its backward
    (torch/distributed/tensor/_ops/_embedding_ops.py, embedding_dense_backward_strategy: all-replicate,
    column-wise, batch, partial), so embedding_dense_backward runs replicated and returns the gradient of the
    whole vocab x hidden table; redistributing it to the weight's Shard(0) copies out the local rows
    (placement_types.py, Shard._select_split_tensor) while the full one is still alive."""
    return dtensor_tp(model, setup, c) * c.tp


def inflight_micro_batches(c: Layout, first: bool):
    """Micro-batches whose activations the stage holds: 1F1B min(pp, micro-batches) on the
    first stage; interleaved pp(1 + (pp-1)/(pp v)) (Korthikanti et al. 2022 sec. 4.2.3)."""
    if not first:
        return 1.0
    per_schedule = where(c.interleaved, c.pp * (1 + (c.pp - 1) / (c.pp * c.vp)), c.pp)
    return where(c.pp > 1, minimum(per_schedule, maximum(c.n_acc, 1)), 1.0)


def grads_persistent(c: Layout, setup: TrainingSetup):
    """Whether the stage's gradient buffers exist for the whole step: they accumulate across
    micro-batches (accumulation steps, pipeline micro-batches), or the framework allocates them
    up front. Megatron-LM's DistributedDataParallel keeps one contiguous fp32 ``main_grad``
    buffer per model chunk from initialisation on (megatron/core/distributed/param_and_grad_buffer.py),
    so its gradients are there at the start of the backward even without accumulation. PyTorch
    creates ``.grad`` in the backward and frees it at zero_grad(set_to_none=True)."""
    return c.grads_present | (setup.framework == "megatron")


def weight_grad_share(setup: TrainingSetup, c: Layout, rb=None, lora=None):
    """Share of a layer's gradients that stays after its backward: its (sharded) gradients, or
    nothing new when they accumulate into buffers that already exist (accumulation steps,
    pipeline micro-batches) or leave for the CPU (offload). FSDP under a master-weight recipe keeps
    the reduce-scattered shard in fp32 (FSDP_MASTER_REDUCE_BYTES) from 16-bit gradients."""
    if setup.offload != "none":
        return 0.0
    widen = where(fsdp_master_shards(setup, c, rb, lora), FSDP_MASTER_REDUCE_BYTES / rb.grad, 1.0) if rb else 1.0
    return where(grads_persistent(c, setup), 0.0, widen / where(c.zero >= 2, c.s_dense, 1))


def fsdp_master_shards(setup: TrainingSetup, c: Layout, rb, lora):
    """FSDP with a master-weight recipe (MixedPrecisionPolicy over fp32 parameters): the fp32 shard is
    both the parameter and the master copy, and its gradient is fp32 (FSDP_MASTER_REDUCE_BYTES)."""
    return (lora is None) & (rb.master > 0) & (setup.framework == "pytorch") & (c.zero == 3) & gathers_params(setup, c)


def saved_per_micro_batch(blocks, emb, ckpt):
    """Activations one micro-batch leaves on the stage for its backward."""
    out = emb.saved if emb is not None else 0.0
    for b, n, _ in blocks:
        out = out + where(ckpt, b.ckpt_input, b.saved) * n
    return out


def forward_moments(blocks, emb, head, head_on, mask, c: Layout, amp_cache: bool, gather, moment, fs: FsdpTerms):
    """The forward through the embedding, every layer block and the loss; returns the
    activations (``carry``) and autocast weight cache it leaves. FSDP's unsharded root and
    all-gather results (``fs``) are held throughout."""
    ckpt, plain = c.ckpt, logical_not(c.ckpt)
    carry = cache = 0.0
    if emb is not None:
        e = emb.fwd
        moment("forward", True, act=e["act"], temp=e["other"] + mask, cache=e["cache"], gath=fs.root)
        carry = emb.saved
    done = 0  # layers of the earlier blocks
    for b, n, has in blocks:
        # reshard_after_forward=False: the layers so far stay unsharded, and the last one's all-gather result
        gath = fs.root + where(fs.keep, (done + n + 1) * fs.layer, gather)
        ev = b.nograd  # full recomputation: no-grad forward, each layer keeps its input
        ck_cache = cache + n * maximum(b.saved_w, 0.0) if amp_cache else 0.0  # cleared when autocast exits
        moment("forward", has & ckpt, act=carry + (n - 1) * b.ckpt_input, temp=ev["act"] + ev["other"] + mask,
               cache=ck_cache, gath=gath)
        ev = b.fwd
        moment("forward", has & plain, act=carry + (n - 1) * (b.saved - b.saved_w) + ev["act"],
               cache=(n - 1) * b.saved_w + ev["cache"] + cache, temp=ev["other"] + mask, gath=gath)
        carry = carry + n * where(ckpt, b.ckpt_input, b.saved - b.saved_w)
        cache = where(ckpt, ck_cache, cache + n * b.saved_w)
        done = done + n
    if head is not None:
        ev = head.fwd  # the last layer's all-gather result is still held (FsdpTerms.layer)
        moment("forward", head_on, act=carry, logits=ev["act"], cache=cache + ev["cache"], temp=ev["other"] + mask,
               gath=fs.root + fs.layer + where(fs.keep, done * fs.layer, 0.0))
    return carry, cache


def backward_moments(blocks, emb, head, head_on, mask, c: Layout, gather, wshard, carry, cache, moment,
                     fs: FsdpTerms, loss_tp=0.0, emb_full=0.0):
    """The backward in reverse: the loss, each block's last, last but one and first layer (they
    bound the ramp), under full recomputation each layer's recompute forward first. Under FSDP the
    root stays unsharded with its output layer's gradient, the last layer is prefetched before the
    loss's backward, and each layer after the first waits beside the previous one's reduce-scatter
    input (FsdpTerms). ``loss_tp``: what the vocabulary-parallel loss adds at its backward
    (loss_parallel_bytes); ``emb_full``: local embedding gradients the embedding's backward holds
    beside its own (embedding_full_grad_factor)."""
    ckpt = c.ckpt
    cache = where(ckpt, 0.0, cache)  # autocast exited: the forward's weight copies are gone
    bmask = where(ckpt, mask, 0.0)  # recomputation keeps the mask alive in its closures
    wg_done = 0.0
    below = sum(n for _, n, _ in blocks)  # layers before (in forward order) the block being walked
    if head is not None:
        ev = head.bwd
        moment("backward", head_on, act=carry, logits=ev["act"], cache=cache + ev["cache"], grads=ev["grads"],
               temp=ev["other"] + bmask + loss_tp, gath=fs.root + where(fs.keep, below * fs.layer, fs.layer))
        wg_done = where(head_on, head.wgrads * where(fs.on, 1.0, wshard), 0.0)  # the root's stays unsharded
    seen = False  # a layer's backward (and its reduce-scatter) has run
    for b, n, has in reversed(blocks):
        below = below - n
        per = where(ckpt, b.ckpt_input, b.saved - b.saved_w)
        per_w = where(ckpt, 0.0, b.saved_w)
        carry, cache = carry - n * per, cache - n * per_w  # before the block
        # the block's last layer, the one before it (the first with a reduce-scatter input in flight:
        # the level steps up there, so the ramp is linear only from it on) and its first layer
        for j in (maximum(n - 1, 0), maximum(n - 2, 0), 0):
            grads = wg_done + (n - 1 - j) * b.wgrads * wshard
            rs = where(seen | (j < n - 1), fs.rs, 0.0)
            gath = fs.root + rs + where(fs.keep, (below + j + 1) * fs.layer, gather)
            rc = b.fwd  # the recompute forward, with the incoming gradient alive
            moment("backward (recompute)", has & ckpt, act=carry + j * per + rc["act"], cache=rc["cache"],
                   grads=grads, temp=rc["other"] + b.output + bmask, gath=gath)
            ev = b.bwd
            moment("backward", has, act=carry + j * per + ev["act"], cache=cache + j * per_w + ev["cache"],
                   grads=grads + ev["grads"], temp=ev["other"] + bmask, gath=gath)
        wg_done = wg_done + n * b.wgrads * wshard
        seen = seen | has
    if emb is not None:
        ev = emb.bwd
        moment("backward", True, act=ev["act"], grads=wg_done + ev["grads"], temp=ev["other"] + emb_full * emb.wgrads,
               gath=fs.root + where(seen, fs.rs, 0.0))


def stage_timeline(model, setup: TrainingSetup, c: Layout, first, last, profiles, moment) -> dict:
    """Every moment of one step on a pipeline stage, handed to ``moment(phase, on, **parts)``
    (``on``: the moment exists, per configuration); returns the stage's static parts. ``c`` holds
    numbers (one estimate) or columns (a search); the setup is the run's."""
    blocks, emb, head, mask, amp_cache = profiles
    lora = setup.lora(model)  # core/training/lora.LoraSpec (the frozen base and its adapters), or None
    rb = recipe_bytes(setup.recipe, setup.framework)
    st = stage_states(model, setup, rb, c, first, last, lora)
    if setup.optimizer in PAGED_OPTIMIZERS:  # managed memory: outside the allocator's peak (setup.PAGED_OPTIMIZERS)
        st = {**st, "paged": st["optimizer_states"], "optimizer_states": 0.0}
    gather = gather_buffers(model, setup, rb, c)
    if lora is not None:  # the frozen base is gathered in NF4 under QLoRA
        gather = gather * (NF4_BYTES_PER_PARAM / rb.param if lora.quant else 1.0)
    fs = fsdp_terms(model, setup, rb, c, first, last, lora, gather)
    if lora is not None:  # what is trained: the adapters
        rb = trainable_bytes(rb, lora)
    static = {"parameters": st["parameters"], "optimizer_states": st["optimizer_states"],
              "master_weights": st["master_weights"], "other": framework_buffers(setup, rb, c, st),
              "gradients": where(grads_persistent(c, setup), st["gradients"], 0.0)}
    earlier = (inflight_micro_batches(c, first) - 1) * saved_per_micro_batch(blocks, emb, c.ckpt)
    moment.start(static, earlier)
    carry, cache = forward_moments(blocks, emb, head, last, mask, c, amp_cache, gather, moment, fs)
    backward_moments(blocks, emb, head, last, mask, c, gather, weight_grad_share(setup, c, rb, lora), carry, cache,
                     moment, fs, where(last, loss_parallel_bytes(model, setup, c), 0.0),
                     embedding_full_grad_factor(model, setup, c))
    moment.optimizer_step({**static, "gradients": st["gradients"],
                           "optimizer_temporaries": optimizer_temporaries(model, setup, rb, c, st, lora)})
    return st


class _Moments:
    """The single estimate's moments: each one's full breakdown, by phase."""

    def __init__(self):
        self.items = []

    def start(self, static: dict, earlier: float):
        self.static = {**dict.fromkeys(COMPONENTS, 0.0), **static}
        self.earlier = earlier

    def __call__(self, phase, on, act=0.0, logits=0.0, cache=0.0, grads=0.0, temp=0.0, gath=0.0):
        if not on:
            return
        d = dict(self.static)
        d["activations"] = act + self.earlier
        d["logits_and_loss"] = logits
        d["autocast_weight_cache"] = cache
        d["gradients"] += grads
        d["temporaries"] = temp
        d["zero_gather_buffers"] = gath
        self.items.append((phase, d))

    def optimizer_step(self, parts: dict):
        self.items.append(("optimizer step", {**self.static, **parts}))


def _scalar_profiles(model, setup: TrainingSetup, rb, c: Layout, first: bool, last: bool):
    """(blocks, embedding, head, mask bytes, autocast cache) of the stage at this configuration."""
    prof = model_profiles(model, rb.act_kind, rb.grad, setup.attention, setup.framework,
                          window_mask(model, setup.seq_len), c.selective, setup.recipe == "fp8", setup.lora(model))
    f = factors(c.tokens, setup.seq_len, c.tp, c.sequence_parallel, c.tp)
    nd, nm = _stage_layers(model, c.pp, first)
    blocks = [(_Eval(p, f), n, True) for p, n in ((prof.dense, nd), (prof.moe, nm)) if p is not None and n > 0]
    emb = _Eval(prof.embed, f) if first else None
    head = _Eval(prof.head, f) if last else None
    return blocks, emb, head, prof.mask_bytes * c.tokens * setup.seq_len, prof.autocast_weight_cache


def _stage_memory(model, setup: TrainingSetup, c: Layout, rb, stage_name, first, last):
    profiles = _scalar_profiles(model, setup, rb, c, first, last)
    moments = _Moments()
    st = stage_timeline(model, setup, c, first, last, profiles, moments)
    phase_peaks: dict = {}
    for phase, d in moments.items:
        key = phase.split(" ")[0]
        phase_peaks[key] = max(phase_peaks.get(key, 0.0), _total(d))
    phase, best = max(moments.items, key=lambda m: _total(m[1]))
    blocks = profiles[0]
    per_layer = blocks[0][0].saved if blocks else 0.0
    return (_total(best), best, phase, stage_name, phase_peaks, float(st["host"]), per_layer,
            float(st.get("paged", 0.0)))


def _cnn_memory(model, setup: TrainingSetup, c: Layout, rb, capacity_bytes) -> MemoryResult:
    """Non-transformer models: states from the parameter count, activations from the
    given bytes per sample (fp32; halved when activations are 16-bit)."""
    p = model.params_total
    d = c.shard  # ZeRO shards over the shard group (all data-parallel ranks unless hybrid sharding)
    z = c.zero
    act = model.act_bytes_per_sample_fp32 * c.micro_batch * (1.0 if rb.act_kind == "fp32" else 0.5)
    br = _zero()
    br["parameters"] = p * rb.param / (d if z >= 3 else 1)
    br["gradients"] = p * rb.grad / (d if z >= 2 else 1)
    br["optimizer_states"] = p * optimizer_state_bytes_per_param(setup.optimizer, rb.state) / (d if z >= 1 else 1)
    br["master_weights"] = p * rb.master / (d if z >= 1 else 1)
    br["activations"] = act
    br["other"] = CUBLAS_WORKSPACE_BYTES
    peak = _total(br)
    overhead = _overhead(c, peak)
    return MemoryResult(peak_bytes=peak, breakdown=br, peak_phase="backward", peak_stage="single stage",
                        phase_peaks={"backward": peak}, activations_per_layer_bytes=0.0, overhead=overhead,
                        device_bytes=device_bytes(peak, overhead), host_bytes=0.0, capacity_bytes=capacity_bytes,
                        assumptions=[Text(QT_TRANSLATE_NOOP("Engine", "non-transformer: activations from the preset's "
                                                                       "bytes per sample"))])
