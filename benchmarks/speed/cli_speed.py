"""CLI speed: one ``gpu-planner estimate --json`` process, start to exit (goal <= 0.3 s).

Scripts and test suites call the CLI hundreds of times, so the whole process counts:
interpreter start, imports, the spec database, the estimate and the JSON. Runs each case
as ``python -m planner_app ...`` subprocesses and prints median/min/max wall seconds and
the ratio of the median to the goal. ``--imports`` adds the slowest imports of the first
case (``python -X importtime``, cumulative microseconds)::

    python -m benchmarks.speed.cli_speed [--runs 20] [--imports]
"""
import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GOAL_S = 0.3

CASES = {
    "training, instance": ["estimate", "--model", "llama-3.1-70b", "--instance", "p5.48xlarge", "--gpus", "256",
                           "--tp", "8", "--pp", "4", "--json"],
    "training, gpu": ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8", "--json"],
    "inference": ["estimate", "--mode", "inference", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "8",
                  "--prompt-len", "1024", "--new-tokens", "256", "--json"],
}


def _env() -> dict:
    # An empty user directory: the user's own database must not change what is timed.
    return dict(os.environ, PLANNER_USER_DIR=tempfile.mkdtemp(prefix="cli-speed-"))


def _children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_runs(args: list[str], runs: int, env: dict) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds) of ``runs`` fresh processes, start to exit. CPU time is
    printed beside the wall time because this machine's 2 cores are shared: under load the
    wall time mostly measures the other processes."""
    wall, cpu = [], []
    for _ in range(runs):
        cpu0, t0 = _children_cpu_s(), time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "planner_app", *args], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=120)
        wall.append(time.perf_counter() - t0)
        cpu.append(_children_cpu_s() - cpu0)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} exited {r.returncode}: {r.stderr[-2000:]}")
    return wall, cpu


def top_imports(args: list[str], env: dict, top: int = 25) -> list[tuple[int, int, str]]:
    """(cumulative us, self us, module) of the slowest imports of one run."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "planner_app", *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    rows = []
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative_us, name = (p.strip() for p in line[len("import time:"):].split("|"))
        rows.append((int(cumulative_us), int(self_us), name))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="processes per case (default 20)")
    ap.add_argument("--imports", action="store_true", help="also print the slowest imports of the first case")
    opts = ap.parse_args()
    env = _env()
    # Byte-code as an installed wheel has it: with PYTHONDONTWRITEBYTECODE (set on these
    # machines) an edited module would otherwise be compiled again in every process (~10 ms
    # for cli.py alone).
    compileall.compile_dir(os.path.join(ROOT, "planner_app"), quiet=1)
    timed_runs(CASES["training, instance"], 1, env)  # warm the file cache first
    for name, args in CASES.items():
        load0 = os.getloadavg()[0]
        t, cpu = timed_runs(args, opts.runs, env)
        med = statistics.median(t)
        # the load average beside each case: other processes on the machine make the wall time
        print(f"{name:20s} wall median {med:.3f} s  min {min(t):.3f} s  max {max(t):.3f} s  "
              f"({med / GOAL_S:.2f}x the {GOAL_S} s goal); CPU median {statistics.median(cpu):.3f} s  "
              f"({opts.runs} runs, load average {load0:.2f}-{os.getloadavg()[0]:.2f})")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if opts.imports:
        print(f"\nslowest imports of `{' '.join(CASES['training, instance'])}` (cumulative ms, self ms):")
        for cum_us, self_us, mod in top_imports(CASES["training, instance"], env):
            print(f"  {cum_us / 1e3:7.1f} {self_us / 1e3:7.1f}  {mod}")


if __name__ == "__main__":
    main()
