"""The families of issue 14 through the whole engine (``estimate --json`` exits 0 with numbers
that hang together), per-layer sliding windows, and bad or relabelled configs refused with
the config field named (CLI: exit 2, one line)."""
import json
import os

import pytest

from planner_app.cli import main
from planner_app.core.errors import InputError
from planner_app.core.models.hf_config import load_hf_config, model_from_hf_config
from planner_app.core.models.hf_families import FAMILIES
from planner_app.core.models.spec import ModelSpec

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
HF = os.path.join(DATA, "hf_configs")
with open(os.path.join(DATA, "hf_param_counts.json")) as _f:
    COUNTS = json.load(_f)["counts"]


def config(name: str) -> dict:
    with open(os.path.join(HF, name + ".json")) as f:
        return json.load(f)


def family_files():
    out = []
    for fn in sorted(os.listdir(HF)):
        if fn.endswith(".json") and config(fn[:-5])["model_type"] in FAMILIES:
            out.append(fn[:-5])
    return out


def run(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("name", family_files())
def test_training_estimate_runs_end_to_end(capsys, name):
    rc, out, err = run(capsys, "estimate", "--model", os.path.join(HF, name + ".json"), "--gpu", "h200",
                       "--recipe", "bf16", "--recompute", "full", "--tokens", "1e9", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["params"]["total"] == COUNTS[name]["params"]
    mem = j["memory"]
    assert abs(sum(mem["breakdown"].values()) - mem["peak_bytes"]) < 1
    assert mem["breakdown"]["parameters"] == pytest.approx(2 * j["params"]["total"], rel=0.01)  # bf16 weights
    assert mem["peak_bytes"] > 2 * mem["breakdown"]["parameters"]  # gradients and optimizer states on top
    assert 0 < j["time"]["mfu"] < 1 and j["time"]["step_s"] > 0 and j["time"]["train_s"] > 0


@pytest.mark.parametrize("name", family_files())
def test_inference_estimate_runs_end_to_end(capsys, name):
    rc, out, err = run(capsys, "estimate", "--model", os.path.join(HF, name + ".json"), "--gpu", "h200",
                       "--mode", "inference", "--batch", "4", "--prompt-len", "8192", "--new-tokens", "256", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["memory"]["kv_cache_bytes"] > 0 and j["time"]["decode_tokens_per_s"] > 0


def test_gemma2_kv_cache_counts_full_layers_whole_and_windowed_layers_to_the_window(capsys):
    c = config("gemma-2-9b")  # 42 layers, every other one with a 4096-token window
    rc, out, err = run(capsys, "estimate", "--model", os.path.join(HF, "gemma-2-9b.json"), "--gpu", "h200",
                       "--mode", "inference", "--batch", "2", "--prompt-len", "16383", "--new-tokens", "1", "--json")
    assert rc == 0, err
    per_layer_token = 2 * c["num_key_value_heads"] * c["head_dim"] * 2  # K and V, bf16
    windowed, full = 21, 21
    want = per_layer_token * 2 * (windowed * c["sliding_window"] + full * 16384)
    assert json.loads(out)["memory"]["kv_cache_bytes"] == pytest.approx(want, rel=1e-12)


def test_window_layouts_follow_each_family():
    assert load_hf_config(os.path.join(HF, "gemma-2-9b.json")).window_layers == 21
    assert load_hf_config(os.path.join(HF, "gemma-3-12b-text.json")).window_layers == 40  # 48 - 48 // 6
    assert load_hf_config(os.path.join(HF, "gpt-oss-120b.json")).window_layers == 18
    assert load_hf_config(os.path.join(HF, "phi-3-mini-4k.json")).window_layers == 32  # every layer
    assert load_hf_config(os.path.join(HF, "qwen3-8b.json")).window_layers == 0  # use_sliding_window false


def test_attended_context_mixes_windowed_and_full_layers():
    m = load_hf_config(os.path.join(HF, "gpt-oss-20b.json"))  # 12 of 24 layers with a 128-token window
    assert m.attended_context(8192) == pytest.approx(0.5 * 128 + 0.5 * 8192)
    assert m.attended_context(64) == 64
    mistral = load_hf_config(os.path.join(HF, "mistral-7b.json"))
    assert mistral.attended_context(8192) == mistral.sliding_window


def test_architecture_features_are_read():
    g2 = load_hf_config(os.path.join(HF, "gemma-2-9b.json"))
    assert (g2.tied_embeddings, g2.head_dim, g2.norms_per_layer, g2.attn_softcap, g2.final_softcap) == \
        (True, 256, 4, 50.0, 30.0)
    assert load_hf_config(os.path.join(HF, "qwen3-8b.json")).qk_norm == "head"
    assert load_hf_config(os.path.join(HF, "olmo-2-7b.json")).norm_layout == "post"
    oss = load_hf_config(os.path.join(HF, "gpt-oss-20b.json"))
    assert oss.attn_sinks and oss.expert_bias and oss.router_bias and oss.qkv_bias and oss.out_bias
    q2 = load_hf_config(os.path.join(HF, "qwen2-57b-a14b.json"))
    assert q2.shared_ffn_hidden == 20480 and q2.shared_expert_gate and q2.qkv_bias and not q2.out_bias
    assert load_hf_config(os.path.join(HF, "qwen3-30b-a3b.json")).shared_experts == 0
    neox = load_hf_config(os.path.join(HF, "gpt-neox-20b.json"))
    assert neox.parallel_block and neox.rotary_fraction == 0.25 and neox.norm == "layernorm"
    f7 = load_hf_config(os.path.join(HF, "falcon-7b.json"))
    assert (f7.kv_heads, f7.norms_per_layer, f7.parallel_block) == (1, 1, True)
    assert load_hf_config(os.path.join(HF, "falcon-40b.json")).norms_per_layer == 2
    assert load_hf_config(os.path.join(HF, "glm-4-9b-0414.json")).rotary_fraction == 0.5


def test_qwen3_30b_active_parameters():
    m = load_hf_config(os.path.join(HF, "qwen3-30b-a3b.json"))
    assert 3.2e9 < m.params_active < 3.4e9  # Qwen: 30.5B total, 3.3B activated


@pytest.mark.parametrize("name,label,field", [
    ("gemma-2-9b", "llama", "config.json: architectures"),
    ("qwen3-8b", "qwen2", "config.json: architectures"),
    ("falcon-7b", "gpt_neox", "config.json: architectures"),
    ("qwen2-57b-a14b", "qwen3_moe", "config.json: architectures"),
])
def test_relabelled_configs_are_refused(name, label, field):
    cfg = dict(config(name), model_type=label)
    with pytest.raises(InputError) as e:
        model_from_hf_config(cfg)
    assert e.value.field == field


@pytest.mark.parametrize("name,label,field", [
    ("gemma-2-9b", "llama", "config.json: attn_logit_softcapping"),
    ("qwen2-57b-a14b", "mixtral", "config.json: shared_expert_intermediate_size"),
    ("gpt-neox-20b", "llama", "config.json: use_parallel_residual"),
    ("falcon-40b", "mistral", "config.json: new_decoder_architecture"),
])
def test_relabelled_configs_without_architectures_are_refused_by_their_fields(name, label, field):
    cfg = {k: v for k, v in config(name).items() if k != "architectures"}
    cfg.update(model_type=label, intermediate_size=cfg.get("intermediate_size", 4 * cfg["hidden_size"]),
               num_local_experts=8, num_experts_per_tok=2)
    with pytest.raises(InputError) as e:
        model_from_hf_config(cfg)
    assert e.value.field == field


def test_multimodal_gemma3_is_refused_with_a_pointer_to_its_text_config():
    with pytest.raises(InputError) as e:
        model_from_hf_config({"model_type": "gemma3", "text_config": config("gemma-3-4b-text")})
    assert e.value.field == "config.json: model_type" and "gemma3_text" in e.value.message


@pytest.mark.parametrize("name,change,field", [
    ("gemma-3-1b", {"layer_types": ["full_attention"] * 3}, "config.json: layer_types"),
    ("gemma-3-1b", {"layer_types": ["global"] * 26}, "config.json: layer_types"),
    ("gemma-3-1b", {"sliding_window_pattern": 0}, "config.json: sliding_window_pattern"),
    ("gemma-2-9b", {"attn_logit_softcapping": -1}, "config.json: attn_logit_softcapping"),
    ("gemma-2-9b", {"tie_word_embeddings": "yes"}, "config.json: tie_word_embeddings"),
    ("gemma-2-9b", {"head_dim": 0}, "config.json: head_dim"),
    ("qwen2-57b-a14b", {"mlp_only_layers": "0,1"}, "config.json: mlp_only_layers"),
    ("qwen2-57b-a14b", {"shared_expert_intermediate_size": 0}, "config.json: shared_expert_intermediate_size"),
    ("qwen3-30b-a3b", {"moe_intermediate_size": None}, "config.json: moe_intermediate_size"),
    ("qwen3-30b-a3b", {"num_experts_per_tok": 200}, "top_k"),
    ("qwen3-30b-a3b", {"decoder_sparse_step": 0}, "config.json: decoder_sparse_step"),
    ("gpt-oss-20b", {"num_local_experts": 0}, "config.json: num_experts"),
    ("gpt-neox-20b", {"rotary_pct": 1.5}, "config.json: rotary_pct"),
    ("glm-4-9b-0414", {"partial_rotary_factor": 0}, "config.json: partial_rotary_factor"),
    ("falcon-7b", {"num_attention_heads": 70}, "config.json: num_attention_heads"),
    ("falcon-40b", {"num_kv_heads": 7}, "kv_heads"),
    ("olmo-2-7b", {"hidden_size": 4096.5}, "config.json: hidden_size"),
])
def test_bad_family_configs_name_the_field(name, change, field):
    cfg = dict(config(name), **change)
    with pytest.raises(InputError) as e:
        model_from_hf_config(cfg)
    assert e.value.field == field


def test_cli_refuses_a_bad_family_config_in_one_line(capsys, tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(dict(config("gemma-2-9b"), model_type="llama")))
    rc, out, err = run(capsys, "estimate", "--model", str(p), "--gpu", "h200")
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "architectures" in err and "gemma2" in err


@pytest.mark.parametrize("change,field", [
    ({"sliding_window_layers": 3}, "sliding_window_layers"),
    ({"sliding_window": 128, "sliding_window_layers": 9}, "sliding_window_layers"),
    ({"norms_per_layer": 0}, "norms_per_layer"),
    ({"qk_norm": "rms"}, "qk_norm"),
    ({"norm_layout": "middle"}, "norm_layout"),
    ({"rotary_fraction": 0.0}, "rotary_fraction"),
    ({"attn_softcap": -5.0}, "attn_softcap"),
    ({"shared_expert_gate": True}, "shared_experts"),
])
def test_model_spec_structure_fields_are_checked(change, field):
    base = dict(name="t", arch="llama", hidden=64, layers=8, heads=4, ffn_hidden=128, vocab=100)
    with pytest.raises(InputError) as e:
        ModelSpec(**base, **change)
    assert e.value.field == field


@pytest.mark.parametrize("name", ["gemma-2-9b", "gpt-oss-20b"])
def test_families_without_sdpa_default_to_eager_and_refuse_sdpa(capsys, name):
    path = os.path.join(HF, name + ".json")
    rc, out, err = run(capsys, "estimate", "--model", path, "--gpu", "h200", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["setup"]["attention"] == "eager"
    assert any("without SDPA" in a for a in j["assumptions"])
    rc, out, err = run(capsys, "estimate", "--model", path, "--gpu", "h200", "--attention", "sdpa")
    assert rc == 2 and "--attention" in err and "SDPA" in err and len(err.strip().splitlines()) == 1
    rc, out, err = run(capsys, "estimate", "--model", path, "--gpu", "h200", "--attention", "flash", "--json")
    assert rc == 0 and json.loads(out)["setup"]["attention"] == "flash"


def test_gemma3_keeps_sdpa():
    rc = main(["estimate", "--model", os.path.join(HF, "gemma-3-1b.json"), "--gpu", "h200", "--attention", "sdpa"])
    assert rc == 0


def test_falcon_40b_generate_caches_every_head(capsys):
    # FalconAttention broadcasts the 8 KV heads to all 128 before cache.update (new decoder architecture)
    rc, out, err = run(capsys, "estimate", "--model", os.path.join(HF, "falcon-40b.json"), "--gpu", "h200",
                       "--mode", "inference", "--batch", "1", "--prompt-len", "2047", "--new-tokens", "1", "--json")
    assert rc == 0, err
    assert json.loads(out)["memory"]["kv_cache_bytes"] == 60 * 2 * 128 * 64 * 2 * 2048
    assert load_hf_config(os.path.join(HF, "falcon-7b.json")).kv_cache_heads == 1  # multi-query: one head
    assert load_hf_config(os.path.join(HF, "gpt-oss-20b.json")).kv_cache_heads == 8


@pytest.mark.parametrize("name,layers,windowed", [("gemma-3-12b-text", 12, 10), ("gemma-2-9b", 10, 5),
                                                  ("gpt-oss-20b", 1, 1), ("mistral-7b", 8, 8)])
def test_editing_the_depth_keeps_the_window_pattern(name, layers, windowed):
    m = load_hf_config(os.path.join(HF, name + ".json"))
    edited = m.with_changes(layers=layers, **m.layer_count_changes(layers))
    assert edited.window_layers == windowed  # gpt-oss's one layer is its first, a windowed one


def test_kimi_k2_is_read_as_the_deepseek_v3_architecture_it_declares():
    """Moonshot's configs say model_type kimi_k2 over DeepseekV3ForCausalLM: the same architecture as
    DeepSeek-V3 with Kimi's sizes (61 layers, 384 experts); 1.03T parameters as Moonshot states."""
    with open(os.path.join(DATA, "serving_silicon", "kimi-k2.5.json")) as f:
        cfg = json.load(f)
    assert cfg["model_type"] == "kimi_k2"
    kimi = model_from_hf_config(cfg)
    as_v3 = model_from_hf_config({**cfg, "model_type": "deepseek_v3"})
    assert kimi.arch == "deepseek" and kimi.params_total == as_v3.params_total
    assert kimi.experts == 384 and 1.02e12 < kimi.params_total < 1.04e12
    with pytest.raises(InputError) as e:
        model_from_hf_config({"model_type": "kimi_k25", "text_config": cfg})
    assert e.value.field == "config.json: model_type" and "text_config" in str(e.value)
