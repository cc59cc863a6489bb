"""Eager attention's score-sized kernels on a local GPU: softmax (forward, backward) over rows of
the sequence length and of the sequence length + 1 (gpt-oss concatenates one sink logit per row,
modeling_gpt_oss.py), the concatenation itself, bf16 and fp32; effective bandwidth against the
datasheet's.

    python -m benchmarks.gpu.gpu_softmax_rows --out softmax_rows.json
"""
from __future__ import annotations

import argparse
import platform
import sys
import time

from benchmarks.gpu.bench_io import command_line, cuda_median_ms, write_json  # CUDA-event timer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="softmax_rows.json")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    import torch

    info = {"command": command_line(), "torch": torch.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "timing": f"CUDA events, median of {args.reps} after 3 warm-up"}
    rows = []
    b, h, s = 2, 64, 2048
    for dtype in (torch.bfloat16, torch.float32):
        for cols in (s, s + 1):
            x = torch.randn(b, h, s, cols, device="cuda", dtype=dtype, requires_grad=True)
            g = torch.randn(b, h, s, cols, device="cuda", dtype=dtype)
            base = torch.randn(b, h, s, s, device="cuda", dtype=dtype)
            sink = torch.randn(b, h, s, 1, device="cuda", dtype=dtype)
            nbytes = x.numel() * x.element_size()

            def fwd():
                with torch.no_grad():
                    torch.softmax(x, dim=-1, dtype=dtype)

            def fwd_bwd():
                y = torch.softmax(x, dim=-1, dtype=dtype)
                y.backward(g)

            def cat():
                torch.cat([base, sink], dim=-1)

            rec = {"dtype": str(dtype).replace("torch.", ""), "rows": b * h * s, "cols": cols,
                   "softmax_fwd_ms": cuda_median_ms(torch, fwd, args.reps),
                   "softmax_fwd_bwd_ms": cuda_median_ms(torch, fwd_bwd, args.reps)}
            if cols == s + 1:
                rec["cat_sink_ms"] = cuda_median_ms(torch, cat, args.reps)
            # bytes: forward reads x and writes y; backward reads y and dy, writes dx
            rec["softmax_fwd_tb_s"] = 2 * nbytes / rec["softmax_fwd_ms"] / 1e9
            rec["softmax_bwd_tb_s"] = 3 * nbytes / (rec["softmax_fwd_bwd_ms"] - rec["softmax_fwd_ms"]) / 1e9
            if "cat_sink_ms" in rec:
                rec["cat_tb_s"] = 2 * nbytes / rec["cat_sink_ms"] / 1e9
            print(rec, file=sys.stderr, flush=True)
            rows.append(rec)
            x = g = base = sink = None  # drop the references (a closure above still names them)
            torch.cuda.empty_cache()
    write_json(args.out, {"info": info, "points": rows})


if __name__ == "__main__":
    main()
