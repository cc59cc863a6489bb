"""Plan search: enumerate tensor/pipeline/data/context/expert degrees, ZeRO stage,
micro-batch, recomputation, sequence parallelism, pipeline schedule and instance type;
drop what does not fit; rank by time, cost, or cost under a deadline; keep the Pareto
front of time against cost. Every configuration is scored with the vectorised memory and
time models (``sweep.py``, ``sweep_time.py``), not a Python loop over plans.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from planner_app.core.cost import DEFAULT_CNY_PER_USD, hourly_prices_usd
from planner_app.core.errors import InputError
from planner_app.core.memory import CUDA_CONTEXT_BYTES, FRAGMENTATION, FRAGMENTATION_RECOMPUTE
from planner_app.core.sweep import memory_peak
from planner_app.core.sweep_time import step_time_vec

TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 4, 8, 16, 32)
CP_CHOICES = (1, 2, 4, 8)
MB_CHOICES = (1, 2, 4, 8)
ZERO_CHOICES = (0, 1, 2, 3)
RECOMPUTE_CHOICES = (0, 1, 2)


@dataclass
class Candidate:
    """One kind of machine to plan on: hardware, GPUs per node, and its hourly prices."""

    name: str
    hardware: object
    gpus_per_node: int
    usd_per_gpu_hour: float | None = None  # blended price per GPU-hour (None: unknown)
    instance: object | None = None


@dataclass
class SearchResult:
    plans: list  # dicts, ranked
    pareto: list  # dicts on the time/cost Pareto front (fitting plans)
    evaluated: int
    fitting: int
    elapsed_s: float
    notes: list = field(default_factory=list)


def gpu_counts(max_gpus: int, per_node: int) -> list[int]:
    """Whole nodes (or 1, 2, 4 GPUs below one node): powers of two and 1.5x powers of two."""
    out = set()
    v = 1
    while v <= max_gpus:
        for c in (v, v * 3 // 2):
            if c <= max_gpus and (c < per_node and per_node % c == 0 or c % per_node == 0):
                out.add(c)
        v *= 2
    return sorted(out)


def enumerate_layouts(model, counts, seq_len: int, global_batch: int, per_node: int,
                      allow_cp: bool = True) -> dict:
    """Every valid combination of the axes as arrays (one column per configuration)."""
    eps = [1]
    if model.is_moe:
        eps = [e for e in (1, 2, 4, 8, 16, 32, 64) if model.experts % e == 0]
    rows = []
    for g in counts:
        for tp in TP_CHOICES:
            if model.heads % tp or tp > per_node:
                continue
            for pp in PP_CHOICES:
                if pp > model.layers:
                    continue
                for cp in (CP_CHOICES if allow_cp else (1,)):
                    if cp > 1 and seq_len % (2 * cp):
                        continue
                    for ep in eps:
                        inner = tp * pp * cp * ep
                        if g % inner:
                            continue
                        dp = g // inner
                        rows.append((g, tp, pp, cp, ep, dp))
    if not rows:
        return {}
    base = np.array(rows, dtype=float)
    # cross with micro-batch, ZeRO, recomputation, sequence parallelism and schedule
    mb, z, rec, sp, sched = np.meshgrid(MB_CHOICES, ZERO_CHOICES, RECOMPUTE_CHOICES, (0, 1), (0, 1), indexing="ij")
    ext = np.stack([mb.ravel(), z.ravel(), rec.ravel(), sp.ravel(), sched.ravel()], axis=1)
    n_b, n_e = len(base), len(ext)
    full = np.concatenate([np.repeat(base, n_e, axis=0), np.tile(ext, (n_b, 1))], axis=1)
    g, tp, pp, cp, ep, dp, mbs, zs, recs, sps, scheds = full.T
    keep = np.ones(len(full), bool)
    keep &= ~((sps == 1) & (tp == 1))  # sequence parallelism needs tensor parallelism
    keep &= ~((scheds == 1) & (pp == 1))  # interleaving needs a pipeline
    keep &= ~((scheds == 1) & (pp * 2 > model.layers))
    per_step = mbs * dp * ep
    keep &= (global_batch % per_step) == 0
    keep &= ~((zs == 3) & (pp > 1))  # ZeRO-3 with pipelining is not offered by the frameworks
    cfg = {"gpus": g[keep], "tp": tp[keep], "pp": pp[keep], "cp": cp[keep], "ep": ep[keep], "dp": dp[keep],
           "micro_batch": mbs[keep], "zero": zs[keep], "recompute": recs[keep], "sp": sps[keep].astype(bool),
           "interleaved": scheds[keep].astype(bool), "vp": np.full(int(keep.sum()), 2.0)}
    cfg["n_acc"] = global_batch / (cfg["micro_batch"] * cfg["dp"] * cfg["ep"])
    cfg["seq_len"] = np.full(len(cfg["tp"]), float(seq_len))
    return cfg


def search(model, candidates: list[Candidate], tokens: float, max_gpus: int, seq_len: int, global_batch: int,
           recipe: str = "mixed-bf16", framework: str = "megatron", optimizer: str = "adamw",
           attention: str = "flash", deadline_days: float | None = None, budget_usd: float | None = None,
           objective: str = "time", top: int = 10) -> SearchResult:
    """Rank every layout of ``model`` on each candidate machine (see the module docstring)."""
    if objective not in ("time", "cost"):
        raise InputError("objective", f"must be time or cost; got {objective!r}")
    if max_gpus < 1:
        raise InputError("max_gpus", f"must be at least 1; got {max_gpus}")
    t0 = time.perf_counter()
    results = []
    evaluated = 0
    notes = []
    for cand in candidates:
        counts = gpu_counts(max_gpus, cand.gpus_per_node)
        cfg = enumerate_layouts(model, counts, seq_len, global_batch, cand.gpus_per_node)
        if not cfg:
            continue
        n = len(cfg["tp"])
        evaluated += n
        mem_cfg = {k: cfg[k] for k in ("micro_batch", "seq_len", "tp", "pp", "dp", "cp", "ep", "zero", "sp",
                                        "recompute", "n_acc", "interleaved", "vp")}
        peak = memory_peak(model, recipe, optimizer, attention, framework, mem_cfg)
        frag = np.where(cfg["recompute"] == 2, FRAGMENTATION_RECOMPUTE, FRAGMENTATION)
        nccl = np.where(cfg["gpus"] > 1, 0.35e9 + 0.05e9 * np.log2(np.maximum(cfg["gpus"], 1)), 0.0)
        device = peak * (1 + frag) + CUDA_CONTEXT_BYTES + nccl
        fits = device <= cand.hardware.gpu.capacity_bytes
        if not fits.any():
            notes.append(f"{cand.name}: no layout fits up to {max_gpus} GPUs")
            continue
        idx = np.nonzero(fits)[0]
        sub = {k: v[idx] for k, v in mem_cfg.items()}
        t = step_time_vec(model, cand.hardware, recipe, optimizer, attention, framework, sub,
                          gpus_per_node=cand.gpus_per_node)
        train_s = tokens / t["tokens_per_s"]
        gpus = cfg["gpus"][idx]
        gpu_hours = train_s / 3600 * gpus
        cost = gpu_hours * cand.usd_per_gpu_hour if cand.usd_per_gpu_hour is not None else np.full(len(idx), np.nan)
        results.append({"cand": cand, "cfg": {k: v[idx] for k, v in cfg.items()}, "step_s": t["step_s"],
                        "tokens_per_s": t["tokens_per_s"], "mfu": t["mfu"], "train_s": train_s,
                        "gpu_hours": gpu_hours, "cost": cost, "peak": peak[idx], "device": device[idx]})
    if not results:
        return SearchResult([], [], evaluated, 0, time.perf_counter() - t0, notes or ["nothing fits"])
    # flatten across candidates
    keys = ("step_s", "tokens_per_s", "mfu", "train_s", "gpu_hours", "cost", "peak", "device")
    flat = {k: np.concatenate([r[k] for r in results]) for k in keys}
    cand_idx = np.concatenate([np.full(len(r["step_s"]), i) for i, r in enumerate(results)])
    cfg_flat = {k: np.concatenate([r["cfg"][k] for r in results]) for k in results[0]["cfg"]}
    ok = np.ones(len(cand_idx), bool)
    if deadline_days is not None:
        ok &= flat["train_s"] <= deadline_days * 86400
    if budget_usd is not None:
        ok &= np.nan_to_num(flat["cost"], nan=np.inf) <= budget_usd
    if not ok.any():
        notes.append("no fitting plan meets the deadline and budget; showing the fastest fitting plans")
        ok = np.ones(len(cand_idx), bool)
    order_key = flat["train_s"] if objective == "time" else np.where(np.isnan(flat["cost"]), flat["gpu_hours"] * 1e6,
                                                                     flat["cost"])
    order = np.argsort(np.where(ok, order_key, np.inf), kind="stable")
    order = order[ok[order]][:top]
    pareto_idx = _pareto(flat["train_s"], np.where(np.isnan(flat["cost"]), flat["gpu_hours"], flat["cost"]), ok)

    def describe(i):
        c = results[int(cand_idx[i])]["cand"]
        return {"candidate": c.name, "gpu": c.hardware.gpu.id,
                "instance": c.instance.instance_id if c.instance is not None else None,
                "parallel": {"gpus": int(cfg_flat["gpus"][i]), "tp": int(cfg_flat["tp"][i]),
                             "pp": int(cfg_flat["pp"][i]), "dp": int(cfg_flat["dp"][i]), "cp": int(cfg_flat["cp"][i]),
                             "ep": int(cfg_flat["ep"][i]), "zero": int(cfg_flat["zero"][i]),
                             "sequence_parallel": bool(cfg_flat["sp"][i]),
                             "pp_schedule": "interleaved" if cfg_flat["interleaved"][i] else "1f1b",
                             "vp": int(cfg_flat["vp"][i]), "gpus_per_node": c.gpus_per_node},
                "micro_batch": int(cfg_flat["micro_batch"][i]),
                "recompute": ("none", "selective", "full")[int(cfg_flat["recompute"][i])],
                "memory": {"peak_bytes": float(flat["peak"][i]), "device_bytes": float(flat["device"][i])},
                "time": {"step_s": float(flat["step_s"][i]), "tokens_per_s": float(flat["tokens_per_s"][i]),
                         "mfu": float(flat["mfu"][i]), "train_s": float(flat["train_s"][i]),
                         "train_days": float(flat["train_s"][i] / 86400)},
                "cost": {"gpu_hours": float(flat["gpu_hours"][i]),
                         "usd": None if math.isnan(flat["cost"][i]) else float(flat["cost"][i])}}

    plans = [describe(i) for i in order]
    pareto = [describe(i) for i in pareto_idx]
    return SearchResult(plans=plans, pareto=pareto, evaluated=evaluated, fitting=int(sum(len(r["step_s"]) for r in results)),
                        elapsed_s=time.perf_counter() - t0, notes=notes)


def _pareto(times: np.ndarray, costs: np.ndarray, ok: np.ndarray, limit: int = 50) -> list[int]:
    """Indices on the lower-left front of (time, cost), fastest first."""
    idx = np.nonzero(ok)[0]
    if not len(idx):
        return []
    order = idx[np.lexsort((costs[idx], times[idx]))]
    front = []
    best_cost = np.inf
    for i in order:
        if costs[i] < best_cost:
            front.append(int(i))
            best_cost = costs[i]
    if len(front) > limit:
        pick = np.linspace(0, len(front) - 1, limit).round().astype(int)
        front = [front[j] for j in pick]
    return front


def candidate_from_instance(name, hardware, instance, mix=None, cny_per_usd: float = DEFAULT_CNY_PER_USD):
    """A search candidate priced from an instance (blended price per GPU-hour)."""
    from planner_app.core.cost import DEFAULT_MIX, mix_price

    per_hour = hourly_prices_usd(instance.prices, cny_per_usd)
    price = mix_price(per_hour, mix or DEFAULT_MIX)
    if price is None:
        price = per_hour.get("on_demand") or next((v for v in per_hour.values() if v is not None), None)
    return Candidate(name=name, hardware=hardware, gpus_per_node=instance.gpu_count,
                     usd_per_gpu_hour=price / instance.gpu_count if price is not None else None, instance=instance)
