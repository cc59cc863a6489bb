"""One inference batch run eagerly by Hugging Face transformers (``model.generate()`` or a
hand-written ``model(input_ids)`` loop): prefill time, decode time per token as the slower of the GPU
and the host's Python dispatch, the first call's cuDNN graph builds, and for comparison one step of
a serving engine on the same batch."""
from __future__ import annotations

from planner_app.core.hardware import network
from planner_app.core.inference.memory import kv_bytes_per_token, weight_bytes
from planner_app.core.inference.setup import InferenceSetup
from planner_app.core.serving import engine as sv
from planner_app.core.serving.support import gemm_bits
from planner_app.core.training.activations import model_profiles

# Hugging Face eager decoding (model.generate() or a hand-written loop over model(...)): each op of a
# layer is one Python-dispatched kernel; the host's cost per op is the eager framework's launch_s
# (compute.FRAMEWORK_LAUNCH_S["pytorch"], 22 us; H200 host scans of generate() at batch 1 measured
# 0.49 and 0.62 ms per Llama layer of 30 traced ops: 16-21 us, tests/data/generate_host_h200.json and
# generate_host_scan_h200.json). Per token, generate()'s own loop (prepare_inputs_for_generation,
# logits to fp32, argmax, stopping criteria, two host-device synchronisations) adds the scans'
# intercept: 1.1-1.5 ms at 2-4 layers less their layers.
HF_GENERATE_HOST_S_PER_TOKEN = 1.1e-3
# transformers' DynamicCache appends a token by torch.cat of the whole cached K and V
# (cache_utils.py, DynamicLayer.update): every step reads and writes the cache once more beside the
# attention's read (H200 profiles: CatArrayBatchedCopy at 0.77-0.82 of HBM bandwidth).
DYNAMIC_CACHE_COPIES = 2.0
# On the GPU a kernel takes at least this long however small (H200 generate() profiles: ~1,100
# small element-wise kernels per Llama-2-7B token took 2.2 ms; serving.KERNEL_FLOOR_S is the same
# floor under CUDA graphs).
EAGER_KERNEL_FLOOR_S = 2.0e-6
# SDPA prefers cuDNN's attention on sm90/sm100 once the bundled cuDNN is newer than 9.15 (PyTorch
# aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, check_prefer_cudnn_attention; torch 2.11's
# wheels). cuDNN builds an execution graph per new shape, so every decode step of a call whose key
# lengths the process has not met yet pays a build once (shared by the layers): on the H200 a cold
# token cost 39-78 ms more than the same token again, median ~54 ms; with cuDNN's backend off the cold
# and warm tokens took the same (tests/data/generate_cold_h200.json).
CUDNN_SDPA_GRAPH_BUILD_S = 0.05
CUDNN_SDPA_ARCHS = (90, 100, 103)


def cudnn_sdpa_first_call_s(gpu, attention: str) -> float:
    """Extra host time per decode token of a call at key lengths not seen before (0 where SDPA does
    not take cuDNN's backend)."""
    return CUDNN_SDPA_GRAPH_BUILD_S if attention == "sdpa" and gpu.compute_capability in CUDNN_SDPA_ARCHS else 0.0


def _prefill_s(model, setup, peak, eff, bw):
    tp = setup.tp
    b = setup.batch
    prompt_tokens = b * setup.prompt_len
    attn_prefill = model.layers * 2 * (model.q_width + model.attn_out_width) * setup.prompt_len / 2
    prefill_flops = (2 * model.params_active + attn_prefill) * prompt_tokens / tp
    w = weight_bytes(model, setup.weights_dtype, tp)
    return max(prefill_flops / (peak * 1e12 * eff.gemm_max), w / bw) + model.layers * 8 * eff.launch_s


def inference_time(model, hw, setup: InferenceSetup) -> dict:
    """Prefill (compute-bound roofline) and Hugging Face eager decoding: per token the slower of the
    GPU (weights or FLOPs, the KV cache read by attention and copied by DynamicCache, a floor per
    kernel) and the host (one eager dispatch per traced op, plus generate()'s loop)."""
    tp = setup.tp
    gpu = hw.gpu
    eff = hw.efficiency("pytorch")
    bits = 8 if setup.weights_dtype in ("fp8", "int8") else 16
    peak = gpu.peak_tflops(bits)
    bw = gpu.mem_bw_gb_s * 1e9 * eff.bw_elementwise
    b = setup.batch
    prefill_s = _prefill_s(model, setup, peak, eff, bw)
    # kernels per token: the traced forward of each layer kind (layers_hf), embedding and head
    prof = model_profiles(model, "lp", 2, "eager" if setup.attention == "eager" else "sdpa", "pytorch",
                          False, False, False, None)

    def ops(p):
        return (len(p.gemms) + len(p.mem_ops) + (1 if p.attn_flops else 0) + (2 if p.bmm_flops else 0)) if p else 0
    kernels = (model.dense_mlp_layers * ops(prof.dense) + model.moe_layers * ops(prof.moe)
               + ops(prof.embed) + ops(prof.head))
    w = weight_bytes(model, setup.weights_dtype, tp)
    kv_tok = kv_bytes_per_token(model, setup.kv_dtype, tp)
    mean_ctx = model.attended_context(setup.prompt_len + setup.new_tokens / 2)
    kv_bytes = b * mean_ctx * kv_tok
    attn_flops_per_token = model.layers * 2 * (model.q_width + model.attn_out_width) * mean_ctx
    decode_flops = (2 * model.params_active + attn_flops_per_token) * b / tp
    t_mem = (w + (1.0 + DYNAMIC_CACHE_COPIES) * kv_bytes) / bw
    t_cmp = decode_flops / (peak * 1e12 * eff.gemm_max)
    gpu_s = max(t_mem, t_cmp) + kernels * EAGER_KERNEL_FLOOR_S
    host_s = kernels * eff.launch_s + (HF_GENERATE_HOST_S_PER_TOKEN if setup.inference_api == "generate" else 0.0)
    tp_comm = 0.0
    if tp > 1:
        topo = hw.topology(max(tp, 8))
        tp_comm = 2 * model.layers * float(network.all_reduce_s(b * model.hidden * 2, tp, topo, tp))
        prefill_s += 2 * model.layers * float(network.all_reduce_s(b * setup.prompt_len * model.hidden * 2, tp,
                                                                     topo, tp))
    per_token_s = max(gpu_s, host_s) + tp_comm
    bound = "host" if host_s >= gpu_s else ("memory" if t_mem >= t_cmp else "compute")
    first_s = cudnn_sdpa_first_call_s(gpu, setup.attention)
    return {"prefill_s": prefill_s, "decode_s_per_token": per_token_s,
            "decode_gpu_s_per_token": gpu_s, "decode_host_s_per_token": host_s,
            "decode_s_per_token_first_call": max(gpu_s, host_s + first_s) + tp_comm,
            "decode_tokens_per_s": b / per_token_s, "decode_tokens_per_s_per_user": 1.0 / per_token_s,
            "decode_bound": bound, "end_to_end_s": prefill_s + setup.new_tokens * per_token_s}


def serving_engine_decode_s(model, hw, setup: InferenceSetup) -> float:
    """One decode step of the same batch in a serving engine (core/serving.step_time_s, vLLM's per-step
    overhead), for the comparison the inference estimate states."""
    tp = setup.tp
    wd = setup.weights_dtype if setup.weights_dtype in sv.SERVE_WEIGHT_BYTES else "bf16"  # fp16: 2 bytes too
    kd = setup.kv_dtype if setup.kv_dtype in sv.SERVE_KV_BYTES else "bf16"
    dev = sv.device_for(hw, gemm_bits(hw.gpu, wd, sv.GEMM_BITS[wd]), max(tp, 8))
    seqs, tokens = sv.engine_defaults(hw.gpu.capacity_bytes, hw.gpu.id + " " + hw.gpu.name)
    d = sv.Deployment(tp=tp, pp=1, ep=1, attention_dp=1, replicas=1, weight_bytes=sv.SERVE_WEIGHT_BYTES[wd],
                      kv_bytes=sv.SERVE_KV_BYTES[kd], gmu=sv.GPU_MEMORY_UTILIZATION, max_num_seqs=seqs,
                      max_batched_tokens=tokens, **sv.engine_fields("vllm"))
    ctx = setup.prompt_len + setup.new_tokens / 2
    return float(sv.step_time_s(sv.model_shape(model), dev, d, float(setup.batch), 0.0, ctx, 0.0))
