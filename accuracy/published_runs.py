"""Predict the throughput of published training runs with no overrides and print the
error of each (tests/data/published_runs.json; sources, tables and assumptions per run
there and in tests/data/published_runs_NOTES.md).

Each run becomes an engine plan: its model shape, GPU, parallel layout, batch, precision
and recomputation, and the framework whose kernels it used (Megatron-LM/NeMo: fused
kernels; llm-foundry and torchtitan: PyTorch with FSDP). What a run does not state is
assumed as listed in ``ASSUMPTIONS`` and printed. The engine's tokens per second per GPU
is compared with the run's, converted from what it reports (iteration time, TFLOP/s per
GPU under the run's own FLOP convention, tokens/s)::

    python -m accuracy.published_runs [--all]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics

from planner_app.core.hardware.machine import Hardware
from planner_app.core.models.flops import narayanan_flops_per_iteration
from planner_app.core.models.spec import ModelSpec
from planner_app.core.training.setup import ParallelPlan, TrainingSetup
from planner_app.core.training.timing import step_time
from planner_app.specdb.catalog import shipped_db

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")

# Networks of the published systems (per GPU: one NIC per GPU unless noted)
SYSTEM_FABRIC = {
    "selene": ("ib-hdr", 8),  # DGX A100 SuperPOD: 8x 200 Gb/s HDR per node
    "jean zay": ("eth-100", 4),  # 4x Omni-Path 100 Gb/s per node (no OPA id: 100 Gb/s class)
    "meta": ("roce-400", 8),  # Llama 3: RoCE 400 Gb/s per GPU
    "dgx-h100": ("ib-ndr", 8),
    "dgx-b200": ("ib-ndr", 8),
}


class Unmappable(Exception):
    pass


def _model(r) -> ModelSpec:
    m = r["model"]
    if not all(m.get(k) for k in ("layers", "hidden", "heads")) or (m.get("arch") == "llama" and not m.get("ffn_hidden")):
        raise Unmappable("model shape not given")
    if m.get("arch") == "gpt":
        return ModelSpec(name=r["id"], arch="gpt2", hidden=m["hidden"], layers=m["layers"], heads=m["heads"],
                         ffn_hidden=m.get("ffn_hidden") or 4 * m["hidden"], vocab=m.get("vocab") or 51200,
                         max_positions=m.get("seq_len") or 2048,
                         position="none" if m.get("position") == "alibi" else "learned",
                         norm="layernorm", mlp="gelu", qkv_bias=True, out_bias=True, mlp_bias=True, norm_bias=True,
                         tied_embeddings=True, attn_dropout=0.1, hidden_dropout=0.1, embed_dropout=0.1)
    if m.get("arch") == "llama":
        return ModelSpec(name=r["id"], arch="llama", hidden=m["hidden"], layers=m["layers"], heads=m["heads"],
                         kv_heads=m.get("kv_heads") or m["heads"], ffn_hidden=m["ffn_hidden"],
                         vocab=m.get("vocab") or 128256, max_positions=m.get("seq_len") or 8192)
    raise Unmappable(f"architecture {m.get('arch')!r} not mapped")


def _framework(r) -> tuple[str, str, str]:
    """(framework, attention, recipe)."""
    fw = (r.get("framework") or "").lower()
    prec = r.get("precision")
    if "automodel" in fw:
        return "pytorch", "flash", "fp8" if prec == "fp8" else "mixed-bf16"
    if "deepspeed-zero3" in fw:
        return "deepspeed", "eager", "mixed-bf16"
    year_new = any(k in r["id"] for k in ("nemo", "llama3", "torchtitan"))
    if "nemo" in fw or "megatron" in fw or fw == "megatron":
        attention = "flash" if year_new else "eager"  # 2021-22 Megatron: fused softmax, no FlashAttention
        return "megatron", attention, "fp8" if prec == "fp8" else "mixed-bf16"
    if "llm-foundry" in fw:
        return "pytorch", "flash", "amp-bf16"
    if "torchtitan" in fw or "custom (meta" in fw:
        return "megatron", "flash", "fp8" if prec == "fp8" else "mixed-bf16"
    raise Unmappable(f"framework {r.get('framework')!r} not mapped")


def engine_inputs(r, db):
    """(model, hardware, setup, plan, notes) for a published run; Unmappable if it cannot be."""
    if r.get("kind") not in ("measured_throughput", "measured_iteration_time"):
        raise Unmappable(f"kind {r.get('kind')}")
    if r["model"].get("moe") or "deepseek" in r["id"]:
        raise Unmappable("MoE run with DualPipe and custom kernels not modelled")
    model = _model(r)
    fw, attention, recipe = _framework(r)
    hw_r = r["hardware"]
    gpu_id = hw_r.get("gpu")
    if gpu_id in (None, "tpu-v4"):
        raise Unmappable(f"hardware {gpu_id}")
    if gpu_id == "h100-sxm-96gb-hbm2e":
        raise Unmappable("H100 96 GB at 500 W (no spec row)")
    gpu = db.gpu(gpu_id)
    n = hw_r.get("num_gpus")
    if not n:
        raise Unmappable("GPU count not given")
    p = r["parallel"]
    tp, pp, cp = p.get("tp") or 1, p.get("pp") or 1, p.get("cp") or 1
    if p.get("tp") is None or p.get("pp") is None:
        raise Unmappable("tensor/pipeline split not given")
    dp = n // (tp * pp * cp)
    notes = []
    b = r["batch"]
    gbs = b.get("global_batch")
    if not gbs:
        raise Unmappable("global batch not given")
    mb = b.get("micro_batch")
    if mb is None:
        mb = 1
        notes.append("micro-batch 1 assumed")
    seq = r["model"].get("seq_len")
    if not seq:
        raise Unmappable("sequence length not given")
    rec = p.get("recompute") or "none"
    if p.get("recompute") is None:
        notes.append("recompute none assumed")
    sp = bool(p.get("sequence_parallel")) or (fw == "megatron" and tp > 1 and "nemo" in r["id"])
    zero = p.get("zero_stage") or 0
    if fw == "megatron" and zero in (0, None) and any(k in r["id"] for k in ("nemo", "llama3")):
        zero = 1  # NeMo recipes and Llama 3 shard optimizer states (distributed optimizer)
    vp = p.get("vp") or (2 if p.get("interleaved_schedule") else 1)
    if r["id"].startswith("llama3-405b") and not p.get("vp"):
        vp = 4  # Llama 3 used an interleaved schedule with V stages per rank, V not stated
        notes.append("interleaved V=4 assumed")
    interleaved = vp > 1 and pp > 1
    if gbs % (mb * dp):
        raise Unmappable(f"global batch {gbs} not divisible by micro-batch x dp ({mb} x {dp})")
    setup = TrainingSetup(seq_len=seq, global_batch=gbs, recipe=recipe, attention=attention, framework=fw,
                          optimizer_impl="foreach")
    plan = ParallelPlan(micro_batch=mb, recompute=rec, tp=tp, pp=pp, dp=dp, cp=cp, zero=zero,
                        sequence_parallel=sp and tp > 1, pp_schedule="interleaved" if interleaved else "1f1b",
                        vp=max(vp, 1))
    system = (hw_r.get("system") or hw_r.get("inter_node") or "").lower()
    fab, nics = "ib-ndr", 8
    for key, val in SYSTEM_FABRIC.items():
        if key in system or (key == "meta" and "roce" in system) or (key == "dgx-h100" and gpu_id == "h100-sxm"):
            fab, nics = val
            break
    if "selene" in system or "hdr" in system:
        fab, nics = SYSTEM_FABRIC["selene"]
    if "omni-path" in system:
        fab, nics = SYSTEM_FABRIC["jean zay"]

    hw = Hardware(gpu=gpu, intra=db.intra_link(gpu), inter=db.fabric(fab), nics_per_node=nics)
    return model, hw, setup, plan, notes


def observed_tokens_per_s_per_gpu(r, model, setup, plan) -> float:
    """The run's throughput in tokens/s per GPU, from what it reports."""
    rep = r["reported"]
    n = r["hardware"]["num_gpus"]
    tokens_step = setup.global_batch * setup.seq_len
    if rep.get("iteration_time_s"):
        return tokens_step / rep["iteration_time_s"] / n
    if rep.get("tokens_per_s_per_gpu"):
        return rep["tokens_per_s_per_gpu"]
    if rep.get("tflops_per_gpu") and "eq.(3)" in (rep.get("flops_convention") or ""):
        m = r["model"]
        f = narayanan_flops_per_iteration(setup.global_batch, setup.seq_len, m["layers"], m["hidden"],
                                          m.get("vocab") or 51200)
        return tokens_step / (f / (rep["tflops_per_gpu"] * 1e12 * n)) / n
    if rep.get("tflops_per_gpu"):
        from planner_app.core.models.flops import training_flops_per_token

        mf, hf = training_flops_per_token(model, setup.seq_len, plan.recompute, None)
        return rep["tflops_per_gpu"] * 1e12 / mf
    if rep.get("tokens_per_s"):
        return rep["tokens_per_s"] / n
    raise Unmappable("no throughput figure")


def evaluate(runs=None, db=None):
    db = db or shipped_db()
    with open(os.path.join(DATA, "published_runs.json")) as f:
        data = json.load(f)
    rows, skipped = [], []
    for r in data["runs"]:
        if runs and r["id"] not in runs:
            continue
        try:
            model, hw, setup, plan, notes = engine_inputs(r, db)
            obs = observed_tokens_per_s_per_gpu(r, model, setup, plan)
        except Unmappable as e:
            skipped.append((r["id"], str(e)))
            continue
        st = step_time(model, hw, setup, plan)
        pred = st.tokens_per_s / plan.gpus
        rows.append({"id": r["id"], "observed": obs, "predicted": pred, "error": pred / obs - 1, "notes": notes,
                     "step": st, "plan": plan, "setup": setup, "gpu": hw.gpu.id, "framework": setup.framework})
    return rows, skipped


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", action="store_true", help="also list the runs that cannot be mapped")
    ap.add_argument("--parts", action="store_true")
    args = ap.parse_args(argv)
    rows, skipped = evaluate()
    print(f"{'run':52s} {'GPUs':>6s} {'observed':>10s} {'predicted':>10s} {'error':>7s}  (tokens/s per GPU)")
    for row in rows:
        print(f"{row['id'][:52]:52s} {row['plan'].gpus:6d} {row['observed']:10.0f} {row['predicted']:10.0f} "
              f"{row['error'] * 100:+6.1f}%  {'; '.join(row['notes'])}")
        if args.parts:
            print("      " + ", ".join(f"{k} {v:.2f}s" for k, v in row["step"].parts.items() if v > 1e-4))
    errs = [abs(r["error"]) for r in rows]
    if errs:
        within = sum(e <= 0.10 for e in errs)
        print(f"{len(rows)} runs: median |error| {statistics.median(errs) * 100:.1f}%, max {max(errs) * 100:.1f}%, "
              f"{within} within 10%")
    if args.all:
        for rid, why in skipped:
            print(f"  not mapped: {rid}: {why}")


if __name__ == "__main__":
    main()
