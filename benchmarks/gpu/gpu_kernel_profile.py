"""Where a training step's GPU time goes: a kernel-time breakdown of cases whose step time the engine
misses (issue 14), measured with ``torch.profiler`` on a local GPU.

Each case builds its model as benchmarks/gpu/gpu_trainer_runs.py does (random weights from a Hugging
Face ``config.json``, bf16, the given attention implementation), then runs what Trainer(bf16=True)
runs per step: forward under ``torch.autocast(bfloat16)``, backward, ``torch.optim.AdamW(fused=True)``
step, ``zero_grad``. After two warm-up steps, ``--steps`` steps run under the profiler. Output per
case: wall time per step (GPU synchronised), the sum of kernel time per step (busy) and the rest
(GPU idle: host-bound gaps), kernel time by class (GEMM, grouped GEMM, attention, optimizer,
element-wise and the rest), and the 30 kernels that take most time.

    python -m benchmarks.gpu.gpu_kernel_profile --out kernel_profile.json
    python -m benchmarks.gpu.gpu_kernel_profile --cases phi3mini-full-b4s1024 --steps 2
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
import traceback

from benchmarks.gpu import gpu_trainer_runs as tr  # model building shared with the Trainer runs
from benchmarks.gpu.bench_io import command_line, kernel_times, write_json  # profiler kernel table

CASES = [
    tr._case("llama1b-full-b4s2048", "llama-3.2-1b", 4, 2048),
    tr._case("phi3mini-full-b4s1024", "phi-3-mini-4k", 4, 1024),
    tr._case("qwen3moe30b-6l-full-b2s2048", "qwen3-30b-a3b", 2, 2048, config_dict=tr._reduced("qwen3-30b-a3b", 6)),
    tr._case("gptoss20b-4l-full-eager-b2s2048", "gpt-oss-20b", 2, 2048, attention="eager",
             config_dict=tr._reduced("gpt-oss-20b", 4)),
    # the LoRA runs of trainer_runs_h200.json whose step time the engine misses most
    tr._case("qwen3moe30b-6l-lora-r16-qkvo-b4s2048", "qwen3-30b-a3b", 4, 2048,
             lora={"r": 16, "target_modules": tr.QKVO}, config_dict=tr._reduced("qwen3-30b-a3b", 6)),
    tr._case("gptoss20b-4l-lora-r16-qkvo-eager-b2s2048", "gpt-oss-20b", 2, 2048, attention="eager",
             lora={"r": 16, "target_modules": tr.QKVO}, config_dict=tr._reduced("gpt-oss-20b", 4)),
]

CLASSES = (  # first match wins; names as CUDA kernels are named by cuBLAS, CUTLASS, flash, PyTorch
    ("grouped_gemm", ("grouped", "group_gemm", "GroupProblemShape")),
    ("attention", ("flash", "fmha", "attention", "softmax")),
    ("gemm", ("gemm", "nvjet", "xmma", "cutlass", "sm90_", "sm80_", "ampere_", "splitK", "Kernel2")),
    ("optimizer", ("adam", "multi_tensor")),
    ("reduction", ("reduce", "Reduce", "norm", "sum_kernel", "cumsum", "scan", "sort", "histc", "topk")),
    ("index", ("index", "gather", "scatter", "embedding")),
    ("elementwise", ("elementwise", "vectorized", "unrolled", "copy", "fill", "Elementwise")),
)


def classify(name: str) -> str:
    for cls, keys in CLASSES:
        if any(k in name for k in keys):
            return cls
    return "other"


def op_times(torch, step, steps, top=40):
    """Device time per aten op and input shapes (torch.profiler with CPU and CUDA activities,
    record_shapes): which source op launches the kernels, as (op, shapes, calls, ms) per step."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    rows = []
    for ev in prof.key_averages(group_by_input_shape=True):
        t_us = getattr(ev, "self_device_time_total", 0.0) or 0.0
        if t_us <= 0 or not ev.key.startswith("aten::"):
            continue
        rows.append([ev.key, str(ev.input_shapes)[:200], round(ev.count / steps, 2), round(t_us / 1e3 / steps, 3)])
    rows.sort(key=lambda r: -r[3])
    return rows[:top]


def profile_case(torch, case, steps, ops=False):
    from torch.profiler import ProfilerActivity, profile

    model, cfg = tr.build(torch, case)
    if case["lora"]:  # PEFT as gpu_trainer_runs.run_case wraps it (fp32 adapters, PEFT's default)
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=case["lora"]["r"], target_modules=case["lora"]["target_modules"],
                                                 lora_dropout=case["lora_dropout"], task_type="CAUSAL_LM"))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, cfg.vocab_size, (case["micro_batch"], case["seq_len"]), generator=g).cuda()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3 / steps
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    kernels = kernel_times(prof.key_averages(), per=steps)
    by_class = {}
    for name, (ms, _) in kernels.items():
        c = classify(name)
        by_class[c] = by_class.get(c, 0.0) + ms
    busy = sum(v[0] for v in kernels.values())
    top = sorted(kernels.items(), key=lambda kv: -kv[1][0])[:30]
    rec = {"name": case["name"], "status": "ok", "wall_ms_per_step": wall_ms, "kernel_ms_per_step": busy,
           "idle_ms_per_step": wall_ms - busy, "kernels_per_step": sum(v[1] for v in kernels.values()),
           "by_class_ms": {k: round(v, 3) for k, v in sorted(by_class.items(), key=lambda kv: -kv[1])},
           "top_kernels": [{"name": n[:160], "ms": round(v[0], 3), "calls": v[1], "class": classify(n)}
                           for n, v in top],
           "params": sum(p.numel() for p in model.parameters())}
    if ops:
        rec["top_ops"] = op_times(torch, step, steps)
    model = opt = params = None  # drop the references (a closure above still names them)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="kernel_profile.json")
    ap.add_argument("--cases", default="all")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=240)
    ap.add_argument("--ops", action="store_true", help="also the device time per aten op and input shapes")
    args = ap.parse_args()
    import torch
    import transformers

    info = {"command": command_line(), "torch": torch.__version__,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "timing": f"wall: {args.steps} steps after 2 warm-up, GPU synchronised; kernels: torch.profiler "
                      f"(CUDA activity) over {args.steps} more steps, per step"}
    wanted = None if args.cases == "all" else set(args.cases.split(","))
    out = {"info": info, "cases": []}
    deadline = time.time() + args.budget_s
    for case in CASES:
        if wanted and case["name"] not in wanted:
            continue
        if time.time() > deadline:
            out["cases"].append({"name": case["name"], "status": "skipped (budget)"})
            continue
        print("case", case["name"], file=sys.stderr, flush=True)
        try:
            rec = profile_case(torch, case, args.steps, ops=args.ops)
            print(f"  wall {rec['wall_ms_per_step']:.1f} ms, kernels {rec['kernel_ms_per_step']:.1f} ms, "
                  f"{rec['by_class_ms']}", file=sys.stderr, flush=True)
        except Exception as e:  # noqa: BLE001 - a failed case is data
            rec = {"name": case["name"], "status": f"error: {type(e).__name__}: {str(e)[:300]}",
                   "traceback_tail": traceback.format_exc()[-1200:]}
            print("  failed", rec["status"], file=sys.stderr, flush=True)
        out["cases"].append(rec)
        torch.cuda.empty_cache()
    write_json(args.out, out)


if __name__ == "__main__":
    main()
