"""Hugging Face eager decoding time (core/inference/timing.py inference_time): the GPU part against the H200's
profiled kernel time, the host bound, DynamicCache's copies and cuDNN's first-call graph builds."""
import json
import os

import pytest

from accuracy.inputs import one_gpu_deployment
from planner_app.core.inference import timing
from planner_app.service.catalog import open_catalog
from planner_app.service.estimate import estimate_json

DATA = os.path.join(os.path.dirname(__file__), "..", "data")


@pytest.fixture(scope="module")
def db():
    return open_catalog()


def _time(db, config="llama-2-7b", gpu="h200-sxm", batch=16, prompt=1024, new=64, **kw):
    opts = {"mode": "inference", "model": os.path.join(DATA, "hf_configs", config + ".json"), "gpu": gpu,
            "batch": batch, "prompt_len": prompt, "new_tokens": new, "attention": "sdpa"}
    opts.update(kw)
    return estimate_json(opts, db)


def test_gpu_part_follows_the_profiled_kernel_time(db):
    """Every profiled generate() case: the engine's GPU time per token within 25% of the kernels'."""
    with open(os.path.join(DATA, "generate_profile_h200.json"), encoding="utf-8") as f:
        cases = [c for c in json.load(f)["generate"] if c.get("status") == "ok"]
    assert len(cases) >= 10
    for c in cases:
        cbf = sum(k["ms_per_token"] for k in c["top_kernels"] if k["name"] == "Command Buffer Full")
        measured_ms = c["kernel_ms_per_token"] - cbf
        est_ms = _time(db, c["config"], batch=c["batch"], prompt=c["prompt_len"],
                       new=c["new_tokens"])["time"]["decode_gpu_s_per_token"] * 1e3
        assert abs(est_ms / measured_ms - 1) < 0.25, (c["config"], c["batch"], est_ms, measured_ms)


def test_small_batches_are_host_bound_and_large_caches_gpu_bound(db):
    small = _time(db, "llama-3.2-1b", batch=1, prompt=128)["time"]
    assert small["decode_bound"] == "host"
    assert small["decode_s_per_token"] == pytest.approx(small["decode_host_s_per_token"])
    big = _time(db, "llama-2-7b", batch=64, prompt=4096)["time"]
    assert big["decode_bound"] == "memory"
    assert big["decode_s_per_token"] > big["decode_host_s_per_token"]


def test_dynamic_cache_copies_the_cache_every_step(db):
    """The GPU part grows with the cached tokens by 3 reads/writes of the cache (attention + cat)."""
    a = _time(db, batch=32, prompt=1024)["time"]["decode_gpu_s_per_token"]
    b = _time(db, batch=32, prompt=2048)["time"]["decode_gpu_s_per_token"]
    from planner_app.core.inference.memory import kv_bytes_per_token
    from planner_app.core.models.hf_config import load_hf_config

    m = load_hf_config(os.path.join(DATA, "hf_configs", "llama-2-7b.json"))
    bw = 4.8e12 * 0.78  # H200 HBM3e at the element-wise fraction (compute.Efficiency.bw_elementwise)
    extra_cache_bytes = 32 * 1024 * kv_bytes_per_token(m, "bf16", 1)
    assert (b - a) == pytest.approx((1 + timing.DYNAMIC_CACHE_COPIES) * extra_cache_bytes / bw, rel=0.02)


def test_generate_adds_its_loop_to_the_host(db):
    gen = _time(db, "llama-3.2-1b", batch=1, inference_api="generate")["time"]["decode_host_s_per_token"]
    loop = _time(db, "llama-3.2-1b", batch=1, inference_api="forward-loop")["time"]["decode_host_s_per_token"]
    assert gen - loop == pytest.approx(timing.HF_GENERATE_HOST_S_PER_TOKEN)


def test_cudnn_graph_builds_only_where_sdpa_takes_cudnn(db):
    h200 = _time(db)["time"]
    assert h200["decode_s_per_token_first_call"] > h200["decode_s_per_token"] + 0.04
    eager = _time(db, attention="eager")["time"]
    assert eager["decode_s_per_token_first_call"] == pytest.approx(eager["decode_s_per_token"])
    a100 = _time(db, gpu="a100-sxm-80gb")["time"]  # sm80: SDPA takes flash, no graph builds
    assert a100["decode_s_per_token_first_call"] == pytest.approx(a100["decode_s_per_token"])
    text = " ".join(_time(db)["assumptions"])
    assert "cuDNN" in text and "DynamicCache" in text


def test_generate_peak_memory_matches_the_h200_runs(db):
    """Every generate() run of finetune_runs_h200.json (1B and 7B, batch 16-64): the peak within 2%
    (the prefill's peak holds the prompt's cache, the embeddings' output and the layer's input beside
    the MLP's intermediates: tests/data/generate_memory_peak_h200.json)."""
    from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES

    with open(os.path.join(DATA, "finetune_runs_h200.json"), encoding="utf-8") as f:
        runs = [c for c in json.load(f)["cases"] if c["name"].startswith("generate") and c.get("use_cache")]
    assert len(runs) == 6
    for c in runs:
        est = _time(db, c["config"], batch=c["batch"], prompt=c["prompt_len"], new=c["new_tokens"])
        peak = est["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES
        assert abs(peak / c["peak_bytes"] - 1) < 0.02, (c["name"], peak, c["peak_bytes"])


def test_long_generations_peak_at_the_last_decode_step(db):
    """A short prompt and many new tokens: the cache at the end outweighs the prefill's transient."""
    est = _time(db, "llama-2-7b", batch=8, prompt=128, new=8192)
    mem = est["memory"]
    assert mem["breakdown"]["activations"] == 0.0
    from planner_app.core.inference.memory import kv_bytes_per_token
    from planner_app.core.models.hf_config import load_hf_config

    m = load_hf_config(os.path.join(DATA, "hf_configs", "llama-2-7b.json"))
    full_cache = 8 * (128 + 8192) * kv_bytes_per_token(m, "bf16", 1)
    assert mem["breakdown"]["kv_cache"] >= full_cache


def test_the_estimate_states_what_a_serving_engine_would_do(db):
    """Beside generate()'s decode, the same batch in a serving engine (core/serving.step_time_s with
    vLLM's step overhead): far faster where generate() is host-bound, and said in the assumptions."""
    from planner_app.core.serving import engine as sv
    from planner_app.service.resolve import resolve_hardware

    est = _time(db, "llama-3.2-1b", batch=16, prompt=2048, new=64)
    t = est["time"]
    assert t["decode_bound"] == "host"
    assert t["serving_engine_decode_s_per_token"] < t["decode_s_per_token"] / 3
    hw, per_node, _ = resolve_hardware(db, gpu="h200-sxm")
    m = sv.model_shape(_model(db, "llama-3.2-1b"))
    seqs, tokens = sv.engine_defaults(hw.gpu.capacity_bytes, hw.gpu.id + " " + hw.gpu.name)
    d = one_gpu_deployment(max_num_seqs=seqs, max_batched_tokens=tokens)
    direct = sv.step_time_s(m, sv.device_for(hw, 16, per_node), d, 16.0, 0.0, 2048 + 32, 0.0)
    assert t["serving_engine_decode_s_per_token"] == pytest.approx(direct)
    assert any("serving engine" in a for a in est["assumptions"])


def _model(db, name):
    from planner_app.core.models.hf_config import load_hf_config

    return load_hf_config(os.path.join(DATA, "hf_configs", name + ".json"))
