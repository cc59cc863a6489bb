"""Hugging Face Trainer's own cost per optimizer step, apart from the model's GPU work, on a local GPU.

A tiny Llama (2 layers, hidden 256, vocab 1024, batch 1 x 128 tokens: microseconds of GPU work) is
trained three ways, each step timed with the GPU synchronised at its start and end, as
benchmarks/gpu/gpu_trainer_runs.py times its steps: ``Trainer`` as configured by default
(``max_grad_norm=1.0``: clip_grad_norm_ every step), ``Trainer`` with ``max_grad_norm=0`` (no
clipping), and a plain loop (autocast forward, backward, fused AdamW step, zero_grad). The medians'
differences are the host time Trainer adds per step and what clipping adds.

    python -m benchmarks.gpu.gpu_trainer_overhead --out trainer_overhead.json
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time

from benchmarks.gpu.bench_io import command_line, write_json  # all-or-nothing JSON write

CFG = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1024, "max_position_embeddings": 512,
       "tie_word_embeddings": False}


def build(torch):
    from transformers import AutoConfig, AutoModelForCausalLM

    d = dict(CFG)
    cfg = AutoConfig.for_model(d.pop("model_type"), **d)
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
    m.train()
    return m


class Dataset:
    def __init__(self, torch, n, seq):
        self.ids = torch.randint(0, CFG["vocab_size"], (n, seq), generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def trainer_steps(torch, steps, max_grad_norm):
    from transformers import Trainer, TrainerCallback, TrainingArguments

    times = []

    class Probe(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            torch.cuda.synchronize()
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            times.append((time.perf_counter() - self.t) * 1e3)

    model = build(torch)
    with tempfile.TemporaryDirectory() as d:
        args = TrainingArguments(output_dir=d, per_device_train_batch_size=1, max_steps=steps, bf16=True,
                                 learning_rate=1e-5, logging_strategy="no", save_strategy="no", report_to=[],
                                 dataloader_num_workers=0, remove_unused_columns=False, max_grad_norm=max_grad_norm)
        Trainer(model=model, args=args, train_dataset=Dataset(torch, steps, 128), callbacks=[Probe()]).train()
    return times[5:]


def loop_steps(torch, steps):
    model = build(torch)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, CFG["vocab_size"], (1, 128), device="cuda")
    times = []
    for _ in range(steps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return times[5:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="trainer_overhead.json")
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    import torch
    import transformers

    info = {"command": command_line(), "torch": torch.__version__,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "cpu": platform.processor() or platform.machine(), "model": CFG}
    res = {}
    for name, fn in (("loop", lambda: loop_steps(torch, args.steps)),
                     ("trainer_clip", lambda: trainer_steps(torch, args.steps, 1.0)),
                     ("trainer_noclip", lambda: trainer_steps(torch, args.steps, 0.0))):
        ts = fn()
        res[name] = {"median_ms": statistics.median(ts), "min_ms": min(ts), "steps_timed": len(ts)}
        print(name, res[name], file=sys.stderr, flush=True)
    write_json(args.out, {"info": info, "results": res})


if __name__ == "__main__":
    main()
