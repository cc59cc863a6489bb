"""The serving step's prefill charge against prompt chunks measured on the H200: one chunk of C tokens
through Llama-3.1-8B (32 layers) and Llama-3.1-70B (16 of its 80 layers) in plain PyTorch, CUDA-graph timed
(``benchmarks/gpu/gpu_prefill_chunks.py``, tests/data/prefill_chunks_h200_*.json), against
core/serving/engine.py step_time_s for a step carrying that chunk alone (no decodes; the chunk attends to itself,
mean context C / 2; the engine's per-step CPU overhead set to 0, as the loop has none). Prints prefill
throughput (prompt tokens/s) measured and estimated for the layer as engines fuse it (``fused``) and with
every element-wise op its own kernel (``unfused``), the error of the step time against the fused one, and,
where the run profiled a chunk, its kernels' time by class (GEMMs, attention, the rest) beside step_parts;
nothing is fitted.

    python -m accuracy.prefill_accuracy
"""
from __future__ import annotations

import glob
import json
import os
import statistics

from accuracy.decode_accuracy import _h200, _shape, kernel_class  # the same shapes, H200, kernel classes
from accuracy.inputs import one_gpu_deployment

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "prefill_chunks_h200_*.json")))


def rows(path: str):
    """(info, [(chunk, fused ms, unfused ms, estimate ms, {class: (measured ms, estimate ms)} or None)])."""
    from planner_app.core.serving import engine as serving

    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    info = data["info"]
    shape = _shape(info["config"], info["layers"])
    dev = _h200()
    dep = one_gpu_deployment(step_overhead_s=0.0)
    out = []
    for p in data["points"]:
        if "fused_graph_ms" not in p:
            continue
        c = p["chunk"]
        parts = {k: float(v) * 1e3 for k, v in serving.step_parts(shape, dev, dep, 0.0, float(c), 0.0, c / 2.0).items()}
        classes = None
        if "fused_profile" in p:
            measured = {"dense_gemm": 0.0, "attention": 0.0, "rest": 0.0}
            for name, _calls, us in p["fused_profile"]["top"]:
                k = kernel_class(name)
                measured[k if k in measured else "rest"] += us / 1e3
            measured["rest"] += p["fused_profile"]["kernel_us"] / 1e3 - sum(measured.values())
            est_rest = parts["elementwise"] + parts["kernel_floor"] + parts["communication"]
            classes = {"dense_gemm": (measured["dense_gemm"], parts["dense_gemm"]),
                       "attention": (measured["attention"], parts["attention"]), "rest": (measured["rest"], est_rest)}
        out.append((c, p["fused_graph_ms"], p["graph_ms"], sum(parts.values()), classes))
    return info, out


def main():
    errs = []
    for path in DATA:
        info, rs = rows(path)
        print(f"\n{info['config']}, {info['layers']} layers, bf16, {info['device']} ({info['date']}, torch "
              f"{info['torch']}): `{info['command']}`\n")
        print("| chunk tokens | fused ms | unfused ms | estimate ms | fused tokens/s | estimate tokens/s | error |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for c, m, u, e, _ in rs:
            errs.append(e / m - 1)
            print(f"| {c:,} | {m:.2f} | {u:.2f} | {e:.2f} | {c / m * 1e3:,.0f} | {c / e * 1e3:,.0f} | "
                  f"{(e / m - 1) * 100:+.1f}% |")
        for c, *_, classes in rs:
            if classes:
                print(f"\nKernels of the fused {c:,}-token chunk (torch.profiler), measured / step_parts ms: "
                      + "; ".join(f"{k} {m:.1f} / {e:.1f} ({(e / m - 1) * 100:+.0f}%)" for k, (m, e) in classes.items()))
    a = [abs(e) for e in errs]
    print(f"\n{len(a)} points: median |error| {statistics.median(a) * 100:.1f}%, largest {max(a) * 100:.1f}%, "
          f"median signed {statistics.median(errs) * 100:+.1f}%, within 10%: {sum(x <= 0.10 for x in a)}")


if __name__ == "__main__":
    main()
