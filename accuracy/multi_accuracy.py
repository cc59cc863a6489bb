"""The engine beside the multi-GPU measurements of issue 18 (JSON files written by
benchmarks/gpu/gpu_multi_runs.py under torchrun): per case the estimate options it maps to, and the
engine's peak memory, step time and exposed communication next to the measured ones.

    python -m accuracy.multi_accuracy tests/data/multi_runs_h200x2.json [more.json ...]
    python -m accuracy.multi_accuracy r.json --json       # rows as JSON (for tests and tools)
    python -m accuracy.multi_accuracy --predict 2 4 8      # the engine's numbers before any run

How a measured case maps to estimate options (``options_for``):
- every case: the case's ``config.json``, ``--gpu h200-sxm``, ``--gpus W --gpus-per-node W`` (one
  host), its micro-batch and sequence length, ``--attention sdpa``, ``--optimizer adamw``; the
  global batch is the default (one micro-batch per data-parallel rank);
- ``ddp``: ``--dp W --zero 0 --framework pytorch --recipe bf16 --optimizer-impl fused``
  (DDP's gradient buckets are the engine's ``framework_buffers``);
- ``fsdp2`` full sharding: ``--dp W --zero 3`` (FSDP2 shards parameters, gradients and optimizer
  states: ZeRO-3); ``CPUOffloadPolicy``: ``--offload params`` (sharded parameters, gradients and
  optimizer states on the host, the optimizer step on the CPU);
  hybrid sharding over a (replicate R, shard S) mesh: ``--dp W --dp-shard S`` (states sharded
  over the S ranks of a group; the gradient reduce-scattered within it and the shard all-reduced
  over the R replicas);
  ``MixedPrecisionPolicy(bf16, reduce fp32)`` over fp32 weights: ``--recipe mixed-bf16`` (the
  nearest: the same 16 bytes per sharded parameter, bf16 gathered weights and compute; FSDP2
  keeps fp32 gradient shards where the recipe has bf16 ones and an fp32 master);
- ``deepspeed``: ``--framework deepspeed --zero Z --dp W --recipe mixed-bf16`` (``bf16.enabled``
  keeps fp32 master weights and optimizer states);
- ``tp``: ``--tp W --dp 1 [--sequence-parallel] --recipe bf16 --framework pytorch``.

Compared: the peak over ranks of ``max_memory_allocated`` less the memory allocated before the
model was built (``peak_bytes_net``) against the engine's ``memory.peak_bytes`` less its cuBLAS
workspace (what accuracy/finetune_accuracy.py does); the slowest rank's median step time
against ``time.step_s``; the largest rank's exposed communication against the sum of the
engine's communication terms in ``time.breakdown_s`` (tensor/expert/context-parallel comm,
pipeline p2p, exposed data-parallel comm).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
CONFIGS = os.path.join(ROOT, "tests", "data", "hf_configs")
GPU = "h200-sxm"
COMM_TERMS = ("tensor_parallel_comm", "expert_parallel_comm", "context_parallel_comm", "pipeline_p2p",
              "data_parallel_comm_exposed")
MEMORY_TOLERANCE, TIME_TOLERANCE = 0.08, 0.15  # issue 18's bar: peak within 8%, step time within 15%


def model_source(case: dict, info: dict):
    """The case's config.json path, or the config with the run's overrides embedded."""
    path = os.path.join(CONFIGS, case["config"] + ".json")
    overrides = info.get("overrides") or {}
    if not overrides:
        return path
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg.update(overrides)
    return {"hf_config": cfg, "name": f"{case['config']}+overrides"}


def options_for(case: dict, info: dict) -> tuple[dict | None, str]:
    """(estimate options, note) for one measured case of a run with ``info`` (the JSON's info)."""
    world = int(info["world_size"])
    rank0 = case["ranks"][0]
    opts = {"model": model_source(case, info), "gpu": GPU, "gpus": world, "gpus_per_node": world,
            "micro_batch": case["micro_batch"], "seq_len": case["seq_len"],
            "attention": "sdpa", "optimizer": "adamw", "recompute": "none", "tp": 1, "dp": world, "zero": 0,
            "framework": "pytorch", "optimizer_impl": "fused", "recipe": "bf16"}
    kind = case["kind"]
    if kind == "ddp":
        return opts, "DDP (bucket_cap_mb=25): --zero 0"
    if kind == "fsdp2":
        opts["zero"] = 3
        note = "FSDP2 fully_shard: --zero 3"
        if case.get("mp"):
            opts["recipe"] = "mixed-bf16"
            note += ", MixedPrecisionPolicy(bf16, reduce fp32) over fp32 weights as --recipe mixed-bf16 (nearest)"
        if case.get("offload"):
            opts["offload"] = "params"
            note += ", CPUOffloadPolicy as --offload params"
        if case.get("mesh") == "hybrid":
            replicate = int(case.get("hsdp_replicate") or rank0.get("wrap", {}).get("mesh_shape", [1])[0])
            shard = world // replicate
            opts["dp_shard"] = shard
            note += f", hybrid ({replicate} replicas x {shard} shards): --dp-shard {shard}"
        return opts, note
    if kind == "deepspeed":
        opts.update(framework="deepspeed", zero=int(case["zero"]), recipe="mixed-bf16")
        opts.pop("optimizer_impl")
        return opts, f"DeepSpeed ZeRO-{case['zero']}, bf16.enabled: --recipe mixed-bf16"
    if kind == "tp":
        opts.update(tp=world, dp=1)
        note = f"tensor parallel: --tp {world}"
        if case.get("sequence_parallel"):
            opts["sequence_parallel"] = True
            note += " --sequence-parallel"
        return opts, note + "; loss_parallel cross-entropy on vocabulary-sharded logits"
    return None, f"kind {kind!r}: no mapping"


def command_line(opts: dict) -> str:
    """The ``gpu-planner estimate`` command for ``opts`` (a model given inline shows its name)."""
    words = ["gpu-planner estimate"]
    for k, v in opts.items():
        if k == "model" and isinstance(v, dict):
            v = v["name"]
        elif k == "model":
            v = os.path.relpath(v, ROOT)
        flag = "--" + k.replace("_", "-")
        words.append(flag if v is True else f"{flag} {v}")
    return " ".join(words)


def measured(case: dict) -> dict:
    """The measured numbers of a case: the most loaded / slowest rank."""
    ranks = [r for r in case["ranks"] if r.get("status") == "ok"]
    peaks = [r["peak_bytes_net"] for r in ranks if r.get("peak_bytes_net") is not None]
    return {"peak_bytes": max(peaks) if peaks else None,
            "step_ms": max(r["step_ms_median"] for r in ranks),
            "exposed_comm_ms": max((r.get("exposed_comm_ms") or 0.0) for r in ranks),
            "local_param_numel": [r.get("local_param_numel") for r in ranks]}


def rows_for(data: dict, db) -> list[dict]:
    """One row per case of one run: mapping, estimate and measurement (None where not measured)."""
    from planner_app.core.errors import InputError
    from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
    from planner_app.service.estimate import estimate_json

    info, rows = data["info"], []
    for case in data["cases"]:
        opts, note = options_for(case, info)
        row = {"name": case["name"], "world_size": info["world_size"], "status": case["status"], "note": note,
               "options": opts, "command": command_line(opts) if opts else None}
        if case["status"] != "ok":
            row["why"] = case["ranks"][0].get("error", case["status"])
            rows.append(row)
            continue
        m = measured(case)
        row["measured"] = m
        if info.get("device") != "cuda":  # a CPU (gloo) run checks the control flow: nothing to compare
            row["why"] = f"{info.get('device')} run: mapping only"
            rows.append(row)
            continue
        try:
            est = estimate_json(opts, db)
        except InputError as e:  # the engine refuses what it does not model: listed, not hidden
            row["why"] = f"refused: {e}"
            rows.append(row)
            continue
        bd = est["time"]["breakdown_s"]
        e = {"peak_bytes": est["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES, "step_ms": est["time"]["step_s"] * 1e3,
             "exposed_comm_ms": sum(bd.get(k, 0.0) for k in COMM_TERMS) * 1e3, "params_total": est["params"]["total"]}
        row["estimate"] = e
        row["error"] = {"peak": e["peak_bytes"] / m["peak_bytes"] - 1 if m["peak_bytes"] else None,
                        "step": e["step_ms"] / m["step_ms"] - 1 if m["step_ms"] else None}
        rows.append(row)
    return rows


def predictions(world: int, db, hsdp_replicate: int = 0) -> list[dict]:
    """The engine's numbers for every case of benchmarks/gpu/gpu_multi_runs.py at ``world`` GPUs, before
    any measurement (what a run should be compared with)."""
    from benchmarks.gpu import gpu_multi_runs  # its CASES (no torch at import)
    from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
    from planner_app.service.estimate import estimate_json

    replicate = hsdp_replicate or (2 if world >= 4 else 1)  # gpu_multi_runs.py's default
    info, out = {"world_size": world, "device": "cuda", "overrides": {}}, []
    for c in gpu_multi_runs.CASES:
        case = dict(c, ranks=[{}], hsdp_replicate=replicate if c.get("mesh") == "hybrid" else None)
        opts, note = options_for(case, info)
        est = estimate_json(opts, db)
        bd = est["time"]["breakdown_s"]
        out.append({"name": c["name"], "world_size": world, "note": note, "command": command_line(opts),
                    "peak_bytes": est["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES,
                    "step_ms": est["time"]["step_s"] * 1e3,
                    "exposed_comm_ms": sum(bd.get(k, 0.0) for k in COMM_TERMS) * 1e3,
                    "fits": est["memory"]["fits"]})
    return out


FAKE_PG_WORKSPACE_BYTES = 64 << 20  # the cuBLAS workspaces the first case of a process allocates (its base is 0)


def fake_pg_options(case: dict) -> dict:
    """The estimate options of one fake-process-group case (benchmarks/gpu/fake_pg_hsdp.py): FSDP2 with
    bf16 weights as ZeRO-3, hybrid sharding as ``--dp-shard``."""
    opts = {"model": os.path.join(CONFIGS, case["config"] + ".json"), "gpu": GPU, "gpus": case["world"],
            "dp": case["world"], "micro_batch": case["micro_batch"], "seq_len": case["seq_len"],
            "global_batch": case["micro_batch"] * case["world"], "attention": "sdpa", "optimizer": "adamw",
            "framework": "pytorch", "recipe": "bf16", "zero": 3}
    if case["shard"] < case["world"]:
        opts["dp_shard"] = case["shard"]
    return opts


def fake_pg_rows(data: dict, db) -> list[dict]:
    """Rank 0's measured peak (less the cuBLAS workspaces) beside the engine's (less its own), per case,
    with the step from full sharding to hybrid sharding at the same world size, measured and estimated."""
    from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
    from planner_app.service.estimate import estimate_json

    rows, seen = [], set()
    for c in data["cases"]:
        key = (c["config"], c["world"], c["shard"], c.get("micro_batch"), c.get("seq_len"))
        if c.get("status") != "ok" or key in seen:  # a layout measured twice (shard = world is full sharding)
            continue
        seen.add(key)
        est = estimate_json(fake_pg_options(c), db)["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES
        rows.append({"config": c["config"], "world": c["world"], "shard": c["shard"], "replicate": c["replicate"],
                     "micro_batch": c["micro_batch"], "seq_len": c["seq_len"],
                     "measured": c["peak_bytes"] - FAKE_PG_WORKSPACE_BYTES, "estimate": est,
                     "command": command_line(fake_pg_options(c))})
    full = {(r["config"], r["world"], r["micro_batch"]): r for r in rows if r["shard"] == r["world"]}
    for r in rows:
        f = full.get((r["config"], r["world"], r["micro_batch"]))
        if f is not None and r is not f:
            r["measured_step"], r["estimate_step"] = r["measured"] - f["measured"], r["estimate"] - f["estimate"]
        r["error"] = r["estimate"] / r["measured"] - 1
    return rows


def fake_pg_markdown(rows: list[dict]) -> str:
    out = ["| model | ranks | shard group x replicas | micro-batch x seq | measured GB | estimate GB | error | "
           "hybrid minus full sharding, measured / estimate GB |", "|---|---:|---|---|---:|---:|---:|---:|"]
    for r in rows:
        step = (f"{r['measured_step'] / 1e9:+.3f} / {r['estimate_step'] / 1e9:+.3f}" if "measured_step" in r
                else "(full sharding)" if r["shard"] == r["world"] else "-")
        out.append(f"| {r['config']} | {r['world']} | {r['shard']} x {r['replicate']} | {r['micro_batch']} x "
                   f"{r['seq_len']} | {r['measured'] / 1e9:.3f} | {r['estimate'] / 1e9:.3f} | {r['error']:+.1%} | "
                   f"{step} |")
    return "\n".join(out)


def fmt_gb(x):
    return "-" if x is None else f"{x / 1e9:.2f}"


def fmt_pct(x):
    return "-" if x is None else f"{x:+.1%}"


def markdown(rows: list[dict]) -> str:
    out = ["| case | GPUs | measured GB | estimate GB | error | measured ms | estimate ms | error | exposed comm "
           "ms (measured / estimate) | maps to |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "estimate" not in r:
            out.append(f"| {r['name']} | {r['world_size']} | {r['status']}: {r.get('why', '')[:80]} | | | | | | | "
                       f"{r['note']} |")
            continue
        m, e, err = r["measured"], r["estimate"], r["error"]
        out.append(f"| {r['name']} | {r['world_size']} | {fmt_gb(m['peak_bytes'])} | {fmt_gb(e['peak_bytes'])} | "
                   f"{fmt_pct(err['peak'])} | {m['step_ms']:.1f} | {e['step_ms']:.1f} | {fmt_pct(err['step'])} | "
                   f"{m['exposed_comm_ms']:.1f} / {e['exposed_comm_ms']:.1f} | {r['note']} |")
    done = [r for r in rows if "estimate" in r and r["error"]["peak"] is not None]
    if done:
        mem = [abs(r["error"]["peak"]) for r in done]
        tim = [abs(r["error"]["step"]) for r in done]
        out.append("")
        out.append(f"{len(done)} cases compared: peak memory median |error| {statistics.median(mem):.1%}, largest "
                   f"{max(mem):.1%}; step time median |error| {statistics.median(tim):.1%}, largest {max(tim):.1%}")
        off = [r["name"] + f" (w{r['world_size']})" for r in done
               if abs(r["error"]["peak"]) > MEMORY_TOLERANCE or abs(r["error"]["step"]) > TIME_TOLERANCE]
        out.append("outside ±8% memory / ±15% time: " + (", ".join(off) if off else "none"))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", help="JSON files written by benchmarks/gpu/gpu_multi_runs.py")
    ap.add_argument("--predict", type=int, nargs="*", metavar="GPUS",
                    help="print the engine's numbers for every case at these GPU counts (no measurement needed)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--commands", action="store_true", help="also print each case's estimate command")
    args = ap.parse_args(argv)
    from planner_app.service.catalog import open_catalog

    db = open_catalog()
    if args.predict:
        print("| case | GPUs | estimate GB | estimate ms | exposed comm ms | fits | command |")
        print("|---|---:|---:|---:|---:|---|---|")
        for w in args.predict:
            for p in predictions(w, db):
                print(f"| {p['name']} | {w} | {p['peak_bytes'] / 1e9:.2f} | {p['step_ms']:.1f} | "
                      f"{p['exposed_comm_ms']:.1f} | {p['fits']} | `{p['command']}` |")
        if not args.runs:
            return 0
    if not args.runs:
        ap.error("give run files or --predict")
    rows = []
    for path in args.runs:
        with open(path, encoding="utf-8") as f:
            rows += rows_for(json.load(f), db)
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        return 0
    print(markdown(rows))
    if args.commands:
        print()
        for r in rows:
            if r.get("command"):
                print(f"{r['name']} (w{r['world_size']}): {r['command']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
