"""Two kernel-level rules of the step-time model, each against what was measured on the H200:
grouped expert GEMMs (compute.GROUPED_GEMM_R0_*, tests/data/grouped_gemm_h200.json) and element-wise
ops over slices of a fused projection (trace ``mem_is_strided``: Phi-3's chunked gate/up)."""
from __future__ import annotations

import json
import os

import pytest

from planner_app.core.hardware import compute
from planner_app.core.models import layers_hf
from planner_app.core.models.hf_config import load_hf_config
from planner_app.core.models.hf_ops import HFLayerSpec
from planner_app.core.models.trace import simulate

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CONFIGS = os.path.join(ROOT, "tests", "data", "hf_configs")


def _points():
    with open(os.path.join(ROOT, "tests", "data", "grouped_gemm_h200.json"), encoding="utf-8") as f:
        return [p for p in json.load(f)["points"] if p["status"] == "ok"]


def test_grouped_gemm_law_against_the_microbenchmark():
    """r / (r + R0) against all 16 measured ratios (largest deviation 19%, at 68 rows per expert)."""
    pts = _points()
    assert len(pts) == 16 and len({p["shape"] for p in pts}) == 4
    for p in pts:
        r = p["rows_per_expert"]
        fwd = r / (r + compute.GROUPED_GEMM_R0_FWD)
        # forward + backward: one forward GEMM-time at R0_FWD and two backward at R0_BWD
        fb = 3 / ((r + compute.GROUPED_GEMM_R0_FWD) / r + 2 * (r + compute.GROUPED_GEMM_R0_BWD) / r)
        assert fwd == pytest.approx(p["grouped_fwd_tflops"] / p["dense_fwd_tflops"], rel=0.25), p
        assert fb == pytest.approx(p["grouped_fwd_bwd_tflops"] / p["dense_fwd_bwd_tflops"], rel=0.25), p


def _profile(name):
    model = load_hf_config(os.path.join(CONFIGS, name + ".json"))
    return model, simulate(*layers_hf.layer_trace(model, HFLayerSpec("bf16", 2, "sdpa", 1), moe_layer=model.is_moe))


def test_grouped_experts_are_marked_and_slower_than_one_dense_gemm():
    model, prof = _profile("qwen3-30b-a3b")
    grouped = [g for g in prof.gemms if len(g) > 5 and g[5]]
    assert len(grouped) == 2 and all(g[5] == pytest.approx(model.top_k / model.experts) for g in grouped)
    import dataclasses

    import numpy as np

    from planner_app.specdb.catalog import shipped_db
    gpu = shipped_db().gpu("h200-sxm")
    eff = compute.default_efficiency(gpu, "pytorch")
    f = np.ones(len(prof.mem_ops[0]) if len(prof.mem_ops) else 8)
    plain = dataclasses.replace(prof, gemms=[g[:5] for g in prof.gemms])
    args = (gpu, eff, 4096, 2048, 1, 16, model.head_dim, 0, f)
    # 4096 tokens x top-8 over 128 experts: 256 rows each, the experts' GEMMs 1.7-2.5x a dense GEMM's time
    assert compute.layer_time(prof, *args)[1] > 1.1 * compute.layer_time(plain, *args)[1]


def test_sliced_inputs_run_at_the_strided_bandwidth():
    _, phi3 = _profile("phi-3-mini-4k")
    _, llama = _profile("llama-3.2-1b")
    assert phi3.mem_is_strided.sum() >= 2  # silu(gate) and gate * up read halves of gate_up_proj's output
    assert len(phi3.mem_is_strided) == len(phi3.mem_ops)
    assert llama.mem_is_strided.sum() < phi3.mem_is_strided.sum()


def test_rotary_ops_run_as_non_vectorised_kernels():
    """HF's apply_rotary_pos_emb over transposed q/k: every rope op of a Llama layer is flagged strided
    (NON_VECTORISED_BW_FRACTION), the MLP's element-wise ops are not."""
    import os

    from planner_app.core.models.hf_config import load_hf_config
    from planner_app.core.training.activations import model_profiles

    path = os.path.join(os.path.dirname(__file__), "..", "data", "hf_configs", "llama-3.2-1b.json")
    m = load_hf_config(path)
    prof = model_profiles(m, "lp", 2, "sdpa", "pytorch", False, False, False, None).dense
    n_strided = int(prof.mem_is_strided.sum())
    assert n_strided >= 8  # 4 ops each for q and k
    assert n_strided < len(prof.mem_ops) / 2


def test_sink_rows_run_at_the_unaligned_rate():
    """gpt-oss concatenates a sink logit to every score row: the concatenation, the row max, the
    centring and the softmax run over seq + 1 columns at UNALIGNED_ROW_SPEED (H200 microbenchmark,
    tests/data/softmax_rows_h200.json); other families have no such ops."""
    import json
    import os

    from planner_app.core.hardware.compute import UNALIGNED_ROW_SPEED
    from planner_app.core.models.hf_config import load_hf_config
    from planner_app.core.training.activations import model_profiles

    data = os.path.join(os.path.dirname(__file__), "..", "data")
    m = load_hf_config(os.path.join(data, "hf_configs", "gpt-oss-20b.json"))
    prof = model_profiles(m, "lp", 2, "eager", "pytorch", False, False, False, None).moe
    assert int(prof.mem_is_unaligned.sum()) == 4
    llama = load_hf_config(os.path.join(data, "hf_configs", "llama-3.2-1b.json"))
    assert not model_profiles(llama, "lp", 2, "eager", "pytorch", False, False, False, None).dense.mem_is_unaligned.any()
    with open(os.path.join(data, "softmax_rows_h200.json"), encoding="utf-8") as f:
        pts = {(p["dtype"], p["cols"]): p for p in json.load(f)["points"]}
    ratio = pts[("bfloat16", 2048)]["softmax_fwd_bwd_ms"] / pts[("bfloat16", 2049)]["softmax_fwd_bwd_ms"]
    assert ratio == pytest.approx(UNALIGNED_ROW_SPEED, abs=0.01)
