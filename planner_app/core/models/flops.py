"""FLOPs of a training step or an inference pass.

Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM", sec. 5.1, eq. 3) count, for a GPT layer, 24Bsh^2 + 4Bs^2h forward
FLOPs (QKV 6Bsh^2, attention 4Bs^2h, projection 2Bsh^2, MLP 16Bsh^2) plus 2BshV for the
output layer; the backward costs twice the forward and full recomputation one more
forward: F = 96Bslh^2 (1 + s/(6h) + V/(16lh)). Here the same per-matrix counting is
generalised to grouped-query attention (K/V of width kv), SwiGLU (three matrices), MoE
(only the top-k routed and the shared experts; plus the router) and multi-head latent
attention (the low-rank projections). Attention FLOPs count the full s x s square, as
the paper does, for model FLOPs; causal kernels skip half of it, which the time model
accounts for. Model FLOPs (for MFU) exclude recomputation; hardware FLOPs (for HFU)
include it (Korthikanti et al. 2022, sec. 6).
"""
from __future__ import annotations


def layer_gemm_flops_per_token(model, moe_layer: bool) -> float:
    """Forward FLOPs per token of one layer's matrix multiplies (2 per multiply-add)."""
    h = model.hidden
    if model.arch == "deepseek":
        qk_head = model.qk_nope_dim + model.qk_rope_dim
        q = (h * model.q_lora_rank + model.q_lora_rank * model.heads * qk_head) if model.q_lora_rank \
            else h * model.heads * qk_head
        kv = h * (model.kv_lora_rank + model.qk_rope_dim) + model.kv_lora_rank * model.heads * (
            model.qk_nope_dim + model.v_head_dim)
        attn = q + kv + model.heads * model.v_head_dim * h
    else:
        attn = h * (model.q_width + 2 * model.kv_width) + model.q_width * h
    mats = 3 if model.mlp == "swiglu" else 2
    if moe_layer:
        shared = mats * h * model.shared_ffn_hidden + (h if model.shared_expert_gate else 0)
        mlp = model.experts * h + mats * h * model.expert_ffn_hidden * model.top_k + shared
    else:
        mlp = mats * h * model.ffn_hidden
    return 2.0 * (attn + mlp)


def attention_flops_per_token(model, seq_len: int) -> float:
    """Forward FLOPs per token of QK^T and attention-over-V across the full sequence."""
    if model.arch == "deepseek":
        per_key = 2 * model.heads * (model.qk_nope_dim + model.qk_rope_dim) + 2 * model.heads * model.v_head_dim
    else:
        per_key = 2 * model.q_width + 2 * model.heads * model.head_dim
    return per_key * model.attended_context(seq_len)  # sliding-window layers attend to the window only


def forward_flops_per_token(model, seq_len: int) -> float:
    """All layers plus the output layer, forward, per token."""
    if not model.is_transformer:
        return 0.0
    dense = model.dense_mlp_layers * layer_gemm_flops_per_token(model, False)
    moe = model.moe_layers * layer_gemm_flops_per_token(model, True)
    attn = model.layers * attention_flops_per_token(model, seq_len)
    head = 2.0 * model.hidden * model.vocab
    if model.arch == "bert":
        head += 2.0 * model.hidden * model.hidden
    return dense + moe + attn + head


def training_flops_per_token(model, seq_len: int, recompute: str, lora) -> tuple[float, float]:
    """(model FLOPs, hardware FLOPs) per trained token: 3x forward, plus recomputation.

    LoRA (``lora``: a core/lora.LoraSpec) runs what it trains: the forward, the frozen base's
    data gradients only (one GEMM per weight instead of two; attention's backward as usual) and
    the adapters' forward, data and weight gradients (2r(in + out) FLOPs per token each pass)."""
    if not model.is_transformer:
        return 3.0 * model.fwd_flops_per_sample, 3.0 * model.fwd_flops_per_sample
    fwd = forward_flops_per_token(model, seq_len)
    model_flops = 3.0 * fwd
    if lora is not None:
        attn = model.layers * attention_flops_per_token(model, seq_len)
        adapter = 2.0 * lora.adapter_params(model.dense_mlp_layers, model.moe_layers)
        model_flops = 2.0 * fwd + attn + 3.0 * adapter
        fwd = fwd + adapter
    head = 2.0 * model.hidden * model.vocab
    if recompute == "full":
        hw = model_flops + (fwd - head)  # the layers run forward once more; the output layer does not
    elif recompute == "selective":
        hw = model_flops + model.layers * attention_flops_per_token(model, seq_len)
    else:
        hw = model_flops
    return model_flops, hw


def narayanan_flops_per_iteration(batch: int, seq: int, layers: int, hidden: int, vocab: int) -> float:
    """Narayanan et al. 2021 eq. 3 (GPT, with full recomputation): 96Bslh^2(1 + s/6h + V/16lh)."""
    return 96.0 * batch * seq * layers * hidden**2 * (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden))


def six_nd(params: float, tokens: float) -> float:
    """The 6ND rule of thumb (Kaplan et al. 2020): training FLOPs ~ 6 x parameters x tokens."""
    return 6.0 * params * tokens
