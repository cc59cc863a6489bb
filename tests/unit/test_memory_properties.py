"""Property tests: memory never falls as batch or sequence grows; sharding never raises
per-GPU memory; the breakdown always sums to the peak."""
import math

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from planner_app.core.errors import InputError
from planner_app.core.training.memory import FSDP_MASTER_REDUCE_BYTES, gathered_layer_params, training_memory
from planner_app.core.training.setup import Layout, ParallelPlan, TrainingSetup, recipe_bytes
from planner_app.core.training.states import root_params

MODELS = ["gpt2", "llama-3.2-1b", "mixtral-8x7b", "bert-base-uncased", "qwen2.5-0.5b", "deepseek-v3", "gpt3-175b"]
RECIPES = ["fp32", "amp-bf16", "bf16", "mixed-bf16", "fp8"]
FRAMEWORKS = ["pytorch", "megatron", "deepspeed"]

setups = st.fixed_dictionaries({
    "model": st.sampled_from(MODELS),
    "micro_batch": st.integers(1, 16),
    "seq_len": st.sampled_from([128, 512, 1024, 2048, 4096]),
    "recipe": st.sampled_from(RECIPES),
    "optimizer": st.sampled_from(["adamw", "sgd", "sgd-momentum", "adamw-8bit", "adafactor"]),
    "attention": st.sampled_from(["sdpa", "eager", "flash"]),
    "recompute": st.sampled_from(["none", "selective", "full"]),
    "framework": st.sampled_from(FRAMEWORKS),
    "tp": st.sampled_from([1, 2, 4]),
    "pp": st.sampled_from([1, 2, 4]),
    "dp": st.sampled_from([1, 2, 8]),
    "zero": st.integers(0, 3),
    "sp": st.booleans(),
})

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _run(db, d, **changes):
    d = dict(d, **changes)
    model = db.model(d["model"])
    setup = TrainingSetup(seq_len=d["seq_len"], recipe=d["recipe"], optimizer=d["optimizer"], attention=d["attention"],
                          framework=d["framework"])
    ep = 1
    plan = ParallelPlan(micro_batch=d["micro_batch"], recompute=d["recompute"], tp=d["tp"], pp=d["pp"], dp=d["dp"],
                        zero=d["zero"], ep=ep, sequence_parallel=d["sp"] and d["tp"] > 1)
    try:
        return training_memory(model, setup, plan)
    except InputError:
        reject()  # a layout this model cannot take (e.g. tp not dividing its heads)


@SETTINGS
@given(setups, st.integers(1, 8))
def test_memory_never_falls_as_the_batch_grows(db, d, extra):
    small = _run(db, d).peak_bytes
    big = _run(db, d, micro_batch=d["micro_batch"] + extra).peak_bytes
    assert big >= small * (1 - 1e-12)


@SETTINGS
@given(setups)
def test_memory_never_falls_as_the_sequence_grows(db, d):
    small = _run(db, d).peak_bytes
    big = _run(db, d, seq_len=d["seq_len"] * 2).peak_bytes
    assert big >= small * (1 - 1e-12)


@SETTINGS
@given(setups)
def test_more_zero_sharding_never_raises_memory(db, d):
    """ZeRO 1 and 2 never raise the peak; FSDP's ZeRO-3 (framework pytorch) may, by no more than what it
    holds unsharded: the root's parameters, one more gathered layer and one reduce-scatter input
    (memory.FsdpTerms; real for a model of few layers, where ZeRO-3 gathers nearly all of it)."""
    peaks = [_run(db, d, zero=z).peak_bytes for z in range(4)]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(peaks[:3], peaks[1:3])), peaks
    allowance = 0.0
    if d["framework"] == "pytorch":
        model, tp = db.model(d["model"]), d["tp"]
        rb = recipe_bytes(d["recipe"], "pytorch")
        allowance = (root_params(model, d["pp"], tp, True, True) * rb.param
                     + gathered_layer_params(model, Layout(tp=tp)) * (rb.param + FSDP_MASTER_REDUCE_BYTES))
    assert peaks[3] <= peaks[2] * (1 + 1e-12) + allowance, peaks


@SETTINGS
@given(setups)
def test_more_data_parallel_sharding_never_raises_memory(db, d):
    a = _run(db, d, dp=2).peak_bytes
    b = _run(db, d, dp=16).peak_bytes
    assert b <= a * (1 + 1e-12) or d["zero"] == 0


@SETTINGS
@given(setups)
def test_more_tensor_parallelism_never_raises_memory(db, d):
    a = _run(db, d, tp=1, sp=False).peak_bytes
    b = _run(db, d, tp=4, sp=True).peak_bytes
    assert b <= a * (1 + 1e-12)


@SETTINGS
@given(setups)
def test_breakdown_sums_to_the_peak(db, d):
    r = _run(db, d)
    assert math.isclose(sum(r.breakdown.values()), r.peak_bytes, rel_tol=1e-12)
    assert all(v >= -1e-6 for v in r.breakdown.values()), r.breakdown
    assert all(math.isfinite(v) for v in r.breakdown.values())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=0, max_size=30))
def test_undominated_events_match_the_pairwise_rule(rows):
    """The array form of the peak-event filter keeps exactly what the pairwise rule keeps:
    an event goes when another is >= in every slot and > in one, or equal and earlier."""
    import numpy as np

    from planner_app.core.training.memory import _undominated

    tot = np.array(rows, dtype=float).reshape(len(rows), 3)
    want = [i for i in range(len(tot))
            if not any(j != i and np.all(tot[j] >= tot[i]) and (np.any(tot[j] > tot[i]) or j < i)
                       for j in range(len(tot)))]
    assert list(_undominated(tot)) == want
