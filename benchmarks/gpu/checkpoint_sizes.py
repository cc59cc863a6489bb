"""Measure what ``torch.save`` and ``torch.distributed.checkpoint`` write for real Hugging Face
models with random weights on the CPU (issue 19), for tests/data/checkpoint_sizes.json.

    .venv/bin/python -m benchmarks.gpu.checkpoint_sizes -o tests/data/checkpoint_sizes.json

Each model is built on the meta device and materialised with ``to_empty`` (no initialisation,
no download; tied embeddings re-tied), in the recipe's parameter dtype. Three saves per model:
- ``weights``: ``torch.save(model.state_dict())``;
- ``resumable``: ``torch.save({"model", "optimizer", "lr_scheduler", "rng", "step"})`` after one
  AdamW step (states exist), as Hugging Face Trainer / torchtitan keep them;
- ``dcp``: ``torch.distributed.checkpoint.save`` of ``get_state_dict(model, optimizer)`` in one
  process: the ``__0_0.distcp`` file of the rank and the ``.metadata`` file.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings

CASES = (  # (config, recipe): amp-bf16 keeps fp32 parameters and states, bf16 keeps both in bf16
    ("tests/data/checkpoint_configs/tiny-llama.json", "amp-bf16"),
    ("tests/data/hf_configs/gpt2.json", "amp-bf16"),
    ("tests/data/hf_configs/llama-3.2-1b.json", "bf16"),
)


def build(path, dtype):
    import torch
    import transformers

    cfg = transformers.AutoConfig.from_pretrained(os.path.dirname(path) if path.endswith("config.json") else path)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    model.to_empty(device="cpu")
    model.tie_weights()
    for p in model.parameters():  # random, cheap: a constant fill per tensor is enough for sizes
        p.data.uniform_(-0.02, 0.02) if p.numel() < 5e6 else p.data.fill_(0.01)
    return model


def file_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def measure(path, recipe, tmp):
    import torch
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    dtype = torch.float32 if recipe == "amp-bf16" else torch.bfloat16
    model = build(path, dtype)
    sd = model.state_dict()
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in sd.values()}
    params = list(model.parameters())
    out = {"config": path, "recipe": recipe, "dtype": str(dtype).replace("torch.", ""),
           "params": sum(p.numel() for p in params), "param_tensors": len(params),
           "state_dict_keys": len(sd), "state_dict_storage_bytes": sum(storages.values())}
    f = os.path.join(tmp, "weights.pt")
    torch.save(sd, f)
    out["torch_save_weights_bytes"] = file_bytes(f)
    os.remove(f)
    opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    for p in params:
        p.grad = torch.zeros_like(p)
    opt.step()
    sched.step()
    for p in params:
        p.grad = None
    ckpt = {"model": sd, "optimizer": opt.state_dict(), "lr_scheduler": sched.state_dict(),
            "rng": {"python": __import__("random").getstate(), "cpu": torch.get_rng_state()}, "step": 1}
    f = os.path.join(tmp, "resumable.pt")
    torch.save(ckpt, f)
    out["torch_save_resumable_bytes"] = file_bytes(f)
    os.remove(f)
    out["rng_cpu_state_bytes"] = torch.get_rng_state().numel()
    msd, osd = get_state_dict(model, opt)
    d = os.path.join(tmp, "dcp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "torch.distributed is not initialized: single process"
        dcp.save({"model": msd, "optim": osd}, checkpoint_id=d)
    out["dcp_files"] = {name: os.path.getsize(os.path.join(d, name)) for name in sorted(os.listdir(d))}
    out["dcp_total_bytes"] = file_bytes(d)
    shutil.rmtree(d)
    del ckpt, msd, osd, opt, model, sd
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="")
    ap.add_argument("--dir", default="", help="folder for the temporary checkpoints (default: a temp folder)")
    args = ap.parse_args(argv)
    import torch
    import transformers

    results = []
    with tempfile.TemporaryDirectory(dir=args.dir or None) as tmp:
        for path, recipe in CASES:
            t = time.time()
            r = measure(path, recipe, tmp)
            r["elapsed_s"] = round(time.time() - t, 1)
            print(json.dumps(r), file=sys.stderr, flush=True)
            results.append(r)
    doc = {"command": ".venv/bin/python -m benchmarks.gpu.checkpoint_sizes -o tests/data/checkpoint_sizes.json",
           "torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version(),
           "machine": f"{platform.machine()} {platform.system()}, CPU only",
           "date": time.strftime("%Y-%m-%d", time.gmtime()), "cases": results}
    text = json.dumps(doc, indent=1)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
