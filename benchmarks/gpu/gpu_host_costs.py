"""Host-side costs the GPU's roofline does not see (issue 30): what the CPU spends to issue a
tensor-parallel module through DTensor, and what an AdamW step costs when FSDP2's CPUOffloadPolicy
runs it on the host.

1. ``dtensor``: one process is rank 0 of a W-rank job under torch's fake process group (collectives
   do not communicate). Each module of torchtitan's Llama plan (gpu_multi_runs.tp_plans) runs on tiny
   tensors (hidden 256, 16 tokens: the GPU finishes each kernel long before the host issues the next,
   so wall time is host time), forward alone and forward + backward, ``--reps`` calls after a warm-up;
   the same module without DTensor beside it. Per module: microseconds per call and, from the
   profiler, the number of GPU kernels it launches. Modules: Linear under ColwiseParallel (input
   Replicate; input Shard(1), sequence parallel), RowwiseParallel (output Replicate; output Shard(1)),
   Hugging Face's LlamaRMSNorm under SequenceParallel, a whole LlamaDecoderLayer under the plan
   without and with sequence parallelism (the check that the modules add up), each also under
   non-reentrant checkpointing, and the layer under FSDP2 (fully_shard over all ranks; with TP + SP
   over a (2, world / 2) mesh).
2. ``cpu_adamw``: torch.optim.AdamW on CPU tensors (bf16 and fp32, fused as the fake-PG offload runs
   configure it, and foreach), one large tensor and a Llama-3.1-8B shard's tensor sizes; elements
   per second of ``step()``, with the host's core count.
3. ``dispatch``: the probe's own host-speed test (planner_app.probe.bench.TorchBackend.dispatch, what a
   calibration profile scales the engine's launch_s by), five medians, so that the other parts and any
   runs of the same session can be set against the host they ran on.
4. ``pcie``: copies between the GPU and the host as CPUOffloadPolicy makes them: host to device from
   pinned memory, device to host into pinned and into pageable memory, one large tensor and a layer's
   worth of a Llama-3.1-8B shard's tensors issued ``non_blocking``; GB/s.

    python -m benchmarks.gpu.gpu_host_costs --out host_costs.json [--worlds 2,4,8] [--reps 200]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from benchmarks.gpu.bench_io import command_line, write_json
from benchmarks.gpu.gpu_multi_runs import tp_plans


def _sync(torch):
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _timed(torch, fn, reps: int, repeats: int = 5) -> float:
    """Median over ``repeats`` of the mean microseconds per call of ``fn`` over ``reps`` calls, the
    device synchronised at both ends."""
    for _ in range(10):
        fn()
    _sync(torch)
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        _sync(torch)
        out.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(out)


def _kernels(torch, fn) -> int:
    from torch.profiler import ProfilerActivity, profile

    if not torch.cuda.is_available():
        return 0
    fn()
    _sync(torch)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        _sync(torch)
    return sum(1 for e in prof.events() if e.device_type.name == "CUDA")


class Checkpointed:
    """A module's call under torch.utils.checkpoint (use_reentrant=False), as Hugging Face's
    gradient_checkpointing_enable runs each decoder layer."""

    def __init__(self, torch, module):
        self.torch, self.module = torch, module

    def __call__(self, x, **kw):
        from torch.utils.checkpoint import checkpoint

        return checkpoint(self.module, x, use_reentrant=False, **kw)


def dtensor_cases(torch, world: int, reps: int) -> list[dict]:
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, SequenceParallel, parallelize_module
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRMSNorm, LlamaRotaryEmbedding

    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    mesh = init_device_mesh(dev, (world,), mesh_dim_names=("tp",))
    dt = torch.bfloat16
    h, tokens = 256, 16 * world  # the sequence splits over the ranks under sequence parallelism
    rows = []

    def lin():
        return torch.nn.Linear(h, h, bias=False, device=dev, dtype=dt)

    def x_full():
        return torch.randn(1, tokens, h, device=dev, dtype=dt, requires_grad=True)

    def x_cols():  # a colwise module's local output: the input RowwiseParallel expects (Shard(-1))
        return torch.randn(1, tokens, h // world, device=dev, dtype=dt, requires_grad=True)

    def x_shard():
        return torch.randn(1, tokens // world, h, device=dev, dtype=dt, requires_grad=True)

    def run_case(name, module, make_x, fwd_kwargs=None):
        x = make_x()
        kw = fwd_kwargs or {}

        def fwd():
            with torch.no_grad():
                module(x, **kw)

        out = module(x, **kw)
        out = out[0] if isinstance(out, tuple) else out
        g = torch.ones_like(out)

        def fwd_bwd():
            o = module(x, **kw)
            o = o[0] if isinstance(o, tuple) else o
            o.backward(g)

        rows.append({"module": name, "world": world, "hidden": h, "tokens": tokens,
                     "fwd_us": round(_timed(torch, fwd, reps), 2), "fwd_bwd_us": round(_timed(torch, fwd_bwd, reps), 2),
                     "fwd_kernels": _kernels(torch, fwd), "fwd_bwd_kernels": _kernels(torch, fwd_bwd),
                     "output_dtensor": isinstance(out, DTensor)})

    seq = Shard(1)
    run_case("linear", lin(), x_full)
    run_case("colwise", parallelize_module(lin(), mesh, ColwiseParallel()), x_full)
    run_case("colwise_sp", parallelize_module(lin(), mesh, ColwiseParallel(input_layouts=seq)), x_shard)
    run_case("rowwise", parallelize_module(lin(), mesh, RowwiseParallel()), x_cols)
    run_case("rowwise_sp", parallelize_module(lin(), mesh, RowwiseParallel(output_layouts=seq)), x_cols)
    cfg = LlamaConfig(hidden_size=h, intermediate_size=2 * h, num_attention_heads=8, num_key_value_heads=8,
                      num_hidden_layers=1, vocab_size=1024)
    cfg._attn_implementation = "sdpa"
    run_case("rmsnorm", LlamaRMSNorm(h).to(dev, dt), x_full)
    run_case("rmsnorm_sp", parallelize_module(LlamaRMSNorm(h).to(dev, dt), mesh, SequenceParallel()), x_shard)
    rope = LlamaRotaryEmbedding(cfg).to(dev)
    pos = torch.arange(tokens, device=dev)[None]
    layer_kw = {"position_embeddings": rope(torch.zeros(1, tokens, h, device=dev, dtype=dt), pos),
                "attention_mask": None, "position_ids": pos}
    for ckpt in (False, True):  # Trainer's gradient checkpointing: non-reentrant torch.utils.checkpoint
        for sp in (None, False, True):
            layer = LlamaDecoderLayer(cfg, 0).to(dev, dt)
            if sp is not None:
                _, plan = tp_plans(sp)
                parallelize_module(layer, mesh, plan)
            name = ("decoder_layer" if sp is None else ("decoder_layer_tp_sp" if sp else "decoder_layer_tp")) + (
                "_ckpt" if ckpt else "")
            run_case(name, Checkpointed(torch, layer) if ckpt else layer, x_shard if sp else x_full, layer_kw)
    # FSDP2 over the layer (its root): plain over all ranks, and over the data-parallel half of a
    # (2, world / 2) mesh whose other dimension is the layer's tensor and sequence parallelism
    from torch.distributed.fsdp import fully_shard

    layer = LlamaDecoderLayer(cfg, 0).to(dev, dt)
    fully_shard(layer, mesh=mesh)
    run_case("decoder_layer_fsdp2", layer, x_full, layer_kw)
    if world >= 4:
        mesh2 = init_device_mesh(dev, (2, world // 2), mesh_dim_names=("dp", "tp"))
        layer = LlamaDecoderLayer(cfg, 0).to(dev, dt)
        _, plan = tp_plans(True)
        parallelize_module(layer, mesh2["tp"], plan)
        fully_shard(layer, mesh=mesh2["dp"])
        run_case(f"decoder_layer_tp{world // 2}_sp_fsdp2", layer,
                 lambda: torch.randn(1, tokens // (world // 2), h, device=dev, dtype=dt, requires_grad=True), layer_kw)
    dist.destroy_process_group()
    return rows


def cpu_adamw_cases(torch, reps: int) -> list[dict]:
    rows = []
    sets = {"one-256M": [256 * 2**20],
            # one rank's FSDP2 shards of Llama-3.1-8B over 8 ranks: per tensor numel / 8
            "llama-3.1-8b/8": [n // 8 for n in [128256 * 4096] + [4096 * 4096, 1024 * 4096, 1024 * 4096,
                                                                4096 * 4096, 14336 * 4096, 14336 * 4096,
                                                                4096 * 14336, 4096, 4096] * 32 + [4096, 128256 * 4096]]}
    for dtype_name in ("bf16", "fp32"):
        dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float32
        for set_name, sizes in sets.items():
            for impl in ("fused", "foreach"):
                params = [torch.zeros(n, dtype=dtype, requires_grad=True) for n in sizes]
                for p in params:
                    p.grad = torch.randn(p.shape, dtype=dtype)
                opt = torch.optim.AdamW(params, lr=1e-5, **{impl: True})
                for _ in range(2):
                    opt.step()
                times = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    opt.step()
                    times.append(time.perf_counter() - t0)
                numel = sum(sizes)
                s = statistics.median(times)
                rows.append({"set": set_name, "dtype": dtype_name, "impl": impl, "tensors": len(sizes),
                             "numel": numel, "step_ms": round(s * 1e3, 2),
                             "elements_per_s": round(numel / s), "threads": torch.get_num_threads()})
                del params, opt
    return rows


def dispatch_cases(torch, repeats: int = 5) -> dict:
    from planner_app.probe.bench import TorchBackend

    if not torch.cuda.is_available():
        return {}
    meds = [statistics.median(TorchBackend().dispatch(7)) * 1e6 for _ in range(repeats)]
    return {"us_per_op_medians": [round(m, 3) for m in meds], "us_per_op": round(statistics.median(meds), 3)}


def pcie_cases(torch, reps: int = 5) -> list[dict]:
    if not torch.cuda.is_available():
        return []
    rows = []
    big = [512 * 2**20]  # 1 GiB of bf16
    layer = [n // 8 for n in (4096 * 4096, 1024 * 4096, 1024 * 4096, 4096 * 4096, 14336 * 4096, 14336 * 4096,
                              4096 * 14336, 4096, 4096)] * 8  # 8 layers of an 8-rank Llama-3.1-8B shard
    for set_name, sizes in (("one-1GiB", big), ("llama-3.1-8b/8 x8 layers", layer)):
        dev = [torch.empty(n, dtype=torch.bfloat16, device="cuda") for n in sizes]
        nbytes = sum(t.numel() * 2 for t in dev)
        for kind in ("h2d_pinned", "d2h_pinned", "d2h_pageable"):
            host = [torch.empty(n, dtype=torch.bfloat16, pin_memory=kind != "d2h_pageable") for n in sizes]
            times = []
            for r in range(reps + 1):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for h, d in zip(host, dev):
                    if kind == "h2d_pinned":
                        d.copy_(h, non_blocking=True)
                    else:
                        h.copy_(d, non_blocking=True)
                torch.cuda.synchronize()
                if r:
                    times.append(time.perf_counter() - t0)
            s_ = statistics.median(times)
            rows.append({"set": set_name, "kind": kind, "tensors": len(sizes), "bytes": nbytes,
                         "ms": round(s_ * 1e3, 3), "gb_s": round(nbytes / s_ / 1e9, 2)})
            del host
        del dev
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--worlds", default="2,4,8")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--adamw-reps", type=int, default=5)
    ap.add_argument("--part", choices=("all", "dtensor", "cpu_adamw", "dispatch", "pcie", "_world"), default="all")
    ap.add_argument("--world", type=int, default=0)
    a = ap.parse_args(argv)
    import torch

    if a.part == "_world":  # one fake group per process
        write_json(a.out, dtensor_cases(torch, a.world, a.reps))
        return 0
    import json
    import subprocess

    info = {"command": command_line(), "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
            "python": platform.python_version(), "cpu_count": os.cpu_count(),
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"}
    try:
        import transformers
        info["transformers"] = transformers.__version__
    except ImportError:
        pass
    out = {"info": info, "dtensor": [], "cpu_adamw": [], "dispatch": {}, "pcie": []}
    if a.part in ("all", "dispatch"):
        out["dispatch"] = dispatch_cases(torch)
        write_json(a.out, out)
    if a.part in ("all", "dtensor"):
        for w in (int(v) for v in a.worlds.split(",")):
            tmp = f"{a.out}.w{w}.json"
            subprocess.run([sys.executable, "-m", "benchmarks.gpu.gpu_host_costs", "--part", "_world",
                            "--world", str(w), "--reps", str(a.reps), "--out", tmp], check=True)
            with open(tmp) as f:
                out["dtensor"] += json.load(f)
            os.remove(tmp)
            write_json(a.out, out)
    if a.part in ("all", "pcie"):
        out["pcie"] = pcie_cases(torch)
        write_json(a.out, out)
    if a.part in ("all", "cpu_adamw"):
        out["cpu_adamw"] = cpu_adamw_cases(torch, a.adamw_reps)
    if a.part in ("all", "dispatch"):  # again at the end: the host's speed may drift within a session
        out["dispatch_end"] = dispatch_cases(torch)
    write_json(a.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
