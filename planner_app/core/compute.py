"""Compute time of a layer: a roofline per operation.

* GEMMs: t = F / (peak x e_max) + t_0. On an H200, 46 cuBLAS bf16 GEMMs from 512 to
  16384 per side fit e_max = 0.76, t_0 = 27 us with 9% rms error; fp32 e_max 0.75, tf32
  0.76 (tests/data/training_runs_h200.json, "gemm"). Equivalent to e(F) = e_max F/(F+F0),
  so small and skinny GEMMs run far below peak.
* Fused attention (FlashAttention / cuDNN via SDPA): causal kernels do half the square;
  each kernel takes t = F / (peak x a(d)) + t_a, a(d) = 0.56 for head size 128, 0.50 for
  64, t_a = 60 us: H200 kernel profiles of Llama 3.2 3B, Mixtral-mini, GPT-2 and BERT
  (tests/data/profiles_h200.json) measured 0.20-0.52 of peak per kernel. The backward
  costs 2.5x the forward's FLOPs (FlashAttention-2, Dao 2023, sec. 3.2). fp32 inputs use
  the memory-efficient kernel at ~0.33 of the fp32 peak (GPT-2 fp32 profile).
* Every other kernel is memory-bound: bytes moved / (HBM bandwidth x e_bw), with e_bw 0.78
  for elementwise kernels and 0.53 for reductions (H200: copy 3.76 TB/s, add 3.92,
  SiLU 3.72, LayerNorm 2.56, log_softmax 2.49 of 4.8 TB/s).
* Each kernel takes at least ``launch_s``: eager PyTorch pays the Python and dispatcher
  cost of every op, so small layers are CPU-bound (the ``pytorch`` framework's floor is
  fitted to the single-GPU runs; fused frameworks launch fewer, larger kernels).
A probe calibration profile replaces e_max, e_bw and the attention curve with measured ones.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from planner_app.core.trace import SLOTS, TPS, W


@dataclass(frozen=True)
class Efficiency:
    """Achievable fractions of a GPU's peaks, and per-kernel overheads."""

    gemm_max: float = 0.76
    gemm_overhead_s: float = 27e-6
    attn_max: float = 0.56
    attn_overhead_s: float = 60e-6
    bw_elementwise: float = 0.78
    bw_reduction: float = 0.53
    launch_s: float = 4e-6
    source: str = "defaults measured on an H200 (tests/data/training_runs_h200.json)"

    def with_changes(self, **kw) -> "Efficiency":
        return replace(self, **kw)


# GEMM efficiency by GPU family (fraction of dense peak a large cuBLAS/rocBLAS GEMM reaches).
# Hopper: measured here (H200 at 700 W: 0.75-0.78 for isolated 8192-size GEMMs, 0.68-0.70 for
# sustained 16384-size ones, as GEMMs run inside a training step; 0.72 between). Ampere: A100 bf16 8192^3 GEMMs run at
# about 270 TFLOP/s of 312 (NVIDIA's own "up to 87%" cuBLAS figures) -> 0.85. Volta: V100
# fp16 GEMMs reach ~100 of 125 -> 0.8. MI300X: rocBLAS/hipBLASLt bf16 GEMMs reach about
# 700-800 of 1307 TFLOP/s in published benchmarks -> 0.58. Others default to 0.72.
FAMILY_GEMM_MAX = {"hopper": 0.72, "ampere": 0.85, "volta": 0.80, "turing": 0.70, "ada": 0.70,
                   "blackwell": 0.72, "cdna3": 0.58, "cdna2": 0.55, "gaudi": 0.75}

# The memory-efficient SDPA kernel with an explicit mask runs at this fraction of
# FlashAttention's speed (xformers-style kernel, no block skipping); an estimate.
MASKED_ATTENTION_SPEED = 0.6

# Per-kernel floor of eager PyTorch (Python module call + dispatcher + autograd bookkeeping),
# fitted to the single-GPU Hugging Face runs on the H200; fused frameworks: launch latency only.
FRAMEWORK_LAUNCH_S = {"pytorch": 22e-6, "deepspeed": 22e-6, "megatron": 4e-6}


def gpu_family(gpu) -> str:
    n = (gpu.id + " " + gpu.name).lower()
    for key, fam in (("mi3", "cdna3"), ("mi2", "cdna2"), ("gaudi", "gaudi"), ("b200", "blackwell"),
                     ("gb200", "blackwell"), ("b300", "blackwell"), ("rtx-5090", "blackwell"),
                     ("h100", "hopper"), ("h200", "hopper"), ("h800", "hopper"), ("h20", "hopper"),
                     ("a100", "ampere"), ("a800", "ampere"), ("a10", "ampere"), ("a6000", "ampere"),
                     ("a40", "ampere"), ("v100", "volta"), ("t4", "turing"), ("l4", "ada"), ("l40", "ada"),
                     ("l20", "ada"), ("4090", "ada"), ("6000-ada", "ada")):
        if key in n:
            return fam
    return "other"


def default_efficiency(gpu, framework: str = "pytorch") -> Efficiency:
    fam = gpu_family(gpu)
    return Efficiency(gemm_max=FAMILY_GEMM_MAX.get(fam, 0.72), launch_s=FRAMEWORK_LAUNCH_S.get(framework, 4e-6),
                      source=f"defaults for {fam} GPUs" + (" (measured on an H200)" if fam == "hopper" else ""))


# GEMMs whose inner or output dimension is not a multiple of 8 elements fall back to
# kernels with narrower vector loads. H200 profiles (tests/data/profiles_h200.json): GPT-2's
# output layer (vocab 50257, alignment 1) ran at 95-150 TFLOP/s and BERT's (30522,
# alignment 2) at 240-265, against ~750 for aligned shapes.
ALIGNMENT_SPEED = {1: 0.17, 2: 0.33, 4: 0.6, 8: 1.0}


def alignment(k: int, n: int, bits: int) -> int:
    """Largest power-of-two element alignment (up to 8) shared by k and n."""
    if bits == 32:
        return 8  # fp32 SIMT GEMMs are not sensitive to it
    a = 8
    while a > 1 and (int(k) % a or int(n) % a):
        a //= 2
    return a


def gemm_time_s(flops, peak_tflops, eff: Efficiency, align: int = 8):
    """One GEMM (or a batch launched as one kernel) of ``flops`` FLOPs."""
    return flops / (peak_tflops * 1e12 * eff.gemm_max * ALIGNMENT_SPEED.get(align, 1.0)) + eff.gemm_overhead_s


def attention_time_s(flops, peak_tflops, head_dim, eff: Efficiency, bits: int = 16):
    """One fused attention kernel of ``flops`` FLOPs."""
    return flops / (peak_tflops * 1e12 * attention_efficiency(head_dim, eff, bits)) + eff.attn_overhead_s


FP32_ATTENTION_EFFICIENCY = 0.33  # memory-efficient kernel on fp32 inputs (GPT-2 fp32 profile)


def attention_efficiency(head_dim: int, eff: Efficiency, bits: int = 16) -> float:
    """Fraction of peak a fused attention kernel reaches: a(d) = attn_max for head size 128,
    0.89 attn_max for 64, linear below (module docstring)."""
    if bits == 32:
        return FP32_ATTENTION_EFFICIENCY
    if head_dim >= 64:
        return eff.attn_max * min(1.0, 0.89 + 0.11 * (head_dim - 64) / 64)
    return eff.attn_max * 0.89 * head_dim / 64


def alignment_speed(k, n, bits: int):
    """ALIGNMENT_SPEED of the largest power-of-two alignment (up to 8) shared by k and n;
    scalars or arrays. A dimension split unevenly is taken at its whole part, as ``alignment``
    does."""
    if bits == 32:
        return np.ones(np.broadcast(k, n).shape)  # fp32 SIMT GEMMs are not sensitive to it
    k, n = np.floor(k), np.floor(n)
    speed = np.full(np.broadcast(k, n).shape, ALIGNMENT_SPEED[8])
    for a in (8, 4, 2):
        speed = np.where((np.mod(k, a) != 0) | (np.mod(n, a) != 0), ALIGNMENT_SPEED[a // 2], speed)
    return speed


@dataclass
class LayerTime:
    fwd_s: float
    bwd_s: float  # incl. weight gradients
    recompute_s: float  # the extra forward under recomputation
    gemm_flops: float  # forward, this GPU
    attn_flops: float  # forward, this GPU (as executed)
    mem_bytes: float  # forward traffic of memory-bound kernels


def layer_time(profile, gpu, eff: Efficiency, tokens, seq_len, tp: int, sp: bool, gemm_bits_default: int,
               head_dim: int, recompute: str, factors_vec: np.ndarray, causal: bool = True,
               peak_override_tflops: float | None = None) -> LayerTime:
    """Forward, backward and recomputation time of one layer for one micro-batch on one GPU."""
    fwd = bwd = gflops = 0.0
    floor = eff.launch_s
    for (k, n, split, bits) in profile.gemms:
        bits = bits if bits in (8, 16, 32) else gemm_bits_default
        peak = peak_override_tflops or gpu.peak_tflops(bits)
        f = 2.0 * tokens * k * n / (tp if split else 1)
        local_k, local_n = (k / tp, n) if split == "k" else ((k, n / tp) if split == "n" else (k, n))
        t = max(gemm_time_s(f, peak, eff, alignment(local_k, local_n, bits)), floor)
        fwd += t
        bwd += 2 * t  # data gradient and weight gradient
        gflops += f
    peak16 = peak_override_tflops or gpu.peak_tflops(16)
    attn_exec = 0.0
    attn_f = attn_b = 0.0
    if profile.attn_flops:
        frac = 0.5 if causal and not profile.attn_masked else 1.0
        f = profile.attn_flops * tokens * seq_len * frac / tp
        peak_a = peak16 if gemm_bits_default != 32 else gpu.peak_tflops(32)
        attn_f = max(attention_time_s(f, peak_a, head_dim, eff, gemm_bits_default), floor)
        attn_b = max(attention_time_s(2.5 * f, peak_a, head_dim, eff, gemm_bits_default), floor)
        if profile.attn_masked:
            attn_f /= MASKED_ATTENTION_SPEED
            attn_b /= MASKED_ATTENTION_SPEED
        attn_exec += f
    if profile.bmm_flops:
        f = profile.bmm_flops * tokens * seq_len / tp
        peak = peak16 if gemm_bits_default != 32 else gpu.peak_tflops(32)
        t = max(gemm_time_s(f / 2, peak, eff), floor) * 2  # QK^T and PV
        attn_f += t
        attn_b += 2 * t
        attn_exec += f
    bw = gpu.mem_bw_gb_s * 1e9
    score_f = 0.0
    if len(profile.mem_ops):
        f = factors_vec.copy()
        nbytes = profile.mem_ops @ f
        e = np.where(profile.mem_is_reduction, eff.bw_reduction, eff.bw_elementwise)
        # score-sized elementwise ops of eager attention (mask broadcast, scaling, casts) run
        # non-vectorised kernels: ~0.5 of HBM bandwidth in the H200 profiles
        score_sized = profile.mem_ops[:, TPS] * f[TPS] > 0.5 * nbytes
        e = np.where(score_sized & ~profile.mem_is_reduction, np.minimum(e, 0.5), e)
        t_ops = nbytes / (bw * e)
        t_fwd = np.maximum(t_ops, floor)
        mem_f = float(t_fwd.sum())
        mem_b = float(np.maximum(2 * t_ops, floor).sum())
        mem_bytes = float(nbytes.sum())
        score_f = float(t_fwd[score_sized].sum())
    else:
        mem_f = mem_b = mem_bytes = 0.0
    fwd += attn_f + mem_f
    bwd += attn_b + mem_b
    if recompute == "full":
        rec = fwd
    elif recompute == "selective":
        rec = attn_f + score_f  # the attention core: its matmuls and the score-sized ops
    else:
        rec = 0.0
    return LayerTime(fwd, bwd, rec, gflops, attn_exec, mem_bytes)


def optimizer_step_s(params_local: float, optimizer: str, rb, framework: str, gpu, eff: Efficiency,
                     n_tensors: int = 200) -> float:
    """Memory-bound optimizer step: element accesses per parameter x bytes / bandwidth.

    PyTorch foreach AdamW (torch/optim/adam.py _multi_tensor_adam) runs mul_, lerp_, mul_,
    addcmul_, sqrt, div_, add_, addcdiv_: 20 element accesses of the state dtype per
    parameter. Fused Adam (Apex/Megatron, DeepSpeed) reads gradient, master weight and two
    moments and writes them back plus the 16-bit copy: ~(g + 2m + 2*4*2 + p) bytes.
    SGD with momentum: 3 foreach ops, 8 accesses.
    """
    if params_local <= 0:
        return 0.0
    if optimizer in ("adam", "adamw", "adamw-8bit"):
        if framework == "pytorch":
            per = 20 * rb.state
        else:
            per = rb.grad + 2 * (rb.master or rb.param) + 2 * 2 * rb.state + rb.param
        if optimizer == "adamw-8bit":
            per = 2 * rb.param + rb.grad + 4 * 1
    elif optimizer == "sgd-momentum":
        per = 8 * rb.state
    elif optimizer == "sgd":
        per = 3 * rb.param
    else:  # adafactor: factored second moment, a few full passes over the update
        per = 12 * 4
    # foreach kernels over 16-bit states reach ~3.0 TB/s on the H200 against ~3.7 for fp32
    # (bf16 AdamW steps measured 1.2x slower than the fp32 byte count predicts)
    bw_eff = eff.bw_elementwise * (0.82 if framework == "pytorch" and rb.state == 2 else 1.0)
    bw = gpu.mem_bw_gb_s * 1e9 * bw_eff
    return params_local * per / bw + n_tensors * eff.launch_s


__all__ = ["Efficiency", "default_efficiency", "layer_time", "optimizer_step_s", "gemm_time_s", "SLOTS", "W"]
