"""The layer traces of the imported families (core/models/layers_families.py) against one layer measured
on an H200 (tests/data/family_layers_h200.json, benchmarks/gpu/gpu_family_layers.py), their linear
layers against the real transformers modules (built on the meta device), the LoRA rule (a frozen
base saves nothing for weight gradients) and PEFT's default targets (read from PEFT 0.21 on the
GPU machine, tests/data/peft_lora_targets.json).
"""
import json
import os
import warnings

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from accuracy import family_trace_gaps
from planner_app.core.errors import InputError
from planner_app.core.models import layers_families, layers_hf
from planner_app.core.models.hf_config import load_hf_config
from planner_app.core.models.hf_families import FAMILIES
from planner_app.core.models.trace import SEQ
from planner_app.core.training import lora
from planner_app.core.training.setup import TrainingSetup

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DATA = os.path.join(ROOT, "tests", "data")

TOLERANCE = 0.05
# Measured cases the traces do not yet reproduce within TOLERANCE (case: cause). None today; the
# largest errors left are llama-3.2-1b (+3.9%, the Llama trace the golden file fixes), falcon-40b
# (+3.2%), phi-3-mini-4k (+2.5%: at s = window 2047 the run kept no per-layer mask bias, as if
# transformers 5.17 built no mask when the window covers the sequence; the engine's window rule,
# seq >= window, is shared with the golden file) and gemma-3-1b (+2.4%).
OPEN: dict = {}
MEASURED = family_trace_gaps.cases()[1]


@pytest.mark.parametrize("name,record,engine", MEASURED, ids=[c[0] for c in MEASURED])
def test_layer_saved_bytes_match_the_h200(name, record, engine):
    err = engine / record["layer_saved_bytes_per_token"] - 1
    if name in OPEN:
        assert abs(err) >= TOLERANCE, f"{name} is within {TOLERANCE:.0%} now ({err:+.1%}): take it off OPEN"
    else:
        assert abs(err) < TOLERANCE, f"{name}: engine {engine:,.0f} B/token, measured " \
                                     f"{record['layer_saved_bytes_per_token']:,.0f} ({err:+.1%})"


def test_every_family_was_measured_or_shares_a_measured_trace():
    measured_types = {r["model_type"] for _, r, _ in MEASURED}
    # granite's layer is Llama's with scalar multipliers (modeling_granite.py): nothing more is saved
    assert set(FAMILIES) - measured_types == {"granite"}


def _config(name):
    with open(os.path.join(DATA, "hf_configs", name + ".json")) as f:
        return json.load(f)


FAMILY_CONFIGS = sorted({(os.path.basename(p)[:-5]) for p in os.listdir(os.path.join(DATA, "hf_configs"))
                         if p.endswith(".json") and _config(os.path.basename(p)[:-5]).get("model_type") in FAMILIES})


def _hf_linear_names(name):
    """Leaf names of the nn.Linear modules of the real model's first decoder layer."""
    d = dict(_config(name))
    mt = d.pop("model_type")
    d["num_hidden_layers"] = 1
    if "layer_types" in d:
        d["layer_types"] = d["layer_types"][:1]
    d.pop("mlp_only_layers", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = AutoConfig.for_model(mt, **d)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
    layer = next(m for n, m in model.named_modules() if n.endswith("layers.0") or n.endswith(".h.0"))
    return {n.rsplit(".", 1)[-1] for n, mod in layer.named_modules() if isinstance(mod, torch.nn.Linear)}


@pytest.mark.parametrize("name", FAMILY_CONFIGS)
def test_traced_linear_layers_are_the_real_modules(name):
    m = load_hf_config(os.path.join(DATA, "hf_configs", name + ".json"))
    traced = {n for kind in lora.layer_linears(m).values() for n, _, _ in kind} - set(lora.NOT_ADAPTABLE)
    assert traced == _hf_linear_names(name)


@pytest.mark.parametrize("name", ["gemma-2-2b", "olmo-2-7b", "qwen3-8b", "phi-3-mini-4k", "gpt-neox-20b"])
def test_a_frozen_base_saves_less_and_its_norms_nothing_for_weights(name):
    m = load_hf_config(os.path.join(DATA, "hf_configs", name + ".json"))
    targets = {"phi-3-mini-4k": "qkv_proj", "gpt-neox-20b": "query_key_value"}.get(name, "q_proj,v_proj")
    spec = lora.resolve_lora(m, TrainingSetup(finetune="lora", lora_rank=8, lora_targets=targets, lora_dtype="fp32", recipe="bf16-autocast"))
    full = layers_hf.layer_trace(m, layers_hf.HFLayerSpec("lp-amp", 2, "sdpa", 1), False)[0]
    frozen = layers_hf.layer_trace(m, layers_hf.HFLayerSpec("lp-amp", 2, "sdpa", 1, spec), False)[0]
    assert sum(op.weight_grad_bytes for op in frozen.ops if ".lora_" not in op.name) == 0
    assert not any(op.saved for op in frozen.ops if op.name.endswith("norm.weight"))
    saved = {id(t) for op in frozen.ops for t in op.saved}
    saved_full = {id(t) for op in full.ops for t in op.saved}
    assert len(saved) < len(saved_full)


def test_per_head_rmsnorm_keeps_one_rsqrt_per_head():
    m = load_hf_config(os.path.join(DATA, "hf_configs", "qwen3-8b.json"))
    o = layers_hf.HFOps("lp", 2)
    q = o.new(m.q_width, 2, SEQ, "q")
    layers_families.rmsnorm(o, m, q, "q_norm", rows=m.heads)
    rsqrt = [t for t in o.tr.tensors if t.name == "q_norm.rsqrt"][0]
    assert rsqrt.width * rsqrt.nbytes == 4 * m.heads


def test_peft_default_targets_are_peft_0_21s():
    with open(os.path.join(DATA, "peft_lora_targets.json")) as f:
        peft = json.load(f)
    mapping = peft["mapping"]
    assert peft["peft"] == "0.21.0"
    for mt, targets in lora.PEFT_DEFAULT_TARGETS.items():
        assert sorted(targets) == sorted(mapping[mt]), mt
    for mt in FAMILIES:  # a family PEFT has no default for has none in the engine either
        assert (mt in lora.PEFT_DEFAULT_TARGETS) == (mt in mapping), mt


def test_default_targets_follow_the_model_type():
    phi3 = load_hf_config(os.path.join(DATA, "hf_configs", "phi-3-mini-4k.json"))
    with pytest.raises(InputError) as e:
        lora.resolve_lora(phi3, TrainingSetup(finetune="lora", lora_rank=8, lora_targets="", lora_dtype="fp32", recipe="bf16-autocast"))
    assert e.value.field == "lora_targets" and "qkv_proj" in str(e.value)
    neox = load_hf_config(os.path.join(DATA, "hf_configs", "gpt-neox-20b.json"))
    assert lora.resolve_lora(neox, TrainingSetup(finetune="lora", lora_rank=8, lora_targets="", lora_dtype="fp32", recipe="bf16-autocast")).targets == ("query_key_value",)
    gemma2 = load_hf_config(os.path.join(DATA, "hf_configs", "gemma-2-2b.json"))
    assert lora.resolve_lora(gemma2, TrainingSetup(finetune="lora", lora_rank=8, lora_targets="", lora_dtype="fp32", recipe="bf16-autocast")).targets == ("q_proj", "v_proj")
