"""Import a Hugging Face ``config.json`` into a ModelSpec.

Field names are Hugging Face's (``hidden_size``, ``num_key_value_heads``,
``num_local_experts``, ``kv_lora_rank``...) for the model types listed in
``SUPPORTED_MODEL_TYPES``. Anything else is refused with a message naming the field. The
families of issue 14 (Gemma, Phi-3, Qwen3, the MoE families, GLM-4, OLMo-2, Granite,
GPT-NeoX, Falcon) are read in hf_families.py.
"""
from __future__ import annotations

import json
import os
from typing import Any

from planner_app.core.errors import InputError
from planner_app.core.models.hf_families import FAMILIES, family_config, family_model
from planner_app.core.models.hf_fields import get_int, get_prob
from planner_app.core.models.spec import ModelSpec

_LLAMA_LIKE = ("llama", "mistral", "qwen2")
SUPPORTED_MODEL_TYPES = ("gpt2", "bert") + _LLAMA_LIKE + ("mixtral", "deepseek_v2", "deepseek_v3", "kimi_k2") + FAMILIES
# Moonshot's Kimi K2 configs say model_type "kimi_k2" over the DeepSeek-V3 architecture: architectures
# DeepseekV3ForCausalLM, auto_map configuration_deepseek.DeepseekV3Config (moonshotai/Kimi-K2-Instruct
# config.json; the text_config of Kimi-K2.5)
TYPE_ALIASES = {"kimi_k2": "deepseek_v3"}

# The class each supported type's ``architectures`` entry names (transformers' auto mappings);
# a config whose model_type and architectures disagree is refused rather than counted as the
# wrong family (a Gemma 2 relabelled as llama would lose its tied embeddings and sandwich norms).
ARCHITECTURE_TYPES = {
    "GPT2LMHeadModel": "gpt2", "BertForMaskedLM": "bert", "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
    "MixtralForCausalLM": "mixtral", "DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3",
    "GemmaForCausalLM": "gemma", "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3", "Phi3ForCausalLM": "phi3", "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3MoeForCausalLM": "qwen3_moe", "GptOssForCausalLM": "gpt_oss", "Glm4ForCausalLM": "glm4",
    "Olmo2ForCausalLM": "olmo2", "GraniteForCausalLM": "granite", "GPTNeoXForCausalLM": "gpt_neox",
    "FalconForCausalLM": "falcon",
}
# Fields that only another family reads: present under a Llama-style label, the count would
# silently miss what they stand for (soft-capping comes with Gemma 2's sandwich norms and tied
# embeddings; shared experts and expert widths with the MoE families; parallel blocks...).
FOREIGN_FIELDS = {
    "attn_logit_softcapping": "gemma2", "final_logit_softcapping": "gemma2", "query_pre_attn_scalar": "gemma2",
    "sliding_window_pattern": "gemma3_text", "shared_expert_intermediate_size": "qwen2_moe",
    "moe_intermediate_size": "qwen3_moe", "swiglu_limit": "gpt_oss", "use_parallel_residual": "gpt_neox",
    "rotary_pct": "gpt_neox", "new_decoder_architecture": "falcon", "parallel_attn": "falcon",
}


def _int(cfg: dict, *names, default=None, required=True) -> int:
    return get_int(cfg, *names, default=default, required=required)


def _float(cfg: dict, name: str, default: float) -> float:
    return get_prob(cfg, name, default)


def _check_label(cfg: dict, mt: str) -> None:
    """Refuse a config whose model_type contradicts its architectures or its fields."""
    archs = cfg.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        named = ARCHITECTURE_TYPES.get(archs[0])
        if named and named != mt:
            raise InputError("config.json: architectures",
                             f"{archs[0]} is a {named} model but model_type says {mt!r}; set model_type to "
                             f"{named!r} (a relabelled config would be counted as the wrong architecture)")
    if mt in _LLAMA_LIKE + ("mixtral",):
        for key, family in FOREIGN_FIELDS.items():
            if cfg.get(key) is not None:
                raise InputError(f"config.json: {key}", f"belongs to model_type {family!r}, not {mt!r}; set "
                                                        f"model_type to the model's own family")


def model_from_hf_config(cfg: dict, name: str = "custom") -> ModelSpec:
    """Build a ModelSpec from a parsed Hugging Face config dictionary."""
    if not isinstance(cfg, dict):
        raise InputError("config.json", "must hold a JSON object")
    mt = cfg.get("model_type")
    if mt is None:
        raise InputError("config.json: model_type", f"is missing; supported: {', '.join(SUPPORTED_MODEL_TYPES)}")
    if mt == "kimi_k25":
        raise InputError("config.json: model_type", "'kimi_k25' is the multimodal Kimi-K2.5 (a vision tower besides "
                                                    "the language model); import its text_config (model_type "
                                                    "'kimi_k2') to size the language model")
    if mt in TYPE_ALIASES:
        mt = TYPE_ALIASES[mt]
        cfg = {**cfg, "model_type": mt}
    if mt == "gemma3":
        raise InputError("config.json: model_type", "'gemma3' is the multimodal Gemma 3 (a vision tower besides the "
                                                    "language model); import its text_config (model_type "
                                                    "'gemma3_text') to size the language model")
    if mt not in SUPPORTED_MODEL_TYPES:
        raise InputError("config.json: model_type",
                         f"{mt!r} is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)}")
    _check_label(cfg, mt)
    if mt in FAMILIES:
        return family_model(cfg, mt, name)
    tied = bool(cfg.get("tie_word_embeddings", mt in ("gpt2", "bert")))
    common: dict[str, Any] = dict(name=name, vocab=_int(cfg, "vocab_size"), source="Hugging Face config.json")
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
    # a missing num_key_value_heads takes the class default (configuration_mistral.py and
    # _mixtral.py: 8, _qwen2.py: 32, _llama.py: the number of heads); null means the heads
    kv_default = {"mistral": 8, "mixtral": 8, "qwen2": 32}.get(mt) if "num_key_value_heads" not in cfg else None
    kv = _int(cfg, "num_key_value_heads", default=kv_default or heads)
    head_dim = _int(cfg, "head_dim", default=0, required=False)
    llama_kw: dict[str, Any] = dict(
        hidden=h, layers=_int(cfg, "num_hidden_layers"), heads=heads, kv_heads=kv, head_dim=head_dim,
        max_positions=_int(cfg, "max_position_embeddings", default=0, required=False),
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
    if m.family in FAMILIES:
        return family_config(m)
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
