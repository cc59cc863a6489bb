"""Expert GEMMs of one MoE layer at serving row counts, forward only, on a local GPU: FP8 (row-wise
scaled, ``torch._scaled_grouped_mm``, a CUTLASS grouped GEMM on Hopper) and BF16
(``torch._grouped_mm``), against one dense GEMM of the same rows (``torch._scaled_mm`` / ``@``).

For each MoE shape (hidden h, expert width f, E experts, top-k) and mean rows per expert r (decode
batches give r of 1-64, prefill chunks hundreds to thousands), T = r E / k tokens route uniformly at
random to k distinct experts; the gate-up (h -> 2f) and down (f -> h) GEMMs run over the E experts'
weights. Timed with CUDA events (median of ``--reps`` after 3 warm-ups). Output per point: the time
of each kernel pair, the FLOPs, the expert weight count (TFLOP/s, the weight GB/s of small r, which
read every expert's weights, and the ratio to the dense GEMM of the same rows follow from these).
docs/validation_sections/30-serving.md compares the serving step's expert GEMMs with these; nothing
here is fitted to a serving result.

    python -m benchmarks.gpu.gpu_grouped_gemm_serving --out grouped_gemm_serving.json

``--decode``: the decode batches themselves, T = 1-128 tokens routed at random (so a batch touches only some
experts, E (1 - (1 - k/E)^T) on average), with tensor-parallel slices of the experts as well (the expert
width split tp ways), each layer's gate-up and down grouped GEMMs captured in a CUDA graph (GPU time without
the CPU's launch cost, as an engine's decode step) over ``--layers`` distinct copies of the weights (so the
50 MB L2 cannot hold a small batch's experts from one replay to the next). Output per point: the experts
touched, the bytes of their weights, and the time per layer, bf16 and fp8.

    python -m benchmarks.gpu.gpu_grouped_gemm_serving --decode --out grouped_gemm_decode.json
"""
from __future__ import annotations

import argparse
import time

from benchmarks.gpu.bench_io import command_line, cuda_median_ms, graph_median_ms, write_json

SHAPES = {  # name: (hidden, expert width, experts, top-k), from tests/data/hf_configs/
    "qwen3-30b-a3b": (2048, 768, 128, 8),
    "qwen3-235b-a22b": (4096, 1536, 128, 8),
    "gpt-oss-120b": (2880, 2880, 128, 4),
    "deepseek-v3": (7168, 2048, 256, 8),
}
ROWS = (2, 8, 32, 64, 128, 256, 512, 1024, 2048)
# decode batches; shapes as above plus Mixtral's few large experts and tensor-parallel slices (expert width / tp)
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128)
DECODE_SHAPES = dict(SHAPES, **{
    "mixtral-8x7b": (4096, 14336, 8, 2),
    "qwen3-235b-a22b/tp4": (4096, 1536 // 4, 128, 8),
    "deepseek-v3/tp8": (7168, 2048 // 8, 256, 8),
    "gpt-oss-120b/tp2": (2880, 2880 // 2, 128, 4),
})
WEIGHTS_BUDGET_BYTES = 40e9  # bf16 + fp8 copies of all layers' experts on the GPU at once


def decode_points(torch, reps: int, max_layers: int) -> list:
    f8 = torch.float8_e4m3fn
    g = torch.Generator(device="cuda").manual_seed(0)
    out = []
    for name, (h, f, E, k) in DECODE_SHAPES.items():
        layer_bytes = E * 3 * h * f * 3  # bf16 + fp8 copies
        L = int(max(1, min(max_layers, WEIGHTS_BUDGET_BYTES // layer_bytes)))
        w = []
        for _ in range(L):
            gu = torch.randn(E, 2 * f, h, device="cuda", dtype=torch.bfloat16) * 0.02
            d = torch.randn(E, h, f, device="cuda", dtype=torch.bfloat16) * 0.02
            w.append((gu, d, gu.to(f8), d.to(f8)))
        s_gu = torch.ones(E, 2 * f, device="cuda", dtype=torch.float32)
        s_d = torch.ones(E, h, device="cuda", dtype=torch.float32)
        for T in TOKENS:
            S = T * k
            rec = {"shape": name, "hidden": h, "expert_ffn": f, "experts": E, "top_k": k, "tokens": T, "layers": L}
            try:
                ids = torch.rand(T, E, device="cuda", generator=g).topk(k, dim=-1).indices.reshape(-1)
                counts = torch.bincount(ids, minlength=E)
                offs = torch.cumsum(counts, 0, dtype=torch.int32)
                touched = int((counts > 0).sum())
                x = torch.randn(S, h, device="cuda", dtype=torch.bfloat16)
                a = torch.randn(S, f, device="cuda", dtype=torch.bfloat16)
                x8, a8 = x.to(f8), a.to(f8)
                sx = torch.ones(S, device="cuda", dtype=torch.float32)

                def bf16_layers():
                    for gu, d, _gu8, _d8 in w:
                        torch._grouped_mm(x, gu.transpose(-2, -1), offs=offs)
                        torch._grouped_mm(a, d.transpose(-2, -1), offs=offs)

                def fp8_layers():
                    for _gu, _d, gu8, d8 in w:
                        torch._scaled_grouped_mm(x8, gu8.transpose(-2, -1), sx, s_gu, offs=offs,
                                                 out_dtype=torch.bfloat16)
                        torch._scaled_grouped_mm(a8, d8.transpose(-2, -1), sx, s_d, offs=offs, out_dtype=torch.bfloat16)

                rec.update(touched_experts=touched, touched_params=touched * 3 * h * f,
                           rows_per_touched=S / max(touched, 1), max_rows=int(counts.max()))
                for key, fn in (("bf16", bf16_layers), ("fp8", fp8_layers)):
                    try:
                        rec[key + "_ms_per_layer"] = graph_median_ms(torch, fn, reps) / L
                    except Exception as e:  # noqa: BLE001 - a failed kernel is data
                        rec[key + "_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                x = a = x8 = a8 = None  # drop the references (a closure above still names them)
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            out.append(rec)
            print(rec, flush=True)
        w = None  # drop the references (a closure above still names them)
        torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="grouped_gemm_serving.json")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--decode", action="store_true", help="decode batches of 1-128 tokens, CUDA-graph timed")
    ap.add_argument("--layers", type=int, default=8, help="--decode: distinct weight copies replayed per graph")
    args = ap.parse_args()
    import torch

    if args.decode:
        info = {"command": command_line(), "torch": torch.__version__,
                "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
                "timing": f"CUDA graph of the layers' grouped GEMMs replayed {max(args.reps, 20)}x between CUDA "
                          "events, median of 3, divided by the layers"}
        write_json(args.out, {"info": info, "points": decode_points(torch, max(args.reps, 20), args.layers)})
        return

    f8 = torch.float8_e4m3fn
    info = {"command": command_line(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
            "device": torch.cuda.get_device_name(0), "timing": f"CUDA events, median of {args.reps} after 3 warm-up"}
    rows = []
    g = torch.Generator(device="cuda").manual_seed(0)
    for name, (h, f, E, k) in SHAPES.items():
        w_gu = (torch.randn(E, 2 * f, h, device="cuda", dtype=torch.bfloat16) * 0.02)
        w_d = (torch.randn(E, h, f, device="cuda", dtype=torch.bfloat16) * 0.02)
        w_gu8, w_d8 = w_gu.to(f8), w_d.to(f8)  # (E, N, K) row-major: passed transposed = column-major
        s_gu = torch.ones(E, 2 * f, device="cuda", dtype=torch.float32)
        s_d = torch.ones(E, h, device="cuda", dtype=torch.float32)
        dense_gu8 = w_gu8[0].t()  # (K, N) column-major, as torch._scaled_mm wants its second operand
        dense_d8 = w_d8[0].t()
        weight_params = E * 3 * h * f
        for r in ROWS:
            T = max(int(r * E / k), 1)
            S = T * k
            rec = {"shape": name, "hidden": h, "expert_ffn": f, "experts": E, "top_k": k, "tokens": T,
                   "rows_per_expert": S / E, "weight_params": weight_params}
            try:
                ids = torch.rand(T, E, device="cuda", generator=g).topk(k, dim=-1).indices.reshape(-1)
                counts = torch.bincount(ids, minlength=E)
                offs = torch.cumsum(counts, 0, dtype=torch.int32)
                x = torch.randn(S, h, device="cuda", dtype=torch.bfloat16)
                a = torch.randn(S, f, device="cuda", dtype=torch.bfloat16)
                x8, a8 = x.to(f8), a.to(f8)
                sx = torch.ones(S, device="cuda", dtype=torch.float32)
                one = torch.ones((), device="cuda", dtype=torch.float32)
                flops = 2.0 * S * h * 2 * f + 2.0 * S * f * h

                def grouped_bf16():
                    torch._grouped_mm(x, w_gu.transpose(-2, -1), offs=offs)
                    torch._grouped_mm(a, w_d.transpose(-2, -1), offs=offs)

                def grouped_fp8():
                    torch._scaled_grouped_mm(x8, w_gu8.transpose(-2, -1), sx, s_gu, offs=offs, out_dtype=torch.bfloat16)
                    torch._scaled_grouped_mm(a8, w_d8.transpose(-2, -1), sx, s_d, offs=offs, out_dtype=torch.bfloat16)

                def dense_bf16():
                    x @ w_gu[0].t()
                    a @ w_d[0].t()

                def dense_fp8():
                    torch._scaled_mm(x8, dense_gu8, one, one, out_dtype=torch.bfloat16)
                    torch._scaled_mm(a8, dense_d8, one, one, out_dtype=torch.bfloat16)

                for key, fn in (("grouped_bf16", grouped_bf16), ("grouped_fp8", grouped_fp8),
                                ("dense_bf16", dense_bf16), ("dense_fp8", dense_fp8)):
                    try:
                        rec[key + "_ms"] = cuda_median_ms(torch, fn, args.reps)
                    except Exception as e:  # noqa: BLE001 - a failed kernel is data
                        rec[key + "_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                rec["flops"] = flops
                rec["max_rows"], rec["min_rows"] = int(counts.max()), int(counts.min())
                x = a = x8 = a8 = None  # drop the references (a closure above still names them)
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            rows.append(rec)
            torch.cuda.empty_cache()
        w_gu = w_d = w_gu8 = w_d8 = None  # drop the references (a closure above still names them)
        torch.cuda.empty_cache()
    write_json(args.out, {"info": info, "points": rows})


if __name__ == "__main__":
    main()
