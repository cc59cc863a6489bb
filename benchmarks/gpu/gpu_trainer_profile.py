"""Where Hugging Face Trainer's step time goes beyond the same step in a plain loop: one case of
benchmarks/gpu/gpu_kernel_profile.py run under ``Trainer`` (as gpu_trainer_runs.py configures it),
``torch.profiler`` over steps 3-5 (CUDA kernels and the host's aten ops), wall time per step with the
GPU synchronised at each step's ends (the Trainer runs' timing) and the kernel time inside it.

    python -m benchmarks.gpu.gpu_trainer_profile --case qwen3moe30b-6l-lora-r16-qkvo-b4s2048 --out p.json
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time

from benchmarks.gpu import gpu_kernel_profile as kp
from benchmarks.gpu import gpu_trainer_runs as tr
from benchmarks.gpu.bench_io import command_line, kernel_times, write_json  # profiler kernel table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="qwen3moe30b-6l-lora-r16-qkvo-b4s2048")
    ap.add_argument("--out", default="trainer_profile.json")
    args = ap.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile
    from transformers import Trainer, TrainerCallback, TrainingArguments

    case = next(c for c in kp.CASES if c["name"] == args.case)
    model, cfg = tr.build(torch, case)
    if case["lora"]:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=case["lora"]["r"], target_modules=case["lora"]["target_modules"],
                                                 lora_dropout=case["lora_dropout"], task_type="CAUSAL_LM"))
    steps, prof_steps = 7, (3, 6)
    walls, state = [], {}

    class Probe(TrainerCallback):
        def on_step_begin(self, a, s, c, **kw):
            if s.global_step == prof_steps[0]:
                state["prof"] = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
                state["prof"].__enter__()
            torch.cuda.synchronize()
            state["t"] = time.perf_counter()

        def on_step_end(self, a, s, c, **kw):
            torch.cuda.synchronize()
            walls.append((time.perf_counter() - state["t"]) * 1e3)
            if s.global_step == prof_steps[1]:
                state["prof"].__exit__(None, None, None)

    with tempfile.TemporaryDirectory() as out_dir:
        targs = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=case["micro_batch"], max_steps=steps,
                                  bf16=True, gradient_checkpointing=False, learning_rate=1e-5, logging_strategy="no",
                                  save_strategy="no", report_to=[], dataloader_num_workers=0,
                                  remove_unused_columns=False)
        Trainer(model=model, args=targs, callbacks=[Probe()],
                train_dataset=tr.Dataset(torch, cfg.vocab_size, steps * case["micro_batch"], case["seq_len"])).train()
    n = prof_steps[1] - prof_steps[0]
    events = state["prof"].key_averages()
    kernels = {k: ms for k, (ms, _calls) in kernel_times(events, per=n).items()}
    ops = {}
    for ev in events:
        if ev.key.startswith(("aten::", "cuda")):
            ops[ev.key] = ops.get(ev.key, 0) + ev.count / n
    by_class = {}
    for name, ms in kernels.items():
        by_class[kp.classify(name)] = by_class.get(kp.classify(name), 0.0) + ms
    out = {"case": case["name"], "wall_ms_per_step": walls, "kernel_ms_per_step": sum(kernels.values()),
           "by_class_ms": {k: round(v, 3) for k, v in sorted(by_class.items(), key=lambda kv: -kv[1])},
           "syncs_per_step": ops.get("aten::_local_scalar_dense", 0), "cuda_sync_calls_per_step":
           ops.get("cudaStreamSynchronize", 0) + ops.get("cudaDeviceSynchronize", 0),
           "top_kernels": [{"name": k[:140], "ms": round(v, 3)}
                           for k, v in sorted(kernels.items(), key=lambda kv: -kv[1])[:25]],
           "command": command_line(), "torch": torch.__version__}
    print({k: v for k, v in out.items() if k != "top_kernels"}, file=sys.stderr)
    write_json(args.out, out)


if __name__ == "__main__":
    main()
