"""Per-rank memory of FSDP2 full and hybrid sharding at cluster scale, measured on one GPU with torch's
fake process group (issue 28's new option, ``--dp-shard``; issue 30 takes this further).

One process is rank 0 of a ``--world``-rank job: ``dist.init_process_group("fake", ...)`` with a
``FakeStore``; collectives are no-ops and every allocation is real (ECOSYSTEM.md). For each case a
Hugging Face model (tests/data/hf_configs/, random weights) is built on the meta device, wrapped as
benchmarks/gpu/gpu_multi_runs.py wraps its fsdp2 cases (``fully_shard`` on every decoder layer and on
the root, ``reshard_after_forward=True``, bf16 weights, fused AdamW, sdpa attention), moved to the
GPU with ``to_empty`` and trained for ``--steps`` steps on random tokens; the record is rank 0's
``torch.cuda.max_memory_allocated`` over the steps less what was allocated before the model was
built (``peak_bytes_net``, as gpu_multi_runs.py). Full sharding uses a 1-D mesh of all ranks,
hybrid sharding a 2-D ``(replicate, shard)`` mesh.

    python -m benchmarks.gpu.fake_pg_hsdp --world 64 --config llama-3.1-8b --shards 0,8,16 \\
        --out tests/data/fake_pg_hsdp_h200.json   # 0: full sharding; appends to an existing file
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform

from benchmarks.gpu.bench_io import command_line, write_json
from benchmarks.gpu.gpu_multi_runs import build_model, hf_config_dict, make_adamw


def run_case(torch, world: int, shard: int, config: str, micro_batch: int, seq_len: int, steps: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    if shard and shard < world:
        mesh = init_device_mesh("cuda", (world // shard, shard), mesh_dim_names=("replicate", "shard"))
    else:
        mesh = init_device_mesh("cuda", (world,), mesh_dim_names=("shard",))
    model, cfg = build_model(torch, hf_config_dict({"config": config}, {}), "meta", torch.bfloat16)
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh, reshard_after_forward=True)
    fully_shard(model, mesh=mesh, reshard_after_forward=True)
    model.to_empty(device="cuda")
    with torch.no_grad():
        for p in model.parameters():
            p.to_local().normal_(0.0, 0.02)
        for b in model.buffers():  # rotary inv_freq: its values do not matter here, finite ones do
            b.fill_(1.0)
    opt = make_adamw(torch, model.parameters(), "cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        x = torch.randint(0, cfg.vocab_size, (micro_batch, seq_len), device="cuda")
        loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    rec = {"config": config, "world": world, "shard": shard or world, "replicate": world // (shard or world),
           "micro_batch": micro_batch, "seq_len": seq_len, "steps": steps, "peak_bytes": peak,
           "base_bytes": base, "peak_bytes_net": peak - base,
           "local_param_numel": sum(p.to_local().numel() for p in model.parameters())}
    del model, opt, x, loss
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--config", default="llama-3.1-8b")
    ap.add_argument("--shards", default="0,8", help="shard group sizes, comma-separated (0: full sharding)")
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    import torch
    import torch.distributed as dist
    import transformers
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", rank=0, world_size=args.world, store=FakeStore())
    torch.cuda.set_device(0)
    data = {"cases": []}
    if os.path.exists(args.out):
        with open(args.out, encoding="utf-8") as f:
            data = json.load(f)
    data["info"] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                    "transformers": transformers.__version__, "python": platform.python_version(),
                    "backend": "fake process group (torch.testing._internal.distributed.fake_pg), rank 0 measured"}
    for s in (int(x) for x in args.shards.split(",")):
        try:
            rec = run_case(torch, args.world, s, args.config, args.micro_batch, args.seq_len, args.steps)
            rec["status"] = "ok"
        except Exception as e:  # an OOM or an unsupported layout is data; the next case runs
            rec = {"config": args.config, "world": args.world, "shard": s or args.world, "status": "failed",
                   "error": f"{type(e).__name__}: {str(e)[:300]}"}
        rec["command"] = command_line()
        data["cases"].append(rec)
        print(json.dumps(rec), flush=True)
        write_json(args.out, data)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
