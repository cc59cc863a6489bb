"""Time, FLOPs and communication against published formulas and figures."""
import math

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from accuracy.inputs import run_inputs
from planner_app.core.errors import InputError
from planner_app.core.hardware.collectives import bus_factor, busbw_gbps
from planner_app.core.hardware.machine import Hardware
from planner_app.core.models.flops import narayanan_flops_per_iteration, training_flops_per_token
from planner_app.core.models.spec import ModelSpec
from planner_app.core.plans.cost import DEFAULT_MIX, PriceChoice
from planner_app.core.requests import SpeedOverrides
from planner_app.core.training.estimate import estimate_training
from planner_app.core.training.setup import ParallelPlan, TrainingSetup
from planner_app.core.training.timing import step_time

NO_PRICE = PriceChoice(basis=None, mix=DEFAULT_MIX, cny_per_usd=None)


def _gpt(layers, hidden, heads, vocab=51200, seq=2048):
    return ModelSpec(name="gpt", arch="gpt2", hidden=hidden, layers=layers, heads=heads, ffn_hidden=4 * hidden,
                     vocab=vocab, max_positions=seq, position="learned", norm="layernorm", mlp="gelu",
                     qkv_bias=True, out_bias=True, mlp_bias=True, norm_bias=True, tied_embeddings=True)


@pytest.mark.parametrize("layers,hidden,heads", [(96, 12288, 96), (128, 25600, 160), (24, 2304, 24)])
def test_flops_equal_narayanan_eq3(layers, hidden, heads):
    """Narayanan et al. 2021, eq. 3: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) with recomputation."""
    m = _gpt(layers, hidden, heads)
    _, hw = training_flops_per_token(m, 2048, "full", None)
    assert hw * 1536 * 2048 == pytest.approx(narayanan_flops_per_iteration(1536, 2048, layers, hidden, 51200), rel=1e-12)


@pytest.mark.parametrize("layers,hidden,heads,gpus,tflops,tokens,days", [
    (96, 12288, 96, 1024, 140, 300e9, 34),   # GPT-3 175B: "about 34 days"
    (128, 25600, 160, 3072, 163, 450e9, 84),  # 1T: "about 84 days"
])
def test_narayanan_training_time_estimates(db, layers, hidden, heads, gpus, tflops, tokens, days):
    m = _gpt(layers, hidden, heads)
    setup = TrainingSetup(seq_len=2048, tokens=tokens, recipe="mixed-bf16", framework="megatron", attention="eager",
                          global_batch=gpus // 64 * 64)
    plan = ParallelPlan(recompute="full", tp=8, pp=8, dp=gpus // 64)
    out = estimate_training(m, Hardware(gpu=db.gpu("a100-sxm-80gb")), setup, plan,
                            SpeedOverrides(achieved_tflops=tflops), NO_PRICE, extras=False).to_json()
    # the paper's 8TP/(nX) approximation; the engine uses the exact eq. 3 count (a few % more)
    assert out["time"]["train_days"] == pytest.approx(days, rel=0.05)


def test_nccl_tests_bus_bandwidth_factors():
    # nccl-tests doc/PERFORMANCE.md
    assert bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    for c in ("all_gather", "reduce_scatter", "all_to_all"):
        assert bus_factor(c, 8) == pytest.approx(7 / 8)
    for c in ("broadcast", "reduce", "send_recv"):
        assert bus_factor(c, 8) == 1.0
    assert busbw_gbps("all_reduce", 2, 4e9, 0.01) == pytest.approx(400.0)
    with pytest.raises(ValueError):
        bus_factor("gossip", 4)


def test_1b_model_does_not_fit_4x_v100_16gb_but_fits_2x_a100_40gb(db):
    m = db.model("nlp-1b")
    v100 = estimate_training(m, Hardware(gpu=db.gpu("v100-sxm2-16gb")),
                             *run_inputs(recipe="amp-fp16", dp=4), SpeedOverrides(), NO_PRICE,
                             extras=False).to_json()
    a100 = estimate_training(m, Hardware(gpu=db.gpu("a100-sxm-40gb")),
                             *run_inputs(recipe="amp-bf16", dp=2), SpeedOverrides(), NO_PRICE,
                             extras=False).to_json()
    assert not v100["memory"]["fits"]
    assert a100["memory"]["fits"]


def test_published_large_runs_accuracy():
    """Regression guard on accuracy/published_runs.py (docs/validation.md lists every run)."""
    from accuracy.published_runs import evaluate

    rows, _ = evaluate()
    by = {r["id"]: abs(r["error"]) for r in rows}
    megatron = [v for k, v in by.items() if k.startswith("megatron2021-t1")]
    korthikanti = [v for k, v in by.items() if k.startswith("korthikanti")]
    assert len(megatron) == 10 and max(megatron) <= 0.10
    assert len(korthikanti) == 9 and max(korthikanti) <= 0.125
    assert sorted(by.values())[len(by) // 2] <= 0.12


FRAMEWORKS = ["pytorch", "megatron", "deepspeed"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(model=st.sampled_from(["gpt2", "llama-3.1-8b", "mixtral-8x7b", "bert-base-uncased", "deepseek-v3", "gpt3-175b"]),
       gpu=st.sampled_from(["h100-sxm", "a100-sxm-40gb", "v100-sxm2-16gb", "mi300x", "l4", "b200"]),
       mb=st.integers(1, 8), seq=st.sampled_from([128, 1024, 4096, 32768]),
       tp=st.sampled_from([1, 2, 8]), pp=st.sampled_from([1, 4]), dp=st.sampled_from([1, 16, 512]),
       cp=st.sampled_from([1, 2]), zero=st.integers(0, 3), rec=st.sampled_from(["none", "selective", "full"]),
       fw=st.sampled_from(FRAMEWORKS), recipe=st.sampled_from(["fp32", "amp-bf16", "bf16", "mixed-bf16", "fp8"]),
       acc=st.sampled_from([1, 8]), fabric=st.sampled_from(["ib-ndr", "eth-10", "efa", "roce-200"]))
def test_times_are_finite_and_positive(db, model, gpu, mb, seq, tp, pp, dp, cp, zero, rec, fw, recipe, acc, fabric):
    m = db.model(model)
    try:
        setup, plan = run_inputs(micro_batch=mb, seq_len=seq, recipe=recipe, recompute=rec, framework=fw,
                                 global_batch=mb * dp * acc, tp=tp, pp=pp, dp=dp, cp=cp, zero=zero,
                                 sequence_parallel=tp > 1)
        hw = Hardware(gpu=db.gpu(gpu), inter=db.fabric(fabric), nics_per_node=4)
        st_ = step_time(m, hw, setup, plan)
    except InputError:
        reject()
    assert math.isfinite(st_.step_s) and st_.step_s > 0
    assert all(math.isfinite(v) and v >= 0 for v in st_.parts.values()), st_.parts
    assert 0 < st_.mfu < 1.0
