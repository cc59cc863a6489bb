"""Inference memory: weights, KV cache, transient activations; what fits.

KV cache per token and layer: 2 x kv_heads x head_dim elements (K and V; grouped-query
attention stores only the KV heads, Ainslie et al. 2023); multi-head latent attention
stores the compressed latent plus the decoupled RoPE key, (kv_lora_rank + qk_rope_dim)
elements (DeepSeek-V2 paper, sec. 2.1.2, as vLLM and SGLang cache it). A sliding window
caps the cached tokens at the window.

Transients follow the prefill on top of the weights and the cache: one layer's live
intermediates for the whole prompt, and the logits (``prefill_logits_bytes``: every prompt
token for a hand-written loop, the last one for transformers 5.x ``generate()``); measured on
an H200 (tests/data/training_runs_h200.json "inference", a hand-written loop;
tests/data/finetune_runs_h200.json, ``generate()``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from planner_app.core.errors import InputError
from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES, CUDA_CONTEXT_BYTES
from planner_app.core.inference.setup import KV_BYTES, WEIGHT_BYTES, InferenceSetup
from planner_app.core.training.states import FRAGMENTATION

# Quantised weights carry scales: int4/fp8 group-wise scales (e.g. AWQ/GPTQ group 128 with
# a 16-bit scale and zero point: 4 bytes per 128 weights).
QUANT_OVERHEAD = {"bf16": 0.0, "fp16": 0.0, "fp8": 1 / 128, "int8": 2 / 128, "int4": 4 / 128}


@dataclass
class InferenceMemory:
    peak_bytes: float
    breakdown: dict
    kv_cache_bytes: float
    kv_bytes_per_token: float  # all layers, one sequence, per GPU
    device_bytes: float
    capacity_bytes: float | None

    @property
    def fits(self) -> bool | None:
        return None if self.capacity_bytes is None else self.device_bytes <= self.capacity_bytes


def kv_bytes_per_token(model, kv_dtype: str, tp: int) -> float:
    """Bytes of KV cache per token of one sequence, all layers, on one of ``tp`` GPUs."""
    b = KV_BYTES[kv_dtype]
    if model.arch == "deepseek":
        per_layer = (model.kv_lora_rank + model.qk_rope_dim) * b  # latent cache is not split by TP
        return model.layers * per_layer
    kv_heads_per_gpu = max(1.0, model.kv_cache_heads / tp)  # KV heads are replicated when tp > kv_heads
    return model.layers * 2 * kv_heads_per_gpu * model.head_dim * b


def weight_bytes(model, weights_dtype: str, tp: int) -> float:
    """Weights in the serving dtype. Quantisation applies to the layers' GEMM weights; the
    embeddings, the output layer and norms stay 16-bit (as AWQ/GPTQ/FP8 checkpoints keep them)."""
    quantised = model.linear_weight_params() - model.vocab * model.hidden
    rest = model.params_total - quantised
    per = WEIGHT_BYTES[weights_dtype] * (1 + QUANT_OVERHEAD[weights_dtype])
    return (quantised * per + rest * 2.0) / tp


def prefill_logits_bytes(model, setup: InferenceSetup) -> float:
    """Logits of the prefill. A hand-written ``model(input_ids)`` loop gets them for every prompt
    token (16-bit, vocab split by TP). transformers 5.x ``generate()`` asks for the last position
    only (``logits_to_keep=1``, generation/utils.py) and copies them to fp32
    (``outputs.logits[:, -1, :].to(dtype=torch.float32)``)."""
    tp = setup.tp
    if setup.inference_api == "generate":
        return setup.batch * model.vocab * (2 + 4) / tp
    return setup.batch * setup.prompt_len * model.vocab * 2 / tp


def prefill_live_width(model) -> float:
    """16-bit elements per prompt token live at once inside one layer of the prefill: the larger of
    the attention block (residual, normed input, q and its rotated copy, the attention output; K
    and V go to the cache) and the MLP (LlamaMLP.forward: down_proj(act_fn(gate_proj(x)) *
    up_proj(x)) holds act_fn's output, up_proj's and their product with the residual and the
    normed input)."""
    ffn = model.expert_ffn_hidden * model.top_k if model.is_moe else model.ffn_hidden
    mlp = 2 * model.hidden + 3 * ffn
    attention = 2 * model.hidden + 3 * model.q_width
    return max(mlp, attention)


# Hugging Face's model forward holds two more hidden-sized tensors per token through every layer: the
# embeddings' output (LlamaModel.forward keeps ``inputs_embeds``) and the layer's input (the caller's
# ``hidden_states`` while the layer runs); an H200 allocator trace of generate() at its peak shows
# both (tests/data/generate_memory_peak_h200.json: embedding, modeling_llama.py:317/323/67 beside the MLP).
HF_FORWARD_HELD_HIDDEN = 2


def inference_memory(model, setup: InferenceSetup, capacity_bytes: float | None = None) -> InferenceMemory:
    """Peak memory of serving ``setup.batch`` sequences of ``context_len`` tokens."""
    tp = setup.tp
    if not model.is_transformer:
        raise InputError("mode", "inference sizing needs a transformer model")
    if model.heads % tp:
        raise InputError("tp", f"must divide the number of attention heads ({model.heads}); got {tp}")
    w = weight_bytes(model, setup.weights_dtype, tp)
    ctx = setup.context_len
    cached = model.attended_context(ctx)  # sliding-window layers keep only the window's keys and values
    kv_tok = kv_bytes_per_token(model, setup.kv_dtype, tp)
    kv = kv_tok * cached * setup.batch
    prompt_tokens = setup.batch * setup.prompt_len
    logits = prefill_logits_bytes(model, setup)
    acts = prompt_tokens * (prefill_live_width(model) + HF_FORWARD_HELD_HIDDEN * model.hidden) * 2 / tp
    # Two candidate peaks. The prefill's: the prompt's cache plus the larger of one layer's
    # intermediates and the logits at its end (nothing is kept between layers without autograd). The
    # last decode step's: the whole cache plus DynamicCache.update's copy of one layer's keys (torch.cat
    # makes the longer tensor while the old one lives; cache_utils.py) and that step's logits.
    kv_prompt = kv_tok * model.attended_context(setup.prompt_len) * setup.batch
    prefill_peak = kv_prompt + max(acts, logits)
    step_logits = setup.batch * model.vocab * (2 + 4) / tp
    kv_with_copy = kv + kv / (2 * model.layers)
    if prefill_peak >= kv_with_copy + step_logits:
        breakdown = {"parameters": w, "kv_cache": kv_prompt, "logits_and_loss": logits if logits >= acts else 0.0,
                     "activations": acts if acts > logits else 0.0, "other": CUBLAS_WORKSPACE_BYTES}
    else:
        breakdown = {"parameters": w, "kv_cache": kv_with_copy, "logits_and_loss": step_logits,
                     "activations": 0.0, "other": CUBLAS_WORKSPACE_BYTES}
    peak = sum(breakdown.values())
    device = peak * (1 + FRAGMENTATION) + CUDA_CONTEXT_BYTES
    return InferenceMemory(peak_bytes=peak, breakdown=breakdown, kv_cache_bytes=kv, kv_bytes_per_token=kv_tok,
                           device_bytes=device, capacity_bytes=capacity_bytes)


def largest_batch(model, setup: InferenceSetup, capacity_bytes: float) -> int:
    """The largest number of concurrent sequences whose peak fits (0 if none)."""
    lo, hi = 0, 1
    while hi <= 1 << 20 and inference_memory(model, replace(setup, batch=hi), capacity_bytes).fits:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if inference_memory(model, replace(setup, batch=mid), capacity_bytes).fits:
            lo = mid
        else:
            hi = mid
    return lo


def longest_context(model, setup: InferenceSetup, capacity_bytes: float) -> int:
    """The longest prompt + generated length that fits at the setup's batch (0 if none)."""
    def fits(n):
        prompt = max(1, n - setup.new_tokens) if n > setup.new_tokens else 1
        return inference_memory(model, replace(setup, prompt_len=prompt, new_tokens=max(1, n - prompt)),
                                capacity_bytes).fits

    lo, hi = 0, 256
    while hi <= 1 << 24 and fits(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 16:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
