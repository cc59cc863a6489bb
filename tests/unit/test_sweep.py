"""The vectorised memory model equals the scalar one, configuration by configuration."""
import numpy as np
import pytest

from planner_app.core.errors import InputError
from planner_app.core.plans.sweep import memory_peak
from planner_app.core.training.memory import training_memory
from planner_app.core.training.setup import Layout, ParallelPlan, TrainingSetup


def _columns(rows: list[dict]) -> Layout:
    """The configurations as a column Layout (as the search builds one)."""
    col = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    return Layout(micro_batch=col["micro_batch"], seq_len=col["seq_len"], tp=col["tp"], pp=col["pp"], dp=col["dp"],
                  cp=col["cp"], ep=col["ep"], zero=col["zero"], sequence_parallel=col["sp"],
                  recompute=col["recompute"], n_acc=col["n_acc"], pp_schedule=col["interleaved"], vp=col["vp"])

CASES = [("llama-3.1-8b", "mixed-bf16", "adamw", "flash", "megatron"),
         ("llama-2-7b", "amp-bf16", "adamw", "sdpa", "pytorch"),
         ("gpt2", "fp32", "sgd-momentum", "eager", "pytorch"),
         ("mixtral-8x7b", "bf16", "adamw", "sdpa", "deepspeed"),
         ("mistral-7b", "bf16", "adamw", "sdpa", "pytorch"),
         ("deepseek-v3", "fp8", "adamw", "flash", "megatron"),
         ("bert-base-uncased", "amp-bf16", "adafactor", "sdpa", "pytorch")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + "-" + c[4])
def test_vectorised_equals_scalar(db, case):
    name, recipe, opt, attn, fw = case
    model = db.model(name)
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    rows = []
    for _ in range(60):
        r = dict(micro_batch=int(rng.integers(1, 9)), seq_len=int(rng.choice([512, 2048, 4096, 8192])),
                 tp=int(rng.choice([1, 2, 4, 8])), pp=int(rng.choice([1, 2, 4])), dp=int(rng.choice([1, 2, 8])),
                 cp=int(rng.choice([1, 2])), ep=int(rng.choice([1, 2])) if model.is_moe else 1,
                 zero=int(rng.integers(0, 4)), sp=bool(rng.integers(0, 2)),
                 recompute=int(rng.integers(0, 3)), n_acc=int(rng.choice([1, 4])),
                 interleaved=bool(rng.integers(0, 2)), vp=2)
        r["sp"] = r["sp"] and r["tp"] > 1
        setup = TrainingSetup(seq_len=r["seq_len"], recipe=recipe, optimizer=opt, attention=attn, framework=fw,
                              global_batch=r["micro_batch"] * r["dp"] * r["ep"] * r["n_acc"])
        plan = ParallelPlan(micro_batch=r["micro_batch"], recompute=("none", "selective", "full")[r["recompute"]],
                            tp=r["tp"], pp=r["pp"], dp=r["dp"], cp=r["cp"], ep=r["ep"], zero=r["zero"],
                            sequence_parallel=r["sp"], pp_schedule="interleaved" if r["interleaved"] else "1f1b")
        try:
            want = training_memory(model, setup, plan).peak_bytes
        except InputError:
            continue
        rows.append((r, want))
    assert len(rows) >= 20
    got = memory_peak(model, TrainingSetup(recipe=recipe, optimizer=opt, attention=attn, framework=fw),
                      _columns([r for r, _ in rows]))
    want = np.array([w for _, w in rows])
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + "-" + c[4])
def test_vectorised_step_time_equals_scalar(db, case):
    from planner_app.core.hardware.machine import Hardware
    from planner_app.core.plans.sweep_time import step_time_columns
    from planner_app.core.training.timing import step_time

    name, recipe, opt, attn, fw = case
    model = db.model(name)
    if fw == "megatron" and recipe in ("fp32", "amp-bf16"):
        pytest.skip("not a valid combination")
    hw = Hardware(gpu=db.gpu("h100-sxm"), inter=db.fabric("ib-ndr"), nics_per_node=8)
    rng = np.random.default_rng(7 + abs(hash(case)) % 1000)
    rows = []
    for _ in range(50):
        r = dict(micro_batch=int(rng.integers(1, 5)), seq_len=int(rng.choice([1024, 4096, 8192])),
                 tp=int(rng.choice([1, 2, 8])), pp=int(rng.choice([1, 2, 4])), dp=int(rng.choice([1, 4, 32])),
                 cp=int(rng.choice([1, 2])), ep=int(rng.choice([1, 2])) if model.is_moe else 1,
                 zero=int(rng.integers(0, 4)), sp=bool(rng.integers(0, 2)), recompute=int(rng.integers(0, 3)),
                 n_acc=int(rng.choice([1, 8])), interleaved=bool(rng.integers(0, 2)), vp=2)
        r["sp"] = r["sp"] and r["tp"] > 1
        setup = TrainingSetup(seq_len=r["seq_len"], recipe=recipe, optimizer=opt, attention=attn, framework=fw,
                              global_batch=r["micro_batch"] * r["dp"] * r["ep"] * r["n_acc"])
        plan = ParallelPlan(micro_batch=r["micro_batch"], recompute=("none", "selective", "full")[r["recompute"]],
                            tp=r["tp"], pp=r["pp"], dp=r["dp"], cp=r["cp"], ep=r["ep"], zero=r["zero"],
                            sequence_parallel=r["sp"], pp_schedule="interleaved" if r["interleaved"] else "1f1b")
        try:
            want = step_time(model, hw, setup, plan)
        except InputError:
            continue
        rows.append((r, want))
    assert len(rows) >= 15
    got = step_time_columns(model, hw, TrainingSetup(recipe=recipe, optimizer=opt, attention=attn, framework=fw),
                            _columns([r for r, _ in rows]))
    np.testing.assert_allclose(got["step_s"], [w.step_s for _, w in rows], rtol=1e-9)
    np.testing.assert_allclose(got["mfu"], [w.mfu for _, w in rows], rtol=1e-9)
