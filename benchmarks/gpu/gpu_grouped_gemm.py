"""Grouped expert GEMMs as transformers 5.x runs them (``torch._grouped_mm``, integrations/moe.py)
against one dense GEMM of the same FLOPs, on a local GPU.

For each MoE shape (hidden h, expert width f, E experts, top-k) and token count T, the T x k routed
rows (random uniform routing: each token picks k distinct experts) are sorted by expert; the
gate-up GEMM (h -> 2f) and the down GEMM (f -> h) run as one grouped GEMM each over the E experts'
weights stored (E, out, in) and passed transposed, as ``_grouped_linear`` does. Timed with CUDA
events (median of ``--reps``): the forward, and forward + backward through autograd (input and
weight gradients); and the dense GEMM (T k, h) @ (h, 2f) / (T k, f) @ (f, h) the same way.
Output: TFLOP/s of each and the grouped/dense ratio, with the mean rows per expert.

    python -m benchmarks.gpu.gpu_grouped_gemm --out grouped_gemm.json
"""
from __future__ import annotations

import argparse
import platform
import sys
import time

from benchmarks.gpu.bench_io import command_line, cuda_median_ms, write_json  # CUDA-event timer

SHAPES = {  # name: (hidden, expert width, experts, top-k), from tests/data/hf_configs/
    "qwen3-30b-a3b": (2048, 768, 128, 8),
    "gpt-oss-20b": (2880, 2880, 32, 4),
    "qwen1.5-moe-a2.7b": (2048, 1408, 60, 4),
    "mixtral-8x7b": (4096, 14336, 8, 2),
}
TOKENS = (1024, 4096, 8192, 16384)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="grouped_gemm.json")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    import torch

    gm = getattr(torch.nn.functional, "grouped_mm", None) or torch._grouped_mm
    info = {"command": command_line(), "torch": torch.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "grouped_mm": getattr(gm, "__name__", str(gm)), "dtype": "bfloat16",
            "timing": f"CUDA events, median of {args.reps} after 3 warm-up"}
    rows = []
    g = torch.Generator(device="cuda").manual_seed(0)
    for name, (h, f, E, k) in SHAPES.items():
        for T in TOKENS:
            rec = {"shape": name, "hidden": h, "expert_ffn": f, "experts": E, "top_k": k, "tokens": T,
                   "rows_per_expert": T * k / E}
            try:
                logits = torch.rand(T, E, device="cuda", generator=g)
                ids = logits.topk(k, dim=-1).indices.reshape(-1)
                ids_sorted, _ = torch.sort(ids)
                counts = torch.histc(ids_sorted.int(), bins=E, min=0, max=E - 1)
                offs = torch.cumsum(counts, 0, dtype=torch.int32)
                S = T * k
                x = torch.randn(S, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                w_gu = (torch.randn(E, 2 * f, h, device="cuda", dtype=torch.bfloat16) * 0.02).requires_grad_()
                w_d = (torch.randn(E, h, f, device="cuda", dtype=torch.bfloat16) * 0.02).requires_grad_()
                a = torch.randn(S, f, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                dense_gu = (torch.randn(h, 2 * f, device="cuda", dtype=torch.bfloat16) * 0.02).requires_grad_()
                dense_d = (torch.randn(f, h, device="cuda", dtype=torch.bfloat16) * 0.02).requires_grad_()
                flops_fwd = 2.0 * S * h * 2 * f + 2.0 * S * f * h

                def g_fwd():
                    with torch.no_grad():
                        gm(x, w_gu.transpose(-2, -1), offs=offs)
                        gm(a, w_d.transpose(-2, -1), offs=offs)

                def g_fb():
                    y1 = gm(x, w_gu.transpose(-2, -1), offs=offs)
                    y2 = gm(a, w_d.transpose(-2, -1), offs=offs)
                    torch.autograd.backward([y1, y2], [torch.ones_like(y1), torch.ones_like(y2)])

                w_gu0, w_d0 = w_gu.detach(), w_d.detach()

                def g_fb_frozen():  # frozen experts (LoRA): only the inputs need gradients
                    y1 = gm(x, w_gu0.transpose(-2, -1), offs=offs)
                    y2 = gm(a, w_d0.transpose(-2, -1), offs=offs)
                    torch.autograd.backward([y1, y2], [torch.ones_like(y1), torch.ones_like(y2)])

                def d_fwd():
                    with torch.no_grad():
                        x @ dense_gu
                        a @ dense_d

                def d_fb():
                    y1 = x @ dense_gu
                    y2 = a @ dense_d
                    torch.autograd.backward([y1, y2], [torch.ones_like(y1), torch.ones_like(y2)])

                t = {key: cuda_median_ms(torch, fn, args.reps) for key, fn in (
                    ("grouped_fwd_ms", g_fwd), ("grouped_fwd_bwd_ms", g_fb), ("grouped_fwd_bwd_frozen_ms", g_fb_frozen),
                    ("dense_fwd_ms", d_fwd), ("dense_fwd_bwd_ms", d_fb))}
                rec.update(t)
                rec["flops_fwd"] = flops_fwd
                rec["grouped_fwd_tflops"] = flops_fwd / t["grouped_fwd_ms"] / 1e9
                rec["grouped_fwd_bwd_tflops"] = 3 * flops_fwd / t["grouped_fwd_bwd_ms"] / 1e9
                rec["grouped_fwd_bwd_frozen_tflops"] = 2 * flops_fwd / t["grouped_fwd_bwd_frozen_ms"] / 1e9
                rec["dense_fwd_tflops"] = flops_fwd / t["dense_fwd_ms"] / 1e9
                rec["dense_fwd_bwd_tflops"] = 3 * flops_fwd / t["dense_fwd_bwd_ms"] / 1e9
                rec["max_rows"] = int(counts.max())
                rec["min_rows"] = int(counts.min())
                rec["status"] = "ok"
                print(f"{name:18s} T {T:6d} rows/expert {T * k / E:7.1f}: grouped fwd {rec['grouped_fwd_tflops']:6.0f} "
                      f"fb {rec['grouped_fwd_bwd_tflops']:6.0f} frozen fb {rec['grouped_fwd_bwd_frozen_tflops']:6.0f}  "
                      f"dense fwd {rec['dense_fwd_tflops']:6.0f} "
                      f"fb {rec['dense_fwd_bwd_tflops']:6.0f} TFLOP/s", file=sys.stderr, flush=True)
                x = w_gu = w_d = w_gu0 = w_d0 = a = dense_gu = dense_d = None  # drop the references (a closure above still names them)
            except Exception as e:  # noqa: BLE001 - a failed point is data
                rec["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
                print(name, T, rec["status"], file=sys.stderr, flush=True)
            rows.append(rec)
            torch.cuda.empty_cache()
    write_json(args.out, {"info": info, "points": rows})


if __name__ == "__main__":
    main()
