"""Engine step time vs measured single-GPU PyTorch training steps (H200).

Reads tests/data/training_runs_h200.json (benchmarks/gpu/gpu_training_runs.py) and prints the
measured and predicted step time per case with the error; no overrides::

    python -m accuracy.time_accuracy_single_gpu [--phases]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics

from accuracy.memory_accuracy import case_inputs
from planner_app.core.hardware.machine import Hardware
from planner_app.core.training.timing import step_time
from planner_app.specdb.catalog import shipped_db

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


RUNS = os.path.join(DATA, "training_runs_h200.json")


def compare(path=RUNS):
    with open(path) as f:
        data = json.load(f)
    gpu = shipped_db().gpu("h200-sxm")
    hw = Hardware(gpu=gpu)
    rows = []
    for case in data["cases"]:
        model, setup, plan = case_inputs(case)
        st = step_time(model, hw, setup, plan)
        meas = case["step_ms_median"] / 1e3
        rows.append((case, st, meas, st.step_s / meas - 1))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--phases", action="store_true")
    args = ap.parse_args(argv)
    rows = compare()
    print(f"{'case':36s} {'measured ms':>11s} {'engine ms':>10s} {'error':>7s}")
    for case, st, meas, err in rows:
        print(f"{case['name']:36s} {meas * 1e3:11.1f} {st.step_s * 1e3:10.1f} {err * 100:+6.1f}%")
        if args.phases:
            s = case["steps"][-1]
            print(f"    measured fwd {s['fwd_ms']:.1f} bwd {s['bwd_ms']:.1f} opt {s['opt_ms']:.1f} | engine "
                  + " ".join(f"{k} {v * 1e3:.1f}" for k, v in st.parts.items() if v))
    errs = [abs(e) for *_, e in rows]
    print(f"cases {len(rows)}  max |error| {max(errs) * 100:.1f}%  median |error| {statistics.median(errs) * 100:.1f}%")


if __name__ == "__main__":
    main()
