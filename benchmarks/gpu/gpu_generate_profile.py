"""Where a warm Hugging Face ``model.generate()`` decode token goes on a local GPU, and what fp32
SDPA costs: the data behind the engine's eager-decode model (issue 14).

Part 1, ``generate``: per case (random bf16 weights from tests/data/hf_configs, SDPA, greedy, KV
cache on, eos disabled), one full-length call first (the caching allocator grows the concatenated
DynamicCache during it), then the per-token decode time = (t(n) - t(1)) / (n - 1), the faster of
two calls each. Then ``torch.profiler`` (CPU + CUDA) over one n-token and one 1-token call: the
difference, per decode token, gives the kernel time by class, the kernel count, the number of aten
ops the host dispatched and the host<->device synchronisations (``aten::item`` /
``aten::_local_scalar_dense``).

Part 2, ``sdpa``: ``F.scaled_dot_product_attention`` causal, forward and forward+backward, fp32
and bf16, head sizes 64 and 128 at width 4,096 (as QLoRA's ``prepare_model_for_kbit_training``
runs attention in fp32 when the forward is not autocast), timed with CUDA events, median of 10.

    python -m benchmarks.gpu.gpu_generate_profile --out generate_profile.json
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from benchmarks.gpu import gpu_generate_host as gh  # model building
from benchmarks.gpu import gpu_kernel_profile as kp  # kernel classes
from benchmarks.gpu.bench_io import command_line, kernel_times, write_json  # profiler kernel table

# (config, batch, prompt, new tokens): the six generate-* cases of finetune_runs_h200.json first,
# then shapes not used anywhere before (GQA with biases, a 3B, a long prompt, a large batch).
CASES = [("llama-2-7b", 16, 1024, 64), ("llama-2-7b", 32, 1024, 64), ("llama-2-7b", 64, 1024, 64),
         ("llama-3.2-1b", 16, 2048, 64), ("llama-3.2-1b", 32, 2048, 64), ("llama-3.2-1b", 64, 2048, 64),
         ("qwen2.5-7b", 8, 4096, 64), ("qwen2.5-7b", 48, 1024, 64), ("llama-3.2-3b", 32, 2048, 64),
         ("llama-3.2-1b", 128, 512, 64), ("llama-2-7b", 4, 8192, 64), ("qwen3-0.6b", 64, 1024, 64)]
SYNC_OPS = ("aten::item", "aten::_local_scalar_dense")


def build(torch, config):
    return gh.build(torch, 0, config)


def profile_counts(torch, gen, n):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        gen(n)
        torch.cuda.synchronize()
    events = prof.key_averages()
    kernels = kernel_times(events)  # kernels, memcpy and memset: GPU work
    aten_ops, syncs = 0, 0
    for ev in events:
        if ev.key.startswith("aten::"):
            aten_ops += ev.count
            if ev.key in SYNC_OPS:
                syncs += ev.count if ev.key == "aten::_local_scalar_dense" else 0
    return kernels, aten_ops, syncs


def run_generate(torch, cases):
    res, built = [], {}
    for config, b, p, n in cases:
        if config not in built:
            built.clear()
            torch.cuda.empty_cache()
            built[config] = build(torch, config)
        model, cfg = built[config]
        ids = torch.randint(0, cfg.vocab_size, (b, p), device="cuda")

        def gen(k):
            return gh.generate(model, ids, k)

        def timed(k):
            return gh.generate_ms(torch, model, ids, k)

        rec = {"config": config, "batch": b, "prompt_len": p, "new_tokens": n}
        try:
            with torch.inference_mode():
                torch.cuda.reset_peak_memory_stats()
                gen(n)  # full-length warm-up: the allocator's blocks for the growing cache
                rec["peak_bytes"] = torch.cuda.max_memory_allocated()
                t1 = min(timed(1), timed(1))
                tn = min(timed(n), timed(n))
                rec["warm_ms_per_token"] = (tn - t1) / (n - 1)
                rec["t1_ms"], rec["tn_ms"] = t1, tn
                k = 17
                kn, an, sn = profile_counts(torch, gen, k)
                k1, a1, s1 = profile_counts(torch, gen, 1)
            per = {}
            for name, (ms, cnt) in kn.items():
                ms1, cnt1 = k1.get(name, (0.0, 0))
                d_ms, d_cnt = (ms - ms1) / (k - 1), (cnt - cnt1) / (k - 1)
                if d_cnt > 0 or d_ms > 0:
                    per[name] = (d_ms, d_cnt)
            by_class = {}
            for name, (ms, _) in per.items():
                c = kp.classify(name)
                by_class[c] = by_class.get(c, 0.0) + ms
            rec["kernel_ms_per_token"] = sum(v[0] for v in per.values())
            rec["kernels_per_token"] = sum(v[1] for v in per.values())
            rec["aten_ops_per_token"] = (an - a1) / (k - 1)
            rec["syncs_per_token"] = (sn - s1) / (k - 1)
            rec["by_class_ms_per_token"] = {c: round(v, 4) for c, v in sorted(by_class.items(), key=lambda kv: -kv[1])}
            rec["top_kernels"] = [{"name": nm[:140], "ms_per_token": round(v[0], 4), "calls_per_token": v[1]}
                                  for nm, v in sorted(per.items(), key=lambda kv: -kv[1][0])[:12]]
            rec["layers"] = cfg.num_hidden_layers
            rec["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - a failed case is data
            rec["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
        print({k: v for k, v in rec.items() if k != "top_kernels"}, file=sys.stderr, flush=True)
        res.append(rec)
    built.clear()
    torch.cuda.empty_cache()
    return res


# Host-bound scan: batch 1, 128-token prompt (the GPU's work per token is far below the host's), the
# real widths at 4 and 16 layers; variants isolate grouped-query attention (the 1B with as many KV
# heads as query heads) and cuDNN's SDPA backend (disabled: flash).
HOST_SCAN = [("llama-2-7b", 4, {}), ("llama-2-7b", 16, {}), ("llama-3.2-1b", 4, {}), ("llama-3.2-1b", 16, {}),
             ("llama-3.2-1b", 16, {"num_key_value_heads": 32}), ("llama-3.2-1b", 16, {"_no_cudnn": True}),
             ("qwen2.5-7b", 16, {}), ("qwen3-0.6b", 16, {}), ("llama-3.2-3b", 16, {})]


def run_host_scan(torch):
    import cProfile
    import io
    import pstats

    res = []
    for config, layers, extra in HOST_SCAN:
        extra = dict(extra)
        no_cudnn = extra.pop("_no_cudnn", False)
        model, cfg = gh.build(torch, layers, config, changes=extra)
        ids = torch.randint(0, cfg.vocab_size, (1, 128), device="cuda")
        torch.backends.cuda.enable_cudnn_sdp(not no_cudnn)

        def timed(k):
            return gh.generate_ms(torch, model, ids, k)

        with torch.inference_mode():
            timed(33)
            per = []
            for _ in range(3):
                per.append((timed(33) - timed(1)) / 32)
            rec = {"config": config, "layers": layers, "changes": extra, "cudnn_sdp": not no_cudnn,
                   "ms_per_token": sorted(per)}
            if layers == 16 and config in ("llama-2-7b", "llama-3.2-1b") and not extra and not no_cudnn:
                pr = cProfile.Profile()
                pr.enable()
                timed(17)
                pr.disable()
                s = io.StringIO()
                pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
                rec["cprofile_tottime_17_tokens"] = s.getvalue()[-9000:]
        torch.backends.cuda.enable_cudnn_sdp(True)
        print({k: v for k, v in rec.items() if not k.startswith("cprofile")}, file=sys.stderr, flush=True)
        res.append(rec)
        model = None  # drop the references (a closure above still names them)
        torch.cuda.empty_cache()
    return res


# First calls: every decode step of a call whose prompt length was never seen meets new key/value
# lengths; with SDPA's cuDNN backend (PyTorch's first choice on sm90 since 2.5) each new shape
# builds a cuDNN graph. Cold = a prompt length not used before in the process; warm = the same call
# again; with cuDNN's backend on and off.
COLD = [("llama-3.2-1b", 16, 1024), ("llama-2-7b", 16, 1024), ("qwen2.5-0.5b", 64, 512)]


def run_cold(torch):
    res = []
    for config, b, p in COLD:
        model, cfg = build(torch, config)
        for cudnn in (True, False):
            torch.backends.cuda.enable_cudnn_sdp(cudnn)
            rec = {"config": config, "batch": b, "cudnn_sdp": cudnn, "cold_ms_per_token": [], "warm_ms_per_token": []}
            with torch.inference_mode():
                for i in range(3):
                    plen = p + 50 * i + (0 if cudnn else 200)  # lengths this process has not seen

                    def timed(k, plen=plen):  # a new prompt each call, of a length not used before
                        prompt = torch.randint(0, cfg.vocab_size, (b, plen), device="cuda")
                        return gh.generate_ms(torch, model, prompt, k)

                    t1 = timed(1)  # the prefill's shape only: the decode lengths stay new
                    cold = (timed(33) - t1) / 32
                    warm = (timed(33) - timed(1)) / 32
                    rec["cold_ms_per_token"].append(cold)
                    rec["warm_ms_per_token"].append(warm)
            print(rec, file=sys.stderr, flush=True)
            res.append(rec)
        torch.backends.cuda.enable_cudnn_sdp(True)
        model = None  # drop the references (a closure above still names them)
        torch.cuda.empty_cache()
    return res


def run_sdpa(torch):
    import torch.nn.functional as F

    res = []
    for dtype in (torch.float32, torch.bfloat16):
        for d in (64, 128):
            for b, s in ((4, 2048), (2, 4096), (8, 1024)):
                h = 4096 // d
                q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
                go = torch.randn(b, h, s, d, device="cuda", dtype=dtype)
                ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
                fwd, both = [], []
                for i in range(13):
                    ev[0].record()
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    ev[1].record()
                    o.backward(go)
                    ev[2].record()
                    torch.cuda.synchronize()
                    if i >= 3:
                        fwd.append(ev[0].elapsed_time(ev[1]))
                        both.append(ev[0].elapsed_time(ev[2]))
                    q.grad = k.grad = v.grad = None
                flops_fwd = 4 * b * h * s * s * d / 2  # causal: half of QK^T and PV
                rec = {"dtype": str(dtype).replace("torch.", ""), "head_dim": d, "heads": h, "batch": b, "seq": s,
                       "fwd_ms": statistics.median(fwd), "fwd_bwd_ms": statistics.median(both),
                       "fwd_tflops": flops_fwd / statistics.median(fwd) / 1e9}
                rec["bwd_over_fwd"] = (rec["fwd_bwd_ms"] - rec["fwd_ms"]) / rec["fwd_ms"]
                print(rec, file=sys.stderr, flush=True)
                res.append(rec)
                del q, k, v, go, o
    return res


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="generate_profile.json")
    ap.add_argument("--parts", default="sdpa,generate")
    args = ap.parse_args()
    import torch
    import transformers

    info = {"command": command_line(), "torch": torch.__version__,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "cpu": _cpu_model(), "cpus": os.cpu_count()}
    out = {"info": info}
    parts = args.parts.split(",")

    def save():
        write_json(args.out, out)

    if "sdpa" in parts:
        out["sdpa"] = run_sdpa(torch)
        save()
    if "cold" in parts:
        out["cold"] = run_cold(torch)
        save()
    if "host" in parts:
        out["host_scan"] = run_host_scan(torch)
        save()
    if "generate" in parts:
        out["generate"] = run_generate(torch, CASES)
        save()


if __name__ == "__main__":
    main()
