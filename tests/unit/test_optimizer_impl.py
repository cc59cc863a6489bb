"""PyTorch's AdamW implementations (--optimizer-impl, issue 14): one option declaration
(service/options.py) plus its formula (core/memory.optimizer_temporaries, core/compute.
optimizer_step_s), checked against the six AdamW runs measured on the H200."""
from __future__ import annotations

import json
import os

import pytest

from accuracy.inputs import run_inputs
from planner_app.cli import main
from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
from planner_app.core.training.memory import largest_tensor_elems, training_memory
from planner_app.scenario import ESTIMATE_OPTIONS
from planner_app.specdb.catalog import shipped_db

OPTION_DEFAULTS = {k: o.default for k, o in ESTIMATE_OPTIONS.items()}

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
RUNS = os.path.join(ROOT, "tests", "data", "finetune_runs_h200.json")


def _mem(model, impl, **kw):
    return training_memory(model, *run_inputs(optimizer_impl=impl, **kw))


def test_temporaries_per_implementation():
    db = shipped_db()
    m = db.model("llama-2-7b")
    fused, foreach, forloop = (_mem(m, i).breakdown["optimizer_temporaries"] for i in ("fused", "foreach", "forloop"))
    assert fused == 0.0
    assert foreach == pytest.approx(m.params_total * 2)  # one bf16 copy of every parameter
    assert forloop == pytest.approx(2 * 32000 * 4096 * 2) == 2 * largest_tensor_elems(m, 1) * 2
    # Megatron and DeepSpeed use their own fused kernels: the option does not apply
    assert _mem(m, "foreach", framework="deepspeed").breakdown["optimizer_temporaries"] == 0.0


@pytest.mark.parametrize("name", ["adamw-fused-7b-b1s2048", "adamw-foreach-7b-b1s2048", "adamw-forloop-7b-b1s2048",
                                  "adamw-fused-1b-b4s2048", "adamw-foreach-1b-b4s2048", "adamw-forloop-1b-b4s2048"])
def test_measured_adamw_runs(name):
    with open(RUNS, encoding="utf-8") as f:
        case = next(c for c in json.load(f)["cases"] if c["name"] == name)
    from planner_app.core.hardware.machine import Hardware
    from planner_app.core.training.timing import step_time
    db = shipped_db()
    model = db.model(case["config"]) if case["config"] in db.model_ids() else None
    if model is None:
        from planner_app.core.models.hf_config import model_from_hf_config
        with open(os.path.join(ROOT, "tests", "data", "hf_configs", case["config"] + ".json")) as f:
            model = model_from_hf_config(json.load(f), case["config"])
    impl = case["optimizer"].split("-")[1]
    setup, plan = run_inputs(micro_batch=case["micro_batch"], seq_len=case["seq_len"], optimizer_impl=impl)
    mem = training_memory(model, setup, plan)
    assert (mem.peak_bytes - CUBLAS_WORKSPACE_BYTES) == pytest.approx(case["peak_bytes"], rel=0.01)
    st = step_time(model, Hardware(gpu=db.gpu("h200-sxm")), setup, plan)
    assert st.step_s * 1e3 == pytest.approx(case["step_ms_median"], rel=0.08)


def test_the_cli_default_is_fused_and_the_option_is_training_only(capsys):
    assert OPTION_DEFAULTS["optimizer_impl"] == "fused"
    assert main(["estimate", "--model", "llama-2-7b", "--gpu", "h200-sxm", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["setup"]["optimizer_impl"] == "fused" and out["memory"]["breakdown"]["optimizer_temporaries"] == 0
    assert any("fused AdamW" in a for a in out["assumptions"])
    assert main(["estimate", "--model", "llama-2-7b", "--gpu", "h200-sxm", "--mode", "inference",
                 "--optimizer-impl", "fused"]) == 2
    assert "--optimizer-impl" in capsys.readouterr().err


STEPS = os.path.join(ROOT, "tests", "data", "optimizer_steps_h200.json")


@pytest.mark.parametrize("optimizer,bnb_name", [("adamw-8bit", "bnb-adamw8bit"),
                                                ("adamw-8bit-paged", "bnb-paged-adamw8bit")])
def test_bnb_8bit_step_against_its_microbenchmark(optimizer, bnb_name):
    """The bitsandbytes step (elements at the kernel's rate + a host cost per tensor) against every
    parameter set timed on the H200 (tests/data/optimizer_steps_h200.json), Llama-3.2-1B's 146
    real shapes included; and the engine counts those 146 tensors from the model itself."""
    from planner_app.core.hardware.compute import bnb_8bit_step_s
    from planner_app.core.training.checkpoint import param_tensor_count

    with open(STEPS, encoding="utf-8") as f:
        data = json.load(f)
    gpu = shipped_db().gpu("h200-sxm")
    rows = [r for r in data["results"] if r["optimizer"] == bnb_name and r["status"] == "ok"]
    assert len(rows) == 4
    for r in rows:
        est_ms = bnb_8bit_step_s(r["elements"], r["tensors"], optimizer, gpu) * 1e3
        assert est_ms == pytest.approx(r["wall_ms"], rel=0.25), r["set"]
    llama = next(r for r in rows if r["set"] == "llama-3.2-1b")
    from planner_app.core.models.hf_config import model_from_hf_config
    with open(os.path.join(ROOT, "tests", "data", "hf_configs", "llama-3.2-1b.json")) as f:
        model = model_from_hf_config(json.load(f), "llama-3.2-1b")
    assert param_tensor_count(model) == llama["tensors"] == 146


@pytest.mark.parametrize("name,optimizer", [("bnb-adamw8bit-1b-b4s2048", "adamw-8bit"),
                                            ("bnb-paged-adamw8bit-1b-b4s2048", "adamw-8bit-paged")])
def test_measured_bnb_training_runs(name, optimizer):
    """Full fine-tuning with bitsandbytes' 8-bit AdamW: the step within 15% of the H200 run (the
    constants come from the microbenchmark above, not from these runs)."""
    with open(RUNS, encoding="utf-8") as f:
        case = next(c for c in json.load(f)["cases"] if c["name"] == name)
    from planner_app.core.hardware.machine import Hardware
    from planner_app.core.models.hf_config import model_from_hf_config
    from planner_app.core.training.timing import step_time
    with open(os.path.join(ROOT, "tests", "data", "hf_configs", case["config"] + ".json")) as f:
        model = model_from_hf_config(json.load(f), case["config"])
    setup, plan = run_inputs(micro_batch=case["micro_batch"], seq_len=case["seq_len"], optimizer=optimizer,
                             optimizer_impl="fused")
    st = step_time(model, Hardware(gpu=shipped_db().gpu("h200-sxm")), setup, plan)
    assert st.step_s * 1e3 == pytest.approx(case["step_ms_median"], rel=0.15)
    assert st.parts["optimizer_step"] * 1e3 == pytest.approx(case["opt_ms_median"], rel=0.2)
