"""A continuous-batching LLM server at steady state (vLLM by default; SGLang and TensorRT-LLM
differ by their per-step overheads).

Memory per GPU (vLLM ``gpu_worker.determine_available_memory``): the engine may use
``gpu_memory_utilization`` x capacity; weights, the profiled activation peak of one
``max_num_batched_tokens`` forward, CUDA graphs (profiled inside that budget by default since
vLLM 0.21) and non-torch memory come off it; the rest is the KV pool, in pages of ``block_size``
tokens. A running request holds the pages of its prompt and, on average, the share of its output its
engine holds (EngineConstants.kv_output_held: pages taken as tokens are generated, or the whole output
reserved at admission); beyond what the pool holds, requests queue (no preemption modelled).

Time: every engine step runs the running decodes and, with chunked prefill, prefill chunks up to
``max_num_batched_tokens`` tokens in all (vLLM V1's scheduler serves running decodes first). A
step is a roofline per kernel class: the GEMMs read the weights (only the experts the step's
tokens touch) or compute at the GPU's peak; attention reads the KV cache or computes; tensor
parallel adds two all-reduces per layer, expert parallel over attention-DP ranks an all-gather and a
reduce-scatter per MoE layer (core/hardware/network.py); each layer pays a few kernels' floor; each step the engine's CPU
overhead. Steady state: with R requests running, D decode while R - D prefill; requests finish at
D / (osl - 1) per step and need isl prefill tokens each, so D = R (osl-1) / (osl-1+chunks) until
the prefill budget (max_num_batched_tokens - D per step) runs out, where D stops at
M (osl-1) / (osl-1+isl) and the rest wait for prefill. Beyond max_concurrency, requests queue
(Little's law: the wait is the queue over the completion rate).

Every function is array-generic (numbers, or numpy columns: one per deployment), so the single
estimate and the SLO search run the same code.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from planner_app.core.arrays import Num
from planner_app.core.hardware import compute, network
from planner_app.core.hardware.specs import CUDA_CONTEXT_BYTES
from planner_app.core.inference.memory import prefill_live_width

if TYPE_CHECKING:
    from planner_app.core.hardware.machine import Hardware
    from planner_app.core.models.spec import ModelSpec

# --- vLLM's configuration defaults (vllm/engine/arg_utils.py ``get_batch_defaults``, vLLM 0.10-0.11,
# OpenAI server): GPUs of >= 70 GiB except the A100 get max_num_seqs 1024 and max_num_batched_tokens
# 8192; the others 256 and 2048. gpu_memory_utilization 0.9 and block_size 16 (vllm/config/cache.py).
GPU_MEMORY_UTILIZATION = 0.9
BLOCK_SIZE_TOKENS = 16
LARGE_GPU_BYTES = 70 * 2**30
MAX_NUM_SEQS_LARGE, MAX_NUM_SEQS_SMALL = 1024, 256
MAX_BATCHED_TOKENS_LARGE, MAX_BATCHED_TOKENS_SMALL = 8192, 2048

# CUDA graphs: vLLM logs 0.21 GiB for Llama-3.2-1B (vllm PR #11349) and 0.36 GiB for a TP=2 model
# (gpustack/runner PR #251, "Estimated CUDA graph memory: 0.36 GiB total"); larger models capture
# more nodes: 0.5 GiB, an estimate.
CUDA_GRAPH_BYTES = 0.5 * 2**30
# Non-torch memory (CUDA context, NCCL and custom all-reduce buffers): vLLM logs "non_torch_memory
# takes 0.33-0.39 GiB" (vllm issues #14452, #11251); the engine's measured CUDA context is 0.55 GB
# (core/training/states.py); with tensor parallel NCCL adds its buffers: 0.25 GiB, an estimate.
NCCL_BYTES = 0.25 * 2**30
# The sampler's dummy run profiles fp32 logits for max_num_seqs requests (vLLM gpu_model_runner
# ``_dummy_sampler_run``).
SAMPLER_LOGIT_BYTES = 4

# Quantised weights carry scales (fp8/int8/int4 as core/inference/memory.py QUANT_OVERHEAD); NVFP4 has one
# fp8 scale per 16 values (NVIDIA, "Introducing NVFP4", 2025): 1/16 byte per weight.
SERVE_WEIGHT_BYTES = {"bf16": 2.0, "fp8": 1.0 * (1 + 1 / 128), "int8": 1.0 * (1 + 2 / 128),
                      "int4": 0.5 * (1 + 4 / 128), "fp4": 0.5 + 1 / 16}
SERVE_WEIGHT_DTYPES = tuple(SERVE_WEIGHT_BYTES)
SERVE_KV_BYTES = {"bf16": 2.0, "fp8": 1.0}
SERVE_KV_DTYPES = tuple(SERVE_KV_BYTES)
# GEMM precision: fp8 weights run W8A8 fp8 GEMMs; fp4 runs at the fp8 rate here (the spec data has
# no fp4 column; Blackwell's fp4 is 2x fp8, so fp4 decode compute is overstated there); int8/int4
# are weight-only (W8A16/W4A16 Marlin kernels dequantise to 16 bits). Where a GPU has no fp8 (fp4)
# tensor cores, core/serving/support.py gemm_bits makes fp8 (fp4) weight-only at 16 bits too.
GEMM_BITS = {"bf16": 16, "fp8": 8, "fp4": 8, "int8": 16, "int4": 16}
# FP8 GEMMs do not reach twice the bf16 rate at a model's shapes: the probe on this project's H200
# (tests/data/probe_h200.json, torch._scaled_mm against bf16 matmul) measured fp8/bf16 = 1.17-1.56
# over the six non-square shapes (2048x4096x4096 ... 4096x32000x4096), geometric mean 1.38, where
# the datasheet ratio is 2. The fp8 GEMM rate is the bf16 peak x this, capped at the fp8 peak.
FP8_GEMM_SPEEDUP_OVER_BF16 = 1.38

# Kernels per layer in a decode step (norms, QKV GEMM, rope + cache write, attention, output GEMM,
# gate-up GEMM, activation, down GEMM, residual adds) and the floor of one kernel replayed from a CUDA
# graph: ~2.5 us on Hopper (nsys traces of CUDA-graph decode show 2-4 us for tiny kernels); estimates.
# Measured on this project's H200 (tests/data/decode_runs_h200_*.json "kernel_floor_us"): an empty
# kernel replayed from a graph costs 0.87-0.92 us; the small kernels of a decode step 1-5 us each
# (torch.profiler, batch 1: fused RMSNorm 1.8 us, KV-cache index_copy 2.4 us, top-k 4.9 us).
KERNELS_PER_LAYER = 10
KERNEL_FLOOR_S = 2.5e-6
# A routed MoE block runs 7 kernels where a dense MLP runs 3: the router GEMM, top-k softmax, the
# token-expert sort (moe_align_block_size), the gate-up and down grouped GEMMs, the activation and the
# weighted sum (vllm/model_executor/layers/fused_moe/fused_moe.py: topk_softmax, moe_align_block_size,
# invoke_fused_moe_kernel x2, silu_and_mul, moe_sum); shared experts add a dense MLP's 3.
MOE_EXTRA_KERNELS = 4
SHARED_EXPERT_KERNELS = 3
# Per-head q/k RMSNorm (Qwen3, OLMo-2): two more kernels per layer (vllm/model_executor/models/qwen3.py
# Qwen3Attention: q_norm and k_norm applied separately).
QK_NORM_KERNELS = 2
# MLA (DeepSeek-V2/V3, Kimi K2) decoding in the absorbed form runs 5 kernels a GQA layer does not: the
# q_a and kv_a RMSNorms and the q_b projection (vllm/model_executor/models/deepseek_v2.py
# DeepseekV2MLAAttention: fused_qkv_a_proj, q_a_layernorm, q_b_proj, kv_a_layernorm) and the two
# absorption bmms, q_nope x W_UK_T before attention and _v_up_proj after it
# (vllm/v1/attention/backends/mla/common.py MLACommonImpl.forward, decode branch); its cache write
# (concat_and_cache_mla), RoPE and attention kernel stand where GQA's do.
MLA_EXTRA_KERNELS = 5


@dataclass(frozen=True)
class EngineConstants:
    name: str
    step_overhead_s: float  # CPU time per engine step the GPU waits for (scheduling, input prep, sampling)
    source: str
    # the dense MLP's activation runs in the gate-up GEMM's epilogue and RoPE with the KV-cache write
    # inside attention (no element-wise pass for either; act_traffic)
    fused_act: bool = False
    # CPU time per running request per step (the executor's Python bookkeeping of each request: inputs,
    # sampling results, responses), run beside the GPU step by the overlap scheduler: a step takes the
    # longer of the two (step_parts "host_wait"). 0: not modelled for this engine.
    host_s_per_request: float = 0.0
    # share of its output's KV pages a running request holds on average at steady state: engines that
    # allocate pages as tokens are generated hold the prompt and, on average, half the output (requests are
    # spread over their decode); one that reserves the whole output at admission holds all of it
    kv_output_held: float = 1.0
    # gpu_memory_utilization as the engine reads it: False, the share of the whole GPU the engine's weights,
    # workspace and KV pool may fill (vLLM gpu_memory_utilization, SGLang mem_fraction_static); True, the share
    # of the memory still free after the model is loaded that the KV pool takes (TensorRT-LLM KvCacheConfig
    # free_gpu_memory_fraction, default 0.9: "allocate 90% of free GPU memory for KV cache", TensorRT-LLM docs,
    # examples/kvcacheconfig)
    kv_fraction_of_free: bool = False


# Per-step overheads. vLLM V1 overlaps little of its scheduler and input preparation with the GPU
# until async scheduling became its default (v0.14.0 release notes, PR #27614; opt-in since PR #19970);
# the v0.6.0 blog (2024-09-05) profiled v0.5.3 on Llama-3-8B / one H100 at 38% of the time in GPU
# execution, 33% in the HTTP API server and 29% in scheduling and input preparation. SGLang's overlap
# scheduler hides the CPU work of the next batch (SGLang v0.4 blog, 2024-12-04, "zero-overhead batch
# scheduler"); TensorRT-LLM's C++ executor with its overlap scheduler likewise. The millisecond values
# are estimates, not fits.
ENGINES = {
    # kv_output_held: vLLM V1 allocates a request's pages step by step (vllm/v1/core/sched/scheduler.py:
    # kv_cache_manager.allocate_slots for the new tokens, preemption when none are free): 0.5. SGLang
    # allocates per token too and, before admitting a prompt, keeps new_token_ratio x each running request's
    # remaining output in reserve; the ratio decays from SGLANG_INIT_NEW_TOKEN_RATIO 0.7 to 0.7 x
    # SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.1 = 0.07 while nothing is retracted (sglang/srt/managers/
    # scheduler.py): 0.5 + 0.07 x 0.5 = 0.535. TensorRT-LLM's default capacity scheduler policy,
    # GUARANTEED_NO_EVICT, admits a request only with pages for its whole output (tensorrt_llm SchedulerConfig): 1.
    "vllm": EngineConstants("vllm", 0.6e-3, "vLLM V1 blog 2025-01-27; v0.6.0 blog 2024-09-05 (estimate)",
                            kv_output_held=0.5),
    "sglang": EngineConstants("sglang", 0.25e-3, "SGLang v0.4 blog 2024-12-04, overlap scheduler (estimate)",
                              kv_output_held=0.535),
    # TensorRT-LLM: GatedMLP's gemm_swiglu (tensorrt_llm/layers/mlp.py) and the attention's fused QKV
    # preprocessing (bias + RoPE + KV-cache write, cpp/tensorrt_llm/kernels/unfusedAttentionKernels);
    # vLLM and SGLang run SiluAndMul and rotary_embedding as their own kernels (vllm/model_executor/layers/
    # activation.py, rotary_embedding.py)
    # host_s_per_request: TensorRT-LLM PR #10273 (2025-12-24): GPT-OSS-120B on GB200, attention DP 2 with
    # max_batch_size 1536 per rank at 3072 concurrent requests (ISL/OSL 1k/1k), a host-bound setting:
    # host_step_time 45.11 ms per iteration = 29.4 us per running request (a Grace host; x86 hosts of
    # DGX B200/H200 not measured). vLLM and SGLang: no such measurement found, not modelled.
    "trtllm": EngineConstants("trtllm", 0.25e-3, "TensorRT-LLM overlap scheduler, C++ executor (estimate)",
                              fused_act=True, host_s_per_request=45.11e-3 / 1536, kv_fraction_of_free=True),
}
ENGINE_NAMES = tuple(ENGINES)
# The EngineConstants a Deployment carries (the same names there): what an engine changes in a step and
# in the KV pool; engine_fields copies them, so a new engine constant reaches every deployment at once.
ENGINE_STEP_FIELDS = ("step_overhead_s", "fused_act", "host_s_per_request", "kv_output_held", "kv_fraction_of_free")


def engine_fields(name: str) -> dict:
    """The Deployment fields of engine ``name`` (ENGINE_STEP_FIELDS)."""
    e = ENGINES[name]
    return {f: getattr(e, f) for f in ENGINE_STEP_FIELDS}


def engine_defaults(capacity_bytes: float, gpu_name: str) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM picks for a GPU of this size."""
    large = capacity_bytes >= LARGE_GPU_BYTES * 0.99 and "a100" not in gpu_name.lower()
    return ((MAX_NUM_SEQS_LARGE, MAX_BATCHED_TOKENS_LARGE) if large
            else (MAX_NUM_SEQS_SMALL, MAX_BATCHED_TOKENS_SMALL))


@dataclass(frozen=True)
class ModelShape:
    """The scalars of a model the serving formulas need (one model per call)."""

    layers: int
    hidden: int
    vocab: int
    heads: int
    kv_heads: int
    head_dim: int
    mla_width: int  # latent + rope elements per token and layer (0: not MLA)
    q_width: int
    attn_out_width: int
    decode_attn_width: int  # per query token and cached token: QK + PV widths of one decode step
    dense_linear: float  # GEMM weights outside the routed experts, lm_head excluded
    expert_linear: float  # routed experts' GEMM weights, all layers
    other_params: float  # embeddings, lm_head, norms, biases (kept 16-bit)
    lm_head: float
    active_expert_linear: float  # routed expert GEMM weights one token passes through
    experts: int
    top_k: int
    moe_layers: int
    live_width: float  # 16-bit elements per token live in one layer's forward (workspace)
    kernels: float  # kernels one decode step launches, all layers (kernels_per_step)
    model: ModelSpec  # for attended_context
    # element-wise traffic per token, all layers, in activation elements (act_traffic): norms and the
    # KV-cache write (replicated across TP), RoPE, the dense MLP's activation (split by TP), the routed
    # blocks' dispatch + combine and activation (split by max(tp, ep))
    act_norm_cache: float = 0.0
    act_rope: float = 0.0
    act_mlp: float = 0.0
    act_moe: float = 0.0


def model_shape(model: ModelSpec) -> ModelShape:
    h = model.hidden
    mats = 3 if model.mlp == "swiglu" else 2
    expert = model.moe_layers * model.experts * mats * h * model.expert_ffn_hidden if model.is_moe else 0
    lm_head = model.vocab * h
    linear = model.linear_weight_params() - lm_head
    mla = (model.kv_lora_rank + model.qk_rope_dim) if model.arch == "deepseek" else 0
    return ModelShape(layers=model.layers, hidden=h, vocab=model.vocab, heads=model.heads, kv_heads=model.kv_heads,
                      head_dim=model.head_dim, mla_width=mla, q_width=model.q_width,
                      attn_out_width=model.attn_out_width,
                      decode_attn_width=mla_decode_attn_width(model) if mla else model.q_width + model.attn_out_width,
                      dense_linear=float(linear - expert),
                      expert_linear=float(expert), other_params=float(model.params_total - linear),
                      lm_head=float(lm_head),
                      active_expert_linear=float(model.moe_layers * model.top_k * mats * h * model.expert_ffn_hidden)
                      if model.is_moe else 0.0,
                      experts=model.experts if model.is_moe else 0, top_k=model.top_k if model.is_moe else 0,
                      moe_layers=model.moe_layers, live_width=float(prefill_live_width(model)),
                      kernels=kernels_per_step(model), model=model, **act_traffic(model))


def kernels_per_step(model: ModelSpec) -> float:
    """Kernels of one decode step (all layers): KERNELS_PER_LAYER, the MoE blocks' extra kernels, the
    per-head q/k norms and MLA's extra kernels."""
    n = model.layers * (KERNELS_PER_LAYER + (QK_NORM_KERNELS if model.qk_norm != "none" else 0)
                        + (MLA_EXTRA_KERNELS if model.arch == "deepseek" else 0))
    if model.is_moe:
        n += model.moe_layers * (MOE_EXTRA_KERNELS + (SHARED_EXPERT_KERNELS if model.shared_ffn_hidden else 0))
    return float(n)


# Element-wise traffic of a serving engine's layer, in activation elements per token (read + written;
# 16-bit): two fused residual-add + RMSNorm kernels (each reads the residual and the input and writes
# both: 4 hidden; vLLM fused_add_rms_norm, TensorRT-LLM's fused residual norm) and the KV-cache write
# (2 kv widths); unless the engine fuses them (EngineConstants.fused_act), RoPE on q and k (reads and
# writes both: 2 (q + kv)) and the MLP activation (SwiGLU's silu_and_mul reads gate and up, writes one:
# 3 ffn; GELU 2 ffn). A routed MoE block adds the dispatch (reads the token, writes top_k copies) and the
# combine (reads top_k expert outputs, writes one): 2 (1 + top_k) hidden (vLLM fused_moe's moe_permute
# and moe_sum; TensorRT-LLM's expandInputRows and finalizeMoeRouting), and its experts' activation.
ACT_BYTES = 2.0


def act_traffic(model: ModelSpec) -> dict[str, float]:
    h = model.hidden
    act = 3 if model.mlp == "swiglu" else 2
    kv = model.kv_lora_rank + model.qk_rope_dim if model.arch == "deepseek" else model.kv_heads * model.head_dim
    moe = 0.0
    if model.is_moe:
        moe = model.moe_layers * (2 * (1 + model.top_k) * h + act * model.top_k * model.expert_ffn_hidden
                                  + act * model.shared_ffn_hidden)
    return {"act_norm_cache": float(model.layers * (8 * h + 2 * kv)),
            "act_rope": float(model.layers * 2 * (model.q_width + kv)),
            "act_mlp": float(model.dense_mlp_layers * act * model.ffn_hidden), "act_moe": float(moe)}


def mla_decode_attn_width(model: ModelSpec) -> int:
    """MLA decode runs "absorbed" (DeepSeek-V2 paper, arXiv:2405.04434 sec. 2.1.3: W_UK folds into the
    query, W_UV into the output): every head attends over the cached latent directly, an MQA with
    QK width kv_lora_rank + qk_rope_dim (576 for DeepSeek-V3) and PV width kv_lora_rank (512). FlashMLA
    counts 2 h_q s_q s_k (d_k + d_v) FLOPs with d_k 576, d_v 512 and finds decode compute-bound
    (deepseek-ai/FlashMLA docs/20250422-new-kernel-deep-dive.md); vLLM's MLA backends decode this way
    and prefill in the decompressed MHA form (vllm/v1/attention/backends/mla/common.py). Per query and
    cached token: heads x (2 kv_lora_rank + qk_rope_dim)."""
    return model.heads * (2 * model.kv_lora_rank + model.qk_rope_dim)


@dataclass(frozen=True)
class Deployment:
    """One replica's layout and the engine settings; numbers or equal-length numpy columns."""

    # the layout and engine settings, as a ServeRequest resolves them (core/serving/deployment.py)
    tp: Num
    pp: Num
    ep: Num
    attention_dp: Num
    replicas: Num
    weight_bytes: Num  # per GEMM weight, scales included (SERVE_WEIGHT_BYTES)
    kv_bytes: Num  # per KV element
    gmu: Num
    max_num_seqs: Num
    max_batched_tokens: Num
    # EngineConstants (engine_fields), vLLM's unless given
    step_overhead_s: Num = ENGINES["vllm"].step_overhead_s
    fused_act: Num = ENGINES["vllm"].fused_act
    host_s_per_request: Num = ENGINES["vllm"].host_s_per_request
    kv_output_held: Num = ENGINES["vllm"].kv_output_held
    kv_fraction_of_free: Num = ENGINES["vllm"].kv_fraction_of_free

    @property
    def gpus_per_replica(self) -> Num:
        return self.tp * self.pp * self.attention_dp


@dataclass(frozen=True)
class Device:
    """The GPU's figures (numbers or columns): capacity, HBM bandwidth, GEMM peak for the weights'
    precision, the 16-bit peak (attention), and the efficiency and topology it reaches."""

    capacity_bytes: Num
    mem_bw_gb_s: Num
    gemm_peak_tflops: Num
    attn_peak_tflops: Num
    eff: compute.Efficiency
    topo: network.Topology
    gemm_bits: Num = 16  # 8: fp8/fp4 tensor cores; 16: 16-bit (weight-only kernels for smaller weights)

    @functools.cached_property
    def eff_graphed(self) -> compute.Efficiency:
        """``eff`` without the per-GEMM overhead: under CUDA graphs a kernel's floor is KERNEL_FLOOR_S,
        counted apart (step_parts "kernel_floor"); derived once per device, not per step."""
        return self.eff.with_changes(gemm_overhead_s=0.0)


# ---------------------------------------------------------------- memory
def weights_per_gpu_bytes(s: ModelShape, d: Deployment) -> Num:
    """Weights on one GPU: attention, dense MLPs, shared experts, embeddings split tp x pp ways;
    routed experts split over max(tp, ep) x pp GPUs (tensor- or expert-parallel), replicated over
    the attention data-parallel ranks otherwise."""
    dense = (s.dense_linear * d.weight_bytes + s.other_params * 2.0) / (d.tp * d.pp)
    experts = s.expert_linear * d.weight_bytes / (d.pp * np.maximum(d.tp, d.ep))
    return dense + experts


def kv_bytes_per_token_gpu(s: ModelShape, d: Deployment) -> Num:
    """KV bytes per token of one sequence on one GPU (its pipeline stage's layers): GQA caches
    2 x kv_heads x head_dim per layer, kv heads split by tp and replicated when tp > kv_heads
    (vLLM); MLA caches the latent and the rope key, replicated on every tp rank (vLLM's MLA)."""
    per_layer: Num
    if s.mla_width:
        per_layer = s.mla_width * 1.0
    else:
        per_layer = 2.0 * np.maximum(1.0, s.kv_heads / d.tp) * s.head_dim
    return s.layers / d.pp * per_layer * d.kv_bytes


def workspace_bytes(s: ModelShape, d: Deployment) -> Num:
    """vLLM's profiled activation peak: one forward of max_num_batched_tokens tokens (one layer's
    live intermediates, core/inference/memory.py prefill_live_width, split by tp) and the sampler's fp32
    logits of max_num_seqs requests."""
    return (d.max_batched_tokens * s.live_width * 2.0 / d.tp
            + d.max_num_seqs * s.vocab * SAMPLER_LOGIT_BYTES)


def memory_per_gpu(s: ModelShape, d: Deployment, capacity_bytes: Num) -> dict[str, Num]:
    """Bytes per GPU by component; they sum to the engine's use: gmu x capacity, or (an engine whose fraction
    is of the free memory, EngineConstants.kv_fraction_of_free) the model plus gmu x what it leaves free."""
    w = weights_per_gpu_bytes(s, d)
    ws = workspace_bytes(s, d)
    other = CUDA_CONTEXT_BYTES + np.where(d.gpus_per_replica > 1, NCCL_BYTES, 0.0)
    fixed = w + ws + other + CUDA_GRAPH_BYTES
    kv = np.where(d.kv_fraction_of_free, d.gmu * (capacity_bytes - fixed), d.gmu * capacity_bytes - fixed)
    return {"weights": w, "kv_pool": kv, "activation_workspace": ws, "cuda_graphs": CUDA_GRAPH_BYTES + 0 * kv,
            "other": other, "device_use": fixed + kv}


# ---------------------------------------------------------------- time
def experts_touched_fraction(tokens: Num, top_k: int, experts: int) -> Num:
    """Expected share of a layer's routed experts that ``tokens`` tokens touch when each picks
    ``top_k`` distinct experts uniformly: an expert escapes one token with probability 1 - k/E,
    so E (1 - (1 - k/E)^T) distinct experts are read (uniform routing; a trained router is
    skewed, so real steps touch somewhat fewer)."""
    return 1.0 - (1.0 - top_k / experts) ** np.maximum(tokens, 0.0)


STEP_PARTS = ("dense_gemm", "expert_gemm", "attention", "communication", "elementwise", "kernel_floor",
              "engine_overhead", "host_wait")


def step_time_s(s: ModelShape, dev: Device, d: Deployment, decodes: Num, prefill_tokens: Num, decode_ctx: Num,
                prefill_ctx: Num) -> Num:
    """One engine step of one replica: ``decodes`` running decodes (per attention-DP rank) at
    mean context ``decode_ctx`` plus ``prefill_tokens`` prompt tokens at mean context
    ``prefill_ctx``. Pipeline parallel: the batch is split into pp micro-batches that pass the pp
    stages, so a token waits pp stage times. The sum of ``step_parts``."""
    return sum(step_parts(s, dev, d, decodes, prefill_tokens, decode_ctx, prefill_ctx).values())


def step_parts(s: ModelShape, dev: Device, d: Deployment, decodes: Num, prefill_tokens: Num, decode_ctx: Num,
               prefill_ctx: Num) -> dict[str, Num]:
    """The parts of step_time_s in seconds (STEP_PARTS; pipeline stages included): the GEMMs outside
    the routed experts, the routed experts' grouped GEMMs, attention, the collectives, element-wise
    traffic, the kernels' floors, the engine's per-step CPU overhead, and the wait for the host's
    per-request work where that takes longer than all of these (EngineConstants.host_s_per_request;
    ``decodes`` requests per rank)."""
    pp = d.pp
    dec = decodes / pp
    pre = prefill_tokens / pp
    tokens = dec + pre
    # EP over the attention-DP ranks: every rank pads its step to the largest rank's token count, so the
    # experts see adp x this rank's tokens, a prompt chunk included (vllm/v1/worker/gpu_model_runner.py
    # get_dp_padding: "padding is enabled for prefills"; TensorRT-LLM's MoE use_dp_padding for NVFP4)
    moe_tokens = tokens * np.where(d.ep > 1, d.attention_dp, 1)
    eff = dev.eff
    bw = dev.mem_bw_gb_s * 1e9 * eff.bw_elementwise
    # GEMMs: the weights the step reads (experts: those its tokens touch, E(1-(1-k/E)^T)) or FLOPs
    dense_w = (s.dense_linear * d.weight_bytes + s.lm_head * 2.0) / (d.tp * pp)
    if s.experts:
        touched = experts_touched_fraction(moe_tokens, s.top_k, s.experts)
        expert_w = touched * s.expert_linear * d.weight_bytes / (pp * np.maximum(d.tp, d.ep))
    else:
        expert_w = 0.0
    gemm_flops = 2.0 * (tokens * s.dense_linear / (d.tp * pp)
                        + dec * s.lm_head / (d.tp * pp))  # logits for the sampled positions only
    eff0 = dev.eff_graphed
    t_gemm = np.maximum(dense_w / bw, compute.gemm_time_s(gemm_flops, dev.gemm_peak_tflops, eff0))
    t_expert: Num = 0.0
    if s.experts:
        # routed experts: grouped GEMMs over the touched experts, r = tokens x top_k / touched experts rows
        # each (compute.grouped_gemm_time_s)
        expert_flops = 2.0 * moe_tokens * s.active_expert_linear / (pp * np.maximum(d.tp, d.ep))
        rows = moe_tokens * s.top_k / (s.experts * np.maximum(touched, 1e-12))  # no tokens: no rows, no NaN
        # weight-only kernels (W4A16/W8A16: int4, int8, fp4 without fp4 tensor cores) read the small weights
        # and multiply at the 16-bit rate (compute.grouped_gemm_time_s, WEIGHT_ONLY_MEMORY_BOUND_ROWS)
        weight_only = (np.asarray(dev.gemm_bits) == 16) & (np.asarray(d.weight_bytes) < 2.0)
        # two grouped calls per MoE layer (gate-up, down), each a fixed time of which its kernel floor
        # (KERNEL_FLOOR_S, in "kernel_floor") is already counted; none in a step without tokens
        calls = np.where(moe_tokens > 0, 2.0 * s.moe_layers / pp, 0.0)
        t_expert = compute.grouped_gemm_time_s(expert_w, expert_flops, rows, dev.gemm_peak_tflops, eff0,
                                               dev.mem_bw_gb_s,
                                               weight_only_bytes=np.where(weight_only, d.weight_bytes, 2.0),
                                               calls=calls, call_s=compute.GROUPED_GEMM_CALL_S - KERNEL_FLOOR_S)
    # attention: decodes read their KV cache; prefill is compute-bound (causal: half the square); MLA
    # decodes attend in the latent space (mla_decode_attn_width), prefill in the MHA form
    stage_layers = s.layers / pp
    kv_tok = kv_bytes_per_token_gpu(s, d)
    att_dec = s.model.attended_context(decode_ctx)
    att_pre = s.model.attended_context(prefill_ctx)
    attn_flops = 2.0 * stage_layers / d.tp * (s.decode_attn_width * dec * att_dec
                                              + (s.q_width + s.attn_out_width) * pre * att_pre)
    a_eff = compute.attention_efficiency(s.head_dim or 128, eff)
    t_attn = np.maximum(dec * att_dec * kv_tok / bw, attn_flops / (dev.attn_peak_tflops * 1e12 * a_eff))
    # collectives: 2 all-reduces per layer of the step's activations (tp); expert parallel over
    # attention-DP ranks moves every rank's tokens to every EP rank and back, the engines' default: an
    # all-gather of the tokens and a reduce-scatter of the experts' 16-bit outputs per MoE layer (vLLM
    # envs.py VLLM_ALL2ALL_BACKEND default "allgather_reducescatter"; TensorRT-LLM fused_moe
    # select_alltoall_method_type: an all-to-all only when ep > top_k on multi-node NVLink or with DeepEP).
    # Under tensor-parallel attention the tokens are on every rank already and the experts' partial sums
    # join the layer's all-reduce above.
    t_comm = 2 * stage_layers * network.all_reduce_s(tokens * s.hidden * 2.0, d.tp, dev.topo)
    if s.experts:
        gathered = tokens * d.attention_dp * s.hidden * ACT_BYTES  # the EP group's tokens, 16-bit
        dep = np.where((d.ep > 1) & (d.attention_dp > 1), 1.0, 0.0)
        t_comm = t_comm + dep * 2 * s.moe_layers / pp * network.all_gather_s(gathered, d.ep, dev.topo)
    t_floor = s.kernels / pp * KERNEL_FLOOR_S
    unfused = np.where(d.fused_act, 0.0, 1.0)
    t_act = ACT_BYTES * (tokens * (s.act_norm_cache + unfused * (s.act_rope + s.act_mlp / d.tp))
                         + moe_tokens * s.act_moe / np.maximum(d.tp, d.ep)) / (pp * bw)
    parts = {"dense_gemm": pp * t_gemm, "expert_gemm": pp * t_expert, "attention": pp * t_attn,
             "communication": pp * t_comm, "elementwise": pp * t_act, "kernel_floor": pp * t_floor,
             "engine_overhead": d.step_overhead_s + 0 * t_gemm}
    parts["host_wait"] = np.maximum(d.host_s_per_request * decodes - sum(parts.values()), 0.0)
    return parts


RATE_BISECTION_STEPS = 12
# The M/D/1 wait diverges as the prefill load nears 1; beyond this the budget-exhausted regime
# (Little's law) takes over.
PREFILL_RHO_MAX = 0.95


@dataclass
class ServeState:
    """Steady state of a deployment (columns or numbers)."""

    ttft_s: Num
    tpot_s: Num
    e2e_s: Num
    requests_per_s: Num  # all replicas
    queue_s: Num  # waiting for a slot (saturated); inf when a request rate exceeds the capacity
    running: Num  # requests running per replica
    decodes: Num  # requests decoding per replica (the rest prefill or wait for the prefill budget)
    saturated: Num
    step_parts: dict[str, Num]  # the average step's parts in seconds (STEP_PARTS), summing to tpot_s


def _blocks(tokens: Num) -> Num:
    return np.ceil(tokens / BLOCK_SIZE_TOKENS) * BLOCK_SIZE_TOKENS


def capacity(s: ModelShape, d: Deployment, capacity_bytes: Num, isl: Num, osl: Num) -> dict:
    """The KV pool in tokens and pages, and the largest concurrency per replica and in all."""
    mem = memory_per_gpu(s, d, capacity_bytes)
    kv_tok = kv_bytes_per_token_gpu(s, d)
    pool = np.maximum(mem["kv_pool"], 0.0)
    blocks = np.floor(pool / (kv_tok * BLOCK_SIZE_TOKENS))
    tokens = blocks * BLOCK_SIZE_TOKENS  # per attention-DP rank
    # pages a running request holds on average (EngineConstants.kv_output_held), and at its end: one
    # request must fit whole
    per_seq = _blocks(s.model.attended_context(isl + d.kv_output_held * osl))
    by_pool = np.floor(tokens / per_seq) * d.attention_dp
    max_conc = np.minimum(d.max_num_seqs * d.attention_dp, by_pool)
    fits = (mem["kv_pool"] > 0) & (tokens >= _blocks(s.model.attended_context(isl + osl)))
    return {"memory": mem, "kv_cache_tokens": tokens * d.attention_dp, "kv_blocks": blocks * d.attention_dp,
            "max_concurrency": max_conc, "max_concurrency_kv": by_pool, "fits": fits,
            "kv_bytes_per_token": kv_tok}


def _running_state(s: ModelShape, dev: Device, d: Deployment, running: Num, isl: Num,
                   osl: Num) -> tuple[Num, Num, Num, dict[str, Num]]:
    """(ttft_s, tpot_s, decodes, the average step's step_parts) of one replica with ``running``
    requests admitted (per replica)."""
    m = d.max_batched_tokens
    out = np.maximum(osl - 1, 1)
    adp = d.attention_dp
    r = np.maximum(running / adp, 1e-9)  # per attention-DP rank
    d_cap = m * out / (out + isl)  # prefill budget exhausted: decodes stop growing here
    dec = r * out / (out + 1)
    for _ in range(4):  # fixed point: a prompt's chunks depend on the budget the decodes leave
        budget = np.maximum(m - dec, 1.0)
        chunks = np.ceil(isl / np.minimum(budget, isl))
        dec = np.minimum(r * out / (out + chunks), d_cap)
    budget = np.maximum(m - dec, 1.0)
    chunks = np.ceil(isl / np.minimum(budget, isl))
    done_per_step = dec / out
    prefill_per_step = done_per_step * isl  # prompt tokens the steps must carry on average
    # a step that carries prefill takes one prompt's chunk, or several prompts when the demand is
    # larger, up to the budget; the share of such steps carries the average demand
    chunk = np.clip(np.maximum(np.minimum(isl, budget), prefill_per_step), 1.0, budget)
    frac_chunk = np.clip(prefill_per_step / chunk, 0.0, 1.0)
    decode_ctx = isl + osl / 2.0
    p_dec = step_parts(s, dev, d, dec, 0.0, decode_ctx, isl / 2.0)
    p_mix = step_parts(s, dev, d, dec, chunk, decode_ctx, isl / 2.0)
    t_dec, t_mix = sum(p_dec.values()), sum(p_mix.values())
    # attention-DP ranks run in lock-step (the experts' collectives join them at every MoE layer), so a
    # step is a mixed one when any of the adp ranks carries a chunk (ranks independent; adp 1: its own)
    any_chunk = 1.0 - (1.0 - frac_chunk) ** adp
    t_avg = (1 - any_chunk) * t_dec + any_chunk * t_mix
    parts = {k: (1 - any_chunk) * p_dec[k] + any_chunk * p_mix[k] for k in STEP_PARTS}
    # TTFT: the prompt's chunks, half a step to the next step boundary, and the wait for the
    # prefill: where the budget is exhausted, Little's law on the requests not yet decoding; below
    # that, prompts queue behind each other's prefill as in an M/D/1 queue (Pollaczek-Khinchine
    # mean wait rho S / (2 (1 - rho)), service S = one prompt's chunks, rho = arrivals x S)
    waiting = np.maximum(r - dec - done_per_step * chunks, 0.0)
    wait_s = waiting / np.maximum(done_per_step, 1e-12) * t_avg
    # the prompt's own chunks: full budget-sized ones, and a last step that carries only what is left
    # of it (with the other prompts' demand), not another full chunk
    per_chunk = np.minimum(budget, isl)
    full = np.floor(isl / per_chunk)
    rest = isl - full * per_chunk
    # (the prefill's share of a mixed step taken in proportion to its tokens: a chunk's GEMMs and
    # attention are compute-bound, so the step grows about linearly in them from the decode-only step)
    rest_chunk = np.clip(np.maximum(rest, prefill_per_step), 1.0, budget)
    t_rest = t_dec + (t_mix - t_dec) * np.minimum(rest_chunk / chunk, 1.0)
    service_s = full * t_mix + np.where(rest > 0.5, t_rest, 0.0)
    rho = np.clip(done_per_step * service_s / t_avg, 0.0, PREFILL_RHO_MAX)
    wait_s = np.maximum(wait_s, rho * service_s / (2 * (1 - rho)))
    ttft = service_s + 0.5 * t_avg + wait_s
    return ttft, t_avg, dec * adp, parts


def steady_state(s: ModelShape, dev: Device, d: Deployment, cap: dict, isl: Num, osl: Num,
                 concurrency: Num | None = None, request_rate: Num | None = None) -> ServeState:
    """The steady state at a total ``concurrency`` (closed loop) or a total ``request_rate``
    (requests/s, open loop): latency, throughput, queueing."""
    max_conc = np.maximum(cap["max_concurrency"], 1e-9)  # capacity() counts one replica
    osl_f = np.asarray(osl, dtype=float)

    def at(running: Num) -> tuple[Num, Num, Num, Num, Num, dict[str, Num]]:
        ttft, tpot, dec, parts = _running_state(s, dev, d, running, isl, osl)
        e2e = ttft + (osl_f - 1) * tpot
        return ttft, tpot, e2e, dec, running / e2e, parts  # per replica rate (Little)

    if concurrency is not None:
        n = np.asarray(concurrency, dtype=float) / d.replicas
        running = np.minimum(n, max_conc)
        ttft, tpot, e2e, dec, rate, parts = at(running)
        queue = np.maximum(n - running, 0.0) / rate
        saturated = n > max_conc
    else:
        target = np.asarray(request_rate, dtype=float) / d.replicas
        rate_max = at(max_conc)[4]
        e2e_min = at(np.minimum(max_conc, 1e-3))[2]
        # N = rate x e2e(N) and e2e grows with N: rate x e2e at an empty server bounds N from below.
        # Bisection on log N between that bound and max_concurrency (12 halvings of the log-interval
        # leave < 0.5% of N whenever the bracket spans less than 1e9).
        lo = np.clip(target * e2e_min, 1e-6, max_conc)
        hi = max_conc * np.ones_like(lo)
        for _ in range(RATE_BISECTION_STEPS):
            mid = np.sqrt(lo * hi)
            below = at(mid)[4] < target
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        saturated = target > rate_max
        running = np.where(saturated, max_conc, hi)
        ttft, tpot, e2e, dec, rate, parts = at(running)
        rate = np.where(saturated, rate, target)
        queue = np.where(saturated, np.inf, 0.0)
    return ServeState(ttft_s=ttft + queue, tpot_s=tpot, e2e_s=e2e + queue, requests_per_s=rate * d.replicas,
                      queue_s=queue, running=running, decodes=dec, saturated=saturated, step_parts=parts)


def pareto_mask(x: Num, y: Num) -> np.ndarray:
    """True where no other point has x and y both at least as large and one larger."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    order = np.lexsort((-y, -x))  # x descending, then y descending
    keep = np.zeros(len(x), bool)
    best_y = -np.inf
    for i in order:
        if y[i] > best_y:
            keep[i] = True
            best_y = y[i]
    return keep


def device_for(hw: Hardware, gemm_bits: Num, gpus_per_node: int) -> Device:
    """The Device of ``hw`` (core/hardware/machine.py): a probe calibration's efficiencies and
    measured intra-node bus bandwidth where one is given, else the GPU family's defaults (fused
    kernels, as the megatron framework's); ``gemm_bits`` 8 or 16, a number or a column (8 falls back
    to 16 on GPUs without fp8: vLLM runs fp8 checkpoints there as W8A16 Marlin GEMMs)."""
    gpu = hw.gpu
    eff = hw.efficiency("megatron")
    intra = hw.calibration.intra_busbw_gb_s if hw.calibration is not None else None
    topo = network.topology(gpu, hw.intra, hw.inter, hw.nics_per_node or 1, gpus_per_node, intra_override_gb_s=intra)
    p16 = gpu.peak_tflops(16)
    p8 = min(gpu.fp8_tflops, p16 * FP8_GEMM_SPEEDUP_OVER_BF16) if gpu.fp8_tflops else p16
    return Device(capacity_bytes=gpu.capacity_bytes, mem_bw_gb_s=gpu.mem_bw_gb_s, gemm_bits=gemm_bits,
                  gemm_peak_tflops=np.where(np.asarray(gemm_bits) == 8, p8, p16) if np.ndim(gemm_bits)
                  else (p8 if gemm_bits == 8 else p16), attn_peak_tflops=p16, eff=eff, topo=topo)
