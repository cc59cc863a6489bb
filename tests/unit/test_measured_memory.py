"""The engine's peak against torch.cuda.max_memory_allocated measured on an H200
(tests/data/training_runs_h200.json, made by benchmarks/gpu/gpu_training_runs.py)."""
import json
import os
import statistics

import pytest

from accuracy.inputs import inference_inputs, run_inputs
from accuracy.memory_accuracy import case_inputs, measured_peak
from planner_app.core.inference.memory import inference_memory
from planner_app.core.models.hf_config import load_hf_config
from planner_app.core.training.memory import training_memory

HERE = os.path.dirname(__file__)

DATA = os.path.join(HERE, "..", "data")
with open(os.path.join(DATA, "training_runs_h200.json")) as _f:
    RUNS = json.load(_f)
CASES = RUNS["cases"]


def _error(case):
    model, setup, plan = case_inputs(case)
    return training_memory(model, setup, plan).peak_bytes / measured_peak(case) - 1


def test_the_measurements_span_what_the_issue_asks():
    assert len(CASES) >= 12
    assert {c["recipe"] for c in CASES} >= {"fp32", "amp-bf16", "bf16"}
    assert {c["attention"] for c in CASES} == {"sdpa", "eager"}
    assert {c["recompute"] for c in CASES} == {"none", "full"}
    params = [c["params"] for c in CASES]
    assert min(params) <= 125e6 and max(params) >= 13e9
    assert not RUNS["errors"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_peak_within_8_percent(case):
    assert abs(_error(case)) <= 0.08


def test_median_error_within_4_percent():
    assert statistics.median(abs(_error(c)) for c in CASES) <= 0.04


@pytest.mark.parametrize("run", RUNS["inference"], ids=lambda r: f"{r['config']}-b{r['batch']}")
def test_inference_peak_within_5_percent(run):
    m = load_hf_config(os.path.join(DATA, "hf_configs", run["config"] + ".json"))
    im = inference_memory(m, inference_inputs(batch=run["batch"], prompt_len=run["prompt_len"],
                                              new_tokens=run["new_tokens"]))
    assert im.peak_bytes == pytest.approx(run["peak_bytes"], rel=0.05)


def test_resnet50_activations_match_the_h200_measurement(db):
    """ResNet-50's saved activations per image against torch.cuda.memory_allocated after the
    forward pass on the H200 (batch 64, fp32 and autocast bf16; tests/data/profiles_h200.json)."""
    import json
    import os

    from planner_app.core.training.memory import training_memory
    with open(os.path.join(os.path.dirname(__file__), "..", "data", "profiles_h200.json")) as f:
        runs = json.load(f)["resnet50"]
    model = db.model("resnet-50")
    for run in runs:
        setup, plan = run_inputs(micro_batch=run["batch"], seq_len=1, recipe=run["recipe"])
        mem = training_memory(model, setup, plan, 141 * 2**30)
        measured = run["activation_bytes_per_sample"] * run["batch"]
        assert abs(mem.breakdown["activations"] / measured - 1) < 0.06, (run["recipe"], mem.breakdown["activations"])
