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
  the memory-efficient kernel at 0.48-0.61 of the fp32 peak, its backward 2.55-3.2x the forward
  (H200 microbenchmark, FP32_ATTENTION_EFFICIENCY).
* Every other kernel is memory-bound: bytes moved / (HBM bandwidth x e_bw), with e_bw 0.78
  for elementwise kernels and 0.53 for reductions (H200: copy 3.76 TB/s, add 3.92,
  SiLU 3.72, LayerNorm 2.56, log_softmax 2.49 of 4.8 TB/s).
* Each kernel takes at least ``launch_s``: eager PyTorch pays the Python and dispatcher
  cost of every op, so small layers are CPU-bound (the ``pytorch`` framework's floor is
  fitted to the single-GPU runs; fused frameworks launch fewer, larger kernels).
A probe calibration profile replaces e_max, e_bw and the attention curve with measured ones.
When it measured GEMMs at the model's own (M, N, K) shapes, run back to back at sustained clocks
(probe/bench.py ``model_gemms``), it carries a curve of efficiency against FLOPs per precision
(``Efficiency.gemm_curves``) that replaces e_max and t_0 for that precision: each point is one
linear layer's forward, data-gradient and weight-gradient GEMMs together, the three the engine
charges per layer and micro-batch (``layer_time``: forward + 2x forward).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from planner_app.core.arrays import Num, is_array, where
from planner_app.core.models.trace import TPS


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
    # measured GEMM efficiency against FLOPs: ((bits, (log FLOPs, ...), (efficiency, ...)), ...),
    # log FLOPs increasing; empty: the e_max / t_0 law above for every precision
    gemm_curves: tuple = ()

    def with_changes(self, **kw) -> Efficiency:
        return replace(self, **kw)


# GEMM efficiency by GPU family (fraction of dense peak a large cuBLAS/rocBLAS GEMM reaches).
# Hopper: measured here (H200 at 700 W: 0.75-0.78 for isolated 8192-size GEMMs, 0.68-0.70 for
# sustained 16384-size ones, as GEMMs run inside a training step; 0.72 between). Ampere: A100 bf16 8192^3 GEMMs run at
# about 270 TFLOP/s of 312 (NVIDIA's own "up to 87%" cuBLAS figures) -> 0.85. Volta: V100
# fp16 GEMMs reach ~100 of 125 -> 0.8. MI300X: rocBLAS/hipBLASLt bf16 GEMMs reach about
# 700-800 of 1307 TFLOP/s in published benchmarks -> 0.58. Others default to 0.72.
FAMILY_GEMM_MAX = {"hopper": 0.72, "ampere": 0.85, "volta": 0.80, "turing": 0.70, "ada": 0.70,
                   "blackwell": 0.72, "cdna3": 0.58, "cdna2": 0.55, "gaudi": 0.75}

# Grouped expert GEMMs (torch._grouped_mm, as transformers 5.x runs MoE experts): one GEMM per expert
# over its r routed rows; against a dense GEMM of the same FLOPs the kernel ran at r / (r + R0) on
# the H200, R0 = 175 rows for the forward and 310 for forward + backward (data and weight
# gradients; the weight gradient reduces over the r rows), hence 378 for the backward alone
# ((3 x 310 - 175) / 2). Fitted to 16 microbenchmark points (tests/data/grouped_gemm_h200.json,
# benchmarks/gpu/gpu_grouped_gemm.py: Qwen3-30B-A3B, gpt-oss-20b, Qwen1.5-MoE, Mixtral-8x7B shapes, 64-4096
# rows per expert; RMS error of the ratio 9.5% forward, 7.4% forward + backward), not to training runs.
GROUPED_GEMM_R0_FWD = 175.0
GROUPED_GEMM_R0_BWD = 378.0
# The data gradient alone (frozen experts under LoRA: torch._grouped_mm's backward skips the weight
# gradient) runs slower than the forward: R0 = 250 rows, the median of r (t / t_dense - 1) over the 16
# points of grouped_gemm_frozen_h200.json's "grouped_fwd_bwd_frozen_ms" less the forward.
GROUPED_GEMM_R0_BWD_DATA = 250.0
# At decode batches a grouped GEMM call costs a fixed time plus its touched experts' weights streamed at a
# fraction of HBM: torch._grouped_mm (bf16, a CUTLASS grouped GEMM on Hopper) over the gate-up and down
# GEMMs of one MoE layer, 1-128 tokens routed at random, CUDA-graph timed on the H200 (tests/data/
# grouped_gemm_decode_h200.json, benchmarks/gpu/gpu_grouped_gemm_serving.py --decode: Qwen3-30B-A3B,
# Qwen3-235B-A22B (also its TP4 slice), gpt-oss-120b (and TP2), DeepSeek-V3 (and TP8), Mixtral-8x7B; 64
# points). Least squares on the relative error of t = 2 calls x 14.8 us + bytes / (0.598 x 4.8 TB/s): median
# 4.1%, largest 14%; bytes at 0.64 of HBM alone (the earlier law, from all-experts-touched points of
# grouped_gemm_serving_h200.json) was a median 14% fast there. The test recomputes the fit.
GROUPED_GEMM_STREAM_BW_FRACTION = 0.598
GROUPED_GEMM_CALL_S = 14.8e-6
# Weight-only 4-bit GEMMs stay memory-bound on their packed weights up to "batchsizes up to 16-32 ... with
# close to maximum (4x) quantization speedup, and larger batchsizes up to 64-128 with gradually decreasing"
# acceleration (Frantar et al., "MARLIN", PPoPP 2025, arXiv:2408.11743, abstract); the lower end of that
# range is taken. (A 4-bit weight's roofline ridge on an H200 at the bf16 rate: 989 TFLOP/s / 4.8 TB/s /
# 4 FLOP per byte per row = ~50 rows.)
WEIGHT_ONLY_MEMORY_BOUND_ROWS = 16.0


def grouped_gemm_time_s(weight_bytes: Num, flops: Num, rows_per_expert: Num, peak_tflops: Num, eff: Efficiency,
                        hbm_gb_s: Num, bits: int = 16, weight_only_bytes: Num | None = None, calls: Num = 0.0,
                        call_s: float = GROUPED_GEMM_CALL_S) -> Num:
    """One layer's (or a stage's) expert GEMMs as ``calls`` grouped kernel calls: the larger of streaming
    the touched experts' weights (plus ``call_s`` per call) and the dense GEMM time of the same FLOPs
    slowed by (r + R0) / r. The R0 / r part is the kernel's fixed cost per expert, measured with bf16
    weights; a weight-only kernel (W4A16, W8A16: ``weight_only_bytes`` bytes per weight, multiplying at the
    16-bit rate) pays it in proportion to its weights' bytes at small row counts, rising to the full cost at
    WEIGHT_ONLY_MEMORY_BOUND_ROWS rows."""
    rows = np.maximum(rows_per_expert, 1e-9)
    scale: Num = 1.0
    if weight_only_bytes is not None:
        w = np.minimum(np.asarray(weight_only_bytes, dtype=float) / 2.0, 1.0)
        scale = w + (1.0 - w) * np.minimum(rows / WEIGHT_ONLY_MEMORY_BOUND_ROWS, 1.0)
    t_cmp = gemm_time_s(flops, peak_tflops, eff, 1.0, bits) * (1.0 + scale * GROUPED_GEMM_R0_FWD / rows)
    t_stream = weight_bytes / (hbm_gb_s * 1e9 * GROUPED_GEMM_STREAM_BW_FRACTION) + calls * call_s
    return np.maximum(t_stream, t_cmp)

# Element-wise kernels PyTorch cannot vectorise run at about half of HBM bandwidth: eager attention's
# score-sized ops (mask broadcast, scaling, casts) in the H200 profiles, and ops over a slice of a
# fused projection (Phi-3's chunked gate_up: non-vectorised BinaryFunctor kernels, 20 ms of its step,
# tests/data/kernel_profile_h200.json).
NON_VECTORISED_BW_FRACTION = 0.5
# Score-sized kernels over rows of seq + 1 elements (gpt-oss's sink column, modeling_gpt_oss.py): a
# row length that is not a multiple of 8 defeats vectorised loads. H200 microbenchmark (tests/data/
# softmax_rows_h200.json, 262,144 rows): softmax forward + backward over 2,049 columns took 1.61x (bf16)
# and 1.37x (fp32) the time over 2,048; bf16 forward alone 2.06x.
UNALIGNED_ROW_SPEED = 0.62

# The memory-efficient SDPA kernel with an explicit mask runs at this fraction of
# FlashAttention's speed (xformers-style kernel, no block skipping); an estimate.
MASKED_ATTENTION_SPEED = 0.6

# Per-kernel floor of eager PyTorch (Python module call + dispatcher + autograd bookkeeping),
# fitted to the single-GPU Hugging Face runs on the H200; fused frameworks: launch latency only.
FRAMEWORK_LAUNCH_S = {"pytorch": 22e-6, "deepspeed": 22e-6, "megatron": 4e-6}

# DTensor tensor parallelism (torch's parallelize_module, torchtitan's Llama plan) on the host: one Llama
# decoder layer's host time, (forward, backward) seconds, without and with sequence parallelism, the
# median over 2, 4 and 8 ranks (benchmarks/gpu/gpu_host_costs.py part "dtensor", hidden 256 so that only
# the host counts; tests/data/host_costs2_h200.json: forward 3148/3085/2977 us, forward + backward
# 10127/10948/10880 us; with SequenceParallel norms and PrepareModuleInput's all-gathers 3741/3661/6612
# and 11048/12066/13965). The same layer without DTensor took 684-746 us and 3456-4111 us: DTensor's
# per-op sharding propagation, redistribution and wrapping in Python, forward and autograd, is the rest.
DTENSOR_LAYER_HOST_S = {False: (3085e-6, 7862e-6), True: (3741e-6, 7353e-6)}
# That session's host speed, the probe's dispatch test (bench.py TorchBackend.dispatch) at its start and
# end (8.68 and 9.84 us per op, the same file), and the reference host the eager launch_s was measured on
# (probe/calibration.py REFERENCE_DISPATCH_US_PER_OP): the layer times are taken to the reference host by
# their ratio, and to the estimate's host as launch_s is (a probe profile's dispatch calibration).
DTENSOR_HOST_DISPATCH_US, REFERENCE_HOST_DISPATCH_US = (8.68 + 9.84) / 2, 9.1
# The engine's own kernels of that Llama decoder layer (forward, backward: layer_kernels of its profile):
# a DTensor layer of another shape costs the measured time per kernel of its own.
DTENSOR_LAYER_KERNELS = (30, 37)
# Non-reentrant checkpointing (torch.utils.checkpoint, use_reentrant=False: Trainer's gradient
# checkpointing) costs the host this much per layer beyond the recompute forward itself: its saved-tensor
# hooks and the recompute's bookkeeping. Measured as a share of the same layer's forward + backward,
# plain eager, in one session (tests/data/host_costs3_h200.json, decoder_layer_ckpt - decoder_layer -
# its forward, over decoder_layer: 0.82, 0.88, 0.97 at 2, 4, 8 ranks), times that layer's forward +
# backward in the session above (host_costs2: 4111, 3521, 3456 us; the median): the sessions' hosts
# differ, a ratio within one carries over.
CHECKPOINT_LAYER_HOST_S = 0.88 * 3521e-6


def dtensor_kernel_host_s(sequence_parallel, eff: Efficiency):
    """(forward, backward, checkpointing) host seconds per engine kernel of a layer under DTensor tensor
    parallelism, on the host ``eff`` describes (its launch_s against the eager framework's default); the
    last is what non-reentrant checkpointing adds per kernel of the layer (forward and backward)."""
    host = eff.launch_s / FRAMEWORK_LAUNCH_S["pytorch"] * REFERENCE_HOST_DISPATCH_US / DTENSOR_HOST_DISPATCH_US
    (f0, b0), (f1, b1) = DTENSOR_LAYER_HOST_S[False], DTENSOR_LAYER_HOST_S[True]
    nf, nb = DTENSOR_LAYER_KERNELS
    return (where(sequence_parallel, f1, f0) / nf * host, where(sequence_parallel, b1, b0) / nb * host,
            CHECKPOINT_LAYER_HOST_S / (nf + nb) * host)


def layer_kernels(profile) -> tuple:
    """(forward, backward) kernels the engine charges a layer: one per GEMM forward and per gradient
    GEMM, the fused attention's forward and backward (eager attention: two batched GEMMs forward and
    four backward), one per memory-bound op each way."""
    fwd = len(profile.gemms) + (1 if profile.attn_flops else 0) + (2 if profile.bmm_flops else 0) + len(profile.mem_ops)
    bwd = (sum(g[4] if len(g) > 4 else 2 for g in profile.gemms) + (1 if profile.attn_flops else 0)
           + (4 if profile.bmm_flops else 0) + len(profile.mem_ops))
    return fwd, bwd


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


def default_efficiency(gpu, framework: str) -> Efficiency:
    fam = gpu_family(gpu)
    return Efficiency(gemm_max=FAMILY_GEMM_MAX.get(fam, 0.72), launch_s=FRAMEWORK_LAUNCH_S.get(framework, 4e-6),
                      source=f"defaults for {fam} GPUs" + (" (measured on an H200)" if fam == "hopper" else ""))


# GEMMs whose inner or output dimension is not a multiple of 8 elements fall back to
# kernels with narrower vector loads. H200 profiles (tests/data/profiles_h200.json): GPT-2's
# output layer (vocab 50257, alignment 1) ran at 95-150 TFLOP/s and BERT's (30522,
# alignment 2) at 240-265, against ~750 for aligned shapes.
ALIGNMENT_SPEED = {1: 0.17, 2: 0.33, 4: 0.6, 8: 1.0}


def gemm_curve(eff: Efficiency, bits: int):
    """(log FLOPs, efficiency) arrays of the measured curve for ``bits``-bit GEMMs, or None."""
    for b, xs, es in eff.gemm_curves:
        if b == bits:
            return np.asarray(xs, dtype=float), np.asarray(es, dtype=float)
    return None


def gemm_time_s(flops: Num, peak_tflops: Num, eff: Efficiency, speed: Num = 1.0, bits: int = 16) -> Num:
    """One GEMM (or a batch launched as one kernel) of ``flops`` FLOPs; ``speed``: its
    ALIGNMENT_SPEED. Scalars or arrays. With a measured curve for ``bits``: the efficiency
    interpolated in log FLOPs between its points, the end point's beyond the largest; below
    the smallest, the e_max / t_0 law scaled to meet the curve there (small GEMMs keep their
    per-kernel overhead)."""
    law = flops / (peak_tflops * 1e12 * eff.gemm_max * speed) + eff.gemm_overhead_s
    curve = gemm_curve(eff, bits) if eff.gemm_curves else None
    if curve is None:
        return law
    xs, es = curve
    f = np.maximum(flops, 1.0)
    t_curve = f / (peak_tflops * 1e12 * np.interp(np.log(f), xs, es) * speed)
    f0 = float(np.exp(xs[0]))
    scale = (f0 / (peak_tflops * 1e12 * es[0] * speed)) / (f0 / (peak_tflops * 1e12 * eff.gemm_max * speed)
                                                          + eff.gemm_overhead_s)
    t = np.where(f < f0, law * scale, t_curve)
    return t if is_array(flops) or is_array(speed) else float(t)


def attention_time_s(flops: Num, peak_tflops: Num, head_dim: int, eff: Efficiency, bits: int = 16) -> Num:
    """One fused attention kernel of ``flops`` FLOPs."""
    return flops / (peak_tflops * 1e12 * attention_efficiency(head_dim, eff, bits)) + eff.attn_overhead_s


# fp32 q/k/v run SDPA's memory-efficient kernel (flash has no fp32 path). Microbenchmark on the H200
# (tests/data/generate_profile_h200.json "sdpa": causal, width 4,096, b x s = 8K tokens at s 1-4K):
# forward 0.45-0.50 of the fp32 peak at head size 64, 0.57-0.64 at 128; the backward takes 2.5-2.6x
# the forward's time at 64 and 3.1-3.3x at 128 (bf16 on the same shapes: 2.4-2.7x, FlashAttention-2's
# 2.5). Linear in head size between, as a(d) below.
FP32_ATTENTION_EFFICIENCY = {64: 0.48, 128: 0.61}
FP32_ATTENTION_BWD_RATIO = {64: 2.55, 128: 3.2}
ATTENTION_BWD_RATIO = 2.5  # 16-bit: backward FLOPs / forward FLOPs (FlashAttention-2, Dao 2023, sec. 3.2)


def _by_head_dim(table: dict, head_dim: int) -> float:
    lo, hi = table[64], table[128]
    return lo + (hi - lo) * min(1.0, max(0.0, (head_dim - 64) / 64))


def attention_bwd_ratio(head_dim: int, bits: int = 16) -> float:
    """A fused attention backward's time over its forward's, at the same efficiency."""
    return _by_head_dim(FP32_ATTENTION_BWD_RATIO, head_dim) if bits == 32 else ATTENTION_BWD_RATIO


def attention_efficiency(head_dim: int, eff: Efficiency, bits: int = 16) -> float:
    """Fraction of peak a fused attention kernel reaches: a(d) = attn_max for head size 128,
    0.89 attn_max for 64, linear below (module docstring); fp32 inputs from FP32_ATTENTION_EFFICIENCY."""
    if bits == 32:
        a = _by_head_dim(FP32_ATTENTION_EFFICIENCY, head_dim)
        return a if head_dim >= 64 else a * head_dim / 64
    if head_dim >= 64:
        return eff.attn_max * min(1.0, 0.89 + 0.11 * (head_dim - 64) / 64)
    return eff.attn_max * 0.89 * head_dim / 64


def alignment_speed(k, n, bits: int):
    """ALIGNMENT_SPEED of the largest power-of-two element alignment (up to 8) shared by k and
    n; numbers or arrays. A dimension split unevenly is taken at its whole part."""
    if bits == 32:
        return ALIGNMENT_SPEED[8]  # fp32 SIMT GEMMs are not sensitive to it
    k, n = k // 1, n // 1
    speed = ALIGNMENT_SPEED[8]
    for a in (8, 4, 2):
        speed = where((k % a != 0) | (n % a != 0), ALIGNMENT_SPEED[a // 2], speed)
    return speed


_alignment_speed_of = lru_cache(maxsize=4096)(alignment_speed)  # numbers only: the few shapes of the single estimate


def _column(v, like):
    """A per-op vector as a column against ``like`` (ops x configurations); itself for one
    configuration."""
    return v[:, None] if like.ndim > 1 else v


def layer_time(profile, gpu, eff: Efficiency, tokens, seq_len, tp, gemm_bits_default: int, head_dim: int,
               recompute, factors_vec: np.ndarray, causal: bool = True, host_kernel_s=(0.0, 0.0, 0.0)):
    """(forward, backward incl. weight gradients, recomputation) seconds of one layer for one
    micro-batch on one GPU. Array-generic: Python numbers for the single estimate (the result
    is Python floats) or one column per configuration for the search; ``recompute`` is a
    ``RECOMPUTE_CODES`` value (0 none, 1 selective, 2 full) or a column of them and
    ``factors_vec`` the slot factors (``trace.factors``) of the same shape. ``host_kernel_s``: (forward,
    backward, checkpointing) host seconds per kernel of a layer the host issues slower than eager PyTorch
    (``dtensor_kernel_host_s``), the layer's floor: its GPU work waits for the host's."""
    vec = is_array(tokens)
    top, align = (np.maximum, alignment_speed) if vec else (max, _alignment_speed_of)
    floor = eff.launch_s
    fwd: Num = 0.0
    bwd: Num = 0.0
    for gemm in profile.gemms:
        k, n, split, bits = gemm[:4]
        bwd_gemms = gemm[4] if len(gemm) > 4 else 2  # data and weight gradients; 1 for a frozen weight
        rows_per_token = gemm[5] if len(gemm) > 5 else 0.0  # grouped expert GEMM: top_k / experts
        bits = bits if bits in (8, 16, 32) else gemm_bits_default
        peak = gpu.peak_tflops(bits)
        if split == "k":
            local_k, local_n, div = k / tp, n, tp
        elif split == "n":
            local_k, local_n, div = k, n / tp, tp
        else:
            local_k, local_n, div = k, n, 1
        t = top(gemm_time_s(2.0 * tokens * k * n / div, peak, eff, align(local_k, local_n, bits), bits), floor)
        if rows_per_token:
            # one GEMM per expert over its rows r: the grouped kernel runs at r / (r + R0) of a dense GEMM
            rows = top(tokens * rows_per_token, 1.0)
            r0_bwd = GROUPED_GEMM_R0_BWD_DATA if bwd_gemms == 1 else GROUPED_GEMM_R0_BWD
            fwd = fwd + t * (rows + GROUPED_GEMM_R0_FWD) / rows
            bwd = bwd + bwd_gemms * t * (rows + r0_bwd) / rows
            continue
        fwd = fwd + t
        bwd = bwd + bwd_gemms * t
    # fused attention runs at its inputs' precision (fp32 q/k/v under QLoRA's prepare_model_for_kbit_training)
    attn_bits = 32 if (profile.attn_bits == 32 or gemm_bits_default == 32) else 16
    peak_a = gpu.peak_tflops(attn_bits)
    attn_f: Num = 0.0
    attn_b: Num = 0.0
    if profile.attn_flops:
        frac = 0.5 if causal and not profile.attn_masked else 1.0
        f = profile.attn_flops * tokens * seq_len * frac / tp
        attn_f = top(attention_time_s(f, peak_a, head_dim, eff, attn_bits), floor)
        attn_b = top(attention_time_s(attention_bwd_ratio(head_dim, attn_bits) * f, peak_a, head_dim, eff,
                                      attn_bits), floor)
        if profile.attn_masked:
            attn_f = attn_f / MASKED_ATTENTION_SPEED
            attn_b = attn_b / MASKED_ATTENTION_SPEED
    if profile.bmm_flops:
        f = profile.bmm_flops * tokens * seq_len / tp
        t = top(gemm_time_s(f / 2, peak_a, eff, 1.0, attn_bits), floor) * 2  # QK^T and PV
        attn_f = attn_f + t
        attn_b = attn_b + 2 * t
    mem_f = mem_b = score_f = 0.0
    if len(profile.mem_ops):
        nbytes = profile.mem_ops @ factors_vec  # (ops,) or (ops, configurations)
        red = _column(profile.mem_is_reduction, nbytes)
        e = np.where(red, eff.bw_reduction, eff.bw_elementwise)
        # non-vectorised kernels (NON_VECTORISED_BW_FRACTION): score-sized ops of eager attention and
        # ops reading a slice of a wider tensor
        score_sized = _column(profile.mem_ops[:, TPS], nbytes) * factors_vec[TPS] > 0.5 * nbytes
        strided = _column(profile.mem_is_strided, nbytes) if len(profile.mem_is_strided) else False
        e = np.where((score_sized | strided) & ~red, np.minimum(e, NON_VECTORISED_BW_FRACTION), e)
        if len(profile.mem_is_unaligned):
            e = np.where(_column(profile.mem_is_unaligned, nbytes), e * UNALIGNED_ROW_SPEED, e)
        t_ops = nbytes / (gpu.mem_bw_gb_s * 1e9 * e)
        t_fwd = np.maximum(t_ops, floor)
        mem_f = t_fwd.sum(axis=0)
        mem_b = np.maximum(2 * t_ops, floor).sum(axis=0)
        score_f = np.where(score_sized, t_fwd, 0.0).sum(axis=0)
        if not vec:
            mem_f, mem_b, score_f = float(mem_f), float(mem_b), float(score_f)
    fwd = fwd + (attn_f + mem_f)
    bwd = bwd + (attn_b + mem_b)
    host_f, host_b, host_ckpt = host_kernel_s
    # full: the whole forward again; selective: the attention core (its matmuls and the score-sized ops)
    rec = where(recompute == 2, fwd, where(recompute == 1, attn_f + score_f, 0.0))
    if not (np.ndim(host_f) == 0 and host_f == 0):  # a host-bound layer: its kernels wait for the host
        nf, nb = layer_kernels(profile)
        fwd, bwd = np.maximum(fwd, nf * host_f), np.maximum(bwd, nb * host_b)
        rec = where(recompute == 2, np.maximum(rec, nf * host_f + (nf + nb) * host_ckpt), rec)
        if not vec:
            fwd, bwd, rec = float(fwd), float(bwd), float(rec)
    return fwd, bwd, rec


# Kernel launches charged to one optimizer step (``launch_s`` each). Not measured: a round
# figure carried from the first step-time model (commit b3357c2), which gives no source.
OPTIMIZER_STEP_LAUNCHES = 200


# PyTorch's fused AdamW (_fused_adamw_) reads parameter, gradient and both moments and writes
# parameter and moments once: 7 element accesses per parameter. It moves those bytes at about
# 0.6 of the element-wise bandwidth on the H200 (Llama-2-7B bf16: 38.4 ms measured, 42.4
# predicted; Llama-3.2-1B: 8.5 against 7.8; tests/data/finetune_runs_h200.json): a fit to these
# two runs on one GPU, to be re-checked on others.
FUSED_ADAMW_ACCESSES = 7
FUSED_ADAMW_BW_FRACTION = 0.6
# PyTorch's foreach and for-loop AdamW run the same element-wise ops (mul_, lerp_, mul_,
# addcmul_, sqrt, div_, add_, addcdiv_): 20 accesses per parameter.
ADAMW_OP_ACCESSES = 20
# foreach kernels over 16-bit states reach ~3.0 TB/s on the H200 against ~3.7 for fp32 (bf16
# AdamW steps measured 1.2x slower than the fp32 byte count predicts); the per-tensor for-loop
# kernels do not pay it (Llama-2-7B bf16 for-loop step: 70.2 ms measured, 73 predicted).
FOREACH_16BIT_BW_FACTOR = 0.82

# bitsandbytes 8-bit AdamW (bnb.optim.AdamW8bit / PagedAdamW8bit, 0.50.2) is not memory-bound: its
# blockwise kernel (dequantise both states, update, new absmax per 256-value block, re-quantise by
# search in the dynamic map) ran at 36.4 G elements/s on the H200 over one 256M-element bf16 tensor,
# i.e. 0.08 of HBM bandwidth for its 10 bytes per element; and step() issues one kernel per tensor
# from Python and waits for it (its host time equals its wall time): 41 us per tensor (paged: 35.4 G
# elements/s and 53 us, the prefetch of each state). tests/data/optimizer_steps_h200.json
# (benchmarks/gpu/gpu_optimizer_step.py: 1 x 256M, 128 x 4M and 512 x 64K tensors); Llama-3.2-1B's 146
# tensors then predict 40.1 ms against 39.7 measured. The element rate is taken to scale with the
# GPU's fp32 vector rate (an ALU-bound kernel; H200: 67 TFLOP/s), the per-tensor cost is the host's.
BNB_8BIT_ELEMENTS_PER_S = {"adamw-8bit": 36.4e9, "adamw-8bit-paged": 35.4e9}
BNB_8BIT_PER_TENSOR_S = {"adamw-8bit": 41e-6, "adamw-8bit-paged": 53e-6}
BNB_REFERENCE_FP32_TFLOPS = 67.0  # H200 SXM, spec_data/gpus.csv


def bnb_8bit_step_s(params_local, tensors_local, optimizer: str, gpu):
    """bitsandbytes' 8-bit AdamW step: elements at the measured kernel rate, scaled by the GPU's fp32
    vector rate, plus its per-tensor host cost (BNB_8BIT_ELEMENTS_PER_S)."""
    scale = (gpu.fp32_tflops / BNB_REFERENCE_FP32_TFLOPS) if getattr(gpu, "fp32_tflops", 0) else 1.0
    rate = BNB_8BIT_ELEMENTS_PER_S[optimizer] * scale
    return where(params_local > 0, params_local / rate + tensors_local * BNB_8BIT_PER_TENSOR_S[optimizer], 0.0)


def optimizer_step_s(params_local, optimizer: str, rb, framework: str, gpu, eff: Efficiency,
                     impl: str, tensors_local):
    """Memory-bound optimizer step: element accesses per parameter x bytes / bandwidth, plus
    OPTIMIZER_STEP_LAUNCHES kernel launches; ``params_local``: a number or a column;
    ``tensors_local``: the parameter tensors it steps (bitsandbytes pays per tensor).

    PyTorch AdamW (torch/optim/adam.py): ``impl`` "foreach" (_multi_tensor_adam) and
    "forloop" (_single_tensor_adam) run ADAMW_OP_ACCESSES element accesses of the state dtype per
    parameter, "fused" (_fused_adamw_) FUSED_ADAMW_ACCESSES. Fused Adam of Apex/Megatron and
    DeepSpeed reads gradient, master weight and two moments and writes them back plus the 16-bit
    copy: ~(g + 2m + 2*4*2 + p) bytes. SGD with momentum: 3 foreach ops, 8 accesses.
    """
    # FOREACH_16BIT_BW_FACTOR for every foreach-style step over 16-bit states; PyTorch's fused and
    # for-loop AdamW have their own
    factor = FOREACH_16BIT_BW_FACTOR if framework == "pytorch" and rb.state == 2 else 1.0
    torch_adamw = framework == "pytorch" and optimizer in ("adam", "adamw")
    if torch_adamw and impl == "fused":
        per, factor = FUSED_ADAMW_ACCESSES * rb.state, FUSED_ADAMW_BW_FRACTION
    elif torch_adamw:
        per = ADAMW_OP_ACCESSES * rb.state
        factor = 1.0 if impl == "forloop" else factor
    elif optimizer in ("adam", "adamw"):
        per = rb.grad + 2 * (rb.master or rb.param) + 2 * 2 * rb.state + rb.param
    elif optimizer in ("adamw-8bit", "adamw-8bit-paged"):
        return bnb_8bit_step_s(params_local, tensors_local, optimizer, gpu)
    elif optimizer == "sgd-momentum":
        per = 8 * rb.state
    elif optimizer == "sgd":
        per = 3 * rb.param
    else:  # adafactor: factored second moment, a few full passes over the update
        per = 12 * 4
    bw = gpu.mem_bw_gb_s * 1e9 * eff.bw_elementwise * factor
    return where(params_local > 0, params_local * per / bw + OPTIMIZER_STEP_LAUNCHES * eff.launch_s, 0.0)


# AdamW's step on the host, as CPU offload runs it (FSDP2's CPUOffloadPolicy: the sharded parameters,
# gradients and states live on the CPU and the optimizer steps them there; ZeRO-Offload likewise), in
# elements per second by torch.optim implementation and by the bytes of the parameters stepped: a
# Llama-3.1-8B shard over 8 ranks (291 tensors, 1.0e9 elements) on the H200 machine's 16-core Xeon
# (benchmarks/gpu/gpu_host_costs.py part "cpu_adamw", tests/data/host_costs2_h200.json). "foreach" is
# also the for-loop's rate: on CPU tensors (and on DTensors, which split a foreach op per tensor) both
# run one op per tensor; an FSDP2 offload step over DTensor shards took 524 ms for those 1.0e9
# elements, the foreach rate's 567 (tests/data/fake_pg_profile2_h200.json). DeepSpeed's CPU Adam is a
# fused vectorised kernel: taken at torch's fused rate (not measured here).
HOST_ADAMW_ELEMENTS_PER_S = {("fused", 2): 6.41e9, ("fused", 4): 3.73e9,
                             ("foreach", 2): 1.77e9, ("foreach", 4): 1.16e9}


def host_adamw_kind(impl: str, framework: str) -> str:
    """Which measured host AdamW rate a CPU-offloaded step runs at (HOST_ADAMW_ELEMENTS_PER_S)."""
    return "fused" if impl == "fused" or framework == "deepspeed" else "foreach"


def host_optimizer_step_s(params_local, impl: str, framework: str, state_bytes: int):
    """The optimizer step of ``params_local`` parameters on the host (HOST_ADAMW_ELEMENTS_PER_S; other
    optimizers at AdamW's rate: their element work is no larger)."""
    rate = HOST_ADAMW_ELEMENTS_PER_S[(host_adamw_kind(impl, framework), 4 if state_bytes >= 4 else 2)]
    return where(params_local > 0, params_local / rate, 0.0)

