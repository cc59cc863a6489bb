"""Which tensors are alive at the peak of a Hugging Face ``generate()`` call: CUDA caching-allocator
history (``torch.cuda.memory._record_memory_history``) over one call, saved as a pickle for
offline replay (``benchmarks/gpu/generate_memory_peak.py``).

    python -m benchmarks.gpu.gpu_generate_memory_trace --config llama-3.2-1b --batch 32 --prompt 2048 \
        --out generate_trace.pickle
"""
from __future__ import annotations

import argparse
import pickle
import sys

from benchmarks.gpu import gpu_generate_host as gh  # model building, generate()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="llama-3.2-1b")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--prompt", type=int, default=2048)
    ap.add_argument("--new", type=int, default=4)
    ap.add_argument("--out", default="generate_trace.pickle")
    args = ap.parse_args()
    import torch

    model, cfg = gh.build(torch, 0, args.config)
    ids = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt), device="cuda")
    with torch.inference_mode():
        gh.generate(model, ids, 2)  # warm-up
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        start = torch.cuda.memory_allocated()
        torch.cuda.memory._record_memory_history(max_entries=400000)
        gh.generate(model, ids, args.new)
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
    out = {"config": args.config, "batch": args.batch, "prompt": args.prompt, "new": args.new,
           "start_bytes": start, "peak_bytes": torch.cuda.max_memory_allocated(),
           "device_traces": snap.get("device_traces")}
    with open(args.out, "wb") as f:
        pickle.dump(out, f)
    print(f"start {start / 1e9:.3f} GB, peak {out['peak_bytes'] / 1e9:.3f} GB", file=sys.stderr)


if __name__ == "__main__":
    main()
