"""Plan search: enumerate tensor/pipeline/data/context/expert degrees, ZeRO stage,
micro-batch, recomputation, sequence parallelism, pipeline schedule and instance type;
drop what does not fit; rank by time, cost, or cost under a deadline; keep the Pareto
front of time against cost. Every configuration is scored with the vectorised memory and
time models (``sweep.py``, ``sweep_time.py``) and memory.py's device overhead, not a Python
loop over plans. Costs are at one price basis (on-demand unless asked), never a blend. Each
row carries the ``estimate`` options that reproduce it and that one-line command.
"""
from __future__ import annotations

import math
import shlex
import time
from dataclasses import dataclass, field

import numpy as np

from planner_app.core.errors import InputError
from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION, check_min_headroom, keeps_margin
from planner_app.core.plans.cost import DEFAULT_CNY_PER_USD, PRICE_KINDS, hourly_prices_usd
from planner_app.core.plans.sweep import memory_peak
from planner_app.core.plans.sweep_time import step_time_vec
from planner_app.core.training.memory import RECOMPUTE_CODES
from planner_app.core.training.setup import TrainingSetup
from planner_app.core.training.states import device_bytes, device_overhead

TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 4, 8, 16, 32)
CP_CHOICES = (1, 2, 4, 8)
MB_CHOICES = (1, 2, 4, 8)
ZERO_CHOICES = (0, 1, 2, 3)
RECOMPUTE_CHOICES = (0, 1, 2)


PRICE_LABELS = {"on_demand": "on-demand", "reserved_1yr": "1-year reserved", "reserved_3yr": "3-year reserved",
                "spot": "spot"}


@dataclass
class Candidate:
    """One kind of machine to plan on: hardware, GPUs per node, and its hourly prices."""

    name: str
    hardware: object
    gpus_per_node: int
    instance: object | None = None
    # USD per instance-hour by price basis (PRICE_KINDS); a missing or None entry: no price
    usd_per_instance_hour: dict = field(default_factory=dict)
    currency: str = "USD"  # the currency the prices were quoted in (CNY is converted)
    cny_per_usd: float = DEFAULT_CNY_PER_USD


@dataclass
class SearchResult:
    plans: list  # dicts, ranked
    pareto: list  # dicts on the time/cost Pareto front (fitting plans)
    evaluated: int
    fitting: int
    elapsed_s: float
    notes: list = field(default_factory=list)
    price_basis: str = "on_demand"
    pareto_y: str = "usd"  # what the Pareto front's cost axis holds: "usd" or "gpu_hours" (nothing priced)
    assumptions: list = field(default_factory=list)


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
           objective: str = "time", top: int = 10, price_basis: str = "on_demand",
           model_ref: str | None = None,
           min_headroom_fraction: float = DEFAULT_MIN_HEADROOM_FRACTION,
           optimizer_impl: str = "foreach", finetune: dict | None = None) -> SearchResult:
    """Rank every layout of ``model`` on each candidate machine (see the module docstring).

    Every plan is priced at one ``price_basis`` (whole instances x hours x the instance's
    price at that basis, as ``estimate`` prices it); a plan whose machine has no price at
    that basis has no cost: ``cost.usd`` is None, never a blend of other prices or 0. The
    cost objective ranks the priced plans and lists the unpriced ones after them (fastest
    first). ``model_ref`` is how the model is named in the rows' ``estimate`` commands
    (a preset id or a config.json path; default ``model.name``). A layout counts as fitting
    only when it leaves ``min_headroom_fraction`` of the GPU free (``memory_verdict``
    "fits", not "tight"): the fastest or cheapest pick is never one the user's margin rejects.
    ``finetune``: TrainingSetup's fine-tuning fields (``finetune``, ``lora_rank``...) for LoRA/QLoRA;
    prepare_model_for_kbit_training keeps only layouts with full recomputation (it turns
    gradient checkpointing on)."""
    if objective not in ("time", "cost"):
        raise InputError("objective", f"must be time or cost; got {objective!r}")
    if price_basis not in PRICE_KINDS:
        raise InputError("price", f"must be one of {', '.join(PRICE_KINDS)}; got {price_basis!r}")
    if max_gpus < 1:
        raise InputError("max_gpus", f"must be at least 1; got {max_gpus}")
    check_min_headroom(min_headroom_fraction)
    finetune = {k: v for k, v in (finetune or {}).items() if v is not None}
    lora = TrainingSetup(recipe=recipe, framework=framework, **finetune).lora(model) if finetune else None
    t0 = time.perf_counter()
    results = []
    evaluated = 0
    notes = []
    for cand in candidates:
        counts = gpu_counts(max_gpus, cand.gpus_per_node)
        cfg = enumerate_layouts(model, counts, seq_len, global_batch, cand.gpus_per_node)
        if cfg and lora is not None and lora.prepare:
            keep = cfg["recompute"] == RECOMPUTE_CODES["full"]
            cfg = {k: v[keep] for k, v in cfg.items()} if keep.any() else None
        if not cfg:
            continue
        n = len(cfg["tp"])
        evaluated += n
        mem_cfg = {k: cfg[k] for k in ("micro_batch", "seq_len", "tp", "pp", "dp", "cp", "ep", "zero", "sp",
                                        "recompute", "n_acc", "interleaved", "vp")}
        peak, device, fits = memory_columns(model, recipe, optimizer, attention, framework, mem_cfg, cfg["gpus"],
                                            cand.hardware.gpu.capacity_bytes, min_headroom_fraction,
                                            optimizer_impl=optimizer_impl, lora=lora)
        if not fits.any():
            notes.append(f"{cand.name}: no layout fits up to {max_gpus} GPUs with "
                         f"{min_headroom_fraction * 100:g}% of the memory free")
            continue
        idx = np.nonzero(fits)[0]
        sub = {k: v[idx] for k, v in mem_cfg.items()}
        t = step_time_vec(model, cand.hardware, recipe, optimizer, attention, framework, sub,
                          gpus_per_node=cand.gpus_per_node, optimizer_impl=optimizer_impl, lora=lora)
        train_s = tokens / t["tokens_per_s"]
        gpus = cfg["gpus"][idx]
        gpu_hours = train_s / 3600 * gpus
        cost = plan_cost_usd(cand, price_basis, gpus, train_s)
        results.append({"cand": cand, "cfg": {k: v[idx] for k, v in cfg.items()}, "step_s": t["step_s"],
                        "tokens_per_s": t["tokens_per_s"], "mfu": t["mfu"], "train_s": train_s,
                        "gpu_hours": gpu_hours, "cost": cost, "peak": peak[idx], "device": device[idx]})
    assumptions = price_assumptions(candidates, price_basis) + [
        f"fits: at least {min_headroom_fraction * 100:g}% of each GPU's memory stays free beyond the estimate "
        f"(the memory margin, --min-headroom-pct)"]
    if not results:
        return SearchResult([], [], evaluated, 0, time.perf_counter() - t0, notes or ["nothing fits"],
                            price_basis=price_basis, assumptions=assumptions)
    # flatten across candidates
    keys = ("step_s", "tokens_per_s", "mfu", "train_s", "gpu_hours", "cost", "peak", "device")
    flat = {k: np.concatenate([r[k] for r in results]) for k in keys}
    cand_idx = np.concatenate([np.full(len(r["step_s"]), i) for i, r in enumerate(results)])
    cfg_flat = {k: np.concatenate([r["cfg"][k] for r in results]) for k in results[0]["cfg"]}
    priced = ~np.isnan(flat["cost"])
    ok = np.ones(len(cand_idx), bool)
    if deadline_days is not None:
        ok &= flat["train_s"] <= deadline_days * 86400
    if budget_usd is not None:
        ok &= priced & (np.nan_to_num(flat["cost"], nan=np.inf) <= budget_usd)
    if not ok.any():
        notes.append("no fitting plan meets the deadline and budget; showing the fastest fitting plans")
        ok = np.ones(len(cand_idx), bool)
    if objective == "time":
        order = np.lexsort((flat["train_s"],))
    else:  # priced plans by cost, then the unpriced ones by time
        order = np.lexsort((flat["train_s"], np.nan_to_num(flat["cost"], nan=np.inf), ~priced))
    order = order[ok[order]][:top]
    if objective == "cost" and any(not priced[i] for i in order):
        notes.append(f"plans without a {PRICE_LABELS[price_basis]} price are listed after the priced ones")
    if (priced & ok).any():
        pareto_y, pareto_idx = "usd", _pareto(flat["train_s"], flat["cost"], ok & priced)
    else:  # nothing priced: the front of time against GPU-hours, labelled as such
        pareto_y, pareto_idx = "gpu_hours", _pareto(flat["train_s"], flat["gpu_hours"], ok)
    common = {"model": model_ref or model.name, "tokens": float(tokens), "seq_len": int(seq_len),
              "global_batch": int(global_batch), "recipe": recipe, "framework": framework, "optimizer": optimizer,
              "optimizer_impl": optimizer_impl, "attention": attention, "offload": "none", "price": price_basis,
              **(finetune if lora is not None else {})}

    def describe(i):
        c = results[int(cand_idx[i])]["cand"]
        q = {"gpus": int(cfg_flat["gpus"][i]), "tp": int(cfg_flat["tp"][i]), "pp": int(cfg_flat["pp"][i]),
             "dp": int(cfg_flat["dp"][i]), "cp": int(cfg_flat["cp"][i]), "ep": int(cfg_flat["ep"][i]),
             "zero": int(cfg_flat["zero"][i]), "sequence_parallel": bool(cfg_flat["sp"][i]),
             "pp_schedule": "interleaved" if cfg_flat["interleaved"][i] else "1f1b",
             "vp": int(cfg_flat["vp"][i]), "gpus_per_node": c.gpus_per_node}
        mb = int(cfg_flat["micro_batch"][i])
        recompute = ("none", "selective", "full")[int(cfg_flat["recompute"][i])]
        usd = None if math.isnan(flat["cost"][i]) else float(flat["cost"][i])
        plan = plan_options(common, c, q, mb, recompute)
        cost = {"gpu_hours": float(flat["gpu_hours"][i]), "usd": usd, "price_basis": price_basis}
        if c.instance is not None:
            cost["instances"] = math.ceil(q["gpus"] / c.instance.gpu_count)
        if usd is None:
            cost["note"] = f"no price at {PRICE_LABELS[price_basis]}"
        return {"candidate": c.name, "gpu": c.hardware.gpu.id,
                "instance": c.instance.instance_id if c.instance is not None else None,
                "parallel": q, "micro_batch": mb, "recompute": recompute, "price_basis": price_basis,
                "memory": {"fits": True, "peak_bytes": float(flat["peak"][i]),
                           "device_bytes": float(flat["device"][i]),
                           "capacity_bytes": float(c.hardware.gpu.capacity_bytes)},
                "time": {"step_s": float(flat["step_s"][i]), "tokens_per_s": float(flat["tokens_per_s"][i]),
                         "mfu": float(flat["mfu"][i]), "train_s": float(flat["train_s"][i]),
                         "train_days": float(flat["train_s"][i] / 86400)},
                "cost": cost, "plan": plan, "estimate_command": estimate_command(plan)}

    plans = [describe(i) for i in order]
    pareto = [describe(i) for i in pareto_idx]
    fitting = int(sum(len(r["step_s"]) for r in results))
    return SearchResult(plans=plans, pareto=pareto, evaluated=evaluated, fitting=fitting,
                        elapsed_s=time.perf_counter() - t0, notes=notes, price_basis=price_basis, pareto_y=pareto_y,
                        assumptions=assumptions)


def memory_columns(model, recipe: str, optimizer: str, attention: str, framework: str, mem_cfg: dict, gpus,
                   capacity_bytes: float, min_headroom_fraction: float, offload: str = "none",
                   optimizer_impl: str = "foreach", lora=None):
    """(peak bytes, device bytes, fits) of every configuration of ``mem_cfg``: what the search
    ranks on. ``fits`` is ``memory_verdict``'s "fits" at ``min_headroom_fraction``."""
    peak = memory_peak(model, recipe, optimizer, attention, framework, mem_cfg, offload, optimizer_impl, lora)
    device = device_bytes(peak, device_overhead(peak, gpus, mem_cfg["recompute"] == 2))
    fits = keeps_margin(device, capacity_bytes, min_headroom_fraction)
    return peak, device, fits


def plan_cost_usd(cand: Candidate, price_basis: str, gpus: np.ndarray, train_s: np.ndarray) -> np.ndarray:
    """USD of each plan at one price basis: whole instances (a plan on part of an instance
    rents all of it) x hours x the instance-hour price, as ``estimate`` charges; NaN where
    the machine has no price at that basis."""
    price = cand.usd_per_instance_hour.get(price_basis)
    if cand.instance is None or price is None:
        return np.full(len(gpus), np.nan)
    instances = np.ceil(gpus / cand.instance.gpu_count)
    return instances * (train_s / 3600) * price


def price_assumptions(candidates: list[Candidate], price_basis: str) -> list[str]:
    """The assumption lines that say how the search priced its plans."""
    label = PRICE_LABELS[price_basis]
    out = [f"cost: {label} prices (price basis {price_basis}), whole instances x hours to train; "
           f"a plan on a machine with no {label} price has no cost (never a blend of other prices)"]
    rates = sorted({c.cny_per_usd for c in candidates if c.currency == "CNY"})
    for r in rates:
        out.append(f"CNY prices converted at {r:g} CNY per USD (--cny-per-usd)")
    unpriced = [c.name for c in candidates if c.usd_per_instance_hour.get(price_basis) is None]
    if unpriced:
        out.append(f"no {label} price for: {', '.join(unpriced)}")
    return out


# The estimate options a search row carries, in the order its command lists them.
PLAN_OPTION_ORDER = ("model", "gpu", "instance", "gpus", "gpus_per_node", "tp", "pp", "cp", "ep", "dp", "zero",
                     "sequence_parallel", "pp_schedule", "vp", "micro_batch", "global_batch", "seq_len", "tokens",
                     "recipe", "framework", "optimizer", "optimizer_impl", "finetune", "lora_rank", "lora_targets",
                     "lora_dtype", "lora_dropout", "qlora_prepare", "attention", "recompute", "offload",
                     "fabric", "nics_per_node", "price", "cny_per_usd")


def plan_options(common: dict, cand: Candidate, q: dict, micro_batch: int, recompute: str) -> dict:
    """The ``estimate`` options (CLI names) that reproduce one search row exactly."""
    hw = cand.hardware
    opts = dict(common)
    if cand.instance is not None:
        opts["instance"] = cand.instance.instance_id
        if cand.currency == "CNY":
            opts["cny_per_usd"] = cand.cny_per_usd
    else:
        opts["gpu"] = hw.gpu.id
    opts.update({k: q[k] for k in ("gpus", "gpus_per_node", "tp", "pp", "cp", "ep", "dp", "zero",
                                   "sequence_parallel", "pp_schedule", "vp")})
    opts.update(micro_batch=micro_batch, recompute=recompute)
    if hw.inter is not None:
        opts["fabric"] = hw.inter.id
    if hw.nics_per_node:
        opts["nics_per_node"] = hw.nics_per_node
    return {k: opts[k] for k in PLAN_OPTION_ORDER if k in opts}


def _option_text(value) -> str:
    """A value as the CLI reads it back unchanged: 1e+12 rather than 1000000000000.0."""
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value)


def estimate_command(options: dict) -> str:
    """One line of ``gpu-planner estimate`` that reproduces ``options``; every value shell-quoted."""
    parts = ["gpu-planner", "estimate"]
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            if v:
                parts.append(flag)
            continue
        if v is None:
            continue
        parts += [flag, shlex.quote(_option_text(v))]
    return " ".join(parts)


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


def candidate_from_instance(name, hardware, instance, cny_per_usd: float = DEFAULT_CNY_PER_USD) -> Candidate:
    """A search candidate with the instance's prices per instance-hour at each basis, in USD
    (CNY converted at ``cny_per_usd``)."""
    return Candidate(name=name, hardware=hardware, gpus_per_node=instance.gpu_count, instance=instance,
                     usd_per_instance_hour=hourly_prices_usd(instance.prices, cny_per_usd),
                     currency=instance.prices.currency, cny_per_usd=cny_per_usd)
