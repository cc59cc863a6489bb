"""Dense GEMMs at decode batches on a local GPU: the projections of a decoder layer (q/k/v, output,
gate-up, down) of Llama-3.1-8B and -70B, whole and split tensor-parallel 2/4/8 ways, at M = 1-128 rows,
bf16 (``@``) and FP8 (``torch._scaled_mm``, per-tensor scales), each captured in a CUDA graph over
``--layers`` distinct copies of the weights (so L2 cannot hold them from one replay to the next) and
replayed between CUDA events (GPU time without the CPU's launch cost, as an engine's decode step).

Output per point: the weight bytes of one GEMM and its time. The serving step's dense GEMM term
(core/serving/engine.py step_parts: weights at the element-wise fraction of HBM, plus a kernel floor) is
compared with these in docs/validation_sections/30-serving.md; nothing here is fitted to a serving result.

    python -m benchmarks.gpu.gpu_dense_gemm_decode --out dense_gemm_decode.json
"""
from __future__ import annotations

import argparse
import time

from benchmarks.gpu.bench_io import command_line, graph_median_ms, write_json  # CUDA-graph timer

MODELS = {  # name: (hidden, q width, kv width, ffn), from tests/data/hf_configs/
    "llama-3.1-8b": (4096, 4096, 1024, 14336),
    "llama-3.1-70b": (8192, 8192, 1024, 28672),
}
TP = (1, 2, 4, 8)
ROWS = (1, 8, 32, 64, 128)
WEIGHTS_BUDGET_BYTES = 24e9


def gemms(h, q, kv, f, tp):
    """(name, K, N) of one layer's projections on one tensor-parallel rank."""
    return [("qkv", h, (q + 2 * kv) // tp), ("o", q // tp, h), ("gate_up", h, 2 * f // tp), ("down", f // tp, h)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="dense_gemm_decode.json")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--layers", type=int, default=16)
    args = ap.parse_args()
    import torch

    f8 = torch.float8_e4m3fn
    one = torch.ones((), device="cuda", dtype=torch.float32)
    points = []
    for name, (h, q, kv, f) in MODELS.items():
        for tp in TP:
            for g, K, N in gemms(h, q, kv, f, tp):
                L = int(max(1, min(args.layers, WEIGHTS_BUDGET_BYTES // (K * N * 3))))
                w16 = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(L)]
                w8 = [w.to(f8) for w in w16]
                for M in ROWS:
                    rec = {"model": name, "tp": tp, "gemm": g, "K": K, "N": N, "M": M, "layers": L,
                           "weight_params": K * N}
                    x16 = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                    x8 = x16.to(f8)

                    def bf16():
                        for w in w16:
                            x16 @ w.t()

                    def fp8():
                        for w in w8:
                            torch._scaled_mm(x8, w.t(), one, one, out_dtype=torch.bfloat16)

                    for key, fn in (("bf16", bf16), ("fp8", fp8)):
                        try:
                            rec[key + "_us"] = graph_median_ms(torch, fn, args.reps) * 1e3 / L
                        except Exception as e:  # noqa: BLE001 - a failed kernel is data
                            rec[key + "_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                    points.append(rec)
                    print(rec, flush=True)
                w16 = w8 = None  # drop the references (a closure above still names them)
                torch.cuda.empty_cache()
    info = {"command": command_line(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
            "device": torch.cuda.get_device_name(0),
            "timing": f"CUDA graph over the weight copies replayed {args.reps}x between CUDA events, median of 3, "
                      "per GEMM"}
    write_json(args.out, {"info": info, "points": points})


if __name__ == "__main__":
    main()
