"""The serving model's decode step (core/serving.step_time_s) against the H200's decode step time
of a CUDA-graph, static-cache decode loop in plain PyTorch (benchmarks/gpu/gpu_decode_runs.py): a step
of ``batch`` decodes over ``context`` cached tokens, no prefill and no serving engine's CPU overhead
(the loop has none: the engine's per-step overhead is set to 0 for the comparison).

Two loops: ``--impl fused`` (tests/data/decode_runs_h200.json), whose element-wise work is fused
around the GEMMs as serving engines fuse it (17 kernels per layer), is the check; ``--impl eager``
(tests/data/decode_runs_h200_eager.json) runs every op as its own kernel (38 per layer) and is shown
beside it: the model assumes an engine's fused layer (core/serving/engine.py KERNELS_PER_LAYER).

The MoE loops (tests/data/decode_runs_h200_{qwen3_30b_a3b,mixtral_8x7b,qwen3_235b_12l}.json) route
each token in plain PyTorch (softmax top-k, a sort by expert, a gather, two ``torch._grouped_mm``
grouped GEMMs and an ``index_add`` back), which launches about twice the kernels per layer a serving
engine's fused MoE does. tests/data/decode_profile_h200.json times each kernel of one step
(torch.profiler) at a few points; ``parts`` sets the model's step_parts beside those kernel times.

    python -m accuracy.decode_accuracy       # prints the markdown tables
"""
from __future__ import annotations

import json
import os
import statistics
import sys

from accuracy.inputs import one_gpu_deployment

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data", "decode_runs_h200.json")
DATA_EAGER = os.path.join(ROOT, "tests", "data", "decode_runs_h200_eager.json")
MOE = [os.path.join(ROOT, "tests", "data", f"decode_runs_h200_{n}.json")
       for n in ("qwen3_30b_a3b", "mixtral_8x7b", "qwen3_235b_12l")]
PROFILE = os.path.join(ROOT, "tests", "data", "decode_profile_h200.json")


def _shape(config: str, layers: int):
    from planner_app.core.models.hf_config import model_from_hf_config
    from planner_app.core.serving import engine as serving

    with open(os.path.join(ROOT, "tests", "data", "hf_configs", config + ".json"), encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["num_hidden_layers"] = layers  # a loop of fewer layers than the config's
    return serving.model_shape(model_from_hf_config(cfg, name=config))


def _h200():
    from planner_app.core.hardware.machine import Hardware
    from planner_app.core.serving import engine as serving
    from planner_app.service.catalog import open_catalog

    return serving.device_for(Hardware(gpu=open_catalog().gpu("h200-sxm")), 16, 8)


def rows(path=DATA):
    """[(batch, context, measured ms, estimate ms, kernels per step)] of every measured point."""
    from planner_app.core.serving import engine as serving

    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    shape = _shape(data["info"]["config"], data["info"]["layers"])
    dev = _h200()
    dep = one_gpu_deployment(step_overhead_s=0.0)
    out = []
    for p in data["points"]:
        if p.get("status") != "ok":
            continue
        est = float(serving.step_time_s(shape, dev, dep, p["batch"], 0.0, p["context"], 0.0)) * 1e3
        out.append((p["batch"], p["context"], p["step_ms"], est, p.get("kernels_per_step")))
    return data["info"], out


def kernel_class(name: str) -> str:
    """The step part a profiled kernel belongs to (core/serving.STEP_PARTS)."""
    n = name.lower()
    if "groupproblemshape" in n:  # CUTLASS grouped GEMM (torch._grouped_mm)
        return "expert_gemm"
    if "nvjet" in n or "gemm" in n or "splitkreduce" in n:
        return "dense_gemm"
    if "sdpa" in n or "flash" in n or "fmha" in n:
        return "attention"
    return "rest"


def parts(path=PROFILE) -> list:
    """[(config, batch, context, {part: (measured ms, estimate ms)})] for each profiled point: the
    kernels' device time by class against step_parts; "rest" is the element-wise work and the kernel
    floors (and, in the MoE loops, the routing: top-k, sort, gather, index_add)."""
    from planner_app.core.serving import engine as serving

    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    dev = _h200()
    dep = one_gpu_deployment(step_overhead_s=0.0)
    out = []
    for run in data["runs"]:
        info = run["info"]
        shape = _shape(info["config"], info["layers"])
        for p in run["points"]:
            if p.get("status") != "ok" or "profile" not in p:
                continue
            measured = {"dense_gemm": 0.0, "expert_gemm": 0.0, "attention": 0.0, "rest": 0.0}
            for name, _calls, us in p["profile"]["top"]:
                measured[kernel_class(name)] += us / 1e3
            # kernels beyond the recorded top ones are small: they go to "rest"
            measured["rest"] += p["profile"]["kernel_us"] / 1e3 - sum(measured.values())
            est = {k: float(v) * 1e3 for k, v in
                   serving.step_parts(shape, dev, dep, p["batch"], 0.0, p["context"], 0.0).items()}
            est_rest = est["elementwise"] + est["kernel_floor"] + est["communication"]
            cmp_ = {k: (measured[k], est[k]) for k in ("dense_gemm", "expert_gemm", "attention")}
            cmp_["rest"] = (measured["rest"], est_rest)
            cmp_["step"] = (p["step_ms"], sum(est.values()))
            out.append((info["config"], p["batch"], p["context"], cmp_))
    return out


def parts_table() -> None:
    print("Kernel time by part, one step (torch.profiler; measured / estimate ms; `step` is the CUDA-graph "
          "replay):\n")
    print("| model | batch | context | dense GEMMs | expert GEMMs | attention | rest | step |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for cfg, b, c, cmp_ in parts():
        cells = " | ".join(f"{m:.2f} / {e:.2f}" for m, e in (cmp_[k] for k in
                           ("dense_gemm", "expert_gemm", "attention", "rest", "step")))
        print(f"| {cfg} | {b} | {c:,} | {cells} |")
    print()


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
    print("Mixture-of-experts loops (routing in plain PyTorch, experts as `torch._grouped_mm`):\n")
    for path in MOE:
        table(path)
    parts_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
