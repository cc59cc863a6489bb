"""Plan search, scaling curves and advice."""
import numpy as np
import pytest

from planner_app.core import options
from planner_app.core.hardware.machine import Hardware
from planner_app.core.plans.cost import DEFAULT_MIX, PriceChoice
from planner_app.core.plans.scaling import scaling_curve
from planner_app.core.plans.search import SearchGroup, candidate_from_instance, enumerate_layouts, gpu_counts, search
from planner_app.core.requests import SearchLimits, TrainingRequest
from planner_app.core.training.advice import advise
from planner_app.core.training.memory import training_memory
from planner_app.core.training.setup import ParallelPlan, TrainingSetup
from planner_app.service.resolve import resolve_hardware

MEGATRON = dict(recipe="mixed-bf16", framework="megatron", attention="flash")
NO_PRICE = PriceChoice(basis=None, mix=DEFAULT_MIX, cny_per_usd=None)


def _search(m, cands, tokens, seq_len, global_batch, **limits):
    """The engine's search of a Megatron mixed-bf16 workload."""
    setup = TrainingSetup(seq_len=seq_len, global_batch=global_batch, tokens=tokens, **MEGATRON)
    return search(m, [SearchGroup(setup=setup, candidates=tuple(cands))], SearchLimits(**limits), None, m.name)


def test_gpu_counts_are_whole_nodes():
    assert gpu_counts(64, 8) == [1, 2, 4, 8, 16, 24, 32, 48, 64]


def test_layouts_respect_the_model_and_the_batch(db):
    m = db.model("llama-3.1-70b")
    cfg = enumerate_layouts(m, [64, 128], 8192, 512, 8)
    assert len(cfg["tp"]) > 1000
    assert np.all(m.heads % cfg["tp"] == 0)
    assert np.all(cfg["tp"] * cfg["pp"] * cfg["cp"] * cfg["ep"] * cfg["dp"] == cfg["gpus"])
    assert np.all(512 % (cfg["micro_batch"] * cfg["dp"] * cfg["ep"]) == 0)
    assert not np.any(cfg["sequence_parallel"] & (cfg["tp"] == 1))


def test_search_llama_70b_on_h100_instances(db):
    m = db.model("llama-3.1-70b")
    hw, _, _ = resolve_hardware(db, instance="p5.48xlarge")
    cand = candidate_from_instance("p5", hw, hw.instance, None)
    r = _search(m, [cand], tokens=15e12, max_gpus=2048, seq_len=8192, global_batch=512, top=10)
    assert r.evaluated > 10_000 and r.plans
    # each GPU count's best plan first (issue 29, item 6), fastest first: no two within 5% here
    lead = [p for p in r.plans if p["best_for_gpus"]]
    assert lead and r.plans[:len(lead)] == lead
    assert len({p["parallel"]["gpus"] for p in lead}) == len(lead)
    days = [p["time"]["train_days"] for p in lead]
    assert days == sorted(days)
    best = r.plans[0]
    assert best["parallel"]["gpus"] <= 2048 and best["parallel"]["gpus"] % 8 == 0
    # the best plan really fits, checked with the scalar memory model
    q = best["parallel"]
    setup = TrainingSetup(seq_len=8192, global_batch=512, **MEGATRON)
    plan = ParallelPlan(micro_batch=best["micro_batch"], recompute=best["recompute"], tp=q["tp"], pp=q["pp"],
                        dp=q["dp"], cp=q["cp"], ep=q["ep"], zero=q["zero"], sequence_parallel=q["sequence_parallel"],
                        pp_schedule=q["pp_schedule"], vp=q["vp"])
    assert training_memory(m, setup, plan, hw.gpu.capacity_bytes).fits
    # Pareto front: faster plans cost more
    pts = [(p["time"]["train_s"], p["cost"]["usd"]) for p in r.pareto]
    assert all(t1 <= t2 and c1 >= c2 for (t1, c1), (t2, c2) in zip(pts, pts[1:]))


def test_search_cost_objective_under_a_deadline(db):
    m = db.model("llama-3.1-8b")
    hw, _, _ = resolve_hardware(db, instance="p5.48xlarge")
    cand = candidate_from_instance("p5", hw, hw.instance, None)
    r = _search(m, [cand], tokens=1e12, max_gpus=512, seq_len=8192, global_batch=256, objective="cost",
                deadline_days=30, top=5)
    assert r.plans and all(p["time"]["train_days"] <= 30 for p in r.plans)
    # each GPU count's best plan first (issue 29, item 6), then the others, each part cheapest first
    lead = [p for p in r.plans if p["best_for_gpus"]]
    assert lead and r.plans[:len(lead)] == lead
    for part in (lead, r.plans[len(lead):]):
        costs = [p["cost"]["usd"] for p in part]
        assert costs == sorted(costs)


def test_strong_scaling_efficiency_falls_faster_on_slow_networks(db):
    m = db.model("llama-3.1-8b")
    setup = TrainingSetup(seq_len=8192, global_batch=1024, **MEGATRON)
    plan = ParallelPlan(tp=8, dp=1, zero=1, sequence_parallel=True)
    g = db.gpu("h100-sxm")
    fast, _ = scaling_curve(m, Hardware(gpu=g, inter=db.fabric("ib-ndr"), nics_per_node=8), setup, plan, [1, 8, 64],
                            False, NO_PRICE)
    slow, _ = scaling_curve(m, Hardware(gpu=g, inter=db.fabric("eth-10"), nics_per_node=1), setup, plan, [1, 8, 64],
                            False, NO_PRICE)
    assert fast[0].efficiency == pytest.approx(1.0)
    assert slow[-1].efficiency < fast[-1].efficiency <= 1.0
    assert all(p.step_s_plus_50us >= p.step_s for p in fast)


def test_advice_for_a_plan_that_does_not_fit(db):
    m = db.model("llama-2-13b")
    hw = Hardware(gpu=db.gpu("a100-sxm-80gb"))
    setup = TrainingSetup(seq_len=4096, recipe="amp-bf16", attention="sdpa")
    summary, changes = advise(m, hw, setup, ParallelPlan(micro_batch=4, dp=1))
    assert not summary["fits"] and summary["over_bytes"] > 0
    assert changes and all(c.saves_bytes > 0 for c in changes)
    labels = [c.label for c in changes]
    assert "full recomputation" in labels


# ---- one price basis, reproducible rows (issue 12, items 4 and 5) ---------------------------

def _cli_json(argv):
    import contextlib
    import io
    import json

    from planner_app import cli

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli.main(argv)
    assert rc == 0, argv
    return json.loads(buf.getvalue())


def _cli_text(argv):
    import contextlib
    import io

    from planner_app import cli

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli.main(argv) == 0, argv
    return buf.getvalue()


REPRO_SEARCHES = {
    "dense-instances": ["--model", "llama-3.1-8b", "--tokens", "1e12", "--instance",
                        "p5.48xlarge,Standard_ND96isr_H100_v5", "--max-gpus", "256"],
    # Megatron named: its flash attention and buffers make the 70B's best plans interleaved
    "dense-gpu-sp-interleaved": ["--model", "llama-3.1-70b", "--tokens", "2e12", "--gpu", "H100 SXM",
                                 "--max-gpus", "512", "--framework", "megatron"],
    "moe-instance": ["--model", "mixtral-8x7b", "--tokens", "1e12", "--instance", "p5.48xlarge", "--max-gpus", "128"],
    "cost-reserved": ["--model", "llama-3.1-70b", "--tokens", "1e12", "--instance", "p4d.24xlarge", "--max-gpus", "64",
                      "--objective", "cost", "--price", "reserved_1yr"],
    "cny-and-quoted-name": ["--model", "qwen2.5-0.5b", "--tokens", "1e10", "--instance",
                            "n1-standard-8 + 1x nvidia-tesla-t4,ecs.gn7i-c8g1.2xlarge", "--max-gpus", "4",
                            "--objective", "cost", "--cny-per-usd", "6.5"],
    # LoRA / QLoRA (issue 14): the rows carry the fine-tuning options and reproduce with them
    "qlora-70b-prepare": ["--model", "llama-3.1-70b", "--tokens", "1e9", "--gpu", "h100-sxm,a100-sxm-80gb",
                          "--max-gpus", "16", "--finetune", "qlora", "--lora-targets", "all-linear", "--lora-rank",
                          "64", "--qlora-prepare"],
    "lora-8b-bf16-adapters": ["--model", "llama-3.1-8b", "--tokens", "1e9", "--instance", "p4d.24xlarge",
                              "--max-gpus", "8", "--finetune", "lora", "--lora-dtype", "bf16", "--lora-dropout",
                              "0.05"],
}


@pytest.mark.parametrize("name", sorted(REPRO_SEARCHES))
def test_search_rows_reproduce_with_their_estimate_command(name):
    """Every row's one-line command, run as typed, gives the row's numbers exactly."""
    import shlex

    j = _cli_json(["search", *REPRO_SEARCHES[name], "--top", "3", "--json"])
    assert j["plans"]
    for p in j["plans"][:3] + j["pareto"][:1]:
        cmd = p["estimate_command"]
        assert cmd.startswith("gpu-planner estimate ") and "\n" not in cmd
        argv = shlex.split(cmd)[1:]
        est = _cli_json(argv + ["--json"])
        q = p["parallel"]
        for k in ("tp", "pp", "dp", "cp", "ep", "zero", "sequence_parallel", "pp_schedule", "vp", "gpus",
                  "gpus_per_node"):
            assert est["parallel"][k] == q[k], k
        assert est["setup"]["micro_batch"] == p["micro_batch"] and est["setup"]["recompute"] == p["recompute"]
        assert est["memory"]["fits"] is True and p["memory"]["fits"] is True
        assert est["memory"]["peak_bytes"] == pytest.approx(p["memory"]["peak_bytes"], rel=1e-6)
        assert est["memory"]["device_bytes"] == pytest.approx(p["memory"]["device_bytes"], rel=1e-6)
        assert est["time"]["step_s"] == pytest.approx(p["time"]["step_s"], rel=1e-6)
        assert est["time"]["train_s"] == pytest.approx(p["time"]["train_s"], rel=1e-6)
        assert p["price_basis"] == j["price_basis"]
        if p["instance"]:
            assert est["cost"]["usd_price_basis"] == p["price_basis"]
        if p["cost"]["usd"] is None:
            assert est["cost"].get("usd") is None
        else:
            assert est["cost"]["usd"] == pytest.approx(p["cost"]["usd"], rel=1e-6)
        # the row carries its training request: every option that differs from its default, so that the
        # request it rebuilds is the row's (the checks above ran that request)
        req = options.build(TrainingRequest, p["plan"])
        assert options.given(req) == p["plan"]
        for k in ("model", "gpus", "gpus_per_node", "global_batch", "seq_len", "recipe", "fabric", "tokens", "price"):
            assert k in p["plan"], k
        assert ("instance" in p["plan"]) != ("gpu" in p["plan"])


def test_search_finds_a_sequence_parallel_interleaved_plan_to_reproduce():
    # top 10: the best plan of each GPU count comes first, and one of 512 GPUs with both (issue 29, item 6)
    j = _cli_json(["search", *REPRO_SEARCHES["dense-gpu-sp-interleaved"], "--top", "10", "--json"])
    both = [p for p in j["plans"] if p["parallel"]["sequence_parallel"] and p["parallel"]["pp_schedule"] == "interleaved"]
    assert both
    cmd = both[0]["estimate_command"]
    # vp 2 is the default: the command gives it by leaving it out
    assert "--sequence-parallel" in cmd and "--pp-schedule interleaved" in cmd and "--vp" not in cmd


def test_search_prices_every_plan_at_one_basis_never_a_blend(db):
    """Default basis on-demand (Plan's headline cost); an instance without that price has no
    cost (not its spot price, not 0) and ranks after the priced ones under --objective cost."""
    base = ["search", "--model", "qwen2.5-0.5b", "--tokens", "1e10", "--max-gpus", "2", "--top", "100000", "--json"]
    j = _cli_json(base + ["--instance", "p5.48xlarge,p5e.48xlarge", "--objective", "cost"])
    assert sum(1 + len(p["similar"]) for p in j["plans"]) == j["fitting"]  # near-twins folded into rows
    assert j["price_basis"] == "on_demand"
    assert any("on-demand" in a for a in j["assumptions"])
    p5 = db.instance("p5.48xlarge").prices
    for p in j["plans"]:
        assert p["price_basis"] == "on_demand" and p["cost"]["price_basis"] == "on_demand"
        if p["instance"] == "p5e.48xlarge":  # only a spot price in the spec data
            assert p["cost"]["usd"] is None and p["cost"]["note"] == "no price at on-demand"
        else:
            hours = p["time"]["train_s"] / 3600
            assert p["cost"]["usd"] == pytest.approx(p5.on_demand * p["cost"]["instances"] * hours, rel=1e-9)
    priced = [p["cost"]["usd"] is not None for p in j["plans"]]
    assert priced[0] and not priced[-1] and priced == sorted(priced, reverse=True)  # unpriced after
    priced_rows = [p for p in j["plans"] if p["cost"]["usd"] is not None]
    for lead in (True, False):  # each machine's best plan at each GPU count first, then the others
        costs = [p["cost"]["usd"] for p in priced_rows if p["best_for_gpus"] == lead]
        assert costs and costs == sorted(costs)
    assert [p["best_for_gpus"] for p in priced_rows] == sorted((p["best_for_gpus"] for p in priced_rows),
                                                                reverse=True)
    # another basis: every cost at that basis, ~reserved/on-demand of the on-demand cost
    r = _cli_json(base + ["--instance", "p5.48xlarge", "--price", "reserved_1yr"])
    od = _cli_json(base + ["--instance", "p5.48xlarge"])
    assert r["price_basis"] == "reserved_1yr"
    assert r["plans"][0]["cost"]["usd"] == pytest.approx(
        od["plans"][0]["cost"]["usd"] * p5.reserved_1yr / p5.on_demand, rel=1e-9)
    # the Pareto front holds priced plans only, in USD
    assert od["pareto_y"] == "usd" and all(p["cost"]["usd"] is not None for p in j["pareto"])


def test_search_without_any_price_draws_gpu_hours_not_usd():
    j = _cli_json(["search", "--model", "llama-3.1-8b", "--tokens", "1e12", "--max-gpus", "64", "--gpu", "H100 SXM",
                   "--top", "3", "--json"])
    assert j["pareto_y"] == "gpu_hours" and j["pareto"]
    assert all(p["cost"]["usd"] is None for p in j["plans"])
    gh = [p["cost"]["gpu_hours"] for p in j["pareto"]]
    assert gh == sorted(gh, reverse=True)  # faster costs more GPU-hours along the front


def test_search_converts_cny_at_the_given_rate_and_says_so():
    base = ["search", "--model", "qwen2.5-0.5b", "--tokens", "1e10", "--instance", "ecs.gn7i-c8g1.2xlarge",
            "--max-gpus", "1", "--top", "1", "--json"]
    a, b = _cli_json(base + ["--cny-per-usd", "7"]), _cli_json(base + ["--cny-per-usd", "14"])
    assert a["plans"][0]["cost"]["usd"] == pytest.approx(2 * b["plans"][0]["cost"]["usd"], rel=1e-9)
    assert any("CNY prices converted at 14 CNY per USD" in s for s in b["assumptions"])
    assert b["plans"][0]["plan"]["cny_per_usd"] == 14


def test_search_text_shows_full_names_the_layout_and_the_basis():
    out = _cli_text(["search", "--model", "qwen2.5-0.5b", "--tokens", "1e10", "--max-gpus", "2", "--top", "1000",
                     "--instance", "Standard_ND96isr_H100_v5,p5e.48xlarge", "--objective", "cost"])
    assert "Standard_ND96isr_H100_v5 " in out  # 24 characters, not cut at 22
    header = next(line for line in out.splitlines() if line.lstrip().startswith("#"))
    assert " sp " in header and "schedule" in header and "on-demand" in header
    assert "no price at on-demand" in out
    assert "gpu-planner estimate --model qwen2.5-0.5b --instance Standard_ND96isr_H100_v5" in out


def test_device_overhead_is_one_formula(db):
    """The search's device bytes come from memory.py's overhead (no twin formula)."""
    from planner_app.core.training.states import device_bytes, device_overhead

    m = db.model("llama-3.1-8b")
    setup = TrainingSetup(seq_len=8192, global_batch=64, **MEGATRON)
    plan = ParallelPlan(recompute="full", tp=2, dp=4)
    mem = training_memory(m, setup, plan, db.gpu("h100-sxm").capacity_bytes)
    over = device_overhead(np.array([mem.peak_bytes]), np.array([8.0]), np.array([True]))
    assert device_bytes(np.array([mem.peak_bytes]), over)[0] == mem.device_bytes
    assert mem.overhead == {k: float(np.ravel(v)[0]) if np.ndim(v) else float(v) for k, v in over.items()}
