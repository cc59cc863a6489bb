"""Serving-planner speed (issue 15). Goals: one ``serve`` estimate (service/serving.py run_serve:
model and hardware resolved, steady state solved) in at most 5 ms; an SLO search
(service/serving.py run_slo_search) over at least 10,000 deployments in at most 2 s. Exits 1 when a
goal is missed. Run with one thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.speed.serve_speed
"""
import sys
import time

from planner_app.core.options import build
from planner_app.core.requests import ServeRequest, ServeSearchRequest
from planner_app.service.serving import run_serve, run_slo_search
from planner_app.specdb.catalog import shipped_db

MACHINES = {"instance": "p5.48xlarge,p5en.48xlarge,p4de.24xlarge", "gpu": "H100 SXM"}


def best_of(fn, n):
    best, out = None, None
    for _ in range(n):
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def main():
    db = shipped_db()
    one = build(ServeRequest, {"model": "llama-3.1-70b", "gpu": "H100 SXM", "tp": 4, "isl": 2048, "osl": 512,
                               "concurrency": 64, "weights_dtype": "fp8", "kv_dtype": "fp8"}, "serve")
    rate = build(ServeRequest, {"model": "mixtral-8x7b", "instance": "p5.48xlarge", "tp": 2, "ep": 2, "isl": 1000,
                                "osl": 1000, "request_rate": 5.0}, "serve")
    run_serve(one, db)  # warm the spec database's caches
    t1, _ = best_of(lambda: run_serve(one, db), 20)
    t2, _ = best_of(lambda: run_serve(rate, db), 20)
    search = build(ServeSearchRequest, {"model": "llama-3.1-70b", "isl": 2048, "osl": 512, "concurrency": 64,
                                        "ttft_ms": 1000.0, "tpot_ms": 33.0, "quantized_weights": True, **MACHINES},
                   "serve search")  # every weight precision: the largest grid
    t3, res = best_of(lambda: run_slo_search(search, db), 3)
    print(f"one serve estimate (concurrency): {t1 * 1e3:.2f} ms (goal <= 5 ms)")
    print(f"one serve estimate (request rate, bisection): {t2 * 1e3:.2f} ms (goal <= 5 ms)")
    print(f"SLO search: {res.evaluated:,} deployments in {t3:.3f} s = {res.evaluated / t3:,.0f}/s "
          f"(goal >= 10,000 in <= 2 s); {res.meeting:,} meet TTFT <= 1 s, TPOT <= 33 ms; "
          f"{len(res.pareto)} on the Pareto front")
    rate_search = build(ServeSearchRequest, {"model": "mixtral-8x7b", "isl": 1000, "osl": 1000, "request_rate": 20.0,
                                             "ttft_ms": 1000.0, "tpot_ms": 40.0, **MACHINES}, "serve search")
    t4, res2 = best_of(lambda: run_slo_search(rate_search, db), 3)
    print(f"SLO search at a request rate (bisection per deployment): {res2.evaluated:,} deployments in {t4:.3f} s")
    ok = t1 <= 5e-3 and t2 <= 5e-3 and res.evaluated >= 10_000 and t3 <= 2.0 and t4 <= 2.0
    print("goals met" if ok else "GOALS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
