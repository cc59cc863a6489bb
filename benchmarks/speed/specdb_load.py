"""Spec database load time: cold (a new process: Python start, imports, parsing and
validation of every CSV) and warm (parsing and validation again in a running process).
Goal: cold load of the whole database at most 300 ms::

    python -m benchmarks.speed.specdb_load
"""
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    code = ("import time; t0 = time.perf_counter(); from planner_app.specdb.catalog import SpecDB; "
            "t1 = time.perf_counter(); db = SpecDB(); t2 = time.perf_counter(); "
            "print(f'{(t1 - t0) * 1e3:.1f} {(t2 - t1) * 1e3:.1f} {len(db.records[\"gpus\"])} {len(db.records[\"instances\"])} "
            "{len(db.records[\"fabrics\"])} {len(db.records[\"models\"])}')")
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
        wall = (time.perf_counter() - t) * 1e3
        imp, load, *counts = out.stdout.split()
        runs.append((wall, float(imp), float(load), counts))
    best = min(runs)
    print(f"cold load in a new process: imports (catalog and engine types, no pandas) {best[1]:.0f} ms + parse and validate {best[2]:.0f} ms "
          f"= {best[1] + best[2]:.0f} ms (whole process incl. interpreter start {best[0]:.0f} ms); "
          f"rows: {best[3][0]} GPUs, {best[3][1]} instances, {best[3][2]} fabrics, {best[3][3]} models")
    from planner_app.specdb.catalog import SpecDB

    SpecDB()
    t = time.perf_counter()
    for _ in range(10):
        SpecDB()
    print(f"warm reload: {(time.perf_counter() - t) / 10 * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
