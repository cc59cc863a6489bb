"""Reading fields of a Hugging Face ``config.json``: typed getters whose errors name the field,
and each model type's defaults for the fields that change the architecture.

The defaults are transformers' own (5.24.0, ``models/<type>/configuration_<type>.py``): a
``config.json`` on the Hub omits fields equal to the class default, and transformers fills them
in, so the planner must fill in the same values (tests/unit/test_hf_meta_models.py checks a
minimal config of every type against the model transformers builds from it).
"""
from __future__ import annotations

from planner_app.core.errors import InputError

# Structural defaults per model_type (configuration_<type>.py, transformers 5.24.0). Sizes
# (hidden_size, layers, heads, vocab...) are not defaulted: a config without them is refused,
# except Gemma 3's vocab_size, which the Hub's text_config blocks leave to the class default.
TYPE_DEFAULTS: dict[str, dict] = {
    "gemma": {"num_key_value_heads": 16, "tie_word_embeddings": True, "head_dim": 256, "attention_bias": False},
    "gemma2": {"num_key_value_heads": 4, "tie_word_embeddings": True, "head_dim": 256, "attention_bias": False,
               "sliding_window": 4096, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0},
    "gemma3_text": {"num_key_value_heads": 4, "tie_word_embeddings": True, "head_dim": 256, "attention_bias": False,
                    "sliding_window": 4096, "sliding_window_pattern": 6, "vocab_size": 262208,
                    "attn_logit_softcapping": None, "final_logit_softcapping": None},
    "phi3": {"tie_word_embeddings": False, "sliding_window": None, "partial_rotary_factor": 1.0},
    "qwen3": {"num_key_value_heads": 32, "tie_word_embeddings": False, "head_dim": 128, "attention_bias": False,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28},
    "qwen2_moe": {"num_key_value_heads": 16, "tie_word_embeddings": False, "qkv_bias": True, "decoder_sparse_step": 1,
                  "mlp_only_layers": [], "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28},
    "qwen3_moe": {"num_key_value_heads": 4, "tie_word_embeddings": False, "attention_bias": False,
                  "decoder_sparse_step": 1, "mlp_only_layers": [], "use_sliding_window": False, "sliding_window": 4096},
    "gpt_oss": {"num_key_value_heads": 8, "tie_word_embeddings": False, "head_dim": 64, "attention_bias": True,
                "sliding_window": 128},
    "glm4": {"num_key_value_heads": 2, "tie_word_embeddings": False, "head_dim": 128, "attention_bias": True,
             "partial_rotary_factor": 0.5},
    "olmo2": {"tie_word_embeddings": False, "attention_bias": False},
    "granite": {"tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
    "gpt_neox": {"tie_word_embeddings": False, "attention_bias": True, "use_parallel_residual": True,
                 "partial_rotary_factor": 0.25, "hidden_act": "gelu", "hidden_dropout": 0.0},
    "falcon": {"tie_word_embeddings": True, "parallel_attn": True, "new_decoder_architecture": False,
               "multi_query": True, "bias": False, "alibi": False, "num_kv_heads": None, "ffn_hidden_size": None,
               "num_ln_in_parallel_attn": None, "hidden_dropout": 0.0},
}


def field(name: str) -> str:
    return f"config.json: {name}"


def get(cfg: dict, *names, default=None, required=True):
    """The first of ``names`` present and not null; else ``default``; else refuse."""
    for n in names:
        if n in cfg and cfg[n] is not None:
            return cfg[n]
    if required and default is None:
        raise InputError(field(names[0]), "is missing; it is required for this model type")
    return default


def get_int(cfg: dict, *names, default=None, required=True, minimum: int = 0) -> int:
    v = get(cfg, *names, default=default, required=required)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v < minimum:
        what = "non-negative" if minimum == 0 else f"at least {minimum}, a"
        raise InputError(field(names[0]), f"must be a {what} whole number, got {v!r}")
    return int(v)


def get_prob(cfg: dict, name: str, default: float) -> float:
    v = cfg.get(name, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise InputError(field(name), f"must be a probability in [0, 1], got {v!r}")
    return float(v)


def get_bool(cfg: dict, name: str, default: bool) -> bool:
    v = cfg.get(name, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise InputError(field(name), f"must be true or false, got {v!r}")
    return v


def get_positive_or_off(cfg: dict, name: str) -> float:
    """A cap or window: a positive number, or null / absent (off)."""
    v = cfg.get(name)
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise InputError(field(name), f"must be a positive number or null, got {v!r}")
    return float(v)


def rotary_fraction(cfg: dict, default: float) -> float:
    """``partial_rotary_factor`` at the top level or in ``rope_parameters`` / ``rope_scaling``
    (transformers 5.x moves it into rope_parameters), or GPT-NeoX's legacy ``rotary_pct``."""
    v = None
    for key in ("rope_parameters", "rope_scaling"):
        sub = cfg.get(key)
        if isinstance(sub, dict) and sub.get("partial_rotary_factor") is not None:
            v, name = sub["partial_rotary_factor"], key + ".partial_rotary_factor"
    for key in ("partial_rotary_factor", "rotary_pct"):
        if cfg.get(key) is not None:
            v, name = cfg[key], key
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
        raise InputError(field(name), f"must be in (0, 1], got {v!r}")
    return float(v)


def sliding_layer_count(cfg: dict, layers: int, pattern) -> int:
    """Layers with ``sliding_attention``: from ``layer_types`` when the config lists them (the
    transformers 5.x field), else from ``pattern(i)`` (the configuration file's default rule)."""
    types = cfg.get("layer_types")
    if types is not None:
        allowed = ("full_attention", "sliding_attention")
        if not isinstance(types, list) or len(types) != layers or any(t not in allowed for t in types):
            raise InputError(field("layer_types"), f"must list {layers} entries (one per layer), each one of "
                                                   f"{', '.join(allowed)}")
        return sum(t == "sliding_attention" for t in types)
    return sum(1 for i in range(layers) if pattern(i))
