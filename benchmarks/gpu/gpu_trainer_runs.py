"""Measure fine-tuning through the API users call: Hugging Face ``Trainer`` (with PEFT LoRA,
bitsandbytes QLoRA, or full fine-tuning), on a local GPU.

An independent check of the engine (issue 14): each case builds a model from a Hugging Face
``config.json`` (tests/data/hf_configs/, or the shapes given inline below) with random weights
on the GPU (no download), wraps it as a user would (``get_peft_model``,
``prepare_model_for_kbit_training``), and trains it with ``Trainer`` as configured by default
(its default optimizer, ``adamw_torch_fused`` on PyTorch >= 2.8; ``bf16=True``, which runs the
forward under ``torch.autocast``), on random tokens. A ``TrainerCallback`` records, per step,
``torch.cuda.max_memory_allocated`` (reset at each step's start) and the wall time between
``on_step_begin`` and ``on_step_end`` with the GPU synchronised. Peaks are relative to the
memory allocated before the model was built.

Usage (on the GPU machine, from the project root; bitsandbytes carried as a wheel)::

    python -m benchmarks.gpu.gpu_trainer_runs --out tests/data/trainer_runs_h200.json
    python -m benchmarks.gpu.gpu_trainer_runs --cases trainer-lora-7b-r16-alllinear --steps 6
"""
from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import tempfile
import time
import traceback

from benchmarks.gpu import gpu_finetune_runs as base  # model building and NF4 quantisation shared with it
from benchmarks.gpu.bench_io import command_line, write_json  # all-or-nothing JSON write

ALL = "all-linear"
QV = ["q_proj", "v_proj"]
QKVO = ["q_proj", "k_proj", "v_proj", "o_proj"]


def _case(name, cfg, b, s, *, lora=None, quant=None, prepare=False, gc_=False, base_dtype="bf16",
          adapter_dtype="fp32", dropout=0.0, config_dict=None, attention="sdpa"):
    return dict(name=name, config=cfg, micro_batch=b, seq_len=s, lora=lora, quant=quant, prepare_kbit=prepare,
                grad_checkpointing=gc_, base_dtype=base_dtype, adapter_dtype=adapter_dtype, lora_dropout=dropout,
                config_dict=config_dict, attention=attention)


def _reduced(cfg_name, layers):
    """A config of tests/data/hf_configs/ with its real widths and only ``layers`` layers (so full
    fine-tuning of a large mixture-of-experts model fits one GPU); per-layer lists cut to match."""
    d = dict(base.hf_config(cfg_name))
    d["num_hidden_layers"] = layers
    if "layer_types" in d:
        d["layer_types"] = d["layer_types"][:layers]
    if "max_window_layers" in d:
        d["max_window_layers"] = min(d["max_window_layers"], layers)
    return d


CASES = [
    _case("trainer-lora-7b-r16-alllinear-b4s2048", "llama-2-7b", 4, 2048, lora={"r": 16, "target_modules": ALL}),
    _case("trainer-lora-7b-r16-alllinear-gc-b4s2048", "llama-2-7b", 4, 2048, lora={"r": 16, "target_modules": ALL},
          gc_=True),
    _case("trainer-qlora-7b-r16-alllinear-prep-b4s2048", "llama-2-7b", 4, 2048,
          lora={"r": 16, "target_modules": ALL}, quant="nf4", prepare=True),
    _case("trainer-qlora-7b-r64-alllinear-gc-b2s4096", "llama-2-7b", 2, 4096, lora={"r": 64, "target_modules": ALL},
          quant="nf4", gc_=True),
    _case("trainer-lora-1b-r32-qkvo-drop005-b8s1024", "llama-3.2-1b", 8, 1024, lora={"r": 32, "target_modules": QKVO},
          dropout=0.05),
    _case("trainer-lora-1b-fp32base-r16-qv-b4s2048", "llama-3.2-1b", 4, 2048, lora={"r": 16, "target_modules": QV},
          base_dtype="fp32"),
    _case("trainer-lora-qwen1.5b-bf16adapters-r16-alllinear-b8s1024", "qwen2.5-1.5b", 8, 1024,
          lora={"r": 16, "target_modules": ALL}, adapter_dtype="bf16"),
    _case("trainer-lora-qwen7b-r8-qv-gc-b2s4096", "qwen2.5-7b", 2, 4096, lora={"r": 8, "target_modules": QV}, gc_=True),
    _case("trainer-lora-mixtralmini-r16-alllinear-b4s2048", "mixtral-mini", 4, 2048,
          lora={"r": 16, "target_modules": ALL}),
    _case("trainer-full-1b-b4s2048", "llama-3.2-1b", 4, 2048),
    _case("trainer-full-1b-gc-b8s2048", "llama-3.2-1b", 8, 2048, gc_=True),
    _case("trainer-full-gpt2medium-b8s1024", "gpt2-medium", 8, 1024),
    # the model families of config.json import (issue 14); Gemma 2 and gpt-oss in eager attention
    # (GptOssPreTrainedModel and Gemma2PreTrainedModel set _supports_sdpa = False: soft-capping and sinks)
    _case("trainer-full-gemma2-2b-eager-b2s2048", "gemma-2-2b", 2, 2048, attention="eager"),
    _case("trainer-lora-gemma2-2b-r16-alllinear-eager-b4s2048", "gemma-2-2b", 4, 2048, attention="eager",
          lora={"r": 16, "target_modules": ALL}),
    _case("trainer-full-phi3mini-b4s1024", "phi-3-mini-4k", 4, 1024),
    _case("trainer-lora-phi3mini-r16-qkvo-b4s2048", "phi-3-mini-4k", 4, 2048,
          lora={"r": 16, "target_modules": ["qkv_proj", "o_proj"]}),
    _case("trainer-full-qwen3moe30b-6l-b2s2048", "qwen3-30b-a3b", 2, 2048, config_dict=_reduced("qwen3-30b-a3b", 6)),
    _case("trainer-lora-qwen3moe30b-6l-r16-qkvo-b4s2048", "qwen3-30b-a3b", 4, 2048,
          lora={"r": 16, "target_modules": QKVO}, config_dict=_reduced("qwen3-30b-a3b", 6)),
    _case("trainer-full-gptoss20b-4l-eager-b2s2048", "gpt-oss-20b", 2, 2048, attention="eager",
          config_dict=_reduced("gpt-oss-20b", 4)),
    _case("trainer-lora-gptoss20b-4l-r16-qkvo-eager-b2s2048", "gpt-oss-20b", 2, 2048, attention="eager",
          lora={"r": 16, "target_modules": QKVO}, config_dict=_reduced("gpt-oss-20b", 4)),
    _case("trainer-lora-qwen3-8b-r16-alllinear-b4s2048", "qwen3-8b", 4, 2048, lora={"r": 16, "target_modules": ALL}),
    _case("trainer-lora-qwen3-8b-r8-default-gc-b2s4096", "qwen3-8b", 2, 4096, lora={"r": 8, "target_modules": None},
          gc_=True),
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def build(torch, case):
    from transformers import AutoConfig, AutoModelForCausalLM

    d = dict(case["config_dict"] or base.hf_config(case["config"]))
    mt = d.pop("model_type")
    cfg = AutoConfig.for_model(mt, **d)
    cfg.use_cache = False
    dtype = torch.bfloat16 if case["base_dtype"] == "bf16" else torch.float32
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=case["attention"])
    model.train()
    return model, cfg


class Dataset:
    """Random token sequences (labels = inputs), as many as the steps need."""

    def __init__(self, torch, vocab, n, seq):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def run_case(torch, case, steps, base_bytes):
    from transformers import Trainer, TrainerCallback, TrainingArguments

    rec = {k: v for k, v in case.items() if k != "config_dict" or v}
    t0 = time.perf_counter()
    model, cfg = build(torch, case)
    rec["params"] = sum(p.numel() for p in model.parameters())
    if case["quant"]:
        rec["linear4bit_layers"] = base.quantize_nf4_inplace(torch, model)
    lora = case["lora"]
    if case["prepare_kbit"]:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model)  # defaults: use_gradient_checkpointing=True
    elif case["grad_checkpointing"] and lora:
        model.enable_input_require_grads()  # what PEFT's docs and TRL do before gradient checkpointing
    if lora:
        from peft import LoraConfig, get_peft_model

        lcfg = LoraConfig(r=lora["r"], target_modules=lora["target_modules"], lora_dropout=case["lora_dropout"],
                          task_type="CAUSAL_LM")
        model = get_peft_model(model, lcfg, autocast_adapter_dtype=case["adapter_dtype"] == "fp32")
        rec["lora_config"] = {k: v for k, v in lcfg.to_dict().items() if k in ("r", "lora_alpha", "lora_dropout")}
        rec["lora_targets_resolved"] = sorted(getattr(model.peft_config["default"], "target_modules", None) or [])
    params = [p for p in model.parameters() if p.requires_grad]
    rec["trainable_params"] = sum(p.numel() for p in params)
    rec["trainable_dtypes"] = base.dtype_counts(params)
    rec["frozen_dtypes"] = base.dtype_counts(p for p in model.parameters() if not p.requires_grad)
    torch.cuda.synchronize()
    rec["params_bytes"] = torch.cuda.memory_allocated() - base_bytes
    rec["build_s"] = round(time.perf_counter() - t0, 2)

    steps_out = []

    class Probe(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.start_bytes = torch.cuda.memory_allocated() - base_bytes
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            steps_out.append({"step_ms": (time.perf_counter() - self.t) * 1e3,
                              "peak_bytes": torch.cuda.max_memory_allocated() - base_bytes,
                              "start_bytes": self.start_bytes,
                              "end_bytes": torch.cuda.memory_allocated() - base_bytes})

    with tempfile.TemporaryDirectory() as out_dir:
        args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=case["micro_batch"], max_steps=steps,
                                 bf16=True, gradient_checkpointing=case["grad_checkpointing"] or case["prepare_kbit"],
                                 learning_rate=1e-5, logging_strategy="no", save_strategy="no", report_to=[],
                                 dataloader_num_workers=0, remove_unused_columns=False)
        trainer = Trainer(model=model, args=args,
                          train_dataset=Dataset(torch, cfg.vocab_size, steps * case["micro_batch"], case["seq_len"]),
                          callbacks=[Probe()])
        trainer.train()
        opt = trainer.optimizer
        inner = getattr(opt, "optimizer", opt)
        rec["optimizer_class"] = f"{type(inner).__module__}.{type(inner).__name__}"
        rec["optimizer_defaults"] = {k: v for k, v in inner.defaults.items()
                                     if isinstance(v, (bool, int, float, str, type(None)))}
        rec["trainer_optim"] = str(args.optim)
        rec["gradient_checkpointing_kwargs"] = args.gradient_checkpointing_kwargs
        rec["is_gradient_checkpointing"] = bool(getattr(trainer.model, "is_gradient_checkpointing", False))
    if lora:  # the adapters trained: lora_B starts at zero and must have moved
        rec["lora_B_moved"] = any(float(p.detach().abs().max()) > 0 for n, p in model.named_parameters()
                                  if "lora_B" in n)
    rec["steps"] = steps_out
    timed = steps_out[2:] or steps_out
    rec["peak_bytes"] = max(s["peak_bytes"] for s in steps_out)
    rec["step_ms_median"] = statistics.median(s["step_ms"] for s in timed)
    rec["step_ms_spread"] = [min(s["step_ms"] for s in timed), max(s["step_ms"] for s in timed)]
    rec["status"] = "ok"
    del trainer, model, opt, inner
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="trainer_runs.json")
    ap.add_argument("--cases", default="all")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--budget-s", type=float, default=540)
    ap.add_argument("--merge", help="an earlier results file: its cases are kept, those run now added or replaced")
    args = ap.parse_args()
    import torch
    import transformers

    info = {"command": command_line(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0), "steps": args.steps,
            "timing": "wall time from Trainer's on_step_begin to on_step_end, GPU synchronised; median of the "
                      "steps after the first two"}
    for mod in ("peft", "bitsandbytes", "accelerate"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001
            info[mod] = f"unavailable: {e}"
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    base_bytes = torch.cuda.memory_allocated()
    result = {"info": info, "cases": []}
    wanted = None if args.cases == "all" else set(args.cases.split(","))
    if args.merge:  # keep the earlier cases and info as they were; this run's info goes under "added_runs"
        with open(args.merge) as f:
            earlier = json.load(f)
        info["cases"] = [c["name"] for c in CASES if not wanted or c["name"] in wanted]
        earlier["info"].setdefault("added_runs", []).append(info)
        result = earlier
    deadline = time.time() + args.budget_s
    for case in CASES:
        if wanted and case["name"] not in wanted:
            continue
        if time.time() > deadline:
            result["cases"].append({"name": case["name"], "status": "skipped", "error": "time budget"})
            continue
        log("case", case["name"])
        t0 = time.time()
        try:
            torch.cuda.reset_peak_memory_stats()
            rec = run_case(torch, case, args.steps, base_bytes)
        except Exception as e:  # noqa: BLE001 - a failed case is data
            rec = {"name": case["name"], "status": "error", "error": f"{type(e).__name__}: {str(e)[:400]}",
                   "traceback_tail": traceback.format_exc()[-1500:]}
            log("  failed:", rec["error"][:300])
        rec["case_wall_s"] = round(time.time() - t0, 1)
        gc.collect()
        torch.cuda.empty_cache()
        if rec["status"] == "ok":
            log(f"  peak {rec['peak_bytes'] / 1e9:.2f} GB  step {rec['step_ms_median']:.1f} ms ({rec['case_wall_s']} s)")
        result["cases"] = [c for c in result["cases"] if c["name"] != rec["name"]] + [rec]
        write_json(args.out, result)


if __name__ == "__main__":
    main()
