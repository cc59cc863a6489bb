"""Optimizer step time on a local GPU, apart from any model: PyTorch AdamW (fused, foreach,
for-loop) and bitsandbytes 8-bit AdamW (plain and paged), on parameter sets chosen to separate the
two costs of a step: bytes moved per element (one large tensor) and a fixed cost per tensor (many
small tensors), plus a real model's parameter shapes (Llama-3.2-1B, the shapes of the fine-tuning
runs in tests/data/finetune_runs_h200.json).

Parameters and gradients are bf16 (a bf16 model, as the fine-tuning runs); gradients random. Per
case: three warm-up steps (the states are created), then ``--reps`` steps each timed with the GPU
synchronised (wall, ms), and the host time of the ``step()`` call alone (ms, without the final
synchronisation: how long Python and the dispatcher take to issue the kernels).

    python -m benchmarks.gpu.gpu_optimizer_step --out optimizer_steps.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

from benchmarks.gpu.bench_io import command_line, write_json  # all-or-nothing JSON write

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG_DIR = os.path.join(HERE, "..", "..", "tests", "data", "hf_configs")


def llama_shapes(cfg_name: str) -> list[tuple[int, ...]]:
    """The parameter shapes of a Llama-style config (LlamaForCausalLM's parameters, in order)."""
    with open(os.path.join(CONFIG_DIR, cfg_name + ".json")) as f:
        c = json.load(f)
    h, f_, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    heads = c["num_attention_heads"]
    kvh = c.get("num_key_value_heads") or heads
    d = c.get("head_dim") or h // heads
    shapes = [(v, h)]
    for _ in range(c["num_hidden_layers"]):
        shapes += [(heads * d, h), (kvh * d, h), (kvh * d, h), (h, heads * d), (f_, h), (f_, h), (h, f_), (h,), (h,)]
    shapes.append((h,))
    if not c.get("tie_word_embeddings", False):
        shapes.append((v, h))
    return shapes


SETS = {
    "one-256M": [(256 * 2**20,)],
    "128x4M": [(4 * 2**20,)] * 128,
    "512x64K": [(64 * 2**10,)] * 512,
    "llama-3.2-1b": None,  # llama_shapes("llama-3.2-1b")
}
OPTIMIZERS = ("torch-fused", "torch-foreach", "torch-forloop", "bnb-adamw8bit", "bnb-paged-adamw8bit")


def make_opt(torch, name, params):
    if name.startswith("torch-"):
        impl = name.split("-")[1]
        kw = {"fused": impl == "fused", "foreach": impl == "foreach"}
        return torch.optim.AdamW(params, lr=1e-5, **kw)
    import bitsandbytes as bnb

    return (bnb.optim.PagedAdamW8bit if "paged" in name else bnb.optim.AdamW8bit)(params, lr=1e-5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="optimizer_steps.json")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--optimizers", default=",".join(OPTIMIZERS))
    args = ap.parse_args()
    import torch

    info = {"command": command_line(), "torch": torch.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "cpu": platform.processor() or platform.machine(), "param_dtype": "bfloat16",
            "timing": f"3 warm-up steps, then {args.reps} steps: wall with the GPU synchronised (median), "
                      "host time of step() without synchronising (median)"}
    try:
        import bitsandbytes

        info["bitsandbytes"] = bitsandbytes.__version__
    except Exception as e:  # noqa: BLE001
        info["bitsandbytes"] = f"unavailable: {e}"
    results = []
    for set_name in args.sets.split(","):
        shapes = SETS[set_name] or llama_shapes(set_name)
        for opt_name in args.optimizers.split(","):
            rec = {"set": set_name, "optimizer": opt_name, "tensors": len(shapes),
                   "elements": sum(int(torch.Size(s).numel()) for s in shapes)}
            try:
                params = [torch.nn.Parameter(torch.randn(s, device="cuda", dtype=torch.bfloat16) * 0.02)
                          for s in shapes]
                for p in params:
                    p.grad = torch.randn_like(p) * 1e-3
                opt = make_opt(torch, opt_name, params)
                for _ in range(3):
                    opt.step()
                torch.cuda.synchronize()
                wall, host = [], []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    opt.step()
                    t1 = time.perf_counter()
                    torch.cuda.synchronize()
                    t2 = time.perf_counter()
                    host.append((t1 - t0) * 1e3)
                    wall.append((t2 - t0) * 1e3)
                rec.update(status="ok", wall_ms=statistics.median(wall), host_ms=statistics.median(host),
                           wall_ms_runs=[round(x, 3) for x in wall])
                print(f"{set_name:14s} {opt_name:20s} wall {rec['wall_ms']:8.3f} ms host {rec['host_ms']:8.3f} ms",
                      file=sys.stderr, flush=True)
                del opt, params
            except Exception as e:  # noqa: BLE001 - a failed case is data
                rec["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
                print(set_name, opt_name, rec["status"], file=sys.stderr, flush=True)
            results.append(rec)
            torch.cuda.empty_cache()
    write_json(args.out, {"info": info, "results": results})


if __name__ == "__main__":
    main()
