"""Checkpoints of a training plan: bytes per save (weights only; resumable: weights, optimizer
states, RNG and scheduler; sharded per rank as torch.distributed.checkpoint writes them), write
time at a storage bandwidth, the share of training time a save interval costs, and the disk
that N kept checkpoints need. Pure: the model spec, the recipe's byte table and numbers in.

Measured against real files: tests/data/checkpoint_sizes.json (benchmarks/gpu/checkpoint_sizes.py,
torch 2.13: ``torch.save`` and ``torch.distributed.checkpoint.save`` of Hugging Face models).
"""
from __future__ import annotations

from dataclasses import dataclass

from planner_app.core.errors import require_float, require_int
from planner_app.core.training.setup import optimizer_state_bytes_per_param

# torch.save writes an uncompressed zip (torch/serialization.py, _save): one record per storage,
# aligned to 64 bytes, plus a pickle entry per key. Measured 357-390 bytes per tensor beyond the
# data (tests/data/checkpoint_sizes.json: tiny-llama 15,214 B for 39 tensors, GPT-2 53,143 B for
# 149 keys).
TORCH_SAVE_BYTES_PER_TENSOR = 380
# torch.distributed.checkpoint's FileSystemWriter calls torch.save once per tensor into the
# rank's .distcp file (torch/distributed/checkpoint/filesystem.py, _write_item), and keeps one
# chunk entry per tensor in .metadata: measured 1,692 B and 285 B per tensor (tiny-llama).
DCP_BYTES_PER_TENSOR = 1692
DCP_METADATA_BYTES_PER_TENSOR = 285
# torch.get_rng_state() is a 5,056-byte ByteTensor (Mersenne Twister state); the CUDA generator's
# state is 16 bytes per device; Python's random.getstate() pickles to ~2.5 kB; the LR scheduler's
# state_dict is a few hundred bytes. Together, per saved file:
RNG_AND_SCHEDULER_BYTES = 5056 + 16 + 2600 + 400
# torch.optim Adam/AdamW keep ``step`` as a 0-d float32 tensor per parameter tensor
# (torch/optim/adam.py, _init_group: torch.tensor(0.0, dtype=_get_scalar_dtype())).
ADAM_STEP_BYTES = 4
# A planning figure for one node's sustained checkpoint write bandwidth when nothing better is
# known (no host probe): 1 GB/s, the order of one cloud block volume or a share of a network
# file system. The host probe's measured sequential write bandwidth replaces it.
DEFAULT_WRITE_GB_S_PER_NODE = 1.0
DEFAULT_INTERVAL_S = 3600.0  # one save an hour
DEFAULT_KEPT = 3  # checkpoints kept on disk (Trainer's save_total_limit is often 2-5)


def states_per_param(optimizer: str) -> int:
    """Optimizer state tensors per parameter tensor (momentum, variance)."""
    return {"adam": 2, "adamw": 2, "adamw-8bit": 2, "adamw-8bit-paged": 2, "sgd-momentum": 1}.get(optimizer, 0)


def param_tensor_count(model) -> int:
    """Parameter tensors of the Hugging Face module (what ``model.parameters()`` yields): per
    layer the attention projections (GPT-2/NeoX fuse QKV), their biases, q/k norms, the MLP
    matrices and biases, the norms; plus embeddings, final norm and an untied head. MoE
    experts count as transformers 5.x stores them (gate_up and down fused 3-D tensors) and a
    CNN as 0 (its per-tensor overhead is under 0.1% of its ~100 MB)."""
    if not model.is_transformer:
        return 0
    fused = model.arch in ("gpt2", "bert")
    nb = 2 if model.norm_bias else 1
    if model.arch == "deepseek":
        attn = 5 + (2 if model.q_lora_rank else 0)  # q(a,norm,b), kv_a, kv_a_norm, kv_b, o
    else:
        attn = 2 if fused else 4
    if model.qkv_bias:
        attn += 1 if fused else 3
    attn += int(model.out_bias) + (2 if model.qk_norm != "none" else 0) + int(model.attn_sinks)
    n_mlp = 3 if model.mlp == "swiglu" else 2
    dense_mlp = n_mlp * (2 if model.mlp_bias else 1)
    moe_mlp = 1 + int(model.router_bias) + 2 * (2 if model.expert_bias else 1)
    if model.shared_experts:
        moe_mlp += 3 + int(model.shared_expert_gate)
    per_layer = attn + model.norms_per_layer * nb
    n = model.layers * per_layer + model.dense_mlp_layers * dense_mlp + model.moe_layers * moe_mlp
    n += 1 + (model.position == "learned") + (model.type_vocab > 0) + nb  # embeddings, final norm
    return int(n + (0 if model.tied_embeddings else 1))


def state_dict_keys(model) -> int:
    """Keys of ``model.state_dict()``: a tied head keeps its own key (one storage)."""
    return param_tensor_count(model) + int(bool(model.tied_embeddings and model.is_transformer))


def tied_bytes(model, param_bytes: int) -> float:
    """Bytes of the tied embedding: torch.save stores the shared storage once, DCP writes each key."""
    return model.vocab * model.hidden * param_bytes if model.is_transformer and model.tied_embeddings else 0.0


@dataclass(frozen=True)
class CheckpointSizes:
    """Bytes of one save, as files on disk."""

    weights_bytes: float  # torch.save(model.state_dict())
    resumable_bytes: float  # one torch.save of model, optimizer, scheduler, RNG
    sharded_bytes: float  # torch.distributed.checkpoint: every rank's .distcp plus .metadata
    optimizer_bytes: float  # of which optimizer states and master weights


def checkpoint_sizes(model, rb, optimizer: str, trainable_params: float | None = None,
                     adapter_bytes: int | None = None) -> CheckpointSizes:
    """Bytes on disk of a weights-only and a resumable checkpoint.

    Weights in the recipe's parameter dtype (``rb.param``); the optimizer adds fp32 master
    weights where the recipe keeps them (``rb.master``: DeepSpeed/Megatron save them with the
    optimizer) and its states (``rb.state`` bytes each: Adam's two moments, Kingma & Ba 2015),
    for the trained parameters only (LoRA: the adapters).
    """
    if adapter_bytes is not None and trainable_params is not None:
        return _adapter_checkpoint(float(trainable_params), adapter_bytes, optimizer)
    p = float(model.params_total)
    trained = p if trainable_params is None else float(trainable_params)
    keys, tensors = state_dict_keys(model), param_tensor_count(model)
    trained_tensors = tensors if trainable_params is None else 0  # adapters: a small count
    weights = p * rb.param + keys * TORCH_SAVE_BYTES_PER_TENSOR
    opt = trained * (rb.master + optimizer_state_bytes_per_param(optimizer, rb.state))
    if optimizer in ("adam", "adamw"):
        opt += trained_tensors * ADAM_STEP_BYTES
    opt_entries = trained_tensors * (states_per_param(optimizer) + (optimizer in ("adam", "adamw")))
    resumable = weights + opt + opt_entries * TORCH_SAVE_BYTES_PER_TENSOR + RNG_AND_SCHEDULER_BYTES
    entries = keys + opt_entries
    data = p * rb.param + tied_bytes(model, rb.param) + opt
    sharded = data + entries * (DCP_BYTES_PER_TENSOR + DCP_METADATA_BYTES_PER_TENSOR) + RNG_AND_SCHEDULER_BYTES
    return CheckpointSizes(weights_bytes=weights, resumable_bytes=resumable, sharded_bytes=sharded,
                           optimizer_bytes=opt)


def _adapter_checkpoint(adapters: float, adapter_bytes: int, optimizer: str) -> CheckpointSizes:
    """LoRA/QLoRA: Trainer saves a PeftModel with ``save_pretrained``, which writes the adapters
    only (adapter_model.safetensors), and the optimizer's states for them; the frozen base is
    not saved (peft/peft_model.py ``save_pretrained``, transformers Trainer ``_save``). Tensor
    entries are few (two per adapted module) and left out."""
    weights = adapters * adapter_bytes
    opt = adapters * optimizer_state_bytes_per_param(optimizer, adapter_bytes)
    resumable = weights + opt + RNG_AND_SCHEDULER_BYTES
    return CheckpointSizes(weights_bytes=weights, resumable_bytes=resumable, sharded_bytes=resumable,
                           optimizer_bytes=opt)


@dataclass(frozen=True)
class CheckpointPlan:
    """How often a plan saves, how many it keeps and how fast its nodes write."""

    interval_s: float = DEFAULT_INTERVAL_S
    kept: int = DEFAULT_KEPT
    write_gb_s_per_node: float = DEFAULT_WRITE_GB_S_PER_NODE

    def __post_init__(self):
        require_float("checkpoint_interval_s", self.interval_s, 0.0, inclusive_min=False)
        require_int("checkpoints_kept", self.kept, 1)
        require_float("storage_write_gb_s", self.write_gb_s_per_node, 0.0, inclusive_min=False)


def checkpoint_cost(sizes: CheckpointSizes, gpus: int, nodes: int, ckpt: CheckpointPlan,
                    train_s: float | None = None, local_disk_bytes_per_node: float | None = None) -> dict:
    """Write time, overhead and disk of a plan's resumable checkpoints.

    One GPU: a single torch.save file. More: torch.distributed.checkpoint, one file per rank;
    its save planner spreads replicated tensors over the ranks holding them, smallest plan
    first (torch/distributed/checkpoint/_dedup_save_plans.py), so each rank writes about
    total / ranks, and every node writes its ranks' files at once. A blocking save stops
    training for the write; the overhead is the write time over the interval.
    """
    sharded = gpus > 1
    total = sizes.sharded_bytes if sharded else sizes.resumable_bytes
    per_node = total / nodes
    write_s = per_node / (ckpt.write_gb_s_per_node * 1e9)
    overhead = write_s / ckpt.interval_s
    disk = ckpt.kept * total
    out = {"weights_bytes": sizes.weights_bytes, "resumable_bytes": total, "optimizer_bytes": sizes.optimizer_bytes,
           "format": "torch.distributed.checkpoint" if sharded else "torch.save",
           "files": gpus + 1 if sharded else 1, "per_rank_bytes": total / gpus, "per_node_bytes": per_node,
           "write_gb_s_per_node": ckpt.write_gb_s_per_node, "write_s": write_s, "interval_s": ckpt.interval_s,
           "overhead_fraction": overhead, "kept": ckpt.kept, "disk_bytes": disk, "disk_bytes_per_node": disk / nodes}
    if train_s is not None:
        saves = int(train_s // ckpt.interval_s)
        out["saves"] = saves
        out["added_train_s"] = saves * write_s
    if local_disk_bytes_per_node:
        out["fits_local_disk"] = disk / nodes <= local_disk_bytes_per_node
    return out
