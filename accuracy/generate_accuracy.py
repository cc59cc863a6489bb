"""Hugging Face eager decoding (``--mode inference``: ``generate()`` or a hand-written loop) against
the H200 measurements: the engine's decode time per token, warm (key lengths met before) and first
call (new lengths: SDPA's cuDNN graphs built), and its GPU part against the kernel time the profiler
summed.

    python -m accuracy.generate_accuracy        # prints markdown tables

Data (tests/data/, each with the command that made it): generate_profile_h200.json (12 warm cases,
torch.profiler kernel time), generate_warm_h200.json (6 cases: first and warm calls, an earlier
device session), generate_cold_h200.json (cold/warm with cuDNN's SDPA on and off),
training_runs_h200.json "inference" (a hand-written loop, first calls).
"""
from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data")


def _load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


def estimate(db, config, batch, prompt, new, api="generate", cudnn=True):
    from planner_app.service.estimate import estimate_json

    opts = {"mode": "inference", "model": os.path.join(DATA, "hf_configs", config + ".json"), "gpu": "h200-sxm",
            "batch": batch, "prompt_len": prompt, "new_tokens": new, "weights_dtype": "bf16", "kv_dtype": "bf16",
            "attention": "sdpa" if cudnn else "flash", "inference_api": api}
    return estimate_json(opts, db)["time"]


def rows():
    """(source, config, batch, prompt, new, call, measured ms, estimate ms, measured kernel ms or None,
    estimate GPU ms)."""
    from planner_app.service.catalog import open_catalog

    db = open_catalog()
    out = []
    for r in _load("generate_profile_h200.json")["generate"]:
        if r.get("status") != "ok":
            continue
        t = estimate(db, r["config"], r["batch"], r["prompt_len"], r["new_tokens"])
        # "Command Buffer Full" is the profiler marking a host blocked on a full launch queue, not a kernel
        cbf = sum(k["ms_per_token"] for k in r["top_kernels"] if k["name"] == "Command Buffer Full")
        out.append(("profile", r["config"], r["batch"], r["prompt_len"], r["new_tokens"], "warm",
                    r["warm_ms_per_token"], t["decode_s_per_token"] * 1e3, r["kernel_ms_per_token"] - cbf,
                    t["decode_gpu_s_per_token"] * 1e3))
    for r in _load("generate_warm_h200.json")["cases"]:
        t = estimate(db, r["config"], r["batch"], r["prompt_len"], r["new_tokens"])
        out.append(("warm-file", r["config"], r["batch"], r["prompt_len"], r["new_tokens"], "warm",
                    r["warm_ms_per_token"], t["decode_s_per_token"] * 1e3, None, t["decode_gpu_s_per_token"] * 1e3))
        out.append(("warm-file", r["config"], r["batch"], r["prompt_len"], r["new_tokens"], "first",
                    r["first_call_ms_per_token"], t["decode_s_per_token_first_call"] * 1e3, None,
                    t["decode_gpu_s_per_token"] * 1e3))
    prompts = {"llama-3.2-1b": 1024, "llama-2-7b": 1024, "qwen2.5-0.5b": 512}  # benchmarks/gpu/gpu_generate_profile.py COLD
    for r in _load("generate_cold_h200.json")["cold"]:
        t = estimate(db, r["config"], r["batch"], prompts[r["config"]], 33, cudnn=r["cudnn_sdp"])
        tag = "cuDNN" if r["cudnn_sdp"] else "no cuDNN"
        out.append(("cold-file", r["config"], r["batch"], prompts[r["config"]], 33, f"first ({tag})",
                    statistics.median(r["cold_ms_per_token"]), t["decode_s_per_token_first_call"] * 1e3, None,
                    t["decode_gpu_s_per_token"] * 1e3))
        out.append(("cold-file", r["config"], r["batch"], prompts[r["config"]], 33, f"warm ({tag})",
                    statistics.median(r["warm_ms_per_token"]), t["decode_s_per_token"] * 1e3, None,
                    t["decode_gpu_s_per_token"] * 1e3))
    for r in _load("training_runs_h200.json")["inference"]:
        t = estimate(db, r["config"], r["batch"], r["prompt_len"], r["new_tokens"], api="forward-loop")
        out.append(("hand-loop", r["config"], r["batch"], r["prompt_len"], r["new_tokens"], "first",
                    r["decode_ms_per_token"], t["decode_s_per_token_first_call"] * 1e3, None,
                    t["decode_gpu_s_per_token"] * 1e3))
    return out


def main() -> int:
    rs = rows()
    print("| data | model | batch | prompt + new | call | measured ms/token | estimate ms/token | error | "
          "GPU kernels measured ms | engine GPU ms |")
    print("|---|---|---:|---|---|---:|---:|---:|---:|---:|")
    errs, gpu_errs = [], []
    for src, cfg, b, p, n, call, meas, est, kmeas, kest in rs:
        e = est / meas - 1
        errs.append(abs(e))
        kcol = f"{kmeas:.1f}" if kmeas is not None else ""
        if kmeas is not None:
            gpu_errs.append(abs(kest / kmeas - 1))
        print(f"| {src} | {cfg} | {b} | {p} + {n} | {call} | {meas:.1f} | {est:.1f} | {e:+.1%} | {kcol} | {kest:.1f} |")
    within = sum(e <= 0.15 for e in errs)
    print(f"\n{len(errs)} points: median |error| {statistics.median(errs):.1%}, {within} within 15%, largest "
          f"{max(errs):.1%}; GPU part against the profiler's kernel time: median |error| "
          f"{statistics.median(gpu_errs):.1%}, largest {max(gpu_errs):.1%} ({len(gpu_errs)} points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
