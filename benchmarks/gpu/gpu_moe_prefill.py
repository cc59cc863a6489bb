"""One MoE block's prefill on a local GPU, as an engine runs a prompt chunk: eager (a prefill step is not
CUDA-graph captured in vLLM above its capture sizes, nor in SGLang or TensorRT-LLM), routing on the device
without a host sync, experts through PyTorch's grouped GEMMs. Measures what the serving step's prefill
charges for the routed experts (core/serving/engine.py step_parts: the grouped-GEMM law plus the dispatch and
combine traffic) against the whole block, routing and permutation included.

For each shape (hidden h, expert width f of one tensor-parallel rank, E experts, top-k) and prompt chunk of
T tokens: router GEMM (h -> E), top-k and softmax of the k logits, a stable sort of the T x k expert ids,
gather of the rows in expert order, gate-up grouped GEMM (h -> 2f), SiLU x up, down grouped GEMM (f -> h),
the rows put back in token order and each token's k rows weighted and summed (``STAGES``; ``stages_*_ms``
times each). BF16 (``torch._grouped_mm``) and
FP8 (rows quantised with one scale each, ``torch._scaled_grouped_mm``). Timed with CUDA events (median of
``--reps`` after 3 warm-ups): ``block_*_ms`` the whole block, ``gemm_*_ms`` the two grouped GEMMs alone on
the same routed rows, and ``wall_block_bf16_ms`` the host's time per block with a sync each time (above
the GPU's time where launching the block's kernels takes longer than running them).

    python -m benchmarks.gpu.gpu_moe_prefill --out moe_prefill_h200.json

Nothing here is fitted to a serving result; docs/validation_sections/30-serving.md compares the planner's
MoE prefill charge with these (``accuracy/moe_prefill_accuracy.py``).
"""
from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.gpu.bench_io import command_line, cuda_median_ms, write_json

# name: (hidden, expert width on one rank, experts, top-k); from the configs in tests/data/ (widths split by
# the tensor-parallel degrees the silicon runs use)
SHAPES = {
    "gpt-oss-120b": (2880, 2880, 128, 4),
    "gpt-oss-120b/tp4": (2880, 720, 128, 4),
    "qwen3-235b-a22b/tp4": (4096, 384, 128, 8),
    "minimax-m2.5/tp4": (3072, 384, 256, 8),
    "deepseek-v3/tp8": (7168, 256, 256, 8),
    "kimi-k2.5/tp8": (7168, 256, 384, 8),
}
TOKENS = (1024, 2048, 4096, 8192)


STAGES = ("router", "sort", "gather", "gate_up", "act", "down", "combine")


def moe_stages(torch, x, router, w_gu, w_d, k, fp8=None):
    """The block for tokens ``x`` (T, h) as its stages, in order (``STAGES``): callables sharing one state
    dict, whose "out" is the block's output. ``fp8``: (gate-up, down) FP8 weights and their scales. No stage
    waits for the host: the expert offsets stay on the GPU."""
    T, h = x.shape
    E = router.shape[1]
    st = {}

    def r():
        top, ids = (x @ router).topk(k, dim=-1)
        st["wts"] = torch.softmax(top.float(), dim=-1).to(x.dtype).reshape(-1)
        st["flat"] = ids.reshape(-1)

    def sort():
        st["order"] = torch.argsort(st["flat"], stable=True)
        st["offs"] = torch.cumsum(torch.bincount(st["flat"], minlength=E), 0, dtype=torch.int32)

    def gather():  # the rows in expert order (engines' permute / dispatch)
        st["xs"] = x.index_select(0, st["order"] // k)

    def quant(a):  # one scale per row
        sa = a.abs().amax(dim=-1).float().clamp(min=1e-6) / 448.0
        return (a / sa[:, None].to(a.dtype)).to(torch.float8_e4m3fn), sa

    def grouped(rows, w, which: int):  # rows x each expert's weights (which: 0 gate-up, 1 down)
        if fp8 is None:
            return torch._grouped_mm(rows, w.transpose(-2, -1), offs=st["offs"])
        q, sq = quant(rows)
        return torch._scaled_grouped_mm(q, fp8[2 * which].transpose(-2, -1), sq, fp8[2 * which + 1],
                                        offs=st["offs"], out_dtype=torch.bfloat16)

    def gate_up():
        st["gu"] = grouped(st["xs"], w_gu, 0)

    def act():
        f = st["gu"].shape[1] // 2
        st["a"] = torch.nn.functional.silu(st["gu"][:, :f]) * st["gu"][:, f:]

    def down():
        st["y"] = grouped(st["a"], w_d, 1)

    def combine():  # back to token order, then each token's k rows weighted and summed (engines' moe_sum)
        y = torch.empty_like(st["y"])
        y[st["order"]] = st["y"]
        st["out"] = (y.view(T, k, h) * st["wts"].view(T, k, 1)).sum(dim=1)

    return (r, sort, gather, gate_up, act, down, combine), st


def moe_block(torch, x, router, w_gu, w_d, k, fp8=None):
    fns, st = moe_stages(torch, x, router, w_gu, w_d, k, fp8)
    for fn in fns:
        fn()
    return st["out"]


def stage_ms(torch, x, router, w_gu, w_d, k, fp8, reps: int) -> dict:
    """Median milliseconds of each stage, CUDA events between the stages of one block (3 warm-ups)."""
    fns, _ = moe_stages(torch, x, router, w_gu, w_d, k, fp8)
    for _ in range(3):
        for fn in fns:
            fn()
    runs = []
    for _ in range(reps):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(len(fns) + 1)]
        ev[0].record()
        for fn, e in zip(fns, ev[1:]):
            fn()
            e.record()
        torch.cuda.synchronize()
        runs.append([a.elapsed_time(b) for a, b in zip(ev, ev[1:])])
    return {name: statistics.median(r[i] for r in runs) for i, name in enumerate(STAGES)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="moe_prefill.json")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    import torch

    f8 = torch.float8_e4m3fn
    info = {"command": command_line(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
            "device": torch.cuda.get_device_name(0), "timing": f"CUDA events, median of {args.reps} after 3 warm-up; "
                                                               "wall: host time per block with a sync each time"}
    g = torch.Generator(device="cuda").manual_seed(0)
    points = []
    for name, (h, f, E, k) in SHAPES.items():
        router = torch.randn(h, E, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
        w_gu = torch.randn(E, 2 * f, h, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
        w_d = torch.randn(E, h, f, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
        fp8 = (w_gu.to(f8), torch.full((E, 2 * f), 0.02, device="cuda"), w_d.to(f8),
               torch.full((E, h), 0.02, device="cuda"))
        for T in TOKENS:
            rec = {"shape": name, "hidden": h, "expert_ffn": f, "experts": E, "top_k": k, "tokens": T}
            try:
                x = torch.randn(T, h, device="cuda", dtype=torch.bfloat16, generator=g)
                flat = (x @ router).topk(k, dim=-1).indices.reshape(-1)
                counts = torch.bincount(flat, minlength=E)
                offs = torch.cumsum(counts, 0, dtype=torch.int32)
                xs = x.index_select(0, torch.argsort(flat, stable=True) // k)
                a = torch.randn(T * k, f, device="cuda", dtype=torch.bfloat16, generator=g)
                xs8, a8 = xs.to(f8), a.to(f8)
                ones = torch.ones(T * k, device="cuda")

                def gemm_bf16():
                    torch._grouped_mm(xs, w_gu.transpose(-2, -1), offs=offs)
                    torch._grouped_mm(a, w_d.transpose(-2, -1), offs=offs)

                def gemm_fp8():
                    torch._scaled_grouped_mm(xs8, fp8[0].transpose(-2, -1), ones, fp8[1], offs=offs,
                                             out_dtype=torch.bfloat16)
                    torch._scaled_grouped_mm(a8, fp8[2].transpose(-2, -1), ones, fp8[3], offs=offs,
                                             out_dtype=torch.bfloat16)

                rec["touched_experts"] = int((counts > 0).sum())
                rec["max_rows"] = int(counts.max())
                for key, fn in (("block_bf16", lambda: moe_block(torch, x, router, w_gu, w_d, k)),
                                ("block_fp8", lambda: moe_block(torch, x, router, w_gu, w_d, k, fp8)),
                                ("gemm_bf16", gemm_bf16), ("gemm_fp8", gemm_fp8)):
                    try:
                        rec[key + "_ms"] = cuda_median_ms(torch, fn, args.reps)
                    except Exception as e:  # noqa: BLE001 - a failed kernel is data
                        rec[key + "_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                for key, f8w in (("bf16", None), ("fp8", fp8)):
                    try:
                        rec["stages_" + key + "_ms"] = stage_ms(torch, x, router, w_gu, w_d, k, f8w, args.reps)
                    except Exception as e:  # noqa: BLE001
                        rec["stages_" + key + "_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                walls = []
                for _ in range(args.reps):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    moe_block(torch, x, router, w_gu, w_d, k)
                    torch.cuda.synchronize()
                    walls.append((time.perf_counter() - t0) * 1e3)
                rec["wall_block_bf16_ms"] = statistics.median(walls)
                rec["flops_experts"] = 2.0 * T * k * 3 * h * f
                x = xs = a = xs8 = a8 = None  # drop the references (a closure above still names them)
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            points.append(rec)
            print(rec, flush=True)
            torch.cuda.empty_cache()
        router = w_gu = w_d = fp8 = None  # drop the references (a closure above still names them)
        torch.cuda.empty_cache()
    write_json(args.out, {"info": info, "points": points})


if __name__ == "__main__":
    main()
