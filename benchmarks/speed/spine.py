"""The speed spine: the four numbers every change must keep, each beside its goal; exits 1 when one
is missed.

1. one training estimate, in-process, engine warm: memory + step time, no extras (the engine call
   ``estimate_json`` wraps, core/training/estimate.py ``estimate_training(..., extras=False)``, for
   ``--model llama-3.1-8b --gpu h100-sxm``); goal <= 1 ms (issue 13). ``estimate_json`` itself, with
   the extras (largest micro-batch, fewest GPUs, advice: searches over the plan), is printed beside it;
2. the plan search (service/search.py ``run_search`` over core/plans/search.py ``search``): Llama 3.1
   70B, 15T tokens, p5.48xlarge, up to 2048 GPUs, one thread; goal >= 300,000 configurations/s;
3. one ``gpu-planner estimate --model llama-3.1-8b --gpu h100-sxm --json`` process, start to exit,
   median of ``--runs``; goal <= 0.3 s;
4. one ``gpu-planner serve --model llama-3.1-8b --gpu h100-sxm --isl 1024 --osl 256 --concurrency 16
   --json`` process, the same way; goal <= 0.3 s.

The processes run the ``gpu-planner`` beside this Python (the virtual environment's), with an empty
user directory, after the app is byte-compiled (as an installed wheel is); their CPU time is printed
too: on a shared machine the wall time also measures the other processes::

    .venv/bin/python -m benchmarks.speed.spine [--runs 7]
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread, before numpy loads
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import compileall  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from benchmarks.speed.engine_speed import SEARCH, search_rate  # noqa: E402
from planner_app.core.training.estimate import estimate_training  # noqa: E402
from planner_app.service.estimate import estimate_json, estimate_request  # noqa: E402
from planner_app.service.resolve import resolve_training  # noqa: E402
from planner_app.specdb.catalog import shipped_db  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GOAL_ESTIMATE_S = 1e-3
GOAL_SEARCH_PER_S = 300_000
GOAL_PROCESS_S = 0.3
ESTIMATE = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
CLI = {
    "estimate": ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json"],
    "serve": ["serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "256",
              "--concurrency", "16", "--json"],
}


def per_call_s(fn, n: int, repeats: int = 3) -> float:
    """The best of ``repeats`` means over ``n`` calls of ``fn``, after one call."""
    fn()
    best = None
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = (time.perf_counter() - t) / n
        best = dt if best is None else min(best, dt)
    return best


def gpu_planner() -> str:
    """The ``gpu-planner`` script beside this Python, else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "gpu-planner")
    path = here if os.path.exists(here) else shutil.which("gpu-planner")
    if not path:
        raise SystemExit("spine: no gpu-planner script beside this Python or on PATH (pip install -e .)")
    return path


def _children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def process_s(exe: str, args: list, runs: int, env: dict) -> tuple[list, list]:
    """(wall seconds, CPU seconds) of ``runs`` fresh ``exe args`` processes, start to exit, after one
    untimed run (the file cache)."""
    wall, cpu = [], []
    for i in range(runs + 1):
        cpu0, t0 = _children_cpu_s(), time.perf_counter()
        r = subprocess.run([exe, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"spine: {' '.join(args)} exited {r.returncode}: {r.stderr[-2000:]}")
        if i:
            wall.append(time.perf_counter() - t0)
            cpu.append(_children_cpu_s() - cpu0)
    return wall, cpu


def line(name: str, value: str, goal: str, ok: bool) -> bool:
    print(f"{'ok  ' if ok else 'MISS'} {name:58s} {value:>22s}   goal {goal}")
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="processes per command-line case (default 7)")
    args = ap.parse_args(argv)
    db = shipped_db()
    ok = []

    req = estimate_request(ESTIMATE)
    r = resolve_training(req, db)
    one = per_call_s(lambda: estimate_training(r.model, r.hardware, r.setup, r.plan, req.speed, r.price,
                                               extras=False), 300)
    ok.append(line("training estimate, warm (memory + step time, no extras)", f"{one * 1e3:.3f} ms",
                   f"<= {GOAL_ESTIMATE_S * 1e3:g} ms", one <= GOAL_ESTIMATE_S))
    full = per_call_s(lambda: estimate_json(ESTIMATE, db), 10)
    print(f"     {'  estimate_json, with the extras (no goal)':58s} {full * 1e3:>19.1f} ms")

    rate, evaluated = search_rate(db, SEARCH)
    ok.append(line(f"plan search ({evaluated:,} layouts of Llama-3.1-70B, 1 thread)", f"{rate:,.0f} /s",
                   f">= {GOAL_SEARCH_PER_S:,} /s", rate >= GOAL_SEARCH_PER_S))

    compileall.compile_dir(os.path.join(ROOT, "planner_app"), quiet=1)  # as an installed wheel has it
    exe = gpu_planner()
    env = dict(os.environ, PLANNER_USER_DIR=tempfile.mkdtemp(prefix="spine-"))
    for name, cli_args in CLI.items():
        wall, cpu = process_s(exe, cli_args, args.runs, env)
        med = statistics.median(wall)
        ok.append(line(f"`gpu-planner {name} ... --json` process (median of {args.runs})", f"{med:.3f} s",
                       f"<= {GOAL_PROCESS_S} s", med <= GOAL_PROCESS_S))
        print(f"     {'':58s} min {min(wall):.3f} s, max {max(wall):.3f} s, CPU median {statistics.median(cpu):.3f} s")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          + ("every goal met" if all(ok) else f"{ok.count(False)} goal(s) missed"))
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
