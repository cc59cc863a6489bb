"""Engine peak memory vs torch.cuda.max_memory_allocated on real training runs.

Reads tests/data/training_runs_h200.json (made by benchmarks/gpu/gpu_training_runs.py on one
H200) and prints, per case, the measured peak, the engine's peak and the error::

    python -m accuracy.memory_accuracy [--phases]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics

from accuracy.inputs import run_inputs
from planner_app.core.models.hf_config import load_hf_config
from planner_app.core.training.memory import training_memory

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


def case_inputs(case: dict):
    model = load_hf_config(os.path.join(DATA, "hf_configs", case["config"] + ".json"))
    setup, plan = run_inputs(micro_batch=case["micro_batch"], seq_len=case["seq_len"], recipe=case["recipe"],
                             optimizer=case["optimizer"], attention=case["attention"], recompute=case["recompute"])
    return model, setup, plan


def measured_peak(case: dict) -> float:
    """The job's max_memory_allocated: the case's peak plus the cuBLAS workspace baseline."""
    return case["peak_bytes"] + case["baseline_bytes"]


RUNS = os.path.join(DATA, "training_runs_h200.json")


def compare(path=RUNS):
    with open(path) as f:
        data = json.load(f)
    rows = []
    for case in data["cases"]:
        model, setup, plan = case_inputs(case)
        r = training_memory(model, setup, plan)
        meas = measured_peak(case)
        rows.append((case, r, meas, r.peak_bytes / meas - 1))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--phases", action="store_true")
    args = ap.parse_args(argv)
    rows = compare()
    print(f"{'case':36s} {'measured GB':>11s} {'engine GB':>10s} {'error':>7s}  peak phase")
    for case, r, meas, err in rows:
        print(f"{case['name']:36s} {meas / 1e9:11.3f} {r.peak_bytes / 1e9:10.3f} {err * 100:+6.1f}%  {r.peak_phase}")
        if args.phases:
            s = case["steps"][-1]
            b = case["baseline_bytes"]
            print(f"    measured fwd {(s['fwd_peak_bytes'] + b) / 1e9:.3f} bwd {(s['bwd_peak_bytes'] + b) / 1e9:.3f} "
                  f"opt {(s['opt_peak_bytes'] + b) / 1e9:.3f} | engine " +
                  " ".join(f"{k} {v / 1e9:.3f}" for k, v in r.phase_peaks.items()))
    errs = [abs(e) for *_, e in rows]
    print(f"cases {len(rows)}  max |error| {max(errs) * 100:.1f}%  median |error| {statistics.median(errs) * 100:.1f}%")


if __name__ == "__main__":
    main()
