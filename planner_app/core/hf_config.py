"""Import a Hugging Face ``config.json`` into a ModelSpec.

Field names are Hugging Face's (``hidden_size``, ``num_key_value_heads``,
``num_local_experts``, ``kv_lora_rank``...) for the model types listed in
``SUPPORTED_MODEL_TYPES``. Anything else is refused with a message naming the field.
"""
from __future__ import annotations

import json
import os

from planner_app.core.errors import InputError
from planner_app.core.model import ModelSpec

_LLAMA_LIKE = ("llama", "mistral", "qwen2", "qwen3")
SUPPORTED_MODEL_TYPES = ("gpt2", "bert") + _LLAMA_LIKE + ("mixtral", "deepseek_v2", "deepseek_v3")


def _get(cfg: dict, *names, default=None, required=True):
    for n in names:
        if n in cfg and cfg[n] is not None:
            return cfg[n]
    if required and default is None:
        raise InputError(f"config.json: {names[0]}", "is missing; it is required for this model type")
    return default


def _int(cfg: dict, *names, default=None, required=True) -> int:
    v = _get(cfg, *names, default=default, required=required)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v < 0:
        raise InputError(f"config.json: {names[0]}", f"must be a non-negative whole number, got {v!r}")
    return int(v)


def _float(cfg: dict, name: str, default: float) -> float:
    v = cfg.get(name, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise InputError(f"config.json: {name}", f"must be a probability in [0, 1], got {v!r}")
    return float(v)


def model_from_hf_config(cfg: dict, name: str = "custom") -> ModelSpec:
    """Build a ModelSpec from a parsed Hugging Face config dictionary."""
    if not isinstance(cfg, dict):
        raise InputError("config.json", "must hold a JSON object")
    mt = cfg.get("model_type")
    if mt is None:
        raise InputError("config.json: model_type", f"is missing; supported: {', '.join(SUPPORTED_MODEL_TYPES)}")
    if mt not in SUPPORTED_MODEL_TYPES:
        raise InputError("config.json: model_type",
                         f"{mt!r} is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)}")
    tied = bool(cfg.get("tie_word_embeddings", mt in ("gpt2", "bert")))
    common = dict(name=name, vocab=_int(cfg, "vocab_size"), source="Hugging Face config.json")
    if mt == "gpt2":
        h = _int(cfg, "n_embd", "hidden_size")
        inner = cfg.get("n_inner")
        act = cfg.get("activation_function", "gelu_new")
        return ModelSpec(arch="gpt2", hidden=h, layers=_int(cfg, "n_layer", "num_hidden_layers"),
                         heads=_int(cfg, "n_head", "num_attention_heads"),
                         ffn_hidden=int(inner) if inner else 4 * h,
                         max_positions=_int(cfg, "n_positions", "max_position_embeddings"),
                         position="learned", norm="layernorm",
                         mlp="gelu_tanh" if act in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast") else "gelu",
                         qkv_bias=True, out_bias=True, mlp_bias=True, norm_bias=True, tied_embeddings=tied,
                         attn_dropout=_float(cfg, "attn_pdrop", 0.1), hidden_dropout=_float(cfg, "resid_pdrop", 0.1),
                         embed_dropout=_float(cfg, "embd_pdrop", 0.1), **common)
    if mt == "bert":
        return ModelSpec(arch="bert", hidden=_int(cfg, "hidden_size"), layers=_int(cfg, "num_hidden_layers"),
                         heads=_int(cfg, "num_attention_heads"), ffn_hidden=_int(cfg, "intermediate_size"),
                         max_positions=_int(cfg, "max_position_embeddings"), position="learned",
                         norm="layernorm", mlp="gelu", qkv_bias=True, out_bias=True, mlp_bias=True,
                         norm_bias=True, tied_embeddings=True, type_vocab=_int(cfg, "type_vocab_size", default=2),
                         attn_dropout=_float(cfg, "attention_probs_dropout_prob", 0.1),
                         hidden_dropout=_float(cfg, "hidden_dropout_prob", 0.1),
                         embed_dropout=_float(cfg, "hidden_dropout_prob", 0.1), **common)
    h = _int(cfg, "hidden_size")
    heads = _int(cfg, "num_attention_heads")
    kv = _int(cfg, "num_key_value_heads", default=heads)
    head_dim = _int(cfg, "head_dim", default=0, required=False)
    llama_kw = dict(hidden=h, layers=_int(cfg, "num_hidden_layers"), heads=heads, kv_heads=kv,
                    head_dim=head_dim, max_positions=_int(cfg, "max_position_embeddings", default=0, required=False),
                    position="rope", norm="rmsnorm", mlp="swiglu", tied_embeddings=tied,
                    attn_dropout=_float(cfg, "attention_dropout", 0.0),
                    sliding_window=_int(cfg, "sliding_window", default=0, required=False) if cfg.get(
                        "use_sliding_window", True) else 0)
    if mt in _LLAMA_LIKE:
        qkv_bias = bool(cfg.get("attention_bias", False)) or mt == "qwen2"
        return ModelSpec(arch="llama", ffn_hidden=_int(cfg, "intermediate_size"), qkv_bias=qkv_bias,
                         out_bias=bool(cfg.get("attention_bias", False)), mlp_bias=bool(cfg.get("mlp_bias", False)),
                         **llama_kw, **common)
    if mt == "mixtral":
        ffn = _int(cfg, "intermediate_size")
        return ModelSpec(arch="moe", ffn_hidden=ffn, experts=_int(cfg, "num_local_experts"),
                         top_k=_int(cfg, "num_experts_per_tok"), expert_ffn_hidden=ffn, **llama_kw, **common)
    # DeepSeek-V2 / V3: multi-head latent attention, shared experts, leading dense layers
    llama_kw["head_dim"] = 0
    llama_kw["kv_heads"] = heads
    return ModelSpec(arch="deepseek", ffn_hidden=_int(cfg, "intermediate_size"),
                     experts=_int(cfg, "n_routed_experts"), top_k=_int(cfg, "num_experts_per_tok"),
                     expert_ffn_hidden=_int(cfg, "moe_intermediate_size"),
                     shared_experts=_int(cfg, "n_shared_experts", default=0, required=False),
                     dense_layers=_int(cfg, "first_k_dense_replace", default=0, required=False),
                     q_lora_rank=_int(cfg, "q_lora_rank", default=0, required=False),
                     kv_lora_rank=_int(cfg, "kv_lora_rank"), qk_nope_dim=_int(cfg, "qk_nope_head_dim"),
                     qk_rope_dim=_int(cfg, "qk_rope_head_dim"), v_head_dim=_int(cfg, "v_head_dim"),
                     **llama_kw, **common)


def load_hf_config(path: str) -> ModelSpec:
    """Read a ``config.json`` file; errors name the file and the field."""
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except FileNotFoundError:
        raise InputError("model", f"no preset or file named {path!r}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("model", f"cannot read {path!r}: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError("config.json", f"{os.path.basename(path)} is not valid JSON (line {e.lineno}, "
                                        f"column {e.colno}: {e.msg})") from None
    name = os.path.splitext(os.path.basename(path))[0]
    if name == "config":
        name = os.path.basename(os.path.dirname(os.path.abspath(path))) or "config"
    return model_from_hf_config(cfg, name=name)


def model_to_hf_config(m) -> dict:
    """The Hugging Face config dictionary that builds ``m`` (for real-run validation)."""
    if m.arch == "gpt2":
        return {"model_type": "gpt2", "n_embd": m.hidden, "n_layer": m.layers, "n_head": m.heads,
                "n_inner": m.ffn_hidden, "vocab_size": m.vocab, "n_positions": m.max_positions,
                "activation_function": "gelu_new" if m.mlp == "gelu_tanh" else "gelu",
                "attn_pdrop": m.attn_dropout, "resid_pdrop": m.hidden_dropout, "embd_pdrop": m.embed_dropout,
                "tie_word_embeddings": m.tied_embeddings}
    if m.arch == "bert":
        return {"model_type": "bert", "hidden_size": m.hidden, "num_hidden_layers": m.layers,
                "num_attention_heads": m.heads, "intermediate_size": m.ffn_hidden, "vocab_size": m.vocab,
                "max_position_embeddings": m.max_positions, "type_vocab_size": m.type_vocab or 2,
                "attention_probs_dropout_prob": m.attn_dropout, "hidden_dropout_prob": m.hidden_dropout}
    common = {"hidden_size": m.hidden, "num_hidden_layers": m.layers, "num_attention_heads": m.heads,
              "num_key_value_heads": m.kv_heads, "vocab_size": m.vocab,
              "max_position_embeddings": max(m.max_positions, 4096), "tie_word_embeddings": m.tied_embeddings,
              "hidden_act": "silu", "rms_norm_eps": 1e-5, "attention_dropout": m.attn_dropout}
    if m.arch == "llama":
        if m.qkv_bias and not m.out_bias:
            return {"model_type": "qwen2", "intermediate_size": m.ffn_hidden, "use_sliding_window": False, **common}
        d = {"model_type": "mistral" if m.sliding_window else "llama", "intermediate_size": m.ffn_hidden,
             "head_dim": m.head_dim, **common}
        if m.sliding_window:
            d["sliding_window"] = m.sliding_window
        else:
            d.update(attention_bias=m.qkv_bias, mlp_bias=m.mlp_bias)
        return d
    if m.arch == "moe":
        return {"model_type": "mixtral", "intermediate_size": m.expert_ffn_hidden, "num_local_experts": m.experts,
                "num_experts_per_tok": m.top_k, "sliding_window": m.sliding_window or None, **common}
    if m.arch == "deepseek":
        return {"model_type": "deepseek_v3", "intermediate_size": m.ffn_hidden, "moe_intermediate_size":
                m.expert_ffn_hidden, "n_routed_experts": m.experts, "num_experts_per_tok": m.top_k,
                "n_shared_experts": m.shared_experts, "first_k_dense_replace": m.dense_layers,
                "q_lora_rank": m.q_lora_rank or None, "kv_lora_rank": m.kv_lora_rank, "qk_nope_head_dim": m.qk_nope_dim,
                "qk_rope_head_dim": m.qk_rope_dim, "v_head_dim": m.v_head_dim, "n_group": 1, "topk_group": 1,
                **common}
    raise InputError("model", f"a {m.arch} model has no Hugging Face config")
