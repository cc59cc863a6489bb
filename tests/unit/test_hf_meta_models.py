"""The engine's parameter count equals PyTorch's for the real transformers model, built live on
the meta device (no memory, no download) from the same config.json: every file in
tests/data/hf_configs/, the config the engine writes back for each (``model_to_hf_config``),
and minimal configs of every supported family (which check that the importer fills in the
same defaults as transformers' configuration classes).

transformers and CPU torch are test requirements (pyproject ``test`` extras; ./run installs
torch); building ~50 models on the meta device takes a few seconds.
"""
import glob
import json
import os
import warnings

import pytest
import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

from planner_app.core.models.hf_config import (
    SUPPORTED_MODEL_TYPES,
    TYPE_ALIASES,
    load_hf_config,
    model_from_hf_config,
    model_to_hf_config,
)

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
CONFIGS = sorted(glob.glob(os.path.join(DATA, "hf_configs", "*.json")))


def torch_model(d: dict):
    """``AutoModel*.from_config`` on the meta device, as benchmarks/gpu/hf_param_counts.py builds it."""
    d = dict(d)
    mt = d.pop("model_type")
    with warnings.catch_warnings():
        # transformers' own deprecation notices about legacy config keys (rope_scaling,
        # rotary_pct...) are not this project's warnings
        warnings.simplefilter("ignore")
        cfg = AutoConfig.for_model(mt, **d)
        cls = AutoModelForMaskedLM if mt == "bert" else AutoModelForCausalLM
        with torch.device("meta"):
            return cfg, cls.from_config(cfg)


def numel(model) -> int:
    return sum(p.numel() for p in model.parameters())


def _name(p):
    return os.path.basename(p)[:-5]


def test_every_supported_type_has_a_real_config():
    types = set()
    for p in CONFIGS:
        with open(p) as f:
            types.add(json.load(f)["model_type"])
    # an alias (Moonshot's kimi_k2) reads as a supported type whose config is here; it has no transformers class
    assert set(TYPE_ALIASES.values()) <= types
    assert set(SUPPORTED_MODEL_TYPES) - set(TYPE_ALIASES) - types == set(), \
        "a supported model type has no config in tests/data/hf_configs"
    assert int(transformers.__version__.split(".")[0]) >= 5


@pytest.mark.parametrize("path", CONFIGS, ids=_name)
def test_param_count_equals_the_meta_model(path):
    with open(path) as f:
        d = json.load(f)
    cfg, model = torch_model(d)
    spec = load_hf_config(path)
    assert spec.params_total == numel(model)
    # the sliding-window layout the engine read is the one transformers built
    types = getattr(cfg, "layer_types", None)
    if types and spec.family:
        assert spec.window_layers == sum(t == "sliding_attention" for t in types)
    # and the config the engine writes back (probe --validate, edited dimensions) builds the same model
    _, again = torch_model(model_to_hf_config(spec))
    assert numel(again) == spec.params_total


# 32 heads: every class default of num_key_value_heads (2 to 32) divides it; pad_token_id inside the vocabulary
SMALL = {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 32, "vocab_size": 1000, "pad_token_id": 0}
# The fewest fields each family needs; everything else takes transformers' class defaults.
MINIMAL = {
    "gemma": {"intermediate_size": 96},
    "gemma2": {"intermediate_size": 96},
    "gemma3_text": {"intermediate_size": 96},
    "phi3": {"intermediate_size": 96},
    "qwen3": {"intermediate_size": 96},
    "glm4": {"intermediate_size": 96},
    "olmo2": {"intermediate_size": 96},
    "granite": {"intermediate_size": 96},
    "qwen2_moe": {"intermediate_size": 96, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48,
                  "num_experts": 6, "num_experts_per_tok": 2},
    "qwen3_moe": {"intermediate_size": 96, "moe_intermediate_size": 32, "num_experts": 6, "num_experts_per_tok": 2},
    "gpt_oss": {"intermediate_size": 96, "num_local_experts": 6, "num_experts_per_tok": 2},
    "gpt_neox": {"intermediate_size": 96},
    "falcon": {},
}
# Switches that change the parameter layout (each one read in modeling_<type>.py).
VARIANTS = [
    ("gemma", {"attention_bias": True, "head_dim": 16, "tie_word_embeddings": False}),
    ("gemma3_text", {"layer_types": ["sliding_attention", "full_attention"] * 2, "sliding_window": 8}),
    ("gemma3_text", {"sliding_window_pattern": 3}),
    ("qwen3", {"use_sliding_window": True, "sliding_window": 8, "max_window_layers": 1, "attention_bias": True}),
    ("glm4", {"attention_bias": False, "num_key_value_heads": 2}),
    ("olmo2", {"attention_bias": True, "num_key_value_heads": 2}),
    ("granite", {"mlp_bias": True, "attention_bias": True, "tie_word_embeddings": True}),
    ("phi3", {"num_key_value_heads": 2, "sliding_window": 8, "tie_word_embeddings": True}),
    ("qwen2_moe", {"mlp_only_layers": [0, 3], "qkv_bias": False, "shared_expert_intermediate_size": 40}),
    ("qwen2_moe", {"decoder_sparse_step": 2, "use_sliding_window": True, "sliding_window": 8, "max_window_layers": 3}),
    ("qwen3_moe", {"decoder_sparse_step": 2, "mlp_only_layers": [1], "head_dim": 32}),
    ("gpt_oss", {"attention_bias": False, "head_dim": 8, "tie_word_embeddings": True}),
    ("gpt_neox", {"use_parallel_residual": False, "attention_bias": False, "tie_word_embeddings": True}),
    ("falcon", {"new_decoder_architecture": True, "num_kv_heads": 2}),
    ("falcon", {"new_decoder_architecture": True, "num_kv_heads": 2, "num_ln_in_parallel_attn": 1}),
    ("falcon", {"multi_query": False, "parallel_attn": False, "bias": True, "ffn_hidden_size": 80}),
    ("falcon", {"alibi": True, "tie_word_embeddings": False}),
]


@pytest.mark.parametrize("mt,extra", [(mt, {}) for mt in MINIMAL] + VARIANTS,
                         ids=[mt for mt in MINIMAL] + [f"{mt}-{i}" for i, (mt, _) in enumerate(VARIANTS)])
def test_minimal_and_variant_configs_take_transformers_defaults(mt, extra):
    d = {"model_type": mt, **SMALL, **MINIMAL[mt], **extra}
    _, model = torch_model(d)
    spec = model_from_hf_config(d, mt)
    assert spec.params_total == numel(model)
    _, again = torch_model(model_to_hf_config(spec))
    assert numel(again) == spec.params_total


@pytest.mark.parametrize("mt", ["llama", "mistral", "qwen2", "mixtral"])
def test_older_llama_types_take_the_class_default_kv_heads(mt):
    d = {"model_type": mt, **SMALL, "intermediate_size": 96}
    if mt == "mixtral":
        d.update(num_local_experts=4, num_experts_per_tok=2)
    _, model = torch_model(d)
    assert model_from_hf_config(d, mt).params_total == numel(model)
