"""The serving model's decode step (core/serving.step_time_s) against the H200's decode step time
of a CUDA-graph, static-cache decode loop in plain PyTorch (benchmarks/gpu_decode_runs.py ->
tests/data/decode_runs_h200.json): a step of ``batch`` decodes over ``context`` cached tokens, no
prefill and no serving engine's CPU overhead (the loop has none: the engine's per-step overhead is
set to 0 for the comparison).

    python benchmarks/decode_accuracy.py       # prints a markdown table
"""
from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, ROOT)
DATA = os.path.join(ROOT, "tests", "data", "decode_runs_h200.json")


def rows(path=DATA):
    """[(batch, context, measured ms, estimate ms)] of every measured point."""
    from planner_app.core import serving
    from planner_app.core.estimate import Hardware
    from planner_app.core.hf_config import load_hf_config
    from planner_app.service.catalog import open_catalog

    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    model = load_hf_config(os.path.join(ROOT, "tests", "data", "hf_configs", data["info"]["config"] + ".json"))
    shape = serving.model_shape(model)
    dev = serving.device_for(Hardware(gpu=open_catalog().gpu("h200-sxm")), 16)
    dep = serving.Deployment(step_overhead_s=0.0)
    out = []
    for p in data["points"]:
        if p.get("status") != "ok":
            continue
        est = float(serving.step_time_s(shape, dev, dep, p["batch"], 0.0, p["context"], 0.0)) * 1e3
        out.append((p["batch"], p["context"], p["step_ms"], est))
    return data["info"], out


def main() -> int:
    info, table = rows()
    print(f"Decode step of {info['config']} ({info['layers']} layers, {info['dtype']}) on {info['device']}: "
          f"{info['timing']}; `{info['command']}`\n")
    print("| batch | context | measured ms | estimate ms | error |")
    print("|---:|---:|---:|---:|---:|")
    errs = []
    for b, c, m, e in table:
        errs.append(e / m - 1)
        print(f"| {b} | {c:,} | {m:.2f} | {e:.2f} | {e / m - 1:+.1%} |")
    a = sorted(abs(x) for x in errs)
    print(f"\n{len(a)} points: median |error| {statistics.median(a):.1%}, largest {a[-1]:.1%}, "
          f"within 10%: {sum(x <= 0.10 for x in a)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
