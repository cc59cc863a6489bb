"""Engine speed: single-estimate latency (warm), the vectorised memory sweep rate and the plan
search rate, in-process.

Goals (issue 13): one estimate (memory + step time, no extras) in at most 1 ms with the engine
warm; the plan search at least 300,000 configurations per second on the 2-core machine, on one
thread (BLAS thread variables set to 1 before numpy loads, as search_speed.py is run).
Prints rates and their ratios to the goals, not pass/fail (benchmarks/speed/spine.py checks the
goals)::

    python -m benchmarks.speed.engine_speed
"""
import os
import time
from dataclasses import fields, replace

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread, as search_speed.py
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the thread variables)

from planner_app.core.options import build  # noqa: E402
from planner_app.core.plans.sweep import memory_peak  # noqa: E402
from planner_app.core.requests import SearchRequest  # noqa: E402
from planner_app.core.training.estimate import estimate_training  # noqa: E402
from planner_app.core.training.memory import training_memory  # noqa: E402
from planner_app.core.training.setup import RECOMPUTE_CODES, Layout  # noqa: E402
from planner_app.core.training.timing import step_time  # noqa: E402
from planner_app.service.estimate import estimate_json, estimate_request  # noqa: E402
from planner_app.service.resolve import resolve_model, resolve_training  # noqa: E402
from planner_app.service.search import run_search  # noqa: E402
from planner_app.specdb.catalog import shipped_db  # noqa: E402

GOAL_ESTIMATE_US = 1000.0
GOAL_SEARCH_PER_S = 300_000

CASES = {  # estimate options, as ``gpu-planner estimate`` takes them
    "Llama-2-7B, 1 GPU, HF PyTorch": {"model": "llama-2-7b", "gpu": "h100-sxm", "micro_batch": 2, "seq_len": 2048},
    "Llama-3.1-70B, 256 GPUs, TP8 PP4 ZeRO-1, Megatron": {
        "model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": 256, "micro_batch": 1, "seq_len": 8192,
        "recipe": "mixed-bf16", "recompute": "selective", "framework": "megatron", "global_batch": 256,
        "tp": 8, "pp": 4, "zero": 1, "sequence_parallel": True},
}
# the search of search_speed.py: Llama 3.1 70B, 15T tokens, p5.48xlarge, up to 2048 GPUs
SEARCH = {"model": "llama-3.1-70b", "tokens": 15e12, "instance": "p5.48xlarge", "max_gpus": 2048, "seq_len": 8192,
          "global_batch": 512}


def per_call_us(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def search_rate(db, values: dict, runs: int = 3) -> tuple[float, int]:
    """(configurations per second, configurations) of the best of ``runs`` plan searches of ``values``
    (``gpu-planner search`` options), after one smaller search that warms the caches."""
    run_search(build(SearchRequest, dict(values, max_gpus=64), "search"), db)
    request = build(SearchRequest, values, "search")
    best, evaluated = 0.0, 0
    for _ in range(runs):
        t = time.perf_counter()
        out = run_search(request, db)
        evaluated = out.result.evaluated
        best = max(best, evaluated / (time.perf_counter() - t))
    return best, evaluated


def estimate_us(db, values: dict) -> tuple[float, float, float, float]:
    """Microseconds per call, engine warm, of the memory, the step time, the estimate without its
    extras and ``estimate_json`` with them, for estimate options ``values``."""
    req = estimate_request(values)
    r = resolve_training(req, db)
    m, hw, s, p = r.model, r.hardware, r.setup, r.plan
    return (per_call_us(lambda: training_memory(m, s, p), 1000), per_call_us(lambda: step_time(m, hw, s, p), 1000),
            per_call_us(lambda: estimate_training(m, hw, s, p, req.speed, r.price, extras=False), 300),
            per_call_us(lambda: estimate_json(values, db), 20))


def main():
    db = shipped_db()
    print("single estimates (engine warm):")
    for name, values in CASES.items():
        mem, tim, full, service = estimate_us(db, values)
        print(f"  {name:52s} memory {mem:6.1f} us   step time {tim:7.1f} us   estimate (no extras) {full:7.1f} us")
        print(f"  {'':52s} memory + step time {mem + tim:7.1f} us = {(mem + tim) / GOAL_ESTIMATE_US:.2f} x the "
              f"{GOAL_ESTIMATE_US:.0f} us goal (lower is better); estimate_json with the extras (largest "
              f"micro-batch, fewest GPUs, advice) {service / 1e3:.1f} ms")
    m = resolve_model("llama-3.1-70b", db)
    setup = resolve_training(estimate_request(CASES["Llama-3.1-70B, 256 GPUs, TP8 PP4 ZeRO-1, Megatron"]), db).setup
    n = 1_000_000
    rng = np.random.default_rng(0)
    mb = rng.integers(1, 9, n)
    dp = rng.choice([1, 2, 4, 8, 16, 32], n)
    cols = Layout(micro_batch=mb, seq_len=rng.choice([2048, 4096, 8192], n), tp=rng.choice([1, 2, 4, 8], n),
                  pp=rng.choice([1, 2, 4, 8, 16], n), dp=dp, cp=rng.choice([1, 2], n), ep=np.ones(n),
                  zero=rng.integers(0, 4, n), sequence_parallel=rng.integers(0, 2, n).astype(bool),
                  recompute=rng.integers(0, len(RECOMPUTE_CODES), n), n_acc=rng.choice([1, 4, 16], n),
                  pp_schedule=rng.integers(0, 2, n).astype(bool), vp=np.full(n, 2))
    small = replace(cols, **{f.name: getattr(cols, f.name)[:1000] for f in fields(cols)
                             if isinstance(getattr(cols, f.name), np.ndarray)})
    memory_peak(m, setup, small)
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        memory_peak(m, setup, cols)
        best = max(best, n / (time.perf_counter() - t))
    print(f"vectorised memory sweep: {best:,.0f} configurations/s ({n:,} configurations of Llama-3.1-70B)")
    rate, evaluated = search_rate(db, SEARCH)
    print(f"search: {rate:,.0f} configurations/s ({evaluated:,} layouts of Llama-3.1-70B on p5.48xlarge) = "
          f"{rate / GOAL_SEARCH_PER_S:.2f} x the {GOAL_SEARCH_PER_S:,} /s goal (higher is better)")


if __name__ == "__main__":
    main()
