"""The MoE prefill microbenchmark (tests/data/moe_prefill_h200.json, benchmarks/gpu/gpu_moe_prefill.py) and the
serving step's grouped-GEMM law against it (accuracy/moe_prefill_accuracy.py)."""
import json
import os
import statistics

from accuracy import moe_prefill_accuracy as acc
from planner_app.core.serving import engine as sv
from planner_app.service.resolve import resolve_hardware
from planner_app.specdb.catalog import shipped_db

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _points():
    with open(acc.DATA) as f:
        return json.load(f)["points"]


def test_every_point_measured_each_stage():
    pts = _points()
    assert len(pts) == 24
    for p in pts:
        st = p["stages_bf16_ms"]
        assert set(st) == set(acc.GEMM_STAGES + acc.OTHER_STAGES), p["shape"]
        assert all(v > 0 for v in st.values()), p["shape"]
        # the stages of one block add up to about the block timed whole (CUDA events around all of it)
        assert abs(sum(st.values()) / p["block_bf16_ms"] - 1) < 0.25, (p["shape"], p["tokens"])


def test_the_grouped_gemm_law_holds_at_prompt_chunks():
    """The step's expert-GEMM charge against the grouped GEMMs measured inside the blocks (1K-8K tokens)."""
    db = shipped_db()
    hw, per_node, _ = resolve_hardware(db, gpu="h200-sxm", instance=None, calibration=None)
    dev = sv.device_for(hw, 16, per_node)
    ratios = [acc.charge_s(p, dev)["gemm"] * 1e3 / sum(p["stages_bf16_ms"][s] for s in acc.GEMM_STAGES)
              for p in _points()]
    assert 0.85 < statistics.median(ratios) < 1.15
    assert all(0.7 < r < 1.3 for r in ratios)
