"""What one GPU holds besides activations: model states, framework buffers and the memory
outside the allocator. Array-generic: every function takes scalars or numpy arrays (one
column per configuration), so the single estimate and the search share each formula.
"""
from __future__ import annotations

import numpy as np

from planner_app.core.arrays import ceil, minimum, where
from planner_app.core.hardware.specs import CUDA_CONTEXT_BYTES
from planner_app.core.training.setup import optimizer_state_bytes_per_param

# Caching-allocator reserve above the allocated peak. H200 runs: max_memory_reserved /
# max_memory_allocated had a median of 1.07 without and 1.24-1.40 with recomputation
# (tests/data/training_runs_h200.json); the allocator frees cached blocks and retries
# before it fails, so only part of that is needed.
FRAGMENTATION = 0.05
FRAGMENTATION_RECOMPUTE = 0.12
# NCCL's own buffers (NCCL_BUFFSIZE, 4 MiB per channel and peer; ~0.3-1 GB in practice)
NCCL_BASE_BYTES = 0.35e9
NCCL_BYTES_PER_DOUBLING = 0.05e9
DS_BUCKET_ELEMS = 5e8  # DeepSpeed reduce_bucket_size default (elements)
ADAFACTOR_STATE_BYTES = 4.0  # fp32 accumulators (Shazeer & Stern 2018)


def stage_layers(model, pp, first: bool):
    """(dense, moe) layer counts on the first or last pipeline stage (ceil split; dense
    layers come first in the model, as DeepSeek's leading dense layers do)."""
    per = ceil(model.layers / pp)
    if first:
        dense = where(pp == 1, model.dense_mlp_layers, minimum(model.dense_mlp_layers, per))
        return dense, where(pp == 1, model.moe_layers, per - dense)
    last = model.layers - per * (pp - 1)
    moe = minimum(model.moe_layers, last)
    return last - moe, moe


def stage_params(model, pp, tp, ep, first: bool, last):
    """(dense, expert) parameters held by one GPU of a pipeline stage before ZeRO-3; ``last``
    (bool or bool array): the stage holds the head."""
    nd, nm = stage_layers(model, pp, first)
    router = model.router_params() if model.is_moe else 0
    dense = nd * model.dense_layer_params() + nm * (model.attention_params() + model.layer_norm_params() + router)
    expert = nm * (model.moe_params() - router)
    return dense / tp + root_params(model, pp, tp, first, last), expert / (ep * tp)


def root_params(model, pp, tp, first: bool, last):
    """Parameters of the stage outside its decoder layers, on one GPU: the embedding (first stage),
    the final norm and the output layer (last stage). Megatron keeps a copy of the tied embedding
    on the last stage; FSDP wraps these in the root module's group."""
    head = model.head_params() + where((pp > 1) & model.tied_embeddings, model.vocab * model.hidden, 0)
    return ((model.embedding_params() if first else 0) + where(last, head, 0)) / tp


def shard(dense, expert, d_dense, d_exp, on):
    """Per-GPU count of ``dense`` + ``expert`` where ``on`` shards them over their replicas."""
    return where(on, dense / d_dense + expert / d_exp, dense + expert)


def model_states(dense_params, expert_params, rb, optimizer: str, zero, d_dense=1, d_exp=1):
    """Bytes of parameters, gradients, master weights and optimizer states on one GPU.

    ZeRO (Rajbhandari et al. 2020, sec. 5 and Figure 1): stage 1 shards optimizer states
    (and master weights) over the N_d data-parallel ranks, stage 2 also gradients, stage 3
    also parameters: (2 + 2 + K)Psi -> 2Psi + 2Psi + K Psi/N_d -> 2Psi + (2+K)Psi/N_d
    -> (2+2+K)Psi/N_d. Experts are sharded over their own (smaller) replica group.
    """
    params = shard(dense_params, expert_params, d_dense, d_exp, zero >= 3) * rb.param
    grads = shard(dense_params, expert_params, d_dense, d_exp, zero >= 2) * rb.grad
    states = shard(dense_params, expert_params, d_dense, d_exp, zero >= 1)
    return params, grads, states * rb.master, states * optimizer_state_bytes_per_param(optimizer, rb.state)


def adafactor_state_bytes(model) -> float:
    """Adafactor (Shazeer & Stern 2018, sec. 3): a row and a column accumulator per matrix,
    fp32; vectors keep a full accumulator. Approximated from the model's matrices."""
    h, q, kv = model.hidden, model.q_width, model.kv_width
    per_layer = (h + q) + 2 * (h + kv) + (q + h) + (3 if model.mlp == "swiglu" else 2) * (h + model.ffn_hidden)
    return ADAFACTOR_STATE_BYTES * (model.layers * per_layer + model.vocab + h)


def nccl_buffer_bytes(gpus):
    """NCCL's buffers; none on one GPU."""
    g = np.asarray(gpus, dtype=float)
    return np.where(g > 1, NCCL_BASE_BYTES + NCCL_BYTES_PER_DOUBLING * np.log2(np.maximum(g, 1.0)), 0.0)


def allocator_reserve_fraction(full_recompute):
    return np.where(full_recompute, FRAGMENTATION_RECOMPUTE, FRAGMENTATION)


def device_overhead(peak, gpus, full_recompute) -> dict:
    """What the GPU holds outside PyTorch's allocator statistics: the CUDA context, NCCL's
    buffers and the caching allocator's reserve above the peak."""
    return {"cuda_context": CUDA_CONTEXT_BYTES, "nccl_buffers": nccl_buffer_bytes(gpus),
            "allocator_reserve": allocator_reserve_fraction(full_recompute) * np.asarray(peak, dtype=float)}


def device_bytes(peak, overhead: dict):
    """Peak allocated bytes plus the overheads: what the GPU must have."""
    return peak + (overhead["cuda_context"] + overhead["nccl_buffers"] + overhead["allocator_reserve"])

