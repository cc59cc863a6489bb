"""Layer traces of the model families ``config.json`` import adds (issue 14): Gemma 1/2/3,
Phi-3, Qwen3, Qwen2-MoE, Qwen3-MoE, gpt-oss, GLM-4, OLMo-2, Granite, GPT-NeoX and Falcon, as
transformers 5.x runs them (``models/<type>/modeling_<type>.py``, cited per helper), with the
same rules as ``layers_hf.HFOps`` (what autograd saves, autocast's dtypes, LoRA's frozen base:
an op saves a tensor for a weight's gradient only when ``not o.frozen``, and every linear layer
goes through ``o.linear`` under its Hugging Face module name).

Checked against one layer's saved activations per token measured on an H200
(tests/data/family_layers_h200.json; accuracy/family_trace_gaps.py;
tests/unit/test_family_traces.py) and whole-model Trainer runs
(tests/data/trainer_runs_h200.json; accuracy/finetune_accuracy.py).
"""
from __future__ import annotations

from planner_app.core.models.hf_ops import (
    HFLayerSpec,
    HFOps,
    experts_down_and_combine,
    experts_gather_and_up,
    needs_mask,
    residual_bytes,
)
from planner_app.core.models.trace import EXP, ONE, SEQ, TP, TPS, T

# RMSNorms that multiply by the weight in fp32 and cast after (modeling_gemma.py
# ``output * (1.0 + self.weight.float())``; modeling_olmo2.py and modeling_gpt_oss.py
# ``(self.weight * hidden_states).to(input_dtype)``);
# Llama's casts first and multiplies in the input's dtype.
FP32_WEIGHT_NORMS = ("gemma", "gemma2", "gemma3_text", "olmo2", "gpt_oss")
# apply_rotary_pos_emb ends in torch.cat (modeling_phi3.py, modeling_glm4.py, modeling_gpt_neox.py;
# gpt-oss's _apply_rotary_emb): q comes out contiguous head-major, so SDPA's output does too and
# sdpa_attention_forward's ``transpose(1, 2).contiguous()`` is a copy (a Llama q keeps the
# projection's token-major layout, and the transpose of the kernel's output is already contiguous)
CAT_ROPE = ("phi3", "glm4", "gpt_neox", "gpt_oss")
# fused projections split by views (modeling_phi3.py qkv_proj / gate_up_proj; modeling_glm4.py gate_up_proj)
FUSED_QKV = ("phi3",)
FUSED_GATE_UP = ("phi3", "glm4")
FAMILY_TRACES = ("gemma", "gemma2", "gemma3_text", "phi3", "qwen3", "glm4", "olmo2", "granite",
                 "qwen2_moe", "qwen3_moe", "gpt_oss", "gpt_neox", "falcon")


# ---- norms ----------------------------------------------------------------------------------
def rmsnorm(o: HFOps, m, x: T, name: str, rows: float = 1) -> T:
    """RMSNorm over ``x.width / rows`` features: x.float(); pow and mean; rsqrt (one fp32 value
    per row: per token, or per head for Qwen3/Gemma 3's q_norm and k_norm over head_dim);
    x * rsqrt saves x32 and the rsqrt; the weight's product saves its other operand only for the
    weight's gradient. Gemma and OLMo-2 multiply in fp32 and cast after (FP32_WEIGHT_NORMS)."""
    x32 = o._cast(x, 4, name + ".x32")
    r = o.new(rows, 4, x.slot, name + ".rsqrt")
    o.tr.op(name + ".pow_mean_rsqrt", [x32], [r], saved=[x32, r], kind="reduction")
    y = o.new(x.width, 4, x.slot, name + ".y32")
    o.tr.op(name + ".mul", [x32, r], [y], saved=[x32, r])
    if m.family in FP32_WEIGHT_NORMS:
        wy = o.new(x.width, 4, x.slot, name + ".wy32")
        o.tr.op(name + ".weight", [y], [wy], saved=[] if o.frozen else [y])
        return o._cast(wy, x.nbytes, name + ".out")
    yc = o._cast(y, x.nbytes, name + ".y")
    out = o.new(x.width, max(o.param_bytes, x.nbytes), x.slot, name + ".out")
    o.tr.op(name + ".weight", [yc], [out], saved=[] if o.frozen else [yc])
    return out


def norm(o: HFOps, m, x: T, name: str) -> T:
    return o.layernorm(x, name) if m.norm == "layernorm" else rmsnorm(o, m, x, name)


# ---- attention --------------------------------------------------------------------------------
def _mask_bias(o: HFOps, q: T, name: str) -> T:
    """torch SDPA with a boolean mask (aten/src/ATen/native/transformers/attention.cpp): each call
    converts it to the query's dtype (``convert_boolean_attn_mask``, a new b x 1 x s x s tensor),
    which the cuDNN and memory-efficient kernels take as ``attn_bias`` and keep for their backward
    (an argument of ``_scaled_dot_product_{cudnn,efficient}_attention_backward``): one per layer.
    The Phi-3 Trainer run with a mask (s 2048 > window 2047) measured 44.33 GB against 43.27
    without it and 44.34 with it (tests/data/trainer_runs_h200.json)."""
    bias = o.new(1, 2 if o.amp else q.nbytes, TPS, name + ".mask_bias", requires_grad=False)
    o.tr.op(name + ".mask_to_bias", [], [bias])
    return bias


def _sdpa_math(o: HFOps, m, q: T, k: T, v: T, name: str) -> T:
    """SDPA's math fallback (attention.cpp ``_scaled_dot_product_attention_math``), taken when q
    and k/v head counts differ without ``enable_gqa`` (Falcon-7B's multi-query attention): q, k,
    v cast to fp32 (``query_acc``), q and k scaled, matmul, softmax in fp32 (saved), matmul with v,
    output cast back. With one sequence the broadcast k and v of the matmuls are views; with
    several, ``matmul`` copies them to every head (not modelled: one sequence per micro-batch
    was measured)."""
    q32 = o.new(q.width, 4, TP, name + ".q32s")
    o.tr.op(name + ".q_acc_scale", [q], [q32])
    k32 = o.new(k.width, 4, TP, name + ".k32s")
    o.tr.op(name + ".k_acc_scale", [k], [k32])
    v32 = o.new(v.width, 4, TP, name + ".v32")
    o.tr.op(name + ".v_acc", [v], [v32])
    scores = o.new(m.heads, 4, TPS, name + ".scores")
    o.tr.op(name + ".qk", [q32, k32], [scores], saved=[q32, k32], attn_flops=2.0 * q.width, kind="bmm")
    probs = o.new(m.heads, 4, TPS, name + ".softmax")
    o.tr.op(name + ".softmax", [scores], [probs], saved=[probs], kind="reduction")
    out32 = o.new(q.width, 4, TP, name + ".pv")
    o.tr.op(name + ".pv", [probs, v32], [out32], saved=[probs, v32], attn_flops=2.0 * q.width, kind="bmm")
    return o._cast(out32, q.nbytes, name + ".out")


def _eager(o: HFOps, m, spec: HFLayerSpec, q: T, k: T, v: T, mask: bool, name: str) -> T:
    """eager_attention_forward of each family: q k^T (saves q, k), scaling, Gemma 2's soft-cap
    (``tanh`` saves its output; modeling_gemma2.py), the mask, then
    - gpt-oss (modeling_gpt_oss.py): the sink column concatenated, minus the row max (``max``
      saves int64 indices), softmax in the scores' dtype (saved), the sink column sliced off;
    - Falcon (modeling_falcon.py): softmax in the hidden dtype (saved), k/v broadcast by matmul;
    - the others: softmax in fp32 (saved) cast back to the query's dtype (saved by the matmul);
    dropout, probabilities x v, and the output's ``transpose(1, 2).contiguous()`` copy."""
    if m.family != "falcon":
        k = o.repeat_kv(k, m.heads // m.kv_heads, name + ".k_rep")
        v = o.repeat_kv(v, m.heads // m.kv_heads, name + ".v_rep")
    q16, k16, v16 = o.lp(q, name + ".q16"), o.lp(k, name + ".k16"), o.lp(v, name + ".v16")
    h = m.heads
    scores = o.new(h, q16.nbytes, TPS, name + ".scores")
    o.tr.op(name + ".qk", [q16, k16], [scores], saved=[q16, k16], attn_flops=2.0 * q.width, kind="bmm")
    x = scores
    if m.family != "falcon":  # Falcon divides in place
        x = o.new(h, scores.nbytes, TPS, name + ".scaled")
        o.tr.op(name + ".scale", [scores], [x])
    if m.attn_softcap:
        d = o.new(h, x.nbytes, TPS, name + ".softcap_div")
        o.tr.op(name + ".softcap_div", [x], [d])
        th = o.new(h, x.nbytes, TPS, name + ".softcap_tanh")
        o.tr.op(name + ".softcap_tanh", [d], [th], saved=[th])
        x = o.new(h, x.nbytes, TPS, name + ".softcap_mul")
        o.tr.op(name + ".softcap_mul", [th], [x])
    if mask:
        masked = o.new(h, max(x.nbytes, o.param_bytes), TPS, name + ".masked")
        o.tr.op(name + ".mask", [x], [masked])
        x = masked
    if m.attn_sinks:  # rows of seq + 1 from here to the softmax (compute.UNALIGNED_ROW_SPEED)
        cat = o.new(h, x.nbytes, TPS, name + ".with_sinks")
        o.tr.op(name + ".cat_sinks", [x], [cat], unaligned=True)
        idx = o.new(h, 8, TP, name + ".max_idx", requires_grad=False)
        o.tr.op(name + ".row_max", [cat], [idx], saved=[idx], kind="reduction", unaligned=True)
        x = o.new(h, cat.nbytes, TPS, name + ".centred")
        o.tr.op(name + ".sub_max", [cat, idx], [x], unaligned=True)
    if m.attn_sinks or m.family == "falcon":  # softmax(x, dtype=x.dtype): its output is saved and used
        probs = o.new(h, q16.nbytes, TPS, name + ".softmax")
        o.tr.op(name + ".softmax", [x], [probs], saved=[probs], kind="reduction", unaligned=bool(m.attn_sinks))
        p16 = probs
    else:
        probs = o.new(h, 4, TPS, name + ".softmax")
        o.tr.op(name + ".softmax", [x], [probs], saved=[probs], kind="reduction")
        p16 = o._cast(probs, q16.nbytes, name + ".probs")
    p16 = o.dropout(p16, m.attn_dropout, name + ".dropout")
    out = o.new(q.width, q16.nbytes, TP, name + ".pv")
    o.tr.op(name + ".pv", [p16, v16], [out], saved=[p16, v16], attn_flops=2.0 * q.width, kind="bmm")
    return o.contiguous_copy(out, name + ".out_c")


def attention_core(o: HFOps, m, spec: HFLayerSpec, q: T, k: T, v: T, head_major: bool, name="attn") -> T:
    """The attention kernel of a family's layer: eager, SDPA's math path (Falcon-7B), or SDPA's
    flash / memory-efficient kernels (with a mask: K/V repeated for grouped-query attention and the
    mask's per-call bias kept); ``head_major``: q is
    contiguous head-major, so the output is copied back."""
    mask = needs_mask(m, spec)
    if spec.attention == "eager":
        return _eager(o, m, spec, q, k, v, mask, name)
    if m.family == "falcon" and m.kv_heads < m.heads and m.kv_heads == 1:
        out = _sdpa_math(o, m, q, k, v, name)
        return o.contiguous_copy(out, name + ".out_c")
    n_rep = m.heads // m.kv_heads
    if n_rep > 1 and mask:
        k = o.repeat_kv(k, n_rep, name + ".k_rep")
        v = o.repeat_kv(v, n_rep, name + ".v_rep")
    out = o.sdpa(q, k, v, m.heads, m.attn_out_width // m.heads, m.attn_dropout, not mask, n_rep > 1 and not mask,
                 name=name)
    if mask:
        bias = _mask_bias(o, q, name)
        o.tr.op(name + ".bias_saved", [bias], [], saved=[bias], kind="none")  # saved by the kernel above
    return o.contiguous_copy(out, name + ".out_c") if head_major else out


def _rope(o: HFOps, m, x: T, cos: T, name: str) -> T:
    return o.rope(x, cos, name)


def llama_family_attention(o: HFOps, m, spec: HFLayerSpec, xn: T, cos: T) -> T:
    """Q/K/V projections (Phi-3: one ``qkv_proj`` whose q, k, v are views: SDPA saving v keeps
    q and k's storage alive), QK-norm (per head over head_dim for Qwen3 / Qwen3-MoE / Gemma 3,
    over the whole projection for OLMo-2), rotary positions, attention, ``o_proj``."""
    h = m.hidden
    if m.family in FUSED_QKV:
        qkv = o.linear(xn, m.q_width + 2 * m.kv_width, TP, h * (m.q_width + 2 * m.kv_width), "qkv_proj")
        q, k, v = o.view(qkv, m.q_width, "q"), o.view(qkv, m.kv_width, "k"), o.view(qkv, m.kv_width, "v")
    else:
        q = o.linear(xn, m.q_width, TP, h * m.q_width, "q_proj")
        k = o.linear(xn, m.kv_width, TP, h * m.kv_width, "k_proj")
        v = o.linear(xn, m.kv_width, TP, h * m.kv_width, "v_proj")
    if m.qk_norm != "none":
        per_head = m.qk_norm == "head"
        q = rmsnorm(o, m, q, "q_norm", rows=m.heads if per_head else 1)
        k = rmsnorm(o, m, k, "k_norm", rows=m.kv_heads if per_head else 1)
    q, k = _rope(o, m, q, cos, "rope_q"), _rope(o, m, k, cos, "rope_k")
    att = attention_core(o, m, spec, q, k, v, m.family in CAT_ROPE)
    return o.linear(att, h, SEQ, m.attn_out_width * h, "o_proj")


# ---- MLPs -------------------------------------------------------------------------------------
def gated_mlp(o: HFOps, m, xn: T, ffn: int, slot: int, prefix: str = "mlp") -> T:
    """gate and up projections (Phi-3 and GLM-4: one ``gate_up_proj`` split by ``chunk``, whose
    views keep the whole output alive), act(gate) x up, ``down_proj``. SiLU and Gemma's tanh GELU
    save their input; the product saves both operands."""
    h = m.hidden
    if m.family in FUSED_GATE_UP:
        gu = o.linear(xn, 2 * ffn, slot, h * 2 * ffn, prefix + ".gate_up_proj")
        gate, up = o.view(gu, ffn, prefix + ".gate"), o.view(gu, ffn, prefix + ".up")
    else:
        gate = o.linear(xn, ffn, slot, h * ffn, prefix + ".gate_proj")
        up = None
    act = o.unary_saving_input(gate, prefix + ".act")
    if up is None:
        up = o.linear(xn, ffn, slot, h * ffn, prefix + ".up_proj")
    return o.linear(o.mul(act, up, prefix + ".mul"), h, SEQ, h * ffn, prefix + ".down_proj")


def gelu_fast(o: HFOps, x: T, name: str = "gelu_fast") -> T:
    """FastGELUActivation (activations.py): 0.5 * x * (1 + tanh(x * 0.79788 * (1 + 0.044715 * x * x)))
    as separate ops: the products of two tensors save both, tanh its output: 7 saved tensors."""
    def t(n):
        return o.new(x.width, x.nbytes, x.slot, name + "." + n)

    a, b, c, d, e, th, u, half = t("x_c"), t("x_k"), t("x_k_x"), t("one_p"), t("inner"), t("tanh"), t("one_p_t"), \
        t("half")
    o.tr.op(name + ".x_c", [x], [a])
    o.tr.op(name + ".x_k", [x], [b])
    o.tr.op(name + ".x_k_x", [b, x], [c], saved=[b, x])
    o.tr.op(name + ".one_p", [c], [d])
    o.tr.op(name + ".inner", [a, d], [e], saved=[a, d])
    o.tr.op(name + ".tanh", [e], [th], saved=[th])
    o.tr.op(name + ".one_p_t", [th], [u])
    o.tr.op(name + ".half", [x], [half])
    return o.mul(half, u, name + ".out")


def gelu_mlp(o: HFOps, m, xn: T) -> T:
    """GPTNeoXMLP / FalconMLP: dense_h_to_4h, the activation, dense_4h_to_h."""
    h, f = m.hidden, m.ffn_hidden
    u = o.linear(xn, f, TP, h * f, "dense_h_to_4h")
    if m.activation == "gelu_fast":
        g = gelu_fast(o, u)
    elif m.activation == "gelu_new":
        g = o.gelu_tanh_python(u)
    else:  # nn.GELU (exact or tanh): one kernel saving its input
        g = o.unary_saving_input(u, "gelu")
    return o.linear(g, h, SEQ, h * f, "dense_4h_to_h")


def _router(o: HFOps, m, xn: T):
    """(weights, indices) of the top-k router. Qwen2/3-MoE (Qwen3MoeTopKRouter): softmax over
    every expert in fp32 (saved), top-k (indices saved), renormalised. gpt-oss (GptOssTopKRouter):
    top-k of the logits (indices saved), softmax over those k in their dtype (saved)."""
    k = m.top_k
    logits = o.linear(xn, m.experts, SEQ, m.hidden * m.experts, "router")
    idx = o.new(k, 8, SEQ, "router.idx", requires_grad=False)
    if m.family == "gpt_oss":
        topv = o.new(k, logits.nbytes, SEQ, "router.topk")
        o.tr.op("router.topk", [logits], [topv, idx], saved=[idx])
        wts = o.new(k, logits.nbytes, SEQ, "router.softmax")
        o.tr.op("router.softmax", [topv], [wts], saved=[wts], kind="reduction")
        return wts, idx
    r32 = o._cast(logits, 4, "router.logits32")
    probs = o.new(m.experts, 4, SEQ, "router.softmax")
    o.tr.op("router.softmax", [r32], [probs], saved=[probs], kind="reduction")
    topv = o.new(k, 4, SEQ, "router.topk")
    o.tr.op("router.topk", [probs], [topv, idx], saved=[idx])
    wts = o.new(k, 4, SEQ, "router.weights")
    o.tr.op("router.normalise", [topv], [wts], saved=[topv, wts])
    return o._cast(wts, logits.nbytes, "router.weights16"), idx


def moe_block(o: HFOps, m, xn: T) -> T:
    """A sparse MoE block with transformers 5.x's ``grouped_mm`` experts (integrations/moe.py):
    tokens gathered per routed slot, gate-up grouped GEMM (+ bias for gpt-oss), the activation,
    down grouped GEMM, weighting, un-permute and sum; frozen experts (LoRA) save no inputs and
    compute no weight gradients. gpt-oss's ``_apply_gate`` (modeling_gpt_oss.py): both halves
    clamped (each clamp saves its input, a view of gate_up), gate * sigmoid(1.702 gate) (sigmoid
    saves its output, the product both operands), (up + 1) * glu (saves both). Qwen2-MoE adds a
    shared expert and ``sigmoid(shared_expert_gate(x)) * shared`` (saves both)."""
    h, k, fe = m.hidden, m.top_k, m.expert_ffn_hidden
    shared = None
    if m.shared_experts:  # Qwen2MoeSparseMoeBlock runs the shared expert first
        shared = gated_mlp(o, m, xn, m.shared_ffn_hidden, TP, "shared_expert")
    wts, idx = _router(o, m, xn)
    eb = o.param_bytes  # grouped_mm casts its input to the weights' dtype
    wg = 0 if o.frozen else 1
    gum = experts_gather_and_up(o, m, xn, idx, eb, wg)
    gate, up = o.view(gum, k * fe, "experts.gate"), o.view(gum, k * fe, "experts.up")
    if m.family == "gpt_oss":
        gc = o.new(k * fe, eb, EXP, "experts.gate_clamp")
        o.tr.op("experts.gate_clamp", [gate], [gc], saved=[gate])
        uc = o.new(k * fe, eb, EXP, "experts.up_clamp")
        o.tr.op("experts.up_clamp", [up], [uc], saved=[up])
        ga = o.new(k * fe, eb, EXP, "experts.gate_alpha")
        o.tr.op("experts.gate_alpha", [gc], [ga])
        sg = o.new(k * fe, eb, EXP, "experts.sigmoid")
        o.tr.op("experts.sigmoid", [ga], [sg], saved=[sg])
        glu = o.mul(gc, sg, "experts.glu")
        up1 = o.new(k * fe, eb, EXP, "experts.up_plus_1")
        o.tr.op("experts.up_plus_1", [uc], [up1])
        prod = o.mul(up1, glu, "experts.gated")
    else:
        act = o.new(k * fe, eb, EXP, "experts.silu")
        o.tr.op("experts.silu", [gate], [act], saved=[gate])
        prod = o.mul(act, up, "experts.mul")
    out = experts_down_and_combine(o, m, prod, wts, eb, wg)
    if shared is not None:
        if m.shared_expert_gate:
            g = o.linear(xn, 1, SEQ, h, "shared_expert_gate")
            sg = o.new(1, g.nbytes, SEQ, "shared_expert_gate.sigmoid")
            o.tr.op("shared_expert_gate.sigmoid", [g], [sg], saved=[sg])
            shared = o.mul(sg, shared, "shared_expert_gate.mul")
        out = o.add(out, shared, "experts.plus_shared")
    return out


# ---- layers -----------------------------------------------------------------------------------
def _mlp(o: HFOps, m, xn: T, moe_layer: bool) -> T:
    if moe_layer:
        return moe_block(o, m, xn)
    if m.mlp == "swiglu":
        return gated_mlp(o, m, xn, m.ffn_hidden, TP)
    return gelu_mlp(o, m, xn)


def llama_family_layer(o: HFOps, m, spec: HFLayerSpec, moe_layer: bool):
    """Gemma 1/2/3, Phi-3, Qwen3, GLM-4, OLMo-2, Granite and the MoE families' decoder layers:
    pre-norm (Llama), sandwich (Gemma 2/3: post_attention and post_feedforward norms on the
    sublayers' outputs; GLM-4: post_self_attn and post_mlp) or post-norm only (OLMo-2); Phi-3's
    residual dropouts."""
    x = o.external(m.hidden, residual_bytes(o), SEQ, "x")
    cos = o.external(m.head_dim, o.param_bytes, ONE, "cos", requires_grad=False)
    post = m.norm_layout == "post"
    sandwich = m.norm_layout == "sandwich"
    xn = x if post else norm(o, m, x, "input_layernorm")
    att = llama_family_attention(o, m, spec, xn, cos)
    if post or sandwich:
        att = norm(o, m, att, "post_attention_layernorm")
    att = o.dropout(att, m.hidden_dropout, "resid_attn_dropout")
    x2 = o.add(x, att, "residual1")
    xn2 = x2 if post else norm(o, m, x2, "pre_feedforward_layernorm")
    mlp = _mlp(o, m, xn2, moe_layer)
    if post or sandwich:
        mlp = norm(o, m, mlp, "post_feedforward_layernorm")
    mlp = o.dropout(mlp, m.hidden_dropout, "resid_mlp_dropout")
    return o.tr, x, o.add(x2, mlp, "residual2")


def neox_family_layer(o: HFOps, m, spec: HFLayerSpec):
    """GPTNeoXLayer / FalconDecoderLayer: LayerNorm, fused ``query_key_value``, rotary positions,
    attention, ``dense``; the MLP reads a second LayerNorm of the same input (parallel block; one
    shared LayerNorm for Falcon-7B) or of the attention's residual sum (sequential).
    GPT-NeoX: q, k, v are views of the fused output, rotated into new tensors by a ``cat``
    (head-major q, so the attention output is copied). Falcon: q is copied head-major by
    ``transpose(1, 2).reshape``, k and v are copied by list indexing (multi-query) or broadcast
    to every head and copied (new decoder architecture); the output is permuted and copied."""
    h = m.hidden
    x = o.external(h, residual_bytes(o), SEQ, "x")
    cos = o.external(m.head_dim, o.param_bytes, ONE, "cos", requires_grad=False)
    a = o.layernorm(x, "input_layernorm")
    width = m.q_width + 2 * m.kv_width
    qkv = o.linear(a, width, TP, h * width, "query_key_value")
    if m.family == "falcon":
        q = o.new(m.q_width, qkv.nbytes, TP, "q_copy")
        o.tr.op("q_copy", [qkv], [q])
        kvw = m.kv_width if m.kv_heads == 1 else m.q_width  # the new architecture broadcasts K/V to every head
        k = o.new(kvw, qkv.nbytes, TP, "k_copy")
        o.tr.op("k_copy", [qkv], [k])
        v = o.new(kvw, qkv.nbytes, TP, "v_copy")
        o.tr.op("v_copy", [qkv], [v])
    else:
        q, k, v = o.view(qkv, m.q_width, "q"), o.view(qkv, m.kv_width, "k"), o.view(qkv, m.kv_width, "v")
    if m.position == "rope":
        q, k = o.rope(q, cos, "rope_q"), o.rope(k, cos, "rope_k")
    att = attention_core(o, m, spec, q, k, v, True)
    proj = o.dropout(o.linear(att, h, SEQ, m.attn_out_width * h, "dense"), m.hidden_dropout, "post_attention_dropout")
    if m.parallel_block:
        b = a if m.norms_per_layer == 1 else o.layernorm(x, "post_attention_layernorm")
        mlp = o.dropout(gelu_mlp(o, m, b), m.hidden_dropout, "post_mlp_dropout")
        out = o.add(o.add(mlp, proj, "mlp_plus_attn"), x, "residual")
    else:
        x2 = o.add(proj, x, "residual1")
        mlp = o.dropout(gelu_mlp(o, m, o.layernorm(x2, "post_attention_layernorm")), m.hidden_dropout,
                        "post_mlp_dropout")
        out = o.add(mlp, x2, "residual2")
    return o.tr, x, out


def family_layer(m, spec: HFLayerSpec, moe_layer: bool):
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    if m.family in ("gpt_neox", "falcon"):
        return neox_family_layer(o, m, spec)
    return llama_family_layer(o, m, spec, moe_layer)


def family_head(m, spec: HFLayerSpec):
    """Final norm (Gemma/OLMo-2/gpt-oss multiply in fp32; LayerNorm for GPT-NeoX/Falcon), ``lm_head``,
    Granite's logits scaling, Gemma 2's final soft-cap (modeling_gemma2.py: logits / cap, tanh (saves its output), x cap),
    and the loss (logits.float(), cross-entropy)."""
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    h = m.hidden
    x = o.external(h, residual_bytes(o), SEQ, "x")
    xn = norm(o, m, x, "ln_f" if m.norm == "layernorm" else "norm")
    logits = o.linear(xn, m.vocab, TP, m.vocab * h, "lm_head", adaptable=False)
    if m.family == "granite":  # modeling_granite.py: logits / config.logits_scaling (a new tensor, nothing saved)
        scaled = o.new(m.vocab, logits.nbytes, TP, "logits_scaling")
        o.tr.op("logits_scaling", [logits], [scaled])
        logits = scaled
    if m.final_softcap:
        d = o.new(m.vocab, logits.nbytes, TP, "softcap_div")
        o.tr.op("softcap_div", [logits], [d])
        th = o.new(m.vocab, logits.nbytes, TP, "softcap_tanh")
        o.tr.op("softcap_tanh", [d], [th], saved=[th])
        logits = o.new(m.vocab, logits.nbytes, TP, "softcap_mul")
        o.tr.op("softcap_mul", [th], [logits])
    loss = o.cross_entropy_hf(logits)
    o.tr.op("return_outputs", [logits], [], kind="none")
    return o.tr, x, loss

