"""The engine against the fine-tuning measurements of issue 14 (tests/data/finetune_runs_h200.json,
made on one H200 by benchmarks/gpu/gpu_finetune_runs.py): every case the engine can express, its
estimate and the error, and the cases it cannot express (paged 8-bit AdamW, generate() without
a KV cache). AdamW runs are estimated with their implementation (--optimizer-impl), LoRA and
QLoRA runs with --finetune, --lora-rank, --lora-targets and --qlora-prepare.

    python -m accuracy.finetune_accuracy            # prints a markdown table

Measured peak = ``max_memory_allocated`` less the cuBLAS workspace left after warm-up (the
script subtracts it), so the engine's peak is compared without its ``CUBLAS_WORKSPACE_BYTES``.
Step time: median of steps 3-5; generate(): decode time per new token.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data", "finetune_runs_h200.json")
# Runs through Hugging Face Trainer (benchmarks/gpu/gpu_trainer_runs.py): an independent check, made after
# the engine's LoRA model was written against DATA; its cases were not used to set any constant.
TRAINER_DATA = os.path.join(ROOT, "tests", "data", "trainer_runs_h200.json")
CONFIGS = os.path.join(ROOT, "tests", "data", "hf_configs")
# how the engine can express a measured optimizer today (None: it cannot)
OPTIMIZERS = {"adamw-foreach": ("adamw", "foreach"), "adamw-fused": ("adamw", "fused"),
              "adamw-forloop": ("adamw", "forloop"), "bnb-adamw8bit": ("adamw-8bit", "fused"),
              "bnb-paged-adamw8bit": ("adamw-8bit-paged", "fused")}


def _config_file(case: dict) -> str:
    """The config.json a case was built from: tests/data/hf_configs/, or the inline shape it ran
    with (real widths, fewer layers), written to a temporary file."""
    if not case.get("config_dict"):
        return os.path.join(CONFIGS, case["config"] + ".json")
    path = os.path.join(tempfile.gettempdir(), f"finetune_accuracy_{case['name']}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(case["config_dict"], f)
    return path


def trainer_options_for(case: dict) -> tuple[dict, str]:
    """Estimate options for a Trainer run: Trainer(bf16=True) autocasts the forward, over a bf16 base
    (bf16-autocast) or an fp32 one (amp-bf16); its default optimizer is fused AdamW."""
    model = _config_file(case)
    recipe = "bf16-autocast" if case["base_dtype"] == "bf16" else "amp-bf16"
    options = {"model": model, "gpu": "h200-sxm", "micro_batch": case["micro_batch"], "seq_len": case["seq_len"],
               "recipe": recipe, "attention": case.get("attention", "sdpa"), "optimizer": "adamw",
               "optimizer_impl": "fused",
               "recompute": "full" if case.get("grad_checkpointing") or case.get("prepare_kbit") else "none",
               "framework": "pytorch"}
    lora = case.get("lora")
    note = f"Trainer, {recipe}" + (", eager" if options["attention"] == "eager" else "")
    if lora:
        targets = lora["target_modules"]  # None: PEFT's default for the model type
        options.update(finetune="qlora" if case.get("quant") else "lora", lora_rank=lora["r"])
        if targets is not None:
            options["lora_targets"] = targets if isinstance(targets, str) else ",".join(targets)
        if case.get("adapter_dtype", "fp32") != "fp32":
            options["lora_dtype"] = case["adapter_dtype"]
        if case.get("lora_dropout"):
            options["lora_dropout"] = case["lora_dropout"]
        if case.get("prepare_kbit"):
            options["qlora_prepare"] = True
        note += f", --finetune {options['finetune']} r{lora['r']} {options.get('lora_targets', '(PEFT default)')}"
    return options, note + (" GC" if options["recompute"] == "full" else "")


def options_for(case: dict) -> tuple[dict | None, str]:
    """(estimate options, note) for a measured case; options None when it cannot be expressed."""
    model = os.path.join(CONFIGS, case["config"] + ".json")
    name = case["name"]
    if name.startswith("generate"):
        if not case.get("use_cache"):
            return None, "generate() without a KV cache: not a mode the engine models"
        return ({"mode": "inference", "model": model, "gpu": "h200-sxm", "batch": case["batch"],
                 "prompt_len": case["prompt_len"], "new_tokens": case["new_tokens"], "weights_dtype": "bf16",
                 "kv_dtype": "bf16", "attention": "sdpa"}, "Hugging Face generate(), first call")
    opt = OPTIMIZERS.get(case["optimizer"])
    if opt is None:
        return None, f"{case['optimizer']}: states in CUDA managed memory (not counted by max_memory_allocated)"
    note = f"{opt[0]}, --optimizer-impl {opt[1]}"
    options = {"model": model, "gpu": "h200-sxm", "micro_batch": case["micro_batch"], "seq_len": case["seq_len"],
               "recipe": case["recipe"], "attention": case["attention"], "optimizer": opt[0], "optimizer_impl": opt[1],
               "recompute": "full" if case.get("grad_checkpointing") else "none", "framework": "pytorch"}
    lora = case.get("lora")
    if lora:
        targets = lora["target_modules"]
        options.update(finetune="qlora" if case.get("quant") else "lora", lora_rank=lora["r"],
                       lora_targets=targets if isinstance(targets, str) else ",".join(targets))
        if case.get("prepare_kbit"):
            options["qlora_prepare"] = True
        note = f"--finetune {options['finetune']} r{lora['r']} {options['lora_targets']}" + (
            " --qlora-prepare" if case.get("prepare_kbit") else "") + ("" if not case.get("grad_checkpointing")
                                                                       else " GC")
    return options, note


REPEATS = os.path.join(os.path.dirname(DATA), "generate_repeats_h200.json")


def repeated_step_ms(path: str = REPEATS) -> dict:
    """{case: [step ms of each further process]} for the cases timed again in fresh processes (the
    host-bound 1B generate() first calls, which varied by up to +-30% between processes)."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        runs = json.load(f)["runs"]
    out: dict = {}
    for run in runs:
        for c in run["cases"]:
            if c.get("status") == "ok":
                out.setdefault(c["name"], []).append(c["step_ms_median"])
    return out


def main() -> int:
    from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
    from planner_app.service.catalog import open_catalog
    from planner_app.service.estimate import estimate_json

    with open(DATA, encoding="utf-8") as f:
        data = json.load(f)
    with open(TRAINER_DATA, encoding="utf-8") as f:
        trainer = json.load(f)
    from planner_app.core.errors import InputError

    db = open_catalog()
    repeats = repeated_step_ms()
    rows, mem_err, time_err, skipped = [], [], [], []
    for case, (opts, note) in [(c, options_for(c)) for c in data["cases"]] + [
            (c, trainer_options_for(c)) for c in trainer["cases"] if c["status"] == "ok"]:
        if opts is None:
            skipped.append((case["name"], note))
            continue
        try:
            est = estimate_json(opts, db)
        except InputError as e:  # the engine refuses what it does not model: listed, not hidden
            skipped.append((case["name"], f"refused: {e}"))
            continue
        peak_e = est["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES
        peak_m = case["peak_bytes"]
        if opts.get("mode") == "inference":
            # these runs timed a first call (after a 4-token warm-up): new key lengths, cold cuDNN graphs
            t_e, t_m = est["time"]["decode_s_per_token_first_call"] * 1e3, case["step_ms_median"]
        else:
            t_e, t_m = est["time"]["step_s"] * 1e3, case["step_ms_median"]
        if case["name"] in repeats:  # the median over every process that timed it
            samples = [case["step_ms_median"]] + repeats[case["name"]]
            t_m = statistics.median(samples)
            note += f"; median of {len(samples)} processes ({min(samples):.1f}-{max(samples):.1f} ms)"
        em, et = peak_e / peak_m - 1, t_e / t_m - 1
        if "trainable_params" in case and "trainable" in est["params"] and est["params"]["trainable"] != \
                case["trainable_params"]:
            note += f" (trainable: engine {est['params']['trainable']:,}, PEFT {case['trainable_params']:,})"
        mem_err.append(abs(em))
        time_err.append(abs(et))
        rows.append(f"| {case['name']} | {peak_m / 1e9:.2f} | {peak_e / 1e9:.2f} | {em:+.1%} | {t_m:.1f} | {t_e:.1f} "
                    f"| {et:+.1%} | {note} |")
    print("| case | measured GB | estimate GB | error | measured ms | estimate ms | error | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print()
    print(f"{len(rows)} cases expressible: peak memory median |error| {statistics.median(mem_err):.1%}, "
          f"largest {max(mem_err):.1%}; time median |error| {statistics.median(time_err):.1%}, "
          f"largest {max(time_err):.1%}")
    print(f"{len(skipped)} cases not expressible today:")
    for name, why in skipped:
        print(f"  - {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
