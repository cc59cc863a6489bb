"""Prefill throughput against chunk size on one GPU: one prompt chunk of C tokens through a Llama-shaped
model in plain PyTorch (issue 15's ground truth for the prefill side of a serving step, without an engine's
CPU overhead): per layer RMSNorm, the fused QKV GEMM, rotary on q and k, causal SDPA of the chunk over itself
(FlashAttention, grouped-query), the output projection and residual, RMSNorm, the fused gate/up GEMM, SiLU x
up, the down projection and residual; the final norm and the output layer for the chunk's last token. Random
bf16 weights from a Hugging Face ``config.json`` (tests/data/hf_configs/, ``build`` of gpu_decode_runs.py).

Two timings per chunk: ``graph_ms``, the forward captured as a CUDA graph and replayed between CUDA events
(the GPU's time), and ``eager_ms``, the forward launched op by op as an engine runs a prefill step that is
larger than its CUDA-graph sizes (the host's launches included), median of ``--reps``. Two forms of the
layer: ``unfused``, each norm, rotary and SwiGLU op its own kernel, and ``fused`` (``fused_graph_ms``,
``fused_eager_ms``), as the serving engines run it: weights in ``nn.Linear``'s (out, in) layout and the
element-wise work around each GEMM fused by ``torch.compile`` (vLLM compiles its layers with Inductor too),
the GEMMs cuBLAS and attention SDPA.

    python -m benchmarks.gpu.gpu_prefill_chunks --config llama-3.1-8b --out prefill_chunks.json
    python -m benchmarks.gpu.gpu_prefill_chunks --config llama-3.1-8b --profile 2048 8192 --out ...   # + kernels

``accuracy/prefill_accuracy.py`` compares the serving step's prefill charge with these; nothing is fitted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from benchmarks.gpu.bench_io import command_line, graph_median_ms, write_json
from benchmarks.gpu.gpu_decode_runs import CONFIG_DIR, build, profile_kernels, rmsnorm, to_linear_layout

CHUNKS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def prefill(torch, m, x, cos, sin):
    """One chunk's forward: ``x`` (C, h) embeddings; returns the last token's logits."""
    F = torch.nn.functional
    C = x.shape[0]
    heads, kvh, d = m["heads"], m["kvh"], m["d"]
    for lw in m["layers"]:
        xn = rmsnorm(torch, x, lw["ln1"])
        q, k, v = (xn @ lw["qkv"]).split([heads * d, kvh * d, kvh * d], dim=-1)
        q = q.view(C, heads, d).transpose(0, 1)
        k = k.view(C, kvh, d).transpose(0, 1)
        v = v.view(C, kvh, d).transpose(0, 1)
        q = q * cos + torch.roll(q, d // 2, -1) * sin  # rotary as element-wise work of its size
        k = k * cos + torch.roll(k, d // 2, -1) * sin
        a = F.scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), is_causal=True,
                                           enable_gqa=True)
        x = x + a.squeeze(0).transpose(0, 1).reshape(C, heads * d) @ lw["o"]
        xn = rmsnorm(torch, x, lw["ln2"])
        gate, up = (xn @ lw["gu"]).chunk(2, dim=-1)
        x = x + (F.silu(gate) * up) @ lw["down"]
    return rmsnorm(torch, x[-1:], m["norm"]) @ m["head"]


def fused_prefill_fn(torch, m):
    """``prefill`` with the weights in (out, in) layout and the element-wise work fused by torch.compile."""
    F = torch.nn.functional
    heads, kvh, d, h, eps = m["heads"], m["kvh"], m["d"], m["h"], m["eps"]

    def rope(t, cos, sin):
        t1, t2 = t.chunk(2, dim=-1)
        return t * cos + torch.cat((-t2, t1), dim=-1) * sin

    def pre(x, ln1, wqkv, cos, sin):
        C = x.shape[0]
        q, k, v = F.linear(F.rms_norm(x, (h,), ln1, eps), wqkv).split([heads * d, kvh * d, kvh * d], dim=-1)
        q, k = q.view(C, heads, d).transpose(0, 1), k.view(C, kvh, d).transpose(0, 1)
        return rope(q, cos, sin), rope(k, cos, sin), v.view(C, kvh, d).transpose(0, 1)

    def post(x, a, wo, ln2, wgu, wdown):
        x = x + F.linear(a, wo)
        gate, up = F.linear(F.rms_norm(x, (h,), ln2, eps), wgu).chunk(2, dim=-1)
        return x + F.linear(F.silu(gate) * up, wdown)

    def head(x, norm, w):
        return F.linear(F.rms_norm(x, (h,), norm, eps), w)

    pre_c, post_c, head_c = (torch.compile(f, dynamic=True) for f in (pre, post, head))
    ml = to_linear_layout(m)

    def run(x, cos, sin):
        C = x.shape[0]
        for lw in ml["layers"]:
            q, k, v = pre_c(x, lw["ln1"], lw["qkv"], cos, sin)
            a = F.scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), is_causal=True,
                                               enable_gqa=True)
            x = post_c(x, a.squeeze(0).transpose(0, 1).reshape(C, heads * d), lw["o"], lw["ln2"], lw["gu"],
                       lw["down"])
        return head_c(x[-1:], ml["norm"], ml["head"])

    return run


def _eager_ms(torch, fn, reps: int) -> float:
    walls = []
    for _ in range(reps + 2):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(walls[2:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="llama-3.1-8b")
    ap.add_argument("--layers", type=int, default=0, help="0: the config's")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default="prefill_chunks.json")
    ap.add_argument("--profile", type=int, nargs="*", default=(),
                    help="chunks whose fused forward is also profiled kernel by kernel (torch.profiler)")
    args = ap.parse_args()
    import torch

    with open(os.path.join(CONFIG_DIR, args.config + ".json")) as f:
        cfg = json.load(f)
    layers = args.layers or cfg["num_hidden_layers"]
    m = build(torch, cfg, layers, "cuda", torch.bfloat16)
    if m["moe"]:
        raise SystemExit("dense configs only")
    info = {"command": command_line(), "config": args.config, "layers": layers,
            "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "timing": "graph: CUDA graph replayed between CUDA events, median of 3 runs; eager: host wall time "
                      f"per forward with a sync, median of {args.reps}"}
    torch._dynamo.config.cache_size_limit = 64
    fused = fused_prefill_fn(torch, m)
    points = []
    for C in CHUNKS:
        rec = {"chunk": C}
        try:
            x = torch.randn(C, m["h"], device="cuda", dtype=torch.bfloat16) * 0.02
            cos = torch.randn(C, m["d"], device="cuda", dtype=torch.bfloat16)
            sin = torch.randn(C, m["d"], device="cuda", dtype=torch.bfloat16)
            for key, fn in (("", lambda: prefill(torch, m, x, cos, sin)), ("fused_", lambda: fused(x, cos, sin))):
                fn()  # compiles the fused form for this chunk
                rec[key + "graph_ms"] = graph_median_ms(torch, fn, reps=args.reps)
                rec[key + "eager_ms"] = _eager_ms(torch, fn, args.reps)
            if C in args.profile:
                rec["fused_profile"] = profile_kernels(torch, lambda: fused(x, cos, sin), top=40)
            x = cos = sin = None  # drop the references (a closure above still names them)
        except Exception as e:  # noqa: BLE001 - a failed point is data
            rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        points.append(rec)
        print(rec, flush=True)
        torch.cuda.empty_cache()
    write_json(args.out, {"info": info, "points": points})


if __name__ == "__main__":
    main()
