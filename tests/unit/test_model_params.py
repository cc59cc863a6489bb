"""Parameter counts from the dimensions equal PyTorch's for the Hugging Face models."""
import glob
import json
import os

import pytest

from planner_app.core.errors import InputError
from planner_app.core.models.hf_config import load_hf_config, model_from_hf_config

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
with open(os.path.join(DATA, "hf_param_counts.json")) as _f:
    COUNTS = json.load(_f)["counts"]
CONFIGS = sorted(glob.glob(os.path.join(DATA, "hf_configs", "*.json")))


def test_counts_cover_at_least_six_architectures():
    classes = {v["class"] for v in COUNTS.values()}
    assert len(classes) >= 6, classes


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: os.path.basename(p)[:-5])
def test_param_count_equals_pytorch(path):
    name = os.path.basename(path)[:-5]
    model = load_hf_config(path)
    assert model.params_total == COUNTS[name]["params"]


def test_presets_match_their_config_counts(db):
    for name, rec in COUNTS.items():
        if name in set(db.models.id):
            assert db.model(name).params_total == rec["params"], name


def test_gpt3_175b_preset_has_175b_parameters(db):
    assert 174.5e9 < db.model("gpt3-175b").params_total < 174.7e9  # Brown et al. 2020: 175.0B (rounded)


@pytest.mark.parametrize("cfg,field", [
    ({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 30,
      "intermediate_size": 11008, "vocab_size": 32000}, "heads"),
    ({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32,
      "num_key_value_heads": 5, "intermediate_size": 11008, "vocab_size": 32000}, "kv_heads"),
    ({"model_type": "llama", "hidden_size": -4, "num_hidden_layers": 2, "num_attention_heads": 32,
      "intermediate_size": 11008, "vocab_size": 32000}, "config.json: hidden_size"),
    ({"model_type": "llama", "hidden_size": 4096.5, "num_hidden_layers": 2, "num_attention_heads": 32,
      "intermediate_size": 11008, "vocab_size": 32000}, "config.json: hidden_size"),
    ({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 32, "intermediate_size": 11008,
      "vocab_size": 32000}, "config.json: hidden_size"),
    ({"model_type": "t5", "d_model": 512}, "config.json: model_type"),
    ({"hidden_size": 512}, "config.json: model_type"),
    ({"model_type": "gpt2", "n_embd": 768, "n_layer": 0, "n_head": 12, "vocab_size": 50257, "n_positions": 1024},
     "layers"),
])
def test_bad_configs_name_the_field(cfg, field):
    with pytest.raises(InputError) as e:
        model_from_hf_config(cfg)
    assert e.value.field == field


def test_malformed_json_is_refused(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"model_type": "llama", "hidden_size": 4096,')
    with pytest.raises(InputError) as e:
        load_hf_config(str(p))
    assert e.value.field == "config.json" and "not valid JSON" in e.value.message


def test_moe_active_parameters_count_only_top_k_experts():
    m = load_hf_config(os.path.join(DATA, "hf_configs", "mixtral-8x7b.json"))
    assert 12.8e9 < m.params_active < 13.0e9  # Mistral AI: 12.9B active of 46.7B
    d = load_hf_config(os.path.join(DATA, "hf_configs", "deepseek-v3.json"))
    assert 36e9 < d.params_active < 38e9  # DeepSeek-V3 report: 37B activated (without the MTP module)
