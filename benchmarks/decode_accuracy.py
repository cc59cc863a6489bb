"""The serving model's decode step (core/serving.step_time_s) against the H200's decode step time
of a CUDA-graph, static-cache decode loop in plain PyTorch (benchmarks/gpu_decode_runs.py): a step
of ``batch`` decodes over ``context`` cached tokens, no prefill and no serving engine's CPU overhead
(the loop has none: the engine's per-step overhead is set to 0 for the comparison).

Two loops: ``--impl fused`` (tests/data/decode_runs_h200.json), whose element-wise work is fused
around the GEMMs as serving engines fuse it (17 kernels per layer), is the check; ``--impl eager``
(tests/data/decode_runs_h200_eager.json) runs every op as its own kernel (38 per layer) and is shown
beside it: the model assumes an engine's fused layer (core/serving.py KERNELS_PER_LAYER).

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
DATA_EAGER = os.path.join(ROOT, "tests", "data", "decode_runs_h200_eager.json")


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
        out.append((p["batch"], p["context"], p["step_ms"], est, p.get("kernels_per_step")))
    return data["info"], out


def table(path) -> list[float]:
    """Print one loop's markdown table; return its relative errors."""
    info, rows_ = rows(path)
    print(f"Decode step of {info['config']} ({info['layers']} layers, {info['dtype']}, loop `{info.get('impl', 'eager')}`) "
          f"on {info['device']}: {info['timing']}; `{info['command']}`\n")
    print("| batch | context | kernels per step | measured ms | estimate ms | error |")
    print("|---:|---:|---:|---:|---:|---:|")
    errs = []
    for b, c, m, e, k in rows_:
        errs.append(e / m - 1)
        print(f"| {b} | {c:,} | {k if k is not None else '-'} | {m:.2f} | {e:.2f} | {e / m - 1:+.1%} |")
    a = sorted(abs(x) for x in errs)
    print(f"\n{len(a)} points: median |error| {statistics.median(a):.1%}, largest {a[-1]:.1%}, "
          f"within 10%: {sum(x <= 0.10 for x in a)}\n")
    return errs


def main() -> int:
    table(DATA)
    if os.path.exists(DATA_EAGER):
        print("The same points with every op as its own kernel (`--impl eager`):\n")
        table(DATA_EAGER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
