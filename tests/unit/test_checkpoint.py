"""Checkpoint sizes against what torch.save and torch.distributed.checkpoint wrote for real
models (tests/data/checkpoint_sizes.json, benchmarks/gpu/checkpoint_sizes.py), and the checkpoint
part of the estimate's ``host`` key (write time, overhead, disk)."""
import json
import math
import os

import pytest

from planner_app.core.errors import InputError
from planner_app.core.training.checkpoint import (
    CheckpointPlan,
    checkpoint_cost,
    checkpoint_sizes,
    param_tensor_count,
    state_dict_keys,
)
from planner_app.core.training.setup import recipe_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEASURED = os.path.join(ROOT, "tests", "data", "checkpoint_sizes.json")


@pytest.fixture(scope="module")
def db():
    from planner_app.service.catalog import open_catalog

    return open_catalog()


def _cases():
    with open(MEASURED, encoding="utf-8") as f:
        return json.load(f)["cases"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: os.path.basename(c["config"]))
def test_sizes_equal_the_files_torch_wrote(case, db, monkeypatch):
    from planner_app.service.resolve import resolve_model

    monkeypatch.chdir(ROOT)
    model = resolve_model(case["config"], db)
    assert model.params_total == case["params"]
    assert param_tensor_count(model) == case["param_tensors"]
    assert state_dict_keys(model) == case["state_dict_keys"]
    s = checkpoint_sizes(model, recipe_bytes(case["recipe"], "pytorch"), "adamw")
    for got, want in ((s.weights_bytes, case["torch_save_weights_bytes"]),
                      (s.resumable_bytes, case["torch_save_resumable_bytes"]),
                      (s.sharded_bytes, case["dcp_total_bytes"])):
        assert abs(got / want - 1) < 0.01, (got, want)


def test_measurements_cover_tiny_and_1b_models_and_both_byte_tables():
    cases = _cases()
    assert min(c["params"] for c in cases) < 50e6 and max(c["params"] for c in cases) > 1e9
    assert {c["dtype"] for c in cases} == {"float32", "bfloat16"}
    # a resumable AdamW checkpoint is ~3x the weights (two moments of the same dtype)
    for c in cases:
        assert 2.9 < c["torch_save_resumable_bytes"] / c["torch_save_weights_bytes"] < 3.1


def test_tied_embeddings_are_written_twice_by_dcp_once_by_torch_save(db, monkeypatch):
    from planner_app.service.resolve import resolve_model

    monkeypatch.chdir(ROOT)
    gpt2 = next(c for c in _cases() if c["config"].endswith("gpt2.json"))
    model = resolve_model(gpt2["config"], db)
    s = checkpoint_sizes(model, recipe_bytes("amp-bf16", "pytorch"), "adamw")
    tied = model.vocab * model.hidden * 4
    assert abs((s.sharded_bytes - s.resumable_bytes) - tied) / tied < 0.01
    assert abs((gpt2["dcp_total_bytes"] - gpt2["torch_save_resumable_bytes"]) - tied) / tied < 0.01


@pytest.mark.parametrize("name", ["gpt2", "llama-3.2-1b", "qwen3-0.6b", "gemma-2-2b", "mixtral-mini",
                                  "deepseek-v2-lite", "falcon-7b", "bert-base-uncased", "olmo-2-7b", "phi-3-mini-4k"])
def test_tensor_count_error_is_below_a_tenth_of_a_percent(name, db, monkeypatch):
    """Per-tensor overheads matter only through the count: a miscount must cost < 0.1% of bytes."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from planner_app.service.resolve import resolve_model

    monkeypatch.chdir(ROOT)
    path = os.path.join("tests", "data", "hf_configs", name + ".json")
    model = resolve_model(path, db)
    cfg = transformers.AutoConfig.from_pretrained(path)
    with torch.device("meta"):
        m = (transformers.AutoModelForMaskedLM if cfg.model_type == "bert"
             else transformers.AutoModelForCausalLM).from_config(cfg)
    n = len(list(m.parameters()))
    err = abs(param_tensor_count(model) - n) * 2000  # bytes: a DCP tensor entry and its metadata
    assert err < 0.001 * model.params_total * 2


def test_cost_write_time_overhead_and_disk():
    from planner_app.core.training.checkpoint import CheckpointSizes

    s = CheckpointSizes(weights_bytes=2e9, resumable_bytes=6e9, sharded_bytes=6.1e9, optimizer_bytes=4e9)
    one = checkpoint_cost(s, 1, 1, CheckpointPlan(interval_s=600, kept=2, write_gb_s_per_node=2.0), train_s=3600)
    assert one["format"] == "torch.save" and one["files"] == 1
    assert math.isclose(one["write_s"], 3.0) and math.isclose(one["overhead_fraction"], 3.0 / 600)
    assert one["saves"] == 6 and math.isclose(one["added_train_s"], 18.0)
    assert math.isclose(one["disk_bytes"], 12e9)
    many = checkpoint_cost(s, 16, 2, CheckpointPlan(interval_s=600, kept=3, write_gb_s_per_node=2.0),
                           local_disk_bytes_per_node=5e9)
    assert many["files"] == 17 and math.isclose(many["per_rank_bytes"], 6.1e9 / 16)
    assert math.isclose(many["write_s"], 6.1e9 / 2 / 2e9)  # two nodes write at once
    assert many["fits_local_disk"] is False  # 3 x 3.05 GB per node > 5 GB


@pytest.mark.parametrize("field,kw", [("checkpoint_interval_s", {"interval_s": 0}),
                                      ("checkpoints_kept", {"kept": 0}),
                                      ("storage_write_gb_s", {"write_gb_s_per_node": -1.0})])
def test_bad_checkpoint_plan_names_the_field(field, kw):
    with pytest.raises(InputError) as e:
        CheckpointPlan(**kw)
    assert e.value.field == field


def test_estimate_has_the_checkpoint_keys_and_follows_the_options(db):
    from planner_app.service.estimate import estimate_json

    base = {"model": "llama-2-7b", "instance": "p5.48xlarge", "gpus": 16, "zero": 3, "tokens": 1e10,
            "recipe": "mixed-bf16"}
    a = estimate_json(base, db)["host"]["checkpoint"]
    b = estimate_json({**base, "checkpoint_interval_min": 30, "storage_write_gb_s": 4.0,
                               "checkpoints_kept": 5}, db)["host"]["checkpoint"]
    assert a["format"] == "torch.distributed.checkpoint" and a["files"] == 17
    assert a["write_source"] == "default" and b["write_source"] == "option"
    # 7B in mixed precision: weights 2 B/param, resumable adds fp32 master + two moments (14 B/param)
    assert 13.4e9 < a["weights_bytes"] < 13.6e9 and abs(a["resumable_bytes"] / a["weights_bytes"] / 7 - 1) < 0.01
    assert math.isclose(b["write_s"], a["write_s"] / 4)
    assert math.isclose(b["overhead_fraction"], a["overhead_fraction"] / 4 * 2)
    assert math.isclose(b["disk_bytes"], a["disk_bytes"] / 3 * 5)


def test_cli_rejects_a_zero_interval_in_one_line(capsys):
    import planner_app.cli as cli

    rc = cli.main(["estimate", "--model", "gpt2", "--gpu", "h100-sxm", "--checkpoint-interval-min", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--checkpoint-interval-min: must be a number above 0" in err[0]


def test_per_rank_files_of_two_ranks_replicated_and_fsdp2(db, monkeypatch):
    """2 gloo processes (benchmarks/gpu/checkpoint_sharded.py): DCP spreads replicated tensors over
    the ranks and FSDP2 ranks write their shards; either way each rank's file is total / ranks."""
    from planner_app.service.resolve import resolve_model

    monkeypatch.chdir(ROOT)
    with open(MEASURED, encoding="utf-8") as f:
        cases = json.load(f)["sharded_cases"]
    assert {c["layout"] for c in cases} == {"replicated", "fsdp2"}
    for c in cases:
        model = resolve_model(c["config"], db)
        sizes = checkpoint_sizes(model, recipe_bytes("amp-bf16", "pytorch"), "adamw")
        cost = checkpoint_cost(sizes, c["world_size"], 1, CheckpointPlan())
        ranks = [v for k, v in c["files"].items() if k.endswith(".distcp")]
        assert len(ranks) == c["world_size"] and cost["files"] == len(c["files"])
        assert abs(cost["resumable_bytes"] / c["total_bytes"] - 1) < 0.01, c["layout"]
        for b in ranks:
            assert abs(cost["per_rank_bytes"] / b - 1) < 0.01, (c["layout"], b)
