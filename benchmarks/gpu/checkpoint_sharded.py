"""What torch.distributed.checkpoint writes per rank when several ranks save (issue 19): 2 CPU
processes over gloo save tiny-llama with its AdamW states, (a) replicated on both ranks (DDP's
layout: DCP's planner deduplicates and spreads the tensors over the ranks) and (b) sharded with
FSDP2 ``fully_shard`` (each rank writes its own shard). Adds ``sharded_cases`` to
tests/data/checkpoint_sizes.json.

    .venv/bin/python -m benchmarks.gpu.checkpoint_sharded -o tests/data/checkpoint_sizes.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings

CONFIG = "tests/data/checkpoint_configs/tiny-llama.json"
WORLD = 2


def _worker(rank, layout, folder, port):
    import torch
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    import transformers
    from torch.distributed.checkpoint.state_dict import get_state_dict

    warnings.simplefilter("ignore")
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    cfg = transformers.AutoConfig.from_pretrained(CONFIG)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    if layout == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for layer in model.model.layers:
            fully_shard(layer)
        fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (1, 16))
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    msd, osd = get_state_dict(model, opt)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=folder)
    dist.barrier()
    dist.destroy_process_group()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    import torch
    import torch.multiprocessing as mp

    out = []
    for i, layout in enumerate(("replicated", "fsdp2")):
        with tempfile.TemporaryDirectory() as d:
            try:
                mp.spawn(_worker, args=(layout, d, 29611 + i), nprocs=WORLD, join=True)
            except Exception as e:  # noqa: BLE001 - recorded: a layout this torch cannot save on the CPU
                out.append({"layout": layout, "error": f"{type(e).__name__}: {str(e)[:300]}"})
                continue
            files = {n: os.path.getsize(os.path.join(d, n)) for n in sorted(os.listdir(d))}
        out.append({"layout": layout, "config": CONFIG, "world_size": WORLD, "files": files,
                    "total_bytes": sum(files.values())})
        print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    with open(args.output, encoding="utf-8") as f:
        doc = json.load(f)
    doc["sharded_cases"] = out
    doc["sharded_command"] = (".venv/bin/python -m benchmarks.gpu.checkpoint_sharded -o "
                              "tests/data/checkpoint_sizes.json (torch " + torch.__version__ + ", 2 gloo processes)")
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
