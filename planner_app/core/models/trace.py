"""A small simulator of autograd memory for one transformer layer.

A layer is written down as the sequence of operations its implementation runs (see
``layers_hf.py`` and ``layers_megatron.py``), with PyTorch's rules for what autograd
saves for backward (``tools/autograd/derivatives.yaml``: e.g. ``mul`` saves each input
only if the other requires grad, ``softmax`` saves its output, ``layer_norm`` its input
and statistics) and autocast's casting rules (``aten/src/ATen/autocast_mode.cpp``: GEMMs
and SDPA run in 16 bits, ``layer_norm``/``pow``/``softmax`` in fp32, casts of activations
are new tensors, casts of weights are cached).

Tensor sizes are per token of the micro-batch and split by how parallelism shards them,
into the slots of ``SLOTS``; a configuration turns a slot vector into bytes with
``factors()``. Simulating forward and backward with Python-like lifetimes (a tensor
lives until its last use or, if saved, until the backward of the last op that saved it)
gives the saved activations per layer and the transient peaks in forward and backward,
which the memory model places on the step's timeline.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Slots of a size vector (bytes):
#   0 SEQ   per token, replicated across tensor-parallel ranks unless sequence parallel
#   1 TP    per token, sharded by tensor parallelism
#   2 TPS   per token per sequence position (attention score matrices), sharded by TP
#   3 EXP   per token, in the experts (sharded by expert tensor parallelism)
#   4 W     per layer, proportional to the layer's weights (sharded by TP)
#   5 ONE   per layer, fixed
#   6 SPG   per token, what an all-gather of a sequence-parallel tensor adds to its shard: the
#           full sequence less the local part (0 without sequence parallelism). A tensor in SEQ
#           plus its companion in SPG is the gathered full-length copy (DTensor's Shard(1) to
#           Replicate at a ColwiseParallel input, hf_ops.HFOps.linear)
SEQ, TP, TPS, EXP, W, ONE, SPG = range(7)
SLOTS = 7


def factors(tokens, seq_len, tp: int, sp: bool, etp: int = 1):
    """Multipliers turning a slot vector into bytes for one micro-batch on one GPU.

    ``tokens`` is the micro-batch's tokens on this GPU (batch x sequence / context-parallel
    degree); works elementwise on numpy arrays for sweeps.
    """
    if np.ndim(tokens) == 0 and np.ndim(seq_len) == 0 and np.ndim(sp) == 0:
        t = float(tokens)
        seq_div = tp if sp else 1
        return np.array([t / seq_div, t / tp, t * seq_len / tp, t / etp, 1.0 / tp, 1.0, t - t / seq_div])
    tokens = np.asarray(tokens, dtype=float)
    seq_divs = np.where(sp, tp, 1)
    return np.stack(np.broadcast_arrays(tokens / seq_divs, tokens / tp, tokens * np.asarray(seq_len) / tp,
                                        tokens / etp, 1.0 / np.asarray(tp, dtype=float), np.ones_like(tokens),
                                        tokens - tokens / seq_divs))


class T:
    """A tensor: elements per token (or per layer for weights), element size, shard slot."""

    __slots__ = ("width", "nbytes", "slot", "requires_grad", "base", "name", "idx")

    def __init__(self, width: float, nbytes: int, slot: int, requires_grad: bool, name: str, base=None):
        self.width = float(width)
        self.nbytes = nbytes
        self.slot = slot
        self.requires_grad = requires_grad
        self.base = base  # a view shares its base's memory
        self.name = name
        self.idx = -1

    def vec(self, nbytes: int | None = None) -> np.ndarray:
        v = np.zeros(SLOTS)
        v[self.slot] = self.width * (self.nbytes if nbytes is None else nbytes)
        return v

    @property
    def storage(self) -> T:
        return self.base.storage if self.base is not None else self


@dataclass
class Op:
    name: str
    inputs: list
    outputs: list
    saved: list
    weight_grad_bytes: float = 0.0  # bytes of parameter gradients this op's backward creates
    weight_grad_temp: float = 0.0  # transient bytes in its backward (e.g. a 16-bit grad before the fp32 cast)
    bwd_temp: np.ndarray | None = None  # other transient bytes in its backward (slot vector)
    fwd_temp: np.ndarray | None = None  # transient bytes inside the op in forward (slot vector)
    # (k, n, split, bits[, backward GEMMs]): a GEMM of k-by-n weights per token; split "n"/"k"/"";
    # the backward runs 2 GEMMs (data and weight gradients), 1 for a frozen weight
    gemm: tuple | None = None
    attn_flops: float = 0.0  # attention-kernel FLOPs per token per key position (QK^T and PV)
    kind: str = "elementwise"  # "gemm", "attention", "elementwise", "reduction", "none"
    # kernel attributes of a memory-bound op, besides what its tensors say: PyTorch runs it
    # non-vectorised (transposed or broadcast operands, a per-row mask: NON_VECTORISED_BW_FRACTION),
    # over rows whose length is not a multiple of 8 elements (UNALIGNED_ROW_SPEED)
    strided: bool = False
    unaligned: bool = False


@dataclass
class LayerProfile:
    """What the simulator learned about one layer (slot vectors, see ``SLOTS``).

    saved:        activations alive at the end of the layer's forward (incl. its input if saved)
    output:       the layer's output (the next layer's input)
    ckpt_input:   what full recomputation keeps for the layer (its input)
    Event arrays have shape (events, 3, SLOTS): for each moment, the bytes of tensors saved
    for backward, of parameter gradients, and of everything else (temporaries, activation
    gradients), so that a peak can be broken down.

    fwd_events:   levels during the forward, relative to the layer's start (its input
                  counted, earlier layers' saved activations not); also the levels of the
                  recompute forward under full recomputation
    nograd_events: the same when nothing is kept for backward (recomputation's first pass)
    bwd_events:   levels during backward, relative to earlier layers' saved tensors and to
                  weight grads accumulated before this layer; they include this layer's saved
                  tensors, the incoming gradient and this layer's new weight grads
    weight_grads: parameter-gradient bytes this layer's backward creates (slot W units)
    grad_input:   the gradient handed to the previous layer
    saved_terms:  (name, slot vector) of each saved tensor, for explanations
    """

    saved: np.ndarray
    output: np.ndarray
    ckpt_input: np.ndarray
    fwd_events: np.ndarray
    nograd_events: np.ndarray
    bwd_events: np.ndarray
    weight_grads: float
    grad_input: np.ndarray
    saved_terms: list = field(default_factory=list)
    gemms: list = field(default_factory=list)  # (k, n, split, bits) per token, forward
    attn_flops: float = 0.0  # fused (flash) attention FLOPs per token per key position, forward
    attn_masked: bool = False  # the fused kernel runs with an explicit mask (full square, slower)
    attn_bits: int = 0  # precision of the fused attention's inputs (32: fp32 q/k/v); 0: none
    bmm_flops: float = 0.0  # unfused attention matmuls (full square) per token per key, forward
    mem_ops: np.ndarray = field(default_factory=lambda: np.zeros((0, SLOTS)))  # bytes moved per memory-bound op
    mem_is_reduction: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    mem_is_strided: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # non-vectorised (Op.strided, slices)
    mem_is_unaligned: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # odd row lengths


def _work(ops) -> tuple:
    """The forward's work: GEMM shapes, attention FLOPs and the traffic of every other kernel."""
    gemms, attn, bmm, mem, red, masked, attn_bits, strided, unaligned = [], 0.0, 0.0, [], [], False, 0, [], []
    for op in ops:
        if op.kind == "none":
            continue
        if op.gemm:
            gemms.append(op.gemm)
        elif op.kind == "bmm":
            bmm += op.attn_flops
        elif op.attn_flops:
            attn += op.attn_flops
            masked = masked or op.kind == "attention_masked"
            attn_bits = max(attn_bits, 8 * op.inputs[0].nbytes)
        else:
            mem.append(_sum(t.vec() for t in op.inputs + op.outputs))
            red.append(op.kind == "reduction")
            strided.append(op.strided or any(t.base is not None and t.width < t.storage.width for t in op.inputs))
            unaligned.append(op.unaligned)
    return (gemms, attn, masked, bmm, np.array(mem).reshape(-1, SLOTS), np.array(red, dtype=bool), attn_bits,
            np.array(strided, dtype=bool), np.array(unaligned, dtype=bool))


class Trace:
    """Records a layer's forward as tensors and ops."""

    def __init__(self):
        self.tensors: list[T] = []
        self.ops: list[Op] = []
        self.linears: list[tuple] = []  # (name, in features, out features) of each adaptable linear layer

    def tensor(self, width, nbytes, slot, requires_grad=True, name="", base=None) -> T:
        t = T(width, nbytes, slot, requires_grad, name, base)
        t.idx = len(self.tensors)
        self.tensors.append(t)
        return t

    def op(self, name, inputs, outputs, saved=(), weight_grad_bytes=0.0, weight_grad_temp=0.0,
           bwd_temp=None, fwd_temp=None, gemm=None, attn_flops=0.0, kind=None, strided=False,
           unaligned=False) -> None:
        if kind is None:
            kind = "gemm" if gemm else ("attention" if attn_flops else "elementwise")
        self.ops.append(Op(name, list(inputs), list(outputs), list(saved), weight_grad_bytes,
                           weight_grad_temp, bwd_temp, fwd_temp, gemm, attn_flops, kind, strided, unaligned))


def _sum(vecs) -> np.ndarray:
    out = np.zeros(SLOTS)
    for v in vecs:
        out += v
    return out


def simulate(trace: Trace, x_in: T, x_out: T) -> LayerProfile:
    """Run the forward and backward lifetimes of one layer and summarise them."""
    ops = trace.ops
    n_ops = len(ops)
    storages: dict[int, T] = {}
    for t in trace.tensors:
        storages.setdefault(t.storage.idx, t.storage)

    def mem(t: T) -> np.ndarray:
        return t.storage.vec()

    # ---- forward: last use and saving -------------------------------------------------
    last_use = {}
    saved_by: dict[int, list[int]] = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            last_use[t.storage.idx] = i
        for t in op.saved:
            saved_by.setdefault(t.storage.idx, []).append(i)
    last_use[x_out.storage.idx] = n_ops  # handed to the next layer

    def forward_levels(keep_saved: bool):
        live = {x_in.storage.idx}
        levels = []
        for i, op in enumerate(ops):
            for t in op.outputs:
                live.add(t.storage.idx)
            kept = _sum(mem(storages[s]) for s in live if keep_saved and s in saved_by)
            other = _sum(mem(storages[s]) for s in live if not (keep_saved and s in saved_by))
            if op.fwd_temp is not None:
                other = other + op.fwd_temp
            levels.append(np.stack([kept, np.zeros(SLOTS), other]))
            for s in list(live):
                if last_use.get(s, -1) <= i and not (keep_saved and s in saved_by):
                    live.discard(s)
        return levels, live

    fwd_levels, live_end = forward_levels(keep_saved=True)
    nograd_levels, _ = forward_levels(keep_saved=False)
    saved_storages = {s for s in live_end if s in saved_by}
    saved_vec = _sum(mem(storages[s]) for s in saved_storages)
    out_vec = mem(x_out)
    in_vec = mem(x_in)

    # ---- backward ---------------------------------------------------------------------
    # Saved tensors are released after the backward of the earliest (in forward order) op
    # that saved them; gradients of a tensor live from its first consumer's backward to its
    # producer's backward.
    release_at = {s: min(idx) for s, idx in saved_by.items()}
    producer = {}
    for i, op in enumerate(ops):
        for t in op.outputs:
            producer[t.storage.idx] = i
    live_saved = set(saved_storages)
    grads = {x_out.storage.idx: x_out.storage.vec()}
    weight_grads = 0.0
    bwd_levels = []
    for i in range(n_ops - 1, -1, -1):
        op = ops[i]
        if not any(t.requires_grad for t in op.outputs) and not op.weight_grad_bytes:
            continue
        new = []
        for t in op.inputs:
            if not t.requires_grad:
                continue
            g = t.storage.vec()
            s = t.storage.idx
            if s in grads:
                new.append(g)  # accumulation: a new buffer, then summed into the old one
            else:
                grads[s] = g
                new.append(np.zeros(SLOTS))
        kept = _sum(mem(storages[s]) for s in live_saved)
        wg = np.zeros(SLOTS)
        wg[W] = weight_grads + op.weight_grad_bytes
        other = _sum(grads.values()) + _sum(new)
        other[W] += op.weight_grad_temp
        if op.bwd_temp is not None:
            other = other + op.bwd_temp
        bwd_levels.append(np.stack([kept, wg, other]))
        weight_grads += op.weight_grad_bytes
        for t in op.outputs:
            s = t.storage.idx
            if producer.get(s) == i and s != x_in.storage.idx:
                grads.pop(s, None)
        for s in [s for s in live_saved if release_at.get(s) == i]:
            live_saved.discard(s)
    grad_in = grads.get(x_in.storage.idx, x_in.storage.vec())

    terms = [(storages[s].name or f"t{s}", mem(storages[s])) for s in sorted(saved_storages)]
    gemms, attn, masked, bmm, mem_ops, mem_red, attn_bits, mem_strided, mem_unaligned = _work(ops)
    return LayerProfile(gemms=gemms, attn_flops=attn, attn_masked=masked, bmm_flops=bmm, mem_ops=mem_ops,
        mem_is_reduction=mem_red, attn_bits=attn_bits, mem_is_strided=mem_strided, mem_is_unaligned=mem_unaligned,
        saved=saved_vec, output=out_vec, ckpt_input=in_vec,
        fwd_events=np.array(fwd_levels), nograd_events=np.array(nograd_levels),
        bwd_events=np.array(bwd_levels) if bwd_levels else np.zeros((1, 3, SLOTS)),
        weight_grads=weight_grads, grad_input=grad_in, saved_terms=terms)
