"""The search's per-configuration numbers equal the single estimate's (issue 13).

Over 2,000+ random valid configurations (fixed seed) the vector path the search uses
(``sweep.memory_peak``, ``search.memory_columns``, ``sweep_time.step_time_columns``) and the scalar
path of ``estimate`` (``memory.training_memory``, ``timing.step_time``) agree to 1e-9 relative:
peak allocated bytes, device bytes, fits, step time and every part of its breakdown.

The vector calls are batched: the fixed dimensions of a call (model, GPU and fabric, recipe,
optimizer, attention kernel, framework, offload, GPUs per node) are drawn as scenarios and each
scenario gets many random layouts.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from planner_app.core.errors import InputError
from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION, memory_verdict
from planner_app.core.hardware.machine import Hardware
from planner_app.core.plans.search import memory_columns
from planner_app.core.plans.sweep_time import step_time_columns
from planner_app.core.training.memory import training_memory
from planner_app.core.training.setup import OPTIMIZER_IMPLS, OPTIMIZERS, RECIPES, Layout, ParallelPlan, TrainingSetup
from planner_app.core.training.timing import step_time

SEED = 13
N_SCENARIOS = 48
PER_SCENARIO = 48
MIN_CONFIGS = 2000
REL = 1e-9

# A GQA model (Llama 3.1 8B), MoE models (Mixtral; DeepSeek-V3 with MLA and leading dense
# layers), a sliding-window model (Mistral), tied embeddings with an unaligned vocabulary
# (GPT-2), an encoder (BERT) and a small GQA model with tied embeddings (Llama 3.2 1B).
MODELS = ("llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "mistral-7b", "gpt2", "bert-base-uncased", "llama-3.2-1b")
GPUS = ("h100-sxm", "a100-sxm-80gb", "mi300x", "l40s", "v100-sxm2-32gb", "h200-sxm")
FABRICS = (None, "ib-ndr", "roce-200")
RECOMPUTE = ("none", "selective", "full")
N_LORA_SCENARIOS = 16
FINETUNE_VARIANTS = ({"finetune": "lora"}, {"finetune": "lora", "lora_rank": 64, "lora_targets": "all-linear"},
                     {"finetune": "qlora", "lora_targets": "all-linear", "lora_dropout": 0.1},
                     {"finetune": "lora", "lora_dtype": "bf16", "lora_targets": "q_proj,k_proj,v_proj,o_proj"})


def _scenarios(db, rng):
    out = []
    while len(out) < N_SCENARIOS:
        fw = str(rng.choice(["pytorch", "megatron", "deepspeed"]))
        recipes = [r for r in RECIPES if not (fw == "megatron" and r in ("fp32", "amp-bf16", "amp-fp16", "bf16-autocast"))]
        gpu = db.gpu(str(rng.choice(GPUS)))
        recipe = str(rng.choice(recipes))
        if recipe == "fp8" and not gpu.fp8_tflops:
            continue
        fabric = rng.choice(np.array(FABRICS, dtype=object))
        hw = Hardware(gpu=gpu, inter=db.fabric(fabric) if fabric else None, nics_per_node=int(rng.choice([0, 1, 8])))
        out.append(dict(model=db.model(str(rng.choice(MODELS))), hw=hw, recipe=recipe,
                        optimizer=str(rng.choice(OPTIMIZERS)), attention=str(rng.choice(["flash", "sdpa", "eager"])),
                        framework=fw, offload=str(rng.choice(["none"] * 6 + ["optimizer", "params"])),
                        gpus_per_node=int(rng.choice([1, 2, 4, 8])),
                        # every PyTorch AdamW implementation, in turn (not drawn: the draws stay as they were)
                        optimizer_impl=OPTIMIZER_IMPLS[len(out) % len(OPTIMIZER_IMPLS)], finetune={}))
    # LoRA / QLoRA scenarios after the others (so their draws stay as they were): PyTorch, recipes
    # PEFT trains with, each variant in turn; columns the engine refuses are skipped
    n_full = len(out)
    while len(out) < n_full + N_LORA_SCENARIOS:
        s = dict(out[len(out) % n_full])
        s.update(framework="pytorch", offload="none", optimizer=str(rng.choice(["adamw", "adamw-8bit", "sgd"])),
                 recipe=str(rng.choice(["bf16", "bf16-autocast", "amp-bf16"])),
                 model=db.model(str(rng.choice([m for m in MODELS if not db.model(m).is_moe]))),
                 attention=str(rng.choice(["sdpa", "eager"])),
                 finetune=FINETUNE_VARIANTS[(len(out) - n_full) % len(FINETUNE_VARIANTS)])
        if s["finetune"]["finetune"] == "qlora":
            s["recipe"] = "bf16-autocast"
        out.append(s)
    return out


def _layout(model, rng):
    """One random layout (as the vector path's column) or None when it is not valid."""
    ep = int(rng.choice([1, 2, 4, 8])) if model.is_moe else 1
    pp = int(rng.choice([1, 1, 2, 3, 4, 8]))
    interleaved = bool(pp > 1 and rng.integers(0, 2))
    r = dict(micro_batch=int(rng.integers(1, 9)), seq_len=int(rng.choice([512, 1024, 2048, 4096, 8192])),
             tp=int(rng.choice([1, 2, 4, 8])), pp=pp, dp=int(rng.choice([1, 2, 3, 4, 8, 16, 64])),
             cp=int(rng.choice([1, 1, 2, 4])), ep=ep, zero=int(rng.integers(0, 4)), sp=bool(rng.integers(0, 2)),
             recompute=int(rng.integers(0, 3)), n_acc=int(rng.choice([1, 2, 4, 8])), interleaved=interleaved,
             vp=int(rng.choice([2, 4])) if interleaved else 2)
    r["sp"] = r["sp"] and r["tp"] > 1
    return r


def _scalar_inputs(s, r, rng):
    gb = r["micro_batch"] * r["dp"] * r["ep"] * r["n_acc"]
    if r["n_acc"] == 1 and rng.integers(0, 2):
        gb = 0  # no global batch given: one micro-batch per step
    setup = replace(_run_setup(s), seq_len=r["seq_len"], global_batch=gb)
    plan = ParallelPlan(micro_batch=r["micro_batch"], recompute=RECOMPUTE[r["recompute"]], tp=r["tp"], pp=r["pp"],
                        dp=r["dp"], cp=r["cp"], ep=r["ep"], zero=r["zero"], sequence_parallel=r["sp"],
                        pp_schedule="interleaved" if r["interleaved"] else "1f1b", vp=r["vp"],
                        gpus_per_node=s["gpus_per_node"])
    return setup, plan


def _run_setup(s) -> TrainingSetup:
    """What is constant across a scenario's configurations."""
    return TrainingSetup(recipe=s["recipe"], optimizer=s["optimizer"], attention=s["attention"],
                         framework=s["framework"], offload=s["offload"], optimizer_impl=s["optimizer_impl"],
                         **s["finetune"])


def draw(db, seed=SEED):
    """[(scenario, [(column dict, MemoryResult, StepTime), ...]), ...] of valid configurations."""
    rng = np.random.default_rng(seed)
    out = []
    for s in _scenarios(db, rng):
        rows = []
        for _ in range(PER_SCENARIO):
            r = _layout(s["model"], rng)
            setup, plan = _scalar_inputs(s, r, rng)
            try:
                mem = training_memory(s["model"], setup, plan, s["hw"].gpu.capacity_bytes)
                st = step_time(s["model"], s["hw"], setup, plan)
            except InputError:
                continue
            rows.append((r, mem, st))
            s["lora"] = setup.lora(s["model"])
        if rows:
            out.append((s, rows))
    return out


def vector(s, rows):
    """The search's numbers for one scenario's configurations, one call per engine."""
    col = {k: np.array([r[k] for r, _, _ in rows]) for k in rows[0][0]}
    layout = Layout(micro_batch=col["micro_batch"], seq_len=col["seq_len"], tp=col["tp"], pp=col["pp"], dp=col["dp"],
                    cp=col["cp"], ep=col["ep"], zero=col["zero"], sequence_parallel=col["sp"],
                    recompute=col["recompute"], n_acc=col["n_acc"], pp_schedule=col["interleaved"], vp=col["vp"],
                    gpus_per_node=s["gpus_per_node"])
    setup = _run_setup(s)
    peak, device, fits = memory_columns(s["model"], setup, layout, s["hw"].gpu.capacity_bytes,
                                        DEFAULT_MIN_HEADROOM_FRACTION)
    t = step_time_columns(s["model"], s["hw"], setup, layout)
    return peak, device, fits, t


def differences(db, seed=SEED):
    """(configurations compared, {quantity: [description, ...]}) of every disagreement."""
    diffs: dict = {}
    n = 0

    def check(name, want, got, where):
        if isinstance(want, (bool, np.bool_)):
            same = bool(want) == bool(got)
        else:
            same = math.isclose(float(want), float(got), rel_tol=REL, abs_tol=1e-12)
        if not same:
            diffs.setdefault(name, []).append(f"{where}: scalar {want!r}, vector {got!r}")

    for s, rows in draw(db, seed):
        peak, device, fits, t = vector(s, rows)
        for i, (r, mem, st) in enumerate(rows):
            n += 1
            where = (f"{s['model'].name} {s['hw'].gpu.id} {s['recipe']} {s['optimizer']} {s['attention']} "
                     f"{s['framework']} offload={s['offload']} gpn={s['gpus_per_node']} {r}")
            check("peak_bytes", mem.peak_bytes, peak[i], where)
            check("device_bytes", mem.device_bytes, device[i], where)
            check("fits", memory_verdict(mem.device_bytes, mem.capacity_bytes) == "fits", fits[i], where)
            check("step_s", st.step_s, t["step_s"][i], where)
            check("mfu", st.mfu, t["mfu"][i], where)
            check("tokens_per_s", st.tokens_per_s, t["tokens_per_s"][i], where)
            parts = t.get("parts", {})
            for k, v in st.parts.items():
                if k not in parts:
                    diffs.setdefault(f"parts.{k}", []).append(f"{where}: not computed by the vector path")
                    continue
                check(f"parts.{k}", v, parts[k][i], where)
    return n, diffs



def test_search_equals_single_estimate(db):
    n, diffs = differences(db)
    assert n >= MIN_CONFIGS
    lora = sum(len(rows) for s, rows in draw(db) if s.get("lora") is not None)
    assert lora >= 100, lora  # LoRA/QLoRA columns are among those compared
    report = [f"{k}: {len(v)} of {n} differ, e.g. {v[0]}" for k, v in sorted(diffs.items())]
    assert not diffs, "\n".join(report)


if __name__ == "__main__":  # a table of what differs: python tests/unit/test_engine_equality.py
    from planner_app.specdb.catalog import shipped_db

    n, diffs = differences(shipped_db())
    print(f"{n} configurations")
    for k, v in sorted(diffs.items()):
        print(f"{k:40s} {len(v):5d}   e.g. {v[0]}")
