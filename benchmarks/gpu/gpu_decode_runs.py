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

    python -m benchmarks.gpu.gpu_decode_runs --config llama-3.1-8b --out decode_runs.json
    python -m benchmarks.gpu.gpu_decode_runs --device cpu --config tinyllama-1.1b --layers 2 --grid 1:64,2:128
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

from benchmarks.gpu.bench_io import command_line, graph_replay_ms, kernel_times, write_json

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG_DIR = os.path.join(HERE, "..", "..", "tests", "data", "hf_configs")
# (batch, cached context) points: batch 1-256, context 1K-32K, within a KV cache of about 512K tokens
GRID = [(1, 1024), (1, 8192), (1, 32768), (8, 4096), (16, 1024), (16, 8192), (16, 32768), (32, 4096),
        (64, 1024), (64, 8192), (128, 1024), (128, 4096), (256, 1024), (256, 2048)]


def moe_shape(cfg: dict):
    """(experts, top-k, expert width, normalise the top-k weights) of a mixture-of-experts config whose
    every layer is routed (qwen3_moe, mixtral); None for a dense one."""
    e = cfg.get("num_experts") or cfg.get("num_local_experts")
    if not e:
        return None
    if cfg.get("mlp_only_layers") or cfg.get("decoder_sparse_step", 1) != 1:
        raise SystemExit("only configs whose every layer is a routed MoE are supported")
    f = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
    # Mixtral renormalises its top-2 (softmax over the chosen logits); Qwen3-MoE when norm_topk_prob
    return e, cfg["num_experts_per_tok"], f, bool(cfg.get("norm_topk_prob", cfg.get("model_type") == "mixtral"))


def build(torch, cfg: dict, layers: int, device: str, dtype):
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    kvh = cfg.get("num_key_value_heads") or heads
    d = cfg.get("head_dim") or h // heads
    f, vocab = cfg["intermediate_size"], cfg["vocab_size"]
    moe = moe_shape(cfg)
    qk_norm = cfg.get("model_type") in ("qwen3", "qwen3_moe")  # per-head RMSNorm of q and k (Qwen3)
    g = torch.Generator(device=device).manual_seed(0)

    def w(*shape):
        return (torch.randn(*shape, generator=g, device=device, dtype=torch.float32) * 0.02).to(dtype)

    def layer():
        lw = dict(ln1=torch.ones(h, device=device, dtype=dtype), qkv=w(h, (heads + 2 * kvh) * d),
                  o=w(heads * d, h), ln2=torch.ones(h, device=device, dtype=dtype))
        if qk_norm:
            lw.update(qn=torch.ones(d, device=device, dtype=dtype), kn=torch.ones(d, device=device, dtype=dtype))
        if moe:
            e, _, fe, _ = moe
            # experts in (E, out, in) layout, as the grouped GEMM takes them transposed
            lw.update(router=w(e, h), egu=w(e, 2 * fe, h), edown=w(e, h, fe))
        else:
            lw.update(gu=w(h, 2 * f), down=w(f, h))
        return lw

    return dict(h=h, heads=heads, kvh=kvh, d=d, f=f, vocab=vocab, layers=[layer() for _ in range(layers)],
                moe=moe, qk_norm=qk_norm, eps=cfg.get("rms_norm_eps", 1e-5),
                norm=torch.ones(h, device=device, dtype=dtype), head=w(h, vocab), embed=w(vocab, h))


def to_linear_layout(m):
    """The same weights transposed to ``nn.Linear``'s (out, in) layout (x @ W.T, cuBLAS's TN GEMM)."""
    m = dict(m)
    keep = ("router", "egu", "edown")  # already (out, in)
    m["layers"] = [{k: (t.t().contiguous() if t.dim() == 2 and k not in keep else t) for k, t in lw.items()}
                   for lw in m["layers"]]
    m["head"] = m["head"].t().contiguous()
    return m


def fused_step_fn(torch, m):
    """decode_step with the element-wise work around each GEMM fused by torch.compile. A routed MoE
    layer (qwen3_moe, mixtral) runs as vLLM's fused MoE does: router GEMM, softmax + top-k, the
    token-expert pairs sorted by expert, one grouped GEMM (``torch._grouped_mm``, CUTLASS on sm90) for
    gate-up and one for down over the touched experts only, SwiGLU between, and the weighted sum back
    per token."""
    F = torch.nn.functional
    heads, kvh, d, h, eps = m["heads"], m["kvh"], m["d"], m["h"], m["eps"]
    moe = m["moe"]

    def rope(t, cos, sin):
        t1, t2 = t.chunk(2, dim=-1)
        return t * cos + torch.cat((-t2, t1), dim=-1) * sin

    def pre(x, ln1, wqkv, cos, sin, qn=None, kn=None):
        qkv = F.linear(F.rms_norm(x, (h,), ln1, eps), wqkv)
        B = x.shape[0]
        q, k, v = qkv.split([heads * d, kvh * d, kvh * d], dim=-1)
        q, k = q.view(B, heads, 1, d), k.view(B, kvh, 1, d)
        if qn is not None:
            q, k = F.rms_norm(q, (d,), qn, eps), F.rms_norm(k, (d,), kn, eps)
        return rope(q, cos, sin), rope(k, cos, sin), v.reshape(B, kvh, 1, d)

    def post(x, a, wo, ln2, wgu, wdown):
        x = x + F.linear(a, wo)
        gate, up = F.linear(F.rms_norm(x, (h,), ln2, eps), wgu).chunk(2, dim=-1)
        return x + F.linear(F.silu(gate) * up, wdown)

    def route(x, a, wo, ln2, wr):
        x = x + F.linear(a, wo)
        xn = F.rms_norm(x, (h,), ln2, eps)
        p = torch.softmax(F.linear(xn, wr).float(), dim=-1)
        topv, topi = p.topk(moe[1], dim=-1)
        if moe[3]:
            topv = topv / topv.sum(-1, keepdim=True)
        flat = topi.reshape(-1)
        order = flat.argsort()
        counts = torch.zeros(moe[0], device=x.device, dtype=torch.int32).scatter_add_(
            0, flat, torch.ones_like(flat, dtype=torch.int32))
        tok = order // moe[1]
        return x, xn[tok], tok, topv.reshape(-1)[order], counts.cumsum(0, dtype=torch.int32)

    def swiglu(gu):
        gate, up = gu.chunk(2, dim=-1)
        return F.silu(gate) * up

    def combine(x, y, tok, wts):
        return x.index_add(0, tok, y * wts[:, None].to(y.dtype))

    def head(x, norm, w):
        return F.linear(F.rms_norm(x, (h,), norm, eps), w).argmax(-1)

    pre_c, post_c, head_c, route_c, swiglu_c, combine_c = (
        torch.compile(f, dynamic=True) for f in (pre, post, head, route, swiglu, combine))

    def step(torch_, m_, ids, pos, cos, sin, k_cache, v_cache, ctx):
        B = ids.shape[0]
        x = m_["embed"][ids]
        for li, lw in enumerate(m_["layers"]):
            q, k, v = pre_c(x, lw["ln1"], lw["qkv"], cos, sin, lw.get("qn"), lw.get("kn"))
            kc, vc = k_cache[li, :B, :, :ctx], v_cache[li, :B, :, :ctx]
            kc.index_copy_(2, pos.view(1), k)
            vc.index_copy_(2, pos.view(1), v)
            a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True).reshape(B, heads * d)
            if moe:
                x, xs, tok, wts, offs = route_c(x, a, lw["o"], lw["ln2"], lw["router"])
                y = torch._grouped_mm(swiglu_c(torch._grouped_mm(xs, lw["egu"].transpose(-2, -1), offs=offs)),
                                      lw["edown"].transpose(-2, -1), offs=offs)
                x = combine_c(x, y, tok, wts)
            else:
                x = post_c(x, a, lw["o"], lw["ln2"], lw["gu"], lw["down"])
        return head_c(x, m_["norm"], m_["head"])

    return step


def profile_kernels(torch, fn, *a, top=30):
    """Device time of each kernel of one uncaptured call of ``fn`` (torch.profiler): the count and the
    total in us, and the ``top`` kernels by time as (name, calls, total us)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*a)
        torch.cuda.synchronize()
    ev = sorted(kernel_times(prof.key_averages()).items(), key=lambda kv: -kv[1][0])
    return {"kernels": int(sum(c for _k, (_ms, c) in ev)), "kernel_us": sum(ms for _k, (ms, _c) in ev) * 1e3,
            "top": [[k[:160], int(c), round(ms * 1e3, 1)] for k, (ms, c) in ev[:top]]}


def kernel_floor_us(torch, n=2000, reps=20):
    """Time per kernel of ``n`` tiny kernels (an in-place add on a 1-element tensor) replayed from one
    CUDA graph: the floor a kernel costs in a captured decode step, whatever it computes."""
    x = torch.zeros(1, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(n):
            x.add_(1)
    graph.replay()
    return statistics.median(graph_replay_ms(torch, graph, reps, 5)) * 1e3 / n


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
    ap.add_argument("--profile", action="store_true", help="record each point's kernel times (torch.profiler)")
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
    if m["moe"] and args.impl != "fused":
        raise SystemExit("MoE configs run with --impl fused only")
    if args.impl == "fused":
        m = to_linear_layout(m)
        step_fn = fused_step_fn(torch, m)
    max_b = max(b for b, _ in grid)
    max_tokens = max(b * c for b, c in grid)
    max_ctx = max(c for _, c in grid)
    # one cache buffer for the largest batch x context; each point views its part
    k_buf = torch.zeros(layers * max_tokens * m["kvh"] * m["d"], device=args.device, dtype=dtype)
    v_buf = torch.zeros_like(k_buf)
    info = {"command": command_line(), "torch": torch.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "config": args.config, "layers": layers, "dtype": str(dtype), "impl": args.impl,
            "device": torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu",
            "timing": f"CUDA graph of one decode step replayed {args.reps}x between CUDA events; median of "
                      f"{args.repeats}" if cuda else "CPU wall time (control flow only)",
            "kernel_floor_us": kernel_floor_us(torch) if cuda else None,
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
                    prof = profile_kernels(torch, step_fn, torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx)
                    kernels = prof["kernels"]
                    prof = prof if args.profile else None
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        step_fn(torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx)
                    runs = graph_replay_ms(torch, graph, args.reps, args.repeats)
                    del graph
                else:
                    runs = []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        step_fn(torch, m, ids, pos, cos, sin, k_cache, v_cache, ctx)
                        runs.append((time.perf_counter() - t0) * 1e3)
                    kernels = prof = None
            points.append({"batch": b, "context": ctx, "step_ms": statistics.median(runs), "runs_ms": runs,
                           "kv_cache_bytes": 2 * layers * b * m["kvh"] * ctx * m["d"] * k_buf.element_size(),
                           "kernels_per_step": kernels,
                           **({"profile": prof} if prof else {}),
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
