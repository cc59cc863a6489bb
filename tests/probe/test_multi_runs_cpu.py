"""benchmarks/gpu/gpu_multi_runs.py under torchrun on two CPU processes (gloo): DDP, FSDP2 full and
hybrid sharding, FSDP2 with CPU offload, tensor parallel with and without sequence parallelism,
and DeepSpeed where it is installed, on a tiny Llama. Checks the JSON (one record per rank per
case, finite step times, the command and versions) and that each rank holds the parameters and
optimizer states the engine's sharding formulas give for that layout."""
import json
import math
import os
import subprocess
import sys

import pytest

from planner_app.core.models.hf_config import model_from_hf_config
from planner_app.core.training.setup import optimizer_state_bytes_per_param
from planner_app.core.training.states import shard, stage_params

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODULE = "benchmarks.gpu.gpu_multi_runs"  # run as a module from the repository root (torchrun -m)
WORLD = 2
# A tiny Llama: dimensions divisible by the world size, so that every shard is exact.
TINY = {"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 256}
CASES = ["ddp-1b", "fsdp2-full-1b", "fsdp2-hybrid-1b", "fsdp2-full-offload-1b", "tp-7b", "tp-sp-7b", "ds-zero1-1b",
         "ds-zero3-1b"]
STEPS, WARMUP = 2, 1


def _deepspeed_importable():
    r = subprocess.run([sys.executable, "-c", "import deepspeed"], capture_output=True, timeout=120)
    return r.returncode == 0


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    pytest.importorskip("torch", reason="the gloo run needs torch (./run installs it)")
    pytest.importorskip("transformers", reason="the gloo run needs transformers (test extras)")
    out = tmp_path_factory.mktemp("multi") / "runs.json"
    override = ",".join(f"{k}={v}" for k, v in TINY.items())
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={WORLD}", "-m", MODULE,
           "--device", "cpu", "--out", str(out), "--cases", ",".join(CASES), "--override", override,
           "--micro-batch", "2", "--seq-len", "32", "--steps", str(STEPS), "--warmup", str(WARMUP),
           "--profile-steps", "1", "--hsdp-replicate", "2", "--timeout-s", "120"]
    env = dict(os.environ, OMP_NUM_THREADS="1")  # cwd ROOT: python -m finds benchmarks/ and planner_app there
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=280, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def _engine_model(case):
    with open(os.path.join(ROOT, "tests", "data", "hf_configs", case["config"] + ".json"), encoding="utf-8") as f:
        cfg = json.load(f)
    cfg.update(TINY)
    return model_from_hf_config(cfg, case["config"])


def _case(data, name):
    return next(c for c in data["cases"] if c["name"] == name)


def test_one_json_with_the_command_versions_and_a_record_per_rank_per_case(run):
    info = run["info"]
    assert info["world_size"] == WORLD and info["backend"] == "gloo" and info["device"] == "cpu"
    assert info["command"].startswith(f"torchrun --standalone --nproc-per-node {WORLD} -m {MODULE} ")
    assert "--cases " + ",".join(CASES) in info["command"]
    assert info["torch"] and info["transformers"] and "deepspeed" in info
    assert [c["name"] for c in run["cases"]] == CASES
    for case in run["cases"]:
        assert [r["rank"] for r in case["ranks"]] == list(range(WORLD)), case["name"]
        assert case["micro_batch"] == 2 and case["seq_len"] == 32
        if case["kind"] == "deepspeed":
            continue
        assert case["status"] == "ok", (case["name"], case["ranks"][0].get("error"))
        for r in case["ranks"]:
            assert len(r["step_ms"]) == WARMUP + STEPS
            assert math.isfinite(r["step_ms_median"]) and r["step_ms_median"] > 0
            assert r["peak_bytes"] is None  # CUDA memory only
            assert math.isfinite(r["loss_last"])
            assert 0 <= r["exposed_comm_ms"] <= r["comm_ms"] + 1e-9 and r["comm_events"] > 0


def test_deepspeed_cases_say_why_they_did_not_run_or_hold_their_zero_shards(run):
    if not _deepspeed_importable():
        for name in ("ds-zero1-1b", "ds-zero3-1b"):
            case = _case(run, name)
            assert case["status"] == "skipped"
            assert all(r["error"] == "deepspeed not installed" for r in case["ranks"])
        assert run["info"]["deepspeed"].startswith("not installed")
        return
    # DeepSpeed present (its CPU accelerator speaks gloo): ZeRO-1 keeps whole parameters and shards
    # the fp32 partition the optimizer steps; ZeRO-3 shards the parameters too (ds_tensor).
    for name, stage in (("ds-zero1-1b", 1), ("ds-zero3-1b", 3)):
        case = _case(run, name)
        assert case["status"] == "ok", case["ranks"][0].get("error")
        m = _engine_model(case)
        dense, expert = stage_params(m, 1, 1, 1, True, True)
        for r in case["ranks"]:
            assert r["local_param_numel"] == shard(dense, expert, WORLD, WORLD, stage >= 3)
            assert r["optimizer_state_numel"] == shard(dense, expert, WORLD, WORLD, True) * \
                optimizer_state_bytes_per_param("adamw", 1.0)


def test_ddp_and_a_replicate_only_mesh_hold_every_parameter(run):
    for name in ("ddp-1b", "fsdp2-hybrid-1b"):
        case = _case(run, name)
        m = _engine_model(case)
        for r in case["ranks"]:
            assert r["total_params"] == m.params_total
            assert r["local_param_numel"] == m.params_total  # ZeRO-0 / a shard group of one
            assert r["optimizer_state_numel"] == m.params_total * optimizer_state_bytes_per_param("adamw", 1.0)
    assert _case(run, "fsdp2-hybrid-1b")["ranks"][0]["wrap"]["mesh_shape"] == [WORLD, 1]


@pytest.mark.parametrize("name", ["fsdp2-full-1b", "fsdp2-full-offload-1b"])
def test_fsdp2_ranks_hold_the_zero3_shard_the_engine_predicts(run, name):
    case = _case(run, name)
    m = _engine_model(case)
    dense, expert = stage_params(m, 1, 1, 1, True, True)
    per_rank = shard(dense, expert, WORLD, WORLD, True)  # ZeRO-3: parameters / N_d
    for r in case["ranks"]:
        assert r["local_param_numel"] == per_rank
        assert r["optimizer_state_numel"] == per_rank * optimizer_state_bytes_per_param("adamw", 1.0)
    assert sum(r["local_param_numel"] for r in case["ranks"]) == m.params_total
    if case.get("offload"):
        assert all(r["param_devices"] == ["cpu"] for r in case["ranks"])


@pytest.mark.parametrize("name", ["tp-7b", "tp-sp-7b"])
def test_tensor_parallel_ranks_hold_the_engine_shard_plus_replicated_norms(run, name):
    case = _case(run, name)
    m = _engine_model(case)
    dense, _ = stage_params(m, 1, WORLD, 1, True, True)
    # stage_params divides every weight by tp; the RMSNorm weights stay whole on every rank
    # (torch.distributed.tensor.parallel replicates what no plan shards; Megatron does the same).
    norms = m.layers * m.layer_norm_params() + m.hidden  # + the final norm
    assert dense == m.params_total / WORLD
    for r in case["ranks"]:
        assert r["local_param_numel"] == dense + norms * (1 - 1 / WORLD)
        assert r["wrap"]["mesh_shape"] == [WORLD]
    # both ranks computed the same loss (vocabulary-parallel cross-entropy over one batch)
    losses = {round(r["loss_last"], 5) for r in case["ranks"]}
    assert len(losses) == 1


def test_the_accuracy_script_maps_every_case_of_the_run(run):
    from accuracy import multi_accuracy
    from planner_app.service.catalog import open_catalog

    rows = multi_accuracy.rows_for(run, open_catalog())
    assert [r["name"] for r in rows] == CASES
    for row in rows:
        assert row["options"]["gpus"] in (1, WORLD) and row["options"]["micro_batch"] == 2
        if row["status"] == "ok":
            assert row["why"] == "cpu run: mapping only" and "estimate" not in row
