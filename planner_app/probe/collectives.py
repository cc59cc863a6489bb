"""Collective bandwidth probe over torch.distributed (NCCL on GPUs, gloo on CPUs).

Run one process per GPU under torchrun (single node or multi-node rendezvous)::

    torchrun --nproc-per-node 8 -m planner_app.probe.collectives --out cluster.json
    torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d \\
        --rdzv-endpoint HOST:29500 -m planner_app.probe.collectives --out cluster.json

It measures all-reduce, all-gather, reduce-scatter and all-to-all over message sizes,
reporting ``algbw`` and ``busbw`` exactly as nccl-tests defines them (size is the whole
buffer: the all-gather output, the reduce-scatter input; busbw factors in
``planner_app.core.hardware.collectives``), and the point-to-point bandwidth matrix. Rank 0
writes one JSON file. Only torch and the standard library are needed, so it runs in
the user's own ML environment on every node.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import sys
import time

from planner_app.atomic import atomic_write_text
from planner_app.core.hardware.collectives import algbw_gbps, bus_factor

RESULT_SCHEMA = "planner.collectives/1"
DEFAULT_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")


def message_sizes(min_bytes: int, max_bytes: int, factor: int) -> list[int]:
    """Sizes from ``min_bytes`` to ``max_bytes`` multiplying by ``factor`` (nccl-tests -b/-e/-f)."""
    if min_bytes < 4 or max_bytes < min_bytes or factor < 2:
        raise ValueError("sizes need 4 <= min_bytes <= max_bytes and factor >= 2")
    out = []
    size = min_bytes
    while size <= max_bytes:
        out.append(size)
        size *= factor
    return out


class _Timer:
    """Times a block of back-to-back operations with device events (CUDA) or a host clock."""

    def __init__(self, torch, cuda: bool):
        self.torch = torch
        self.cuda = cuda

    def time_s(self, fn, iters: int) -> float:
        torch = self.torch
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3 / iters
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        return (time.perf_counter() - t0) / iters


def _collective_fn(torch, dist, name: str, size_bytes: int, world: int, device):
    """Buffers and a closure running one collective on ``size_bytes`` (the nccl-tests size)."""
    elems = max(world, size_bytes // 4 // world * world)  # float32, divisible by the world size
    if name == "all_reduce":
        buf = torch.ones(elems, dtype=torch.float32, device=device)
        return elems * 4, lambda: dist.all_reduce(buf)
    if name == "all_gather":
        out = torch.empty(elems, dtype=torch.float32, device=device)
        inp = torch.ones(elems // world, dtype=torch.float32, device=device)
        return elems * 4, lambda: dist.all_gather_into_tensor(out, inp)
    if name == "reduce_scatter":
        inp = torch.ones(elems, dtype=torch.float32, device=device)
        out = torch.empty(elems // world, dtype=torch.float32, device=device)
        return elems * 4, lambda: dist.reduce_scatter_tensor(out, inp)
    if name == "all_to_all":
        inp = torch.ones(elems, dtype=torch.float32, device=device)
        out = torch.empty(elems, dtype=torch.float32, device=device)
        return elems * 4, lambda: dist.all_to_all_single(out, inp)
    if name == "broadcast":
        buf = torch.ones(elems, dtype=torch.float32, device=device)
        return elems * 4, lambda: dist.broadcast(buf, 0)
    raise ValueError(f"unknown collective {name!r}")


def _iters_for(size_bytes: int, base_iters: int) -> int:
    # Fewer repetitions for the largest messages keep a full sweep within minutes.
    if size_bytes >= 256 << 20:
        return max(3, base_iters // 4)
    return base_iters


def _reduce_times(torch, dist, t_s: float, device) -> tuple[float, float]:
    """Average and maximum of a per-rank time across ranks."""
    t = torch.tensor([t_s, t_s], dtype=torch.float64, device=device)
    dist.all_reduce(t[0:1], op=dist.ReduceOp.SUM)
    dist.all_reduce(t[1:2], op=dist.ReduceOp.MAX)
    return float(t[0]) / dist.get_world_size(), float(t[1])


def check_all_reduce(torch, dist, device) -> bool:
    """A correctness check: all-reduce of each rank's (rank+1) must give n(n+1)/2 everywhere."""
    n = dist.get_world_size()
    x = torch.full((1024,), float(dist.get_rank() + 1), device=device)
    dist.all_reduce(x)
    ok = torch.tensor([1.0 if bool((x == n * (n + 1) / 2).all()) else 0.0], device=device)
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    return bool(ok.item() == 1.0)


def sweep(torch, dist, device, collectives, sizes, iters: int, warmup: int, progress=None):
    """Time each collective at each size; rows as nccl-tests reports them."""
    cuda = device.type == "cuda"
    timer = _Timer(torch, cuda)
    world = dist.get_world_size()
    rows = []
    total = len(collectives) * len(sizes)
    done = 0
    for name in collectives:
        for size in sizes:
            nbytes, fn = _collective_fn(torch, dist, name, size, world, device)
            for _ in range(warmup):
                fn()
            if cuda:
                torch.cuda.synchronize()
            dist.barrier()
            t_s = timer.time_s(fn, _iters_for(nbytes, iters))
            avg_s, max_s = _reduce_times(torch, dist, t_s, device)
            algbw = algbw_gbps(nbytes, avg_s)
            rows.append({"collective": name, "bytes": nbytes, "ranks": world, "time_us": avg_s * 1e6,
                         "time_us_max": max_s * 1e6, "algbw_gbps": algbw,
                         "busbw_gbps": algbw * bus_factor(name, world)})
            done += 1
            if progress:
                progress(done / total, f"{name} {nbytes} B")
    return rows


def p2p_matrix(torch, dist, device, size_bytes: int, iters: int):
    """Unidirectional bandwidth (GB/s) from each rank to each other rank, one pair at a time."""
    world = dist.get_world_size()
    rank = dist.get_rank()
    elems = max(1, size_bytes // 4)
    buf = torch.ones(elems, dtype=torch.float32, device=device)
    cuda = device.type == "cuda"
    matrix = [[None] * world for _ in range(world)]
    for src in range(world):
        for dst in range(world):
            if src == dst:
                continue
            dist.barrier()
            elapsed = torch.zeros(1, dtype=torch.float64, device=device)
            if rank in (src, dst):
                def op(src=src, dst=dst):  # this pair's ranks (op runs within the iteration)
                    if rank == src:
                        dist.send(buf, dst)
                    else:
                        dist.recv(buf, src)
                op()  # warm-up: sets up the pair's connection
                if cuda:
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(iters):
                    op()
                if cuda:
                    torch.cuda.synchronize()
                if rank == dst:
                    elapsed[0] = time.perf_counter() - t0
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
            matrix[src][dst] = elems * 4 * iters / float(elapsed[0]) / 1e9
    return matrix


def environment(torch, dist, device) -> dict:
    """What ran: ranks, nodes, devices, library versions."""
    world = dist.get_world_size()
    host = socket.gethostname()
    dev_name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    gathered = [None] * world
    dist.all_gather_object(gathered, {"host": host, "device": dev_name})
    env = {"backend": dist.get_backend(), "world_size": world,
           "nodes": len({g["host"] for g in gathered}), "hosts": sorted({g["host"] for g in gathered}),
           "devices": [g["device"] for g in gathered], "torch": torch.__version__,
           "python": platform.python_version(), "date": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if device.type == "cuda":
        try:
            env["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version())
        except Exception:  # noqa: BLE001 - the version is informative only
            env["nccl"] = None
    env["local_world_size"] = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m planner_app.probe.collectives",
                                 description="Collective bandwidth probe (run under torchrun).")
    ap.add_argument("--out", required=True, help="JSON file written by rank 0")
    ap.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    ap.add_argument("--min-bytes", type=int, default=1024)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--factor", type=int, default=4)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--collectives", default=",".join(DEFAULT_COLLECTIVES))
    ap.add_argument("--p2p-bytes", type=int, default=256 << 20, help="0 skips the point-to-point matrix")
    ap.add_argument("--p2p-iters", type=int, default=10)
    args = ap.parse_args(argv)
    collectives = [c for c in args.collectives.split(",") if c]
    for c in collectives:
        bus_factor(c, 2)  # rejects unknown names before any process group starts
    sizes = message_sizes(args.min_bytes, args.max_bytes, args.factor)

    import torch  # lazy: torch is optional (runs on the cluster's Python)
    import torch.distributed as dist  # lazy: torch is optional (runs on the cluster's Python)

    backend = args.backend
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend=backend, device_id=device if backend == "nccl" else None)
    try:
        rank = dist.get_rank()

        def progress(frac, text):
            if rank == 0:
                print(json.dumps({"type": "progress", "fraction": round(frac, 4), "text": text}), flush=True)

        env = environment(torch, dist, device)
        correct = check_all_reduce(torch, dist, device)
        rows = sweep(torch, dist, device, collectives, sizes, args.iters, args.warmup, progress)
        matrix = p2p_matrix(torch, dist, device, args.p2p_bytes, args.p2p_iters) if args.p2p_bytes else None
        if rank == 0:
            result = {"schema": RESULT_SCHEMA, "environment": env, "all_reduce_correct": correct,
                      "command": " ".join(["torchrun", "...", "-m", "planner_app.probe.collectives"] + (argv or sys.argv[1:])),
                      "rows": rows, "p2p_gbps": matrix, "p2p_bytes": args.p2p_bytes if matrix else None}
            atomic_write_text(args.out, json.dumps(result, indent=1), suffix=".json")
            print(json.dumps({"type": "result", "path": args.out}), flush=True)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
