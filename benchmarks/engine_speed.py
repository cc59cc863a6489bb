"""Engine speed: single-estimate latency (warm) and the vectorised memory sweep rate.

Goals (issue 13): one estimate (memory + step time, no extras) in at most 1 ms with the engine
warm; the plan search at least 300,000 configurations per second on the 2-core machine, on one
thread (BLAS thread variables set to 1 before numpy loads, as search_speed.py is run).
Prints rates and their ratios to the goals, not pass/fail::

    python benchmarks/engine_speed.py
"""
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread, as search_speed.py
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from planner_app.core.hardware.machine import Hardware
from planner_app.core.plans.search import candidate_from_instance, search  # noqa: E402
from planner_app.core.plans.sweep import memory_peak  # noqa: E402
from planner_app.core.training.estimate import estimate_training  # noqa: E402
from planner_app.core.training.memory import training_memory  # noqa: E402
from planner_app.core.training.setup import ParallelPlan, TrainingSetup  # noqa: E402
from planner_app.core.training.timing import step_time  # noqa: E402
from planner_app.service.resolve import resolve_hardware  # noqa: E402
from planner_app.specdb.catalog import shipped_db  # noqa: E402

GOAL_ESTIMATE_US = 1000.0
GOAL_SEARCH_PER_S = 300_000


def per_call_us(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def main():
    db = shipped_db()
    cases = {
        "Llama-2-7B, 1 GPU, HF PyTorch": (db.model("llama-2-7b"), TrainingSetup(micro_batch=2, seq_len=2048),
                                          ParallelPlan()),
        "Llama-3.1-70B, 256 GPUs, TP8 PP4 ZeRO-1, Megatron": (
            db.model("llama-3.1-70b"),
            TrainingSetup(micro_batch=1, seq_len=8192, recipe="mixed-bf16", recompute="selective",
                          framework="megatron", global_batch=256),
            ParallelPlan(tp=8, pp=4, dp=8, zero=1, sequence_parallel=True)),
    }
    hw = Hardware(gpu=db.gpu("h100-sxm"))
    print("single estimates (engine warm):")
    for name, (m, s, p) in cases.items():
        mem = per_call_us(lambda: training_memory(m, s, p), 3000)
        tim = per_call_us(lambda: step_time(m, hw, s, p), 1000)
        full = per_call_us(lambda: estimate_training(m, hw, s, p, extras=False), 300)
        print(f"  {name:52s} memory {mem:6.1f} us   step time {tim:7.1f} us   full estimate {full:7.1f} us")
        print(f"  {'':52s} memory + step time {mem + tim:7.1f} us = {(mem + tim) / GOAL_ESTIMATE_US:.2f} x the "
              f"{GOAL_ESTIMATE_US:.0f} us goal (lower is better)")
    m = db.model("llama-3.1-70b")
    n = 1_000_000
    rng = np.random.default_rng(0)
    cfg = dict(micro_batch=rng.integers(1, 9, n), seq_len=rng.choice([2048, 4096, 8192], n),
               tp=rng.choice([1, 2, 4, 8], n), pp=rng.choice([1, 2, 4, 8, 16], n),
               dp=rng.choice([1, 2, 4, 8, 16, 32], n), cp=rng.choice([1, 2], n), ep=np.ones(n),
               zero=rng.integers(0, 4, n), sp=rng.integers(0, 2, n).astype(bool), recompute=rng.integers(0, 3, n),
               n_acc=rng.choice([1, 4, 16], n), interleaved=rng.integers(0, 2, n).astype(bool), vp=np.full(n, 2))
    memory_peak(m, "mixed-bf16", "adamw", "flash", "megatron", {k: v[:1000] for k, v in cfg.items()})
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        memory_peak(m, "mixed-bf16", "adamw", "flash", "megatron", cfg)
        best = max(best, n / (time.perf_counter() - t))
    print(f"vectorised memory sweep: {best:,.0f} configurations/s ({n:,} configurations of Llama-3.1-70B)")
    hw70, _, _ = resolve_hardware(db, instance="p5.48xlarge")
    cand = candidate_from_instance("p5.48xlarge", hw70, hw70.instance)
    search(m, [cand], tokens=15e12, max_gpus=64, seq_len=8192, global_batch=512)  # warm the caches
    rate = 0.0
    for _ in range(3):
        t = time.perf_counter()
        r = search(m, [cand], tokens=15e12, max_gpus=2048, seq_len=8192, global_batch=512)
        rate = max(rate, r.evaluated / (time.perf_counter() - t))
    print(f"search: {rate:,.0f} configurations/s ({r.evaluated:,} layouts of Llama-3.1-70B on p5.48xlarge) = "
          f"{rate / GOAL_SEARCH_PER_S:.2f} x the {GOAL_SEARCH_PER_S:,} /s goal (higher is better)")


if __name__ == "__main__":
    main()
