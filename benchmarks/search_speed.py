"""Plan-search speed on a realistic space: Llama 3.1 70B, 15T tokens, H100 SXM instances
(p5.48xlarge), up to 2048 GPUs, every axis (tp, pp, dp, cp, ZeRO stage, micro-batch,
recomputation, sequence parallelism, pipeline schedule). Goal: at most 2 s on one core and
at least 200,000 configurations per second. Run with one thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/search_speed.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from planner_app.core.plans.search import candidate_from_instance, search  # noqa: E402
from planner_app.service.resolve import resolve_hardware  # noqa: E402
from planner_app.specdb.catalog import shipped_db  # noqa: E402


def main():
    db = shipped_db()
    m = db.model("llama-3.1-70b")
    hw, _, _ = resolve_hardware(db, instance="p5.48xlarge")
    cand = candidate_from_instance("p5.48xlarge", hw, hw.instance)
    search(m, [cand], tokens=15e12, max_gpus=64, seq_len=8192, global_batch=512)  # warm the caches
    best = None
    for _ in range(3):
        t = time.perf_counter()
        r = search(m, [cand], tokens=15e12, max_gpus=2048, seq_len=8192, global_batch=512, top=10)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    print(f"search: {r.evaluated:,} configurations ({r.fitting:,} fit) in {best:.3f} s = "
          f"{r.evaluated / best:,.0f} configurations/s")
    p = r.plans[0]
    print(f"best plan: {p['parallel']}, micro-batch {p['micro_batch']}, recompute {p['recompute']}: "
          f"{p['time']['train_days']:.1f} days, MFU {p['time']['mfu']:.1%}")
    two = [candidate_from_instance(i, *resolve_hardware(db, instance=i)[:1], resolve_hardware(db, instance=i)[0].instance)
           for i in ("p5.48xlarge", "p4de.24xlarge", "Standard_ND96isr_H100_v5")]
    t = time.perf_counter()
    r = search(m, two, tokens=15e12, max_gpus=2048, seq_len=8192, global_batch=512, objective="cost")
    dt = time.perf_counter() - t
    print(f"3 instance types: {r.evaluated:,} configurations in {dt:.3f} s = {r.evaluated / dt:,.0f} configurations/s")


if __name__ == "__main__":
    main()
