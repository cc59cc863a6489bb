"""Decode step time of a Llama-shaped model on one GPU: a static KV cache and one decode step
captured as a CUDA graph, in plain PyTorch (issue 15's ground truth for TPOT, without a serving
engine's CPU overhead).

Per layer, as a serving engine runs a decode step: RMSNorm, the fused QKV GEMM, rotary on q and k,
the new K/V written into the static cache, SDPA of one query per sequence over the whole cached
context (grouped-query, ``enable_gqa``), the output projection and residual, RMSNorm, the fused
gate/up GEMM, SiLU x up, the down projection and residual; then the final norm, the output layer
and a greedy argmax. Random bf16 weights from a Hugging Face ``config.json``
(tests/data/hf_configs/); the context is the number of cached tokens every sequence attends to.
Timing: the graph replayed ``--reps`` times between CUDA events after warm-up; the median of
``--repeats`` such runs, per step.

``--impl eager`` runs each of those ops as its own PyTorch kernel (about 25 kernels per layer).
``--impl fused`` runs the layer as a serving engine does (vLLM's fused_add_rms_norm, rotary and
silu_and_mul kernels; weights in ``nn.Linear``'s (out, in) layout): the norm, rotary and SwiGLU
element-wise work is fused by ``torch.compile`` (the GEMMs stay cuBLAS calls, attention SDPA), then
the step is captured as a CUDA graph as before. Each point records the kernels one step launches
(``torch.profiler``, one uncaptured step).

    python benchmarks/gpu_decode_runs.py --config llama-3.1-8b --out decode_runs.json
    python benchmarks/gpu_decode_runs.py --device cpu --config tinyllama-1.1b --layers 2 --grid 1:64,2:128
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import write_json  # noqa: E402  (all-or-nothing JSON write)
CONFIG_DIR = os.path.join(HERE, "..", "tests", "data", "hf_configs")
# (batch, cached context) points: batch 1-256, context 1K-32K, within a KV cache of about 512K tokens
GRID = [(1, 1024), (1, 8192), (1, 32768), (8, 4096), (16, 1024), (16, 8192), (16, 32768), (32, 4096),
        (64, 1024), (64, 8192), (128, 1024), (128, 4096), (256, 1024), (256, 2048)]


def build(torch, cfg: dict, layers: int, device: str, dtype):
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    kvh = cfg.get("num_key_value_heads") or heads
    d = cfg.get("head_dim") or h // heads
    f, vocab = cfg["intermediate_size"], cfg["vocab_size"]
    g = torch.Generator(device=device).manual_seed(0)

    def w(*shape):
        return (torch.randn(*shape, generator=g, device=device, dtype=torch.float32) * 0.02).to(dtype)

    layer_ws = [dict(ln1=torch.ones(h, device=device, dtype=dtype), qkv=w(h, (heads + 2 * kvh) * d),
                     o=w(heads * d, h), ln2=torch.ones(h, device=device, dtype=dtype), gu=w(h, 2 * f), down=w(f, h))
                for _ in range(layers)]
    return dict(h=h, heads=heads, kvh=kvh, d=d, f=f, vocab=vocab, layers=layer_ws,
                norm=torch.ones(h, device=device, dtype=dtype), head=w(h, vocab), embed=w(vocab, h))


def to_linear_layout(m):
    """The same weights transposed to ``nn.Linear``'s (out, in) layout (x @ W.T, cuBLAS's TN GEMM)."""
    m = dict(m)
    m["layers"] = [{k: (t.t().contiguous() if t.dim() == 2 else t) for k, t in lw.items()} for lw in m["layers"]]
    m["head"] = m["head"].t().contiguous()
    return m


def fused_step_fn(torch, m):
    """decode_step with the element-wise work around each GEMM fused by torch.compile."""
    F = torch.nn.functional
    heads, kvh, d, h = m["heads"], m["kvh"], m["d"], m["h"]

    def rope(t, cos, sin):
        t1, t2 = t.chunk(2, dim=-1)
        return t * cos + torch.cat((-t2, t1), dim=-1) * sin

    def pre(x, ln1, wqkv, cos, sin):
        qkv = F.linear(F.rms_norm(x, (h,), ln1, 1e-5), wqkv)
        B = x.shape[0]
        q, k, v = qkv.split([heads * d, kvh * d, kvh * d], dim=-1)
        return (rope(q.view(B, heads, 1, d), cos, sin), rope(k.view(B, kvh, 1, d), cos, sin),
                v.reshape(B, kvh, 1, d))

    def post(x, a, wo, ln2, wgu, wdown):
        x = x + F.linear(a, wo)
        gate, up = F.linear(F.rms_norm(x, (h,), ln2, 1e-5), wgu).chunk(2, dim=-1)
        return x + F.linear(F.silu(gate) * up, wdown)

    def head(x, norm, w):
        return F.linear(F.rms_norm(x, (h,), norm, 1e-5), w).argmax(-1)

    pre_c, post_c, head_c = (torch.compile(f, dynamic=True) for f in (pre, post, head))

    def step(torch_, m_, ids, pos, cos, sin, k_cache, v_cache, ctx):
        B = ids.shape[0]
        x = m_["embed"][ids]
        for li, lw in enumerate(m_["layers"]):
            q, k, v = pre_c(x, lw["ln1"], lw["qkv"], cos, sin)
            kc, vc = k_cache[li, :B, :, :ctx], v_cache[li, :B, :, :ctx]
            kc.index_copy_(2, pos.view(1), k)
            vc.index_copy_(2, pos.view(1), v)
            a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True)
            x = post_c(x, a.reshape(B, heads * d), lw["o"], lw["ln2"], lw["gu"], lw["down"])
        return head_c(x, m_["norm"], m_["head"])

    return step


def count_kernels(torch, fn, *a):
    """CUDA kernels one uncaptured call of ``fn`` launches (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*a)
        torch.cuda.synchronize()
    return int(sum(ev.count for ev in prof.key_averages() if (getattr(ev, "self_device_time_total", 0) or 0) > 0))


def rmsnorm(torch, x, weight, eps=1e-5):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def decode_step(torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx):
    """One decode step for every sequence: ids (B,), the new position ``pos`` (a 0-d tensor)."""
    F = torch.nn.functional
    B = ids.shape[0]
    heads, kvh, d = m["heads"], m["kvh"], m["d"]
    x = m["embed"][ids]
    for li, lw in enumerate(m["layers"]):
        xn = rmsnorm(torch, x, lw["ln1"])
        qkv = xn @ lw["qkv"]
        q, k, v = qkv.split([heads * d, kvh * d, kvh * d], dim=-1)
        q = q.view(B, heads, 1, d)
        k = k.view(B, kvh, 1, d)
        v = v.view(B, kvh, 1, d)
        q = q * cos + torch.roll(q, d // 2, -1) * sin  # rotary as elementwise work of its size
        k = k * cos + torch.roll(k, d // 2, -1) * sin
        kc, vc = k_cache[li, :B, :, :ctx], v_cache[li, :B, :, :ctx]
        kc.index_copy_(2, pos.view(1), k)
        vc.index_copy_(2, pos.view(1), v)
        a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True)
        x = x + a.reshape(B, heads * d) @ lw["o"]
        xn = rmsnorm(torch, x, lw["ln2"])
        gate, up = (xn @ lw["gu"]).chunk(2, dim=-1)
        x = x + (F.silu(gate) * up) @ lw["down"]
    logits = rmsnorm(torch, x, m["norm"]) @ m["head"]
    return logits.argmax(-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="llama-3.1-8b")
    ap.add_argument("--out", default="decode_runs.json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--layers", type=int, default=0, help="0: the config's")
    ap.add_argument("--grid", default="", help="batch:context,... (default: the built-in grid)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=300)
    ap.add_argument("--impl", choices=("eager", "fused"), default="eager")
    args = ap.parse_args()
    import torch

    t_start = time.time()
    with open(os.path.join(CONFIG_DIR, args.config + ".json")) as f:
        cfg = json.load(f)
    layers = args.layers or cfg["num_hidden_layers"]
    grid = [tuple(int(v) for v in p.split(":")) for p in args.grid.split(",")] if args.grid else GRID
    cuda = args.device == "cuda"
    dtype = torch.bfloat16 if cuda else torch.float32
    m = build(torch, cfg, layers, args.device, dtype)
    step_fn = decode_step
    if args.impl == "fused":
        m = to_linear_layout(m)
        step_fn = fused_step_fn(torch, m)
    max_b = max(b for b, _ in grid)
    max_tokens = max(b * c for b, c in grid)
    max_ctx = max(c for _, c in grid)
    # one cache buffer for the largest batch x context; each point views its part
    k_buf = torch.zeros(layers * max_tokens * m["kvh"] * m["d"], device=args.device, dtype=dtype)
    v_buf = torch.zeros_like(k_buf)
    info = {"command": "python " + " ".join(sys.argv), "torch": torch.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "config": args.config, "layers": layers, "dtype": str(dtype), "impl": args.impl,
            "device": torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu",
            "timing": f"CUDA graph of one decode step replayed {args.reps}x between CUDA events; median of "
                      f"{args.repeats}" if cuda else "CPU wall time (control flow only)",
            "weights_bytes": sum(t.numel() * t.element_size() for lw in m["layers"] for t in lw.values())
            + (m["head"].numel() + m["embed"].numel()) * m["head"].element_size()}
    points = []
    for b, ctx in grid:
        if time.time() - t_start > args.budget_s:
            points.append({"batch": b, "context": ctx, "status": "skipped (budget)"})
            continue
        n = layers * b * m["kvh"] * ctx * m["d"]
        k_cache = k_buf[:n].view(layers, b, m["kvh"], ctx, m["d"])
        v_cache = v_buf[:n].view(layers, b, m["kvh"], ctx, m["d"])
        ids = torch.randint(0, m["vocab"], (b,), device=args.device)
        pos = torch.tensor(ctx - 1, device=args.device)
        cos = torch.ones(m["d"], device=args.device, dtype=dtype)
        sin = torch.zeros(m["d"], device=args.device, dtype=dtype)
        try:
            with torch.no_grad():
                if cuda:
                    s = torch.cuda.Stream()
                    s.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(s):
                        for _ in range(3):
                            step_fn(torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx)
                    torch.cuda.current_stream().wait_stream(s)
                    kernels = count_kernels(torch, step_fn, torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        step_fn(torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx)
                    runs = []
                    for _ in range(args.repeats):
                        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        e0.record()
                        for _ in range(args.reps):
                            graph.replay()
                        e1.record()
                        torch.cuda.synchronize()
                        runs.append(e0.elapsed_time(e1) / args.reps)
                    del graph
                else:
                    runs = []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        step_fn(torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx)
                        runs.append((time.perf_counter() - t0) * 1e3)
                    kernels = None
            points.append({"batch": b, "context": ctx, "step_ms": statistics.median(runs), "runs_ms": runs,
                           "kv_cache_bytes": 2 * layers * b * m["kvh"] * ctx * m["d"] * k_buf.element_size(),
                           "kernels_per_step": kernels,
                           "status": "ok"})
            print(f"batch {b:4d} context {ctx:6d}: {points[-1]['step_ms']:.3f} ms", file=sys.stderr, flush=True)
        except Exception as e:  # noqa: BLE001 - a failed point is data
            points.append({"batch": b, "context": ctx, "status": f"error: {type(e).__name__}: {str(e)[:300]}"})
            print("failed", b, ctx, e, file=sys.stderr, flush=True)
        if cuda:
            torch.cuda.synchronize()
    info["wall_s"] = round(time.time() - t_start, 1)
    write_json(args.out, {"info": info, "points": points})
    _ = max_b, max_ctx


if __name__ == "__main__":
    main()
