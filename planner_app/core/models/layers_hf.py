"""Layer traces of the Hugging Face transformers implementations (``--framework pytorch``
and ``deepspeed``): the operations each model's ``forward`` runs, in order, as of
transformers 5.x (modeling_gpt2.py, modeling_llama.py, modeling_bert.py,
modeling_mixtral.py with integrations/moe.py ``grouped_mm``, modeling_deepseek_v3.py;
integrations/sdpa_attention.py; loss/loss_utils.py).

Each helper of ``HFOps`` applies PyTorch's rules for what autograd saves and autocast's
rules for dtypes; ``trace.simulate`` turns the result into saved bytes and peaks.
The traces were checked against ``torch.cuda.max_memory_allocated`` on an H200
(tests/data/training_runs_h200.json; docs/validation.md).
"""
from __future__ import annotations

from planner_app.core.models import layers_families
from planner_app.core.models.hf_ops import (
    HFLayerSpec,
    HFOps,
    attention_core_hf,
    experts_down_and_combine,
    experts_gather_and_up,
    needs_mask,
    residual_bytes,
)
from planner_app.core.models.trace import EXP, ONE, SEQ, TP, T


def gpt2_layer(m, spec: HFLayerSpec):
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    h = m.hidden
    x = o.external(h, residual_bytes(o), SEQ, "x")
    a = o.layernorm(x, "ln_1")
    qkv = o.linear(a, 3 * h, TP, 3 * h * h, "c_attn")
    q, k, v = (o.view(qkv, h, n) for n in ("q", "k", "v"))
    att = attention_core_hf(o, m, spec, q, k, v, needs_mask(m, spec))
    proj = o.dropout(o.linear(att, h, SEQ, h * h, "attn.c_proj"), m.hidden_dropout, "resid_dropout1")
    x2 = o.add(proj, x, "residual1")
    b = o.layernorm(x2, "ln_2")
    u = o.linear(b, m.ffn_hidden, TP, h * m.ffn_hidden, "c_fc")
    g = o.gelu_tanh_python(u) if m.mlp == "gelu_tanh" else o.unary_saving_input(u, "gelu")
    d = o.dropout(o.linear(g, h, SEQ, h * m.ffn_hidden, "mlp.c_proj"), m.hidden_dropout, "resid_dropout2")
    out = o.add(x2, d, "residual2")
    return o.tr, x, out


def _llama_attention(o: HFOps, m, spec: HFLayerSpec, xn: T, cos: T) -> T:
    h = m.hidden
    q = o.linear(xn, m.q_width, TP, h * m.q_width, "q_proj")
    k = o.linear(xn, m.kv_width, TP, h * m.kv_width, "k_proj")
    v = o.linear(xn, m.kv_width, TP, h * m.kv_width, "v_proj")
    q = o.rope(q, cos, "rope_q")
    k = o.rope(k, cos, "rope_k")
    return attention_core_hf(o, m, spec, q, k, v, needs_mask(m, spec))


def _swiglu_mlp(o: HFOps, m, xn: T, ffn: int, slot: int, name: str) -> T:
    h = m.hidden
    gate = o.linear(xn, ffn, slot, h * ffn, name + ".gate_proj")
    act = o.unary_saving_input(gate, name + ".silu")
    up = o.linear(xn, ffn, slot, h * ffn, name + ".up_proj")
    prod = o.mul(act, up, name + ".mul")
    return o.linear(prod, h, SEQ, h * ffn, name + ".down_proj")


def _moe_block(o: HFOps, m, xn: T) -> T:
    """MixtralSparseMoeBlock with the ``grouped_mm`` experts (integrations/moe.py): router
    softmax in fp32, tokens gathered per slot (top-k per token), grouped GEMMs in the
    experts' parameter dtype, masked_fill copies, weighting, un-permute and sum."""
    h, k, fe = m.hidden, m.top_k, m.expert_ffn_hidden
    router = o.linear(xn, m.experts, SEQ, h * m.experts, "router")
    r32 = o._cast(router, 4, "router.logits32")
    probs = o.new(m.experts, 4, SEQ, "router.softmax")
    o.tr.op("router.softmax", [r32], [probs], saved=[probs], kind="reduction")
    topv = o.new(k, 4, SEQ, "router.topk")
    idx = o.new(k, 8, SEQ, "router.idx", requires_grad=False)
    o.tr.op("router.topk", [probs], [topv, idx], saved=[idx])
    wts = o.new(k, 4, SEQ, "router.weights")
    o.tr.op("router.normalise", [topv], [wts], saved=[topv, wts])
    eb = o.param_bytes  # grouped_mm casts its input to the weights' dtype
    # frozen experts (LoRA) save no inputs and compute no weight gradients
    wg = 0 if o.frozen else 1
    gum = experts_gather_and_up(o, m, xn, idx, eb, wg)
    gate = o.view(gum, k * fe, "experts.gate")
    up = o.view(gum, k * fe, "experts.up")
    act = o.new(k * fe, eb, EXP, "experts.silu")
    o.tr.op("experts.silu", [gate], [act], saved=[gate])
    prod = o.mul(act, up, "experts.mul")
    out = experts_down_and_combine(o, m, prod, wts, eb, wg)
    if m.shared_experts:
        shared = _swiglu_mlp(o, m, xn, m.expert_ffn_hidden * m.shared_experts, TP, "shared")
        out = o.add(out, shared, "experts.plus_shared")
    return out


def llama_layer(m, spec: HFLayerSpec, moe: bool = False):
    """LlamaDecoderLayer (also Mistral, Qwen2; MixtralDecoderLayer with ``moe``)."""
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    x = o.external(m.hidden, residual_bytes(o), SEQ, "x")
    cos = o.external(m.head_dim, o.param_bytes, ONE, "cos", requires_grad=False)
    xn = o.rmsnorm(x, "input_layernorm")
    att = _llama_attention(o, m, spec, xn, cos)
    proj = o.linear(att, m.hidden, SEQ, m.attn_out_width * m.hidden, "o_proj")
    x2 = o.add(x, proj, "residual1")
    xn2 = o.rmsnorm(x2, "post_attention_layernorm")
    mlp = _moe_block(o, m, xn2) if moe else _swiglu_mlp(o, m, xn2, m.ffn_hidden, TP, "mlp")
    out = o.add(x2, mlp, "residual2")
    return o.tr, x, out


def deepseek_layer(m, spec: HFLayerSpec, moe: bool = True):
    """DeepseekV3DecoderLayer: multi-head latent attention (low-rank q and kv with their
    own RMSNorms, decoupled RoPE part) and a MoE block with shared experts."""
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    h = m.hidden
    x = o.external(h, residual_bytes(o), SEQ, "x")
    cos = o.external(m.qk_rope_dim, o.param_bytes, ONE, "cos", requires_grad=False)
    xn = o.rmsnorm(x, "input_layernorm")
    if m.q_lora_rank:
        qa = o.linear(xn, m.q_lora_rank, SEQ, h * m.q_lora_rank, "q_a_proj")
        q = o.linear(o.rmsnorm(qa, "q_a_layernorm"), m.q_width, TP, m.q_lora_rank * m.q_width, "q_b_proj")
    else:
        q = o.linear(xn, m.q_width, TP, h * m.q_width, "q_proj")
    kva = o.linear(xn, m.kv_lora_rank + m.qk_rope_dim, SEQ, h * (m.kv_lora_rank + m.qk_rope_dim),
                   "kv_a_proj_with_mqa")
    kv_lat = o.view(kva, m.kv_lora_rank, "kv_latent")
    kv = o.linear(o.rmsnorm(kv_lat, "kv_a_layernorm"), m.heads * (m.qk_nope_dim + m.v_head_dim), TP,
                  m.kv_lora_rank * m.heads * (m.qk_nope_dim + m.v_head_dim), "kv_b_proj")
    q = o.rope(q, cos, "rope_q")
    k = o.new(m.kv_width, kv.nbytes, TP, "k_cat")
    o.tr.op("k_cat", [kv, kva], [k])
    v = o.new(m.heads * m.v_head_dim, kv.nbytes, TP, "v_pad")
    o.tr.op("v_split", [kv], [v])
    att = attention_core_hf(o, m, spec, q, k, v, needs_mask(m, spec))
    proj = o.linear(att, h, SEQ, m.attn_out_width * h, "o_proj")
    x2 = o.add(x, proj, "residual1")
    xn2 = o.rmsnorm(x2, "post_attention_layernorm")
    mlp = _moe_block(o, m, xn2) if moe else _swiglu_mlp(o, m, xn2, m.ffn_hidden, TP, "mlp")
    out = o.add(x2, mlp, "residual2")
    return o.tr, x, out


def bert_layer(m, spec: HFLayerSpec):
    """BertLayer (post-norm): self-attention, dense+dropout+LayerNorm(x+.), GELU MLP, same."""
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    h = m.hidden
    x = o.external(h, residual_bytes(o), SEQ, "x")
    q = o.linear(x, h, TP, h * h, "query")
    k = o.linear(x, h, TP, h * h, "key")
    v = o.linear(x, h, TP, h * h, "value")
    att = attention_core_hf(o, m, spec, q, k, v, False)
    d = o.dropout(o.linear(att, h, SEQ, h * h, "attention.output.dense"), m.hidden_dropout, "attention.dropout")
    x1 = o.layernorm(o.add(d, x, "attention.residual"), "attention.LayerNorm")
    i = o.unary_saving_input(o.linear(x1, m.ffn_hidden, TP, h * m.ffn_hidden, "intermediate.dense"), "gelu")
    d2 = o.dropout(o.linear(i, h, SEQ, h * m.ffn_hidden, "output.dense"), m.hidden_dropout, "output.dropout")
    out = o.layernorm(o.add(d2, x1, "output.residual"), "output.LayerNorm")
    return o.tr, x, out


def layer_trace(m, spec: HFLayerSpec, moe_layer: bool):
    if m.family in layers_families.FAMILY_TRACES:
        return layers_families.family_layer(m, spec, moe_layer)
    if m.arch == "gpt2":
        return gpt2_layer(m, spec)
    if m.arch == "bert":
        return bert_layer(m, spec)
    if m.arch == "deepseek":
        return deepseek_layer(m, spec, moe=moe_layer)
    return llama_layer(m, spec, moe=moe_layer)


def embedding_trace(m, spec: HFLayerSpec):
    """Token (and position / token-type) embeddings up to the first layer's input."""
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    h = m.hidden
    ids = o.external(1, 8, SEQ, "input_ids", requires_grad=False)
    e = o.new(h, o.param_bytes, SEQ, "embed")
    emb_grad = m.vocab * h * o.grad_bytes  # slot W: sharded by tensor (vocab) parallelism
    if o.frozen:  # LoRA: the embedding needs no gradient, so its backward keeps nothing
        o.tr.op("embed_tokens", [ids], [e])
    elif m.tied_embeddings:  # accumulates into the output layer's gradient: transient only
        o.tr.op("embed_tokens", [ids], [e], saved=[ids], weight_grad_temp=emb_grad)
    else:
        o.tr.op("embed_tokens", [ids], [e], saved=[ids], weight_grad_bytes=emb_grad)
    x = e
    if m.position == "learned":
        p = o.new(h, o.param_bytes, SEQ, "pos_embed")
        o.tr.op("wpe", [], [p])
        x = o.add(x, p, "embed_sum")
        if m.type_vocab:
            x = o.add(x, p, "embed_sum_types")
    if m.arch == "bert":
        x = o.layernorm(x, "embeddings.LayerNorm")
    x = o.dropout(x, m.embed_dropout, "embed_dropout")
    return o.tr, ids, x


def head_trace(m, spec: HFLayerSpec):
    """Final norm, output layer (or BERT's MLM head) and the loss."""
    if m.family in layers_families.FAMILY_TRACES:
        return layers_families.family_head(m, spec)
    o = HFOps(spec.kind, spec.grad_bytes, spec.lora)
    h = m.hidden
    x = o.external(h, residual_bytes(o), SEQ, "x")
    if m.arch == "bert":
        t = o.unary_saving_input(o.linear(x, h, SEQ, h * h, "mlm.transform.dense", adaptable=False), "mlm.gelu")
        xn = o.layernorm(t, "mlm.LayerNorm")
    elif m.norm == "layernorm":
        xn = o.layernorm(x, "ln_f")
    else:
        xn = o.rmsnorm(x, "norm")
    logits = o.linear(xn, m.vocab, TP, m.vocab * h, "lm_head", adaptable=False)
    loss = o.cross_entropy_plain(logits) if m.arch == "bert" else o.cross_entropy_hf(logits)
    o.tr.op("return_outputs", [logits], [], kind="none")  # the model's output object holds the logits
    return o.tr, x, loss
