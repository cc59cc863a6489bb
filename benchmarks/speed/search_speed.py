"""Plan-search speed on a realistic space: Llama 3.1 70B, 15T tokens, H100 SXM instances
(p5.48xlarge), up to 2048 GPUs, every axis (tp, pp, dp, cp, ZeRO stage, micro-batch,
recomputation, sequence parallelism, pipeline schedule), through the search service as
``gpu-planner search`` runs it (service/search.py run_search). Goal: at most 2 s on one core and
at least 300,000 configurations per second. Run with one thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.speed.search_speed
"""
import time

from planner_app.core.options import build
from planner_app.core.requests import SearchRequest
from planner_app.service.search import run_search
from planner_app.specdb.catalog import shipped_db

BASE = {"model": "llama-3.1-70b", "tokens": 15e12, "seq_len": 8192, "global_batch": 512}


def timed(db, values: dict, runs: int):
    """(best seconds, output) of ``runs`` searches of ``values`` (``gpu-planner search`` options)."""
    request = build(SearchRequest, values, "search")
    best, out = None, None
    for _ in range(runs):
        t = time.perf_counter()
        out = run_search(request, db)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def main():
    db = shipped_db()
    timed(db, dict(BASE, instance="p5.48xlarge", max_gpus=64), 1)  # warm the caches
    best, out = timed(db, dict(BASE, instance="p5.48xlarge", max_gpus=2048, top=10), 3)
    r = out.result
    print(f"search: {r.evaluated:,} configurations ({r.fitting:,} fit) in {best:.3f} s = "
          f"{r.evaluated / best:,.0f} configurations/s")
    p = r.plans[0]
    print(f"best plan: {p['parallel']}, micro-batch {p['micro_batch']}, recompute {p['recompute']}: "
          f"{p['time']['train_days']:.1f} days, MFU {p['time']['mfu']:.1%}")
    dt, out = timed(db, dict(BASE, instance="p5.48xlarge,p4de.24xlarge,Standard_ND96isr_H100_v5", max_gpus=2048,
                             objective="cost"), 1)
    r = out.result
    print(f"3 instance types: {r.evaluated:,} configurations in {dt:.3f} s = {r.evaluated / dt:,.0f} configurations/s")


if __name__ == "__main__":
    main()
