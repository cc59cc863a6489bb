"""Plan search, scaling curves and advice."""
import numpy as np
import pytest

from planner_app.core.advice import advise
from planner_app.core.estimate import Hardware
from planner_app.core.memory import training_memory
from planner_app.core.scaling import scaling_curve
from planner_app.core.search import candidate_from_instance, enumerate_layouts, gpu_counts, search
from planner_app.core.setup import ParallelPlan, TrainingSetup
from planner_app.resolve import resolve_hardware


def test_gpu_counts_are_whole_nodes():
    assert gpu_counts(64, 8) == [1, 2, 4, 8, 16, 24, 32, 48, 64]


def test_layouts_respect_the_model_and_the_batch(db):
    m = db.model("llama-3.1-70b")
    cfg = enumerate_layouts(m, [64, 128], 8192, 512, 8)
    assert len(cfg["tp"]) > 1000
    assert np.all(m.heads % cfg["tp"] == 0)
    assert np.all(cfg["tp"] * cfg["pp"] * cfg["cp"] * cfg["ep"] * cfg["dp"] == cfg["gpus"])
    assert np.all(512 % (cfg["micro_batch"] * cfg["dp"] * cfg["ep"]) == 0)
    assert not np.any(cfg["sp"] & (cfg["tp"] == 1))


def test_search_llama_70b_on_h100_instances(db):
    m = db.model("llama-3.1-70b")
    hw, _, _ = resolve_hardware(db, instance="p5.48xlarge")
    cand = candidate_from_instance("p5", hw, hw.instance)
    r = search(m, [cand], tokens=15e12, max_gpus=2048, seq_len=8192, global_batch=512, top=10)
    assert r.evaluated > 10_000 and r.plans
    days = [p["time"]["train_days"] for p in r.plans]
    assert days == sorted(days)
    best = r.plans[0]
    assert best["parallel"]["gpus"] <= 2048 and best["parallel"]["gpus"] % 8 == 0
    # the best plan really fits, checked with the scalar memory model
    q = best["parallel"]
    setup = TrainingSetup(micro_batch=best["micro_batch"], seq_len=8192, global_batch=512, recipe="mixed-bf16",
                          attention="flash", recompute=best["recompute"], framework="megatron")
    plan = ParallelPlan(tp=q["tp"], pp=q["pp"], dp=q["dp"], cp=q["cp"], ep=q["ep"], zero=q["zero"],
                        sequence_parallel=q["sequence_parallel"], pp_schedule=q["pp_schedule"], vp=q["vp"])
    assert training_memory(m, setup, plan, hw.gpu.capacity_bytes).fits
    # Pareto front: faster plans cost more
    pts = [(p["time"]["train_s"], p["cost"]["usd"]) for p in r.pareto]
    assert all(t1 <= t2 and c1 >= c2 for (t1, c1), (t2, c2) in zip(pts, pts[1:]))


def test_search_cost_objective_under_a_deadline(db):
    m = db.model("llama-3.1-8b")
    hw, _, _ = resolve_hardware(db, instance="p5.48xlarge")
    cand = candidate_from_instance("p5", hw, hw.instance)
    r = search(m, [cand], tokens=1e12, max_gpus=512, seq_len=8192, global_batch=256, objective="cost",
               deadline_days=30, top=5)
    assert r.plans and all(p["time"]["train_days"] <= 30 for p in r.plans)
    costs = [p["cost"]["usd"] for p in r.plans]
    assert costs == sorted(costs)


def test_strong_scaling_efficiency_falls_faster_on_slow_networks(db):
    m = db.model("llama-3.1-8b")
    setup = TrainingSetup(micro_batch=1, seq_len=8192, global_batch=1024, recipe="mixed-bf16", attention="flash",
                          framework="megatron")
    plan = ParallelPlan(tp=8, zero=1, sequence_parallel=True)
    g = db.gpu("h100-sxm")
    fast = scaling_curve(m, Hardware(gpu=g, inter=db.fabric("ib-ndr"), nics_per_node=8), setup, plan, [1, 8, 64])
    slow = scaling_curve(m, Hardware(gpu=g, inter=db.fabric("eth-10"), nics_per_node=1), setup, plan, [1, 8, 64])
    assert fast[0].efficiency == pytest.approx(1.0)
    assert slow[-1].efficiency < fast[-1].efficiency <= 1.0
    assert all(p.step_s_plus_50us >= p.step_s for p in fast)


def test_advice_for_a_plan_that_does_not_fit(db):
    m = db.model("llama-2-13b")
    hw = Hardware(gpu=db.gpu("a100-sxm-80gb"))
    setup = TrainingSetup(micro_batch=4, seq_len=4096, recipe="amp-bf16")
    summary, changes = advise(m, hw, setup, ParallelPlan())
    assert not summary["fits"] and summary["over_bytes"] > 0
    assert changes and all(c.saves_bytes > 0 for c in changes)
    labels = [c.label for c in changes]
    assert "full recomputation" in labels
