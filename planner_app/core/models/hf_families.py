"""``config.json`` import for the families of issue 14: Gemma 1/2/3 (text), Phi-3, Qwen3,
Qwen2-MoE, Qwen3-MoE, gpt-oss, GLM-4, OLMo-2, Granite, GPT-NeoX and Falcon; and the reverse
(the ``config.json`` that builds a spec, for real-run validation and edited dimensions).

Every structural choice below is read off transformers 5.24.0's
``models/<type>/modeling_<type>.py`` (cited per family); the missing fields take the defaults
of ``configuration_<type>.py`` (hf_fields.TYPE_DEFAULTS).
"""
from __future__ import annotations

from planner_app.core.errors import InputError
from planner_app.core.models.hf_fields import (
    TYPE_DEFAULTS,
    field,
    get,
    get_bool,
    get_int,
    get_positive_or_off,
    get_prob,
    rotary_fraction,
    sliding_layer_count,
)
from planner_app.core.models.spec import ModelSpec

LLAMA_FAMILIES = ("gemma", "gemma2", "gemma3_text", "phi3", "qwen3", "glm4", "olmo2", "granite")
MOE_FAMILIES = ("qwen2_moe", "qwen3_moe", "gpt_oss")
NEOX_FAMILIES = ("gpt_neox", "falcon")
FAMILIES = LLAMA_FAMILIES + MOE_FAMILIES + NEOX_FAMILIES


def _with_defaults(cfg: dict, mt: str) -> dict:
    d = dict(TYPE_DEFAULTS.get(mt, {}))
    d.update(cfg)  # an explicit null stays null (e.g. "sliding_window": null turns the window off)
    return d


def _window(c: dict, mt: str, layers: int) -> tuple[int, int]:
    """(window, layers using it) as each configuration file lays out ``layer_types``."""
    w = c.get("sliding_window")
    if mt in ("qwen3", "qwen2_moe", "qwen3_moe") and not get_bool(c, "use_sliding_window", False):
        w = None  # configuration_qwen*.py: sliding_window = sliding_window if use_sliding_window else None
    if not w:
        if c.get("layer_types") is not None:
            sliding_layer_count(c, layers, None)  # still check its shape
        return 0, 0
    window = get_int(c, "sliding_window", minimum=1)
    if mt in ("gemma2", "gpt_oss"):  # configuration_gemma2.py / _gpt_oss.py: every other layer, from the first
        n = sliding_layer_count(c, layers, lambda i: (i + 1) % 2)
    elif mt == "gemma3_text":  # configuration_gemma3.py: 5 sliding then 1 full (sliding_window_pattern 6)
        p = get_int(c, "sliding_window_pattern", minimum=1)
        n = sliding_layer_count(c, layers, lambda i: (i + 1) % p)
    elif mt == "qwen3":  # configuration_qwen3.py: layers from max_window_layers on
        first = get_int(c, "max_window_layers")
        n = sliding_layer_count(c, layers, lambda i: i >= first)
    elif mt == "qwen2_moe":  # configuration_qwen2_moe.py: odd-numbered layers below max_window_layers
        last = get_int(c, "max_window_layers")
        n = sliding_layer_count(c, layers, lambda i: (i + 1) % 2 and i < last)
    else:  # phi3, qwen3_moe: one mask for every layer (modeling_phi3.py, modeling_qwen3_moe.py)
        n = layers
    return (window, n) if n else (0, 0)


def _common(c: dict, mt: str, name: str) -> dict:
    layers = get_int(c, "num_hidden_layers", minimum=1)
    window, window_layers = _window(c, mt, layers)
    return dict(name=name, family=mt, vocab=get_int(c, "vocab_size", minimum=1), layers=layers,
                hidden=get_int(c, "hidden_size", minimum=1), heads=get_int(c, "num_attention_heads", minimum=1),
                max_positions=get_int(c, "max_position_embeddings", default=0, required=False),
                tied_embeddings=get_bool(c, "tie_word_embeddings", False),
                attn_dropout=get_prob(c, "attention_dropout", 0.0),
                sliding_window=window, sliding_window_layers=window_layers if window_layers < layers else 0,
                source="Hugging Face config.json")


def _llama_family(c: dict, mt: str, name: str) -> dict:
    """Llama-shaped attention (q/k/v/o projections) with each family's additions."""
    kw = _common(c, mt, name)
    heads = kw["heads"]
    kw.update(kv_heads=get_int(c, "num_key_value_heads", default=heads, minimum=1),
              head_dim=get_int(c, "head_dim", minimum=1) if c.get("head_dim") is not None else 0,
              position="rope", norm="rmsnorm", mlp="swiglu",
              rotary_fraction=rotary_fraction(c, TYPE_DEFAULTS.get(mt, {}).get("partial_rotary_factor", 1.0)))
    bias = get_bool(c, "attention_bias", False)
    if mt != "phi3":  # Phi3Attention: qkv_proj and o_proj without bias, whatever attention_bias says
        kw.update(qkv_bias=bias, out_bias=bias and mt != "glm4")  # Glm4Attention: o_proj bias=False
    return kw


def _llama_like(c: dict, mt: str, name: str) -> ModelSpec:
    kw = _llama_family(c, mt, name)
    kw["ffn_hidden"] = get_int(c, "intermediate_size", minimum=1)
    if mt in ("gemma2", "gemma3_text", "glm4"):
        # Gemma2DecoderLayer / Gemma3DecoderLayer: input, post_attention, pre_feedforward,
        # post_feedforward norms; Glm4DecoderLayer: input, post_self_attn, post_attention, post_mlp
        kw.update(norms_per_layer=4, norm_layout="sandwich")
    if mt == "olmo2":  # Olmo2DecoderLayer: post_attention and post_feedforward norms only
        kw.update(norm_layout="post", qk_norm="full")
    if mt in ("qwen3", "gemma3_text"):  # q_norm / k_norm = RMSNorm(head_dim)
        kw["qk_norm"] = "head"
    if mt == "granite":
        kw["mlp_bias"] = get_bool(c, "mlp_bias", False)
    if mt == "gemma2" or mt == "gemma3_text":
        kw.update(attn_softcap=get_positive_or_off(c, "attn_logit_softcapping"),
                  final_softcap=get_positive_or_off(c, "final_logit_softcapping"))
    if mt == "phi3":
        kw["hidden_dropout"] = get_prob(c, "resid_pdrop", 0.0)
    return ModelSpec(arch="llama", **kw)


def _moe_dense_layers(c: dict, layers: int, experts: int) -> int:
    """Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer: a layer is sparse unless listed in
    ``mlp_only_layers`` or off the ``decoder_sparse_step`` grid."""
    step = get_int(c, "decoder_sparse_step", minimum=1)
    only = c.get("mlp_only_layers") or []
    if not isinstance(only, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in only):
        raise InputError(field("mlp_only_layers"), f"must be a list of layer indices, got {only!r}")
    sparse = sum(1 for i in range(layers) if i not in only and experts > 0 and (i + 1) % step == 0)
    return layers - sparse


def _moe(c: dict, mt: str, name: str) -> ModelSpec:
    kw = _llama_family(c, mt, name)
    experts = get_int(c, "num_experts", "num_local_experts", minimum=1)
    kw.update(experts=experts, top_k=get_int(c, "num_experts_per_tok", minimum=1))
    if mt == "gpt_oss":
        # GptOssExperts: gate_up_proj (E, h, 2f) + bias (E, 2f), down_proj (E, f, h) + bias (E, h);
        # GptOssTopKRouter: weight (E, h) + bias (E); GptOssAttention: sinks (heads)
        ffn = get_int(c, "intermediate_size", minimum=1)
        kw.update(ffn_hidden=ffn, expert_ffn_hidden=ffn, expert_bias=True, router_bias=True, attn_sinks=True)
        return ModelSpec(arch="moe", **kw)
    kw.update(ffn_hidden=get_int(c, "intermediate_size", minimum=1),
              expert_ffn_hidden=get_int(c, "moe_intermediate_size", minimum=1),
              dense_layers=_moe_dense_layers(c, kw["layers"], experts))
    if mt == "qwen3_moe":
        kw["qk_norm"] = "head"  # Qwen3MoeAttention: q_norm, k_norm = RMSNorm(head_dim)
        return ModelSpec(arch="moe", **kw)
    # Qwen2MoeAttention: q/k/v bias from qkv_bias, o_proj without; Qwen2MoeSparseMoeBlock:
    # one shared expert of shared_expert_intermediate_size and shared_expert_gate (h -> 1)
    bias = get_bool(c, "qkv_bias", True)
    shared = get_int(c, "shared_expert_intermediate_size", minimum=1)
    q, r = divmod(shared, kw["expert_ffn_hidden"])
    # as a whole number of expert-sized shared experts when it divides (what the layer traces use)
    kw.update(qkv_bias=bias, out_bias=False, shared_experts=q if not r else 1,
              shared_expert_ffn_hidden=0 if not r else shared, shared_expert_gate=True)
    return ModelSpec(arch="moe", **kw)


def _neox(c: dict, mt: str, name: str) -> ModelSpec:
    """GPT-NeoX and Falcon: LayerNorm, fused QKV, GELU MLP, rotary (or ALiBi), parallel blocks."""
    kw = _common(c, mt, name)
    h, heads = kw["hidden"], kw["heads"]
    if h % heads:
        raise InputError(field("num_attention_heads"), f"must divide hidden_size {h} for {mt}, got {heads}")
    kw.update(norm="layernorm", position="rope", hidden_dropout=get_prob(c, "hidden_dropout", 0.0))
    if mt == "gpt_neox":
        # GPTNeoXAttention: query_key_value and dense with attention_bias; GPTNeoXMLP: biased
        # Linear layers; GPTNeoXLayer: input and post_attention LayerNorms, parallel residual
        bias = get_bool(c, "attention_bias", True)
        act = get(c, "hidden_act", default="gelu")
        kw.update(ffn_hidden=get_int(c, "intermediate_size", minimum=1), qkv_bias=bias, out_bias=bias,
                  mlp_bias=True, mlp="gelu_tanh" if act in ("gelu_new", "gelu_fast", "gelu_pytorch_tanh") else "gelu",
                  activation=str(act),
                  parallel_block=get_bool(c, "use_parallel_residual", True), rotary_fraction=rotary_fraction(c, 0.25))
        return ModelSpec(arch="gpt2", **kw)
    # FalconAttention: query_key_value of (heads + 2 kv_heads) x head_dim (new decoder
    # architecture), hidden + 2 head_dim (multi-query) or 3 hidden; FalconDecoderLayer: one
    # LayerNorm in a parallel block unless num_ln_in_parallel_attn == 2 (the new architecture's default)
    new_arch = get_bool(c, "new_decoder_architecture", False)
    multi_query = get_bool(c, "multi_query", True)
    parallel = get_bool(c, "parallel_attn", True)
    if new_arch:
        kv = get_int(c, "num_kv_heads", default=heads, minimum=1)
    else:
        kv = 1 if multi_query else heads
    n_ln = c.get("num_ln_in_parallel_attn") or (2 if new_arch else 1)
    bias = get_bool(c, "bias", False)
    kw.update(kv_heads=kv, ffn_hidden=get_int(c, "ffn_hidden_size", default=4 * h), qkv_bias=bias, out_bias=bias,
              mlp_bias=bias, mlp="gelu", parallel_block=parallel or new_arch,
              norms_per_layer=2 if (not parallel or n_ln == 2) else 1,
              position="none" if get_bool(c, "alibi", False) else "rope")
    return ModelSpec(arch="gpt2", **kw)


def family_model(cfg: dict, mt: str, name: str) -> ModelSpec:
    """A ModelSpec for a config of one of ``FAMILIES``."""
    c = _with_defaults(cfg, mt)
    if mt in LLAMA_FAMILIES:
        return _llama_like(c, mt, name)
    if mt in MOE_FAMILIES:
        return _moe(c, mt, name)
    return _neox(c, mt, name)


# ---- the reverse: a config.json that builds the same model ------------------------------------
def _layer_types(m) -> list[str] | None:
    """A layer_types list with ``window_layers`` sliding layers laid out as the family does."""
    if not m.sliding_window:
        return None
    n = m.window_layers
    if m.family == "gemma3_text":
        period = max(1, round(m.layers / max(1, m.layers - n)))
        types = ["full_attention" if (i + 1) % period == 0 else "sliding_attention" for i in range(m.layers)]
    else:
        types = ["sliding_attention" if (i % 2 == 0 or n == m.layers) else "full_attention" for i in range(m.layers)]
    sliding = [i for i, t in enumerate(types) if t == "sliding_attention"]
    for i in sliding[n:]:  # exactly n sliding layers, whatever the rounding
        types[i] = "full_attention"
    for i in range(m.layers):
        if types.count("sliding_attention") >= n:
            break
        types[i] = "sliding_attention"
    return types


def family_config(m) -> dict:
    """The config dictionary of ``m.family`` that builds ``m`` (parameter count equal)."""
    mt = m.family
    d = {"model_type": mt, "hidden_size": m.hidden, "num_hidden_layers": m.layers, "num_attention_heads": m.heads,
         "vocab_size": m.vocab, "tie_word_embeddings": m.tied_embeddings, "attention_dropout": m.attn_dropout,
         "max_position_embeddings": max(m.max_positions, 4096),
         "pad_token_id": None}  # class defaults (Phi-3: 32000) may lie outside an edited vocabulary
    if mt in NEOX_FAMILIES:
        if mt == "gpt_neox":
            d.update(intermediate_size=m.ffn_hidden, attention_bias=m.qkv_bias, use_parallel_residual=m.parallel_block,
                     hidden_act=m.activation or ("gelu_new" if m.mlp == "gelu_tanh" else "gelu"),
                     rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                      "partial_rotary_factor": m.rotary_fraction})
            return d
        new_arch = m.kv_heads not in (1, m.heads) or m.norms_per_layer == 2 and m.parallel_block
        d.update(ffn_hidden_size=m.ffn_hidden, bias=m.qkv_bias, alibi=m.position == "none",
                 new_decoder_architecture=new_arch, parallel_attn=m.parallel_block, multi_query=m.kv_heads == 1,
                 num_kv_heads=m.kv_heads, num_ln_in_parallel_attn=m.norms_per_layer if new_arch else None)
        return d
    d.update(num_key_value_heads=m.kv_heads, head_dim=m.head_dim, intermediate_size=m.ffn_hidden,
             rms_norm_eps=1e-6, attention_bias=m.qkv_bias)
    types = _layer_types(m)
    if types:
        d.update(sliding_window=m.sliding_window, layer_types=types, use_sliding_window=True, max_window_layers=0)
    elif mt in ("gemma2", "gemma3_text", "gpt_oss", "phi3"):
        d["sliding_window"] = None
    if mt == "granite":
        d["mlp_bias"] = m.mlp_bias
    if mt in ("gemma2", "gemma3_text"):
        d.update(attn_logit_softcapping=m.attn_softcap or None, final_logit_softcapping=m.final_softcap or None)
    if mt == "glm4":
        d["partial_rotary_factor"] = m.rotary_fraction
    if mt in MOE_FAMILIES:
        d.update(num_experts=m.experts, num_experts_per_tok=m.top_k, router_aux_loss_coef=0.001)
        if mt == "gpt_oss":
            d["intermediate_size"] = m.expert_ffn_hidden
        else:
            d.update(moe_intermediate_size=m.expert_ffn_hidden, mlp_only_layers=list(range(m.dense_layers)),
                     decoder_sparse_step=1)
        if mt == "qwen2_moe":
            d.update(qkv_bias=m.qkv_bias, shared_expert_intermediate_size=m.shared_ffn_hidden)
    return d
