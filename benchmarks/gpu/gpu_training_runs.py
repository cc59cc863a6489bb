"""Measure real training memory and step time of Hugging Face models on a local GPU.

This is the ground truth the sizing engine is validated against (docs/validation.md).
Each case builds a model from a Hugging Face ``config.json`` (tests/data/hf_configs/)
with random weights directly on the GPU (no download), trains it for a few steps on
random tokens and records ``torch.cuda.max_memory_allocated`` per phase (forward,
backward, optimizer step) and the step time (CUDA events, median after warm-up).

Usage (on the GPU machine, from the project root)::

    python -m benchmarks.gpu.gpu_training_runs --out tests/data/training_runs_h200.json
    python -m benchmarks.gpu.gpu_training_runs --cases gpt2-fp32-sdpa --steps 3

The training loop is the plain PyTorch one that the engine's ``--framework pytorch``
models: ``loss = model(input_ids=x, labels=x).loss`` (outputs dropped before backward,
as Hugging Face's Trainer does), ``loss.backward()``, ``opt.step()``,
``opt.zero_grad(set_to_none=True)``; AdamW with PyTorch's default (foreach)
implementation; ``use_cache=False``; gradient checkpointing through
``model.gradient_checkpointing_enable()`` (non-reentrant, every layer).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import traceback

from benchmarks.gpu.bench_io import command_line, cuda_median_ms, write_json  # CUDA-event timer

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG_DIR = os.path.join(HERE, "..", "..", "tests", "data", "hf_configs")

# name, config, recipe, attention, recompute, micro-batch, sequence length, optimizer
CASES = [
    ("gpt2-fp32-sdpa-b8s1024", "gpt2", "fp32", "sdpa", "none", 8, 1024, "adamw"),
    ("gpt2-amp-eager-b8s1024", "gpt2", "amp-bf16", "eager", "none", 8, 1024, "adamw"),
    ("gpt2-bf16-sdpa-b16s1024", "gpt2", "bf16", "sdpa", "none", 16, 1024, "adamw"),
    ("gpt2m-amp-sdpa-b8s1024", "gpt2-medium", "amp-bf16", "sdpa", "none", 8, 1024, "adamw"),
    ("gpt2l-bf16-eager-full-b4s1024", "gpt2-large", "bf16", "eager", "full", 4, 1024, "adamw"),
    ("gpt2xl-amp-sdpa-full-b8s1024", "gpt2-xl", "amp-bf16", "sdpa", "full", 8, 1024, "adamw"),
    ("bert-base-amp-sdpa-b32s512", "bert-base-uncased", "amp-bf16", "sdpa", "none", 32, 512, "adamw"),
    ("qwen0.5b-bf16-sdpa-b4s2048", "qwen2.5-0.5b", "bf16", "sdpa", "none", 4, 2048, "adamw"),
    ("llama1b-amp-sdpa-b4s2048", "llama-3.2-1b", "amp-bf16", "sdpa", "none", 4, 2048, "adamw"),
    ("llama1b-fp32-sdpa-full-b4s2048", "llama-3.2-1b", "fp32", "sdpa", "full", 4, 2048, "adamw"),
    ("tinyllama-bf16-eager-b2s2048", "tinyllama-1.1b", "bf16", "eager", "none", 2, 2048, "adamw"),
    ("qwen1.5b-amp-eager-full-b4s1024", "qwen2.5-1.5b", "amp-bf16", "eager", "full", 4, 1024, "adamw"),
    ("mixtral-mini-bf16-sdpa-b4s2048", "mixtral-mini", "bf16", "sdpa", "none", 4, 2048, "adamw"),
    ("llama3b-bf16-sdpa-b2s4096", "llama-3.2-3b", "bf16", "sdpa", "none", 2, 4096, "adamw"),
    ("llama3b-amp-sdpa-full-b4s4096", "llama-3.2-3b", "amp-bf16", "sdpa", "full", 4, 4096, "adamw"),
    ("llama7b-bf16-sdpa-b2s2048", "llama-2-7b", "bf16", "sdpa", "none", 2, 2048, "adamw"),
    ("llama7b-bf16-eager-full-b1s4096", "llama-2-7b", "bf16", "eager", "full", 1, 4096, "adamw"),
    ("mistral7b-bf16-sdpa-full-b4s4096", "mistral-7b", "bf16", "sdpa", "full", 4, 4096, "adamw"),
    ("qwen7b-bf16-sdpa-full-b2s2048", "qwen2.5-7b", "bf16", "sdpa", "full", 2, 2048, "adamw"),
    ("llama13b-bf16-sdpa-full-b1s2048", "llama-2-13b", "bf16", "sdpa", "full", 1, 2048, "adamw"),
    ("llama1b-bf16-sdpa-sgdm-b8s2048", "llama-3.2-1b", "bf16", "sdpa", "none", 8, 2048, "sgd-momentum"),
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run_case(torch, case, device, steps):
    """One case through planner_app.probe.validate (the probe's real-run path)."""
    from planner_app.probe.validate import build_hf_model, train_steps

    name, cfg_name, recipe, attention, recompute, b, s, opt_name = case
    cuda = device == "cuda"
    base_bytes = torch.cuda.memory_allocated() if cuda else 0
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    with open(os.path.join(CONFIG_DIR, cfg_name + ".json")) as f:
        hf_config = json.load(f)
    t0 = time.perf_counter()
    model, vocab = build_hf_model(torch, hf_config, recipe, attention, device)
    build_s = time.perf_counter() - t0
    params_bytes = (torch.cuda.memory_allocated() - base_bytes) if cuda else 0
    n_params = sum(p.numel() for p in model.parameters())
    res = train_steps(torch, model, vocab, recipe, b, s, opt_name, recompute, steps, device)
    for ph in res["steps"]:
        for k in list(ph):
            if k.endswith("_bytes"):
                ph[k] -= base_bytes
    rec = {"name": name, "config": cfg_name, "model_class": type(model).__name__, "recipe": recipe,
           "attention": attention, "recompute": recompute, "micro_batch": b, "seq_len": s,
           "optimizer": opt_name, "params": n_params, "baseline_bytes": base_bytes,
           "params_bytes": params_bytes, "build_s": round(build_s, 3), "steps": res["steps"],
           "peak_bytes": res["peak_abs_bytes"] - base_bytes}
    for k in ("step_ms_median", "step_ms_spread", "max_reserved_bytes"):
        if k in res:
            rec[k] = res[k]
    if "step_ms_median" in res:
        rec["tokens_per_s"] = b * s / (res["step_ms_median"] / 1e3)
    del model
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return rec


def gemm_sweep(torch, deadline):
    """bf16/fp32/tf32 GEMM rates over transformer-like shapes (CUDA events, median of 10)."""
    rows = []
    shapes = []
    for m in (512, 2048, 8192, 16384):
        for n, k in ((768, 768), (768, 3072), (3072, 768), (2048, 2048), (2048, 8192), (4096, 4096),
                     (4096, 11008), (11008, 4096), (8192, 8192), (32000, 4096)):
            shapes.append((m, n, k))
    for sq in (256, 512, 1024, 2048, 4096, 8192, 16384):
        shapes.append((sq, sq, sq))
    for dtype_name in ("bf16", "fp32", "tf32"):
        torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
        dt = torch.bfloat16 if dtype_name == "bf16" else torch.float32
        for (m, n, k) in shapes:
            if time.time() > deadline:
                return rows
            if dtype_name != "bf16" and m * n * k > 8192 ** 3:
                continue
            a = torch.randn(m, k, device="cuda", dtype=dt)
            bm = torch.randn(k, n, device="cuda", dtype=dt)
            for _ in range(3):
                torch.matmul(a, bm)
            ts = []
            for _ in range(10):
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                torch.matmul(a, bm)
                e1.record()
                torch.cuda.synchronize()
                ts.append(e0.elapsed_time(e1))
            ms = statistics.median(ts)
            rows.append({"dtype": dtype_name, "m": m, "n": n, "k": k, "ms": ms, "tflops": 2 * m * n * k / ms / 1e9})
            del a, bm
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


def memory_ops(torch):
    """Bandwidth of copy and of the memory-bound ops a transformer layer runs."""
    rows = []
    n = 512 * 1024 * 1024  # 1 GiB of bf16
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    ms = cuda_median_ms(torch, lambda: y.copy_(x))
    rows.append({"op": "copy_bf16_1GiB", "ms": ms, "gbps_rw": 2 * x.numel() * 2 / ms / 1e6})
    ms = cuda_median_ms(torch, lambda: torch.add(x, y))
    rows.append({"op": "add_bf16", "ms": ms, "gbps_rw": 3 * x.numel() * 2 / ms / 1e6})
    h = 4096
    t = x.view(-1, h)[: 32768]
    w = torch.ones(h, device="cuda", dtype=torch.bfloat16)
    ms = cuda_median_ms(torch, lambda: torch.nn.functional.layer_norm(t, (h,), w, w))
    rows.append({"op": "layer_norm_bf16_32768x4096", "ms": ms, "gbps_rw": 2 * t.numel() * 2 / ms / 1e6})
    ms = cuda_median_ms(torch, lambda: torch.nn.functional.silu(t))
    rows.append({"op": "silu_bf16_32768x4096", "ms": ms, "gbps_rw": 2 * t.numel() * 2 / ms / 1e6})
    ms = cuda_median_ms(torch, lambda: t.float())
    rows.append({"op": "to_fp32_32768x4096", "ms": ms, "gbps_rw": 6 * t.numel() / ms / 1e6})
    lg = torch.randn(8192, 32000, device="cuda", dtype=torch.float32)
    ms = cuda_median_ms(torch, lambda: torch.log_softmax(lg, -1))
    rows.append({"op": "log_softmax_fp32_8192x32000", "ms": ms, "gbps_rw": 2 * lg.numel() * 4 / ms / 1e6})
    return rows


def attention_kernels(torch, deadline):
    """Forward+backward time of causal SDPA (flash) and the eager formulation."""
    rows = []
    F = torch.nn.functional
    for (b, hq, s, d) in ((8, 12, 1024, 64), (4, 32, 2048, 64), (2, 32, 4096, 128), (1, 32, 8192, 128)):
        if time.time() > deadline:
            break
        q = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)

        def sdpa():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            o.sum().backward()

        ms = cuda_median_ms(torch, sdpa, reps=5)
        flops = 4 * b * hq * s * s * d * 3.5 / 2  # causal fwd (2 GEMMs) + bwd (5 GEMMs), half the square
        rows.append({"kernel": "sdpa_causal_fwd_bwd", "b": b, "heads": hq, "s": s, "d": d, "ms": ms,
                     "tflops": flops / ms / 1e9})
    return rows


INFERENCE_CASES = [
    # config, batch, prompt tokens, new tokens
    ("llama-2-7b", 1, 1024, 64),
    ("llama-2-7b", 8, 1024, 64),
    ("llama-2-7b", 32, 1024, 64),
    ("llama-3.1-8b", 16, 2048, 64),
    ("qwen2.5-0.5b", 64, 512, 64),
]


def inference_runs(torch, deadline):
    """Prefill time, decode latency per token and peak memory of greedy generation (bf16, sdpa)."""
    rows = []
    for cfg_name, b, prompt, new in INFERENCE_CASES:
        if time.time() > deadline:
            break
        try:
            from planner_app.probe.validate import build_hf_model

            with open(os.path.join(CONFIG_DIR, cfg_name + ".json")) as f:
                hf_config = json.load(f)
            model, vocab = build_hf_model(torch, hf_config, "bf16", "sdpa", "cuda")
            model.eval()
            model.config.use_cache = True
            ids = torch.randint(0, vocab, (b, prompt), device="cuda")
            torch.cuda.synchronize()
            weights_bytes = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            with torch.inference_mode():
                e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
                e0.record()
                out = model(input_ids=ids, use_cache=True)
                nxt = out.logits[:, -1:].argmax(-1)
                e1.record()
                past = out.past_key_values
                del out
                for _ in range(new):
                    out = model(input_ids=nxt, past_key_values=past, use_cache=True)
                    nxt = out.logits[:, -1:].argmax(-1)
                    past = out.past_key_values
                    del out
                e2.record()
                torch.cuda.synchronize()
            rows.append({"config": cfg_name, "batch": b, "prompt_len": prompt, "new_tokens": new,
                         "weights_bytes": weights_bytes, "peak_bytes": torch.cuda.max_memory_allocated(),
                         "end_bytes": torch.cuda.memory_allocated(),
                         "prefill_ms": e0.elapsed_time(e1), "decode_ms": e1.elapsed_time(e2),
                         "decode_ms_per_token": e1.elapsed_time(e2) / new})
            del past, nxt, ids, model
        except Exception as e:  # noqa: BLE001
            rows.append({"config": cfg_name, "batch": b, "error": f"{type(e).__name__}: {str(e)[:200]}"})
        gc.collect()
        torch.cuda.empty_cache()
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="training_runs.json")
    ap.add_argument("--cases", default="all")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--budget-s", type=float, default=520.0, help="stop starting new work after this")
    ap.add_argument("--no-kernels", action="store_true")
    args = ap.parse_args(argv)
    deadline = time.time() + args.budget_s

    import torch
    import transformers

    info = {"command": command_line(),
            "torch": torch.__version__, "transformers": transformers.__version__,
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%d"),
            "device": torch.cuda.get_device_name(0) if args.device == "cuda" else platform.processor()}
    if args.device == "cuda":
        free, total = torch.cuda.mem_get_info()
        info["gpu_total_bytes"] = total
        info["gpu_free_bytes_at_start"] = free
        # Warm cuBLAS/cuBLASLt so their workspaces are in the baseline, as in any real job.
        a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        (a @ a).sum().item()
        a32 = a.float()
        (a32 @ a32).sum().item()
        del a, a32
        torch.cuda.synchronize()
        info["workspace_bytes_after_warmup"] = torch.cuda.memory_allocated()
    result = {"info": info, "cases": [], "errors": []}

    def save():
        write_json(args.out, result)

    wanted = None if args.cases == "all" else set(args.cases.split(","))
    for case in CASES:
        if wanted and case[0] not in wanted:
            continue
        if time.time() > deadline:
            result["errors"].append({"name": case[0], "error": "skipped: time budget"})
            continue
        log("case", case[0])
        try:
            rec = run_case(torch, case, args.device, args.steps)
            result["cases"].append(rec)
            log(f"  peak {rec['peak_bytes'] / 2**30:.2f} GiB  step {rec.get('step_ms_median', 0):.1f} ms")
        except Exception as e:  # noqa: BLE001 - a failed case is data (e.g. OOM), keep going
            result["errors"].append({"name": case[0], "error": f"{type(e).__name__}: {str(e)[:300]}"})
            log("  failed:", type(e).__name__, str(e)[:200])
            traceback.print_exc()
            gc.collect()
            if args.device == "cuda":
                torch.cuda.empty_cache()
        save()
    if args.device == "cuda" and not args.no_kernels:
        for key, fn in (("inference", lambda: inference_runs(torch, deadline + 30)),
                        ("memory_ops", lambda: memory_ops(torch)),
                        ("attention", lambda: attention_kernels(torch, deadline + 40)),
                        ("gemm", lambda: gemm_sweep(torch, deadline + 60))):
            try:
                result[key] = fn()
            except Exception as e:  # noqa: BLE001
                result["errors"].append({"name": key, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            save()
    save()
    for rec in result["cases"]:
        print(f"{rec['name']:38s} peak {rec['peak_bytes'] / 1e9:8.3f} GB  "
              f"step {rec.get('step_ms_median', 0):9.1f} ms")
    for err in result["errors"]:
        print("ERROR", err["name"], err["error"][:150])


if __name__ == "__main__":
    main()
