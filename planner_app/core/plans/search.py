"""Plan search: enumerate tensor/pipeline/data/context/expert degrees, ZeRO stage,
micro-batch, recomputation, sequence parallelism, pipeline schedule and instance type;
drop what does not fit; fold plans alike in time and cost into one row and rank by time (times
within a tolerance tie, fewer GPUs first), cost, or cost under a deadline, each machine's best plan
at each GPU count first (the rules in ``ranking.py``); keep the Pareto front of time against cost. Every configuration is scored with the vectorised memory and
time models (``sweep.py``, ``sweep_time.py``: the engine's own formulas over a ``Layout`` of
columns) and the device overhead, not a Python loop over plans. Costs are at one price basis
(on-demand unless asked), never a blend. Each row carries the training request's options that
reproduce it and that one-line ``estimate`` command.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from planner_app.core.errors import InputError
from planner_app.core.hardware.fit import check_min_headroom, keeps_margin
from planner_app.core.hardware.machine import Hardware
from planner_app.core.hardware.specs import InstanceSpec
from planner_app.core.options import build, command_line, given
from planner_app.core.plans.cost import cny_rate, hourly_prices_usd
from planner_app.core.plans.ranking import (
    SIMILAR_FRACTION,
    TIME_TIE_FLOOR_S,
    TIME_TIE_FRACTION,
    best_of_kind,
    by_cost,
    by_time,
    fold_similar,
    pareto_front,
    thinned,
    time_tolerance_s,
)
from planner_app.core.plans.sweep import memory_peak
from planner_app.core.plans.sweep_time import step_time_columns
from planner_app.core.requests import SearchLimits, TrainingRequest
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training.setup import (
    RECOMPUTE_CODES,
    RECOMPUTES,
    Layout,
    TrainingSetup,
)
from planner_app.core.training.states import device_bytes, device_overhead

TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 4, 8, 16, 32)
CP_CHOICES = (1, 2, 4, 8)
MB_CHOICES = (1, 2, 4, 8)
ZERO_CHOICES = (0, 1, 2, 3)
RECOMPUTE_CHOICES = tuple(RECOMPUTE_CODES[r] for r in RECOMPUTES)
# A search ranks every plan at one price basis: asked for none, on-demand (core/plans/cost.py's rule
# falls back per plan, which would rank plans at different prices).
SEARCH_PRICE_BASIS = "on_demand"

PRICE_LABELS = {"on_demand": "on-demand", "reserved_1yr": "1-year reserved", "reserved_3yr": "3-year reserved",
                "spot": "spot"}


@dataclass(frozen=True)
class Candidate:
    """One kind of machine to plan on: hardware, GPUs per node, and its hourly prices."""

    name: str
    hardware: Hardware
    gpus_per_node: int
    instance: InstanceSpec | None = None
    # USD per instance-hour by price basis (PRICE_KINDS); a missing or None entry: no price
    usd_per_instance_hour: dict = field(default_factory=dict)
    currency: str = "USD"  # the currency the prices were quoted in (CNY is converted)
    cny_per_usd: float | None = None  # the rate the prices were converted at (None: the built-in one)


@dataclass
class SearchResult:
    plans: list  # dicts, ranked
    pareto: list  # dicts on the time/cost Pareto front (fitting plans)
    evaluated: int
    fitting: int
    elapsed_s: float
    notes: list = field(default_factory=list)
    price_basis: str = SEARCH_PRICE_BASIS
    pareto_y: str = "usd"  # what the Pareto front's cost axis holds: "usd" or "gpu_hours" (nothing priced)
    assumptions: list = field(default_factory=list)
    rule: str = ""  # how the plans are ranked and collapsed (a Text; in ``assumptions`` too)


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


def enumerate_layouts(model, counts, seq_len: int, global_batch: int, per_node: int) -> dict:
    """Every valid combination of the axes as arrays (one column per configuration): the columns of a
    ``Layout`` (core/training/setup.py) and the GPU count."""
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
                for cp in CP_CHOICES:
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
           "micro_batch": mbs[keep], "zero": zs[keep], "recompute": recs[keep],
           "sequence_parallel": sps[keep].astype(bool), "pp_schedule": scheds[keep].astype(bool)}
    cfg["n_acc"] = global_batch / (cfg["micro_batch"] * cfg["dp"] * cfg["ep"])
    return cfg


@dataclass(frozen=True)
class SearchGroup:
    """Machines searched with one setup (a recipe each GPU supports: a T4 runs fp16 autocast, an A10
    bf16), and the model as the rows' commands name it."""

    setup: TrainingSetup
    candidates: tuple


def search(model, groups: list[SearchGroup], limits: SearchLimits, price_basis: str | None, model_ref: str,
           extra_options: dict | None = None) -> SearchResult:
    """Rank every layout of ``model`` on each candidate machine of every group (see the module
    docstring), all groups in one ranking.

    Every plan is priced at one basis (``price_basis``, None: on-demand): whole instances x hours x
    the instance's price at that basis, as ``estimate`` prices it; a plan whose machine has no price
    at that basis has no cost (``cost.usd`` None, never a blend of other prices or 0). The cost
    objective ranks the priced plans and lists the unpriced ones after them (fastest first).
    ``model_ref`` names the model in the rows' commands (a preset id or a config.json path). A
    layout counts as fitting only when it leaves the limits' memory margin free (``memory_verdict``
    "fits", not "tight"). prepare_model_for_kbit_training keeps only layouts with full
    recomputation (it turns gradient checkpointing on). ``extra_options``: options every row's
    request carries (the calibration profile)."""
    basis = price_basis or SEARCH_PRICE_BASIS
    if not limits.max_gpus or limits.max_gpus < 1:
        raise InputError("max_gpus", "the search needs the largest GPU count to consider (at least 1)")
    headroom = check_min_headroom(limits.min_headroom_pct / 100)
    t0 = time.perf_counter()
    parts, evaluated, notes = [], 0, []
    for group in groups:
        setup = group.setup
        lora = setup.lora(model)
        for cand in group.candidates:
            counts = gpu_counts(limits.max_gpus, cand.gpus_per_node)
            cfg = enumerate_layouts(model, counts, setup.seq_len, setup.global_batch, cand.gpus_per_node)
            if cfg and lora is not None and lora.prepare:
                keep = cfg["recompute"] == RECOMPUTE_CODES["full"]
                cfg = {k: v[keep] for k, v in cfg.items()} if keep.any() else {}
            if not cfg:
                continue
            evaluated += len(cfg["tp"])
            layout = Layout(**{k: v for k, v in cfg.items() if k != "gpus"}, seq_len=float(setup.seq_len),
                            gpus_per_node=cand.gpus_per_node)
            peak, device, fits = memory_columns(model, setup, layout, cand.hardware.gpu.capacity_bytes, headroom)
            if not fits.any():
                notes.append(f"{cand.name}: no layout fits up to {limits.max_gpus} GPUs with "
                             f"{limits.min_headroom_pct:g}% of the memory free")
                continue
            idx = np.nonzero(fits)[0]
            sub = replace(layout, **{k: v[idx] for k, v in cfg.items() if k != "gpus"})
            t = step_time_columns(model, cand.hardware, setup, sub)
            train_s = setup.tokens / t["tokens_per_s"]
            gpus = cfg["gpus"][idx]
            parts.append({"cand": cand, "setup": setup, "cfg": {k: v[idx] for k, v in cfg.items()},
                          "step_s": t["step_s"], "tokens_per_s": t["tokens_per_s"], "mfu": t["mfu"],
                          "train_s": train_s, "gpu_hours": train_s / 3600 * gpus,
                          "cost": plan_cost_usd(cand, basis, gpus, train_s), "peak": peak[idx], "device": device[idx]})
    candidates = [c for g in groups for c in g.candidates]
    assumptions = price_assumptions(candidates, basis) + [
        f"fits: at least {limits.min_headroom_pct:g}% of each GPU's memory stays free beyond the estimate "
        f"(the memory margin, --min-headroom-pct)"]
    if not parts:
        return SearchResult([], [], evaluated, 0, time.perf_counter() - t0, notes or ["nothing fits"],
                            price_basis=basis, assumptions=assumptions)
    keys = ("step_s", "tokens_per_s", "mfu", "train_s", "gpu_hours", "cost", "peak", "device")
    flat = {k: np.concatenate([r[k] for r in parts]) for k in keys}
    part_idx = np.concatenate([np.full(len(r["step_s"]), i) for i, r in enumerate(parts)])
    cfg_flat = {k: np.concatenate([r["cfg"][k] for r in parts]) for k in parts[0]["cfg"]}
    priced = ~np.isnan(flat["cost"])
    ok = np.ones(len(part_idx), bool)
    if limits.deadline_days is not None:
        ok &= flat["train_s"] <= limits.deadline_days * 86400
    if limits.budget_usd is not None:
        ok &= priced & (np.nan_to_num(flat["cost"], nan=np.inf) <= limits.budget_usd)
    if not ok.any():
        notes.append("no fitting plan meets the deadline and budget; showing the fastest fitting plans")
        ok = np.ones(len(part_idx), bool)
    # plans alike in time and cost on one machine and GPU count are one row (ranking.SIMILAR_FRACTION)
    kind = part_idx * (limits.max_gpus + 1) + cfg_flat["gpus"]
    folded, reps = fold_similar(kind, flat["train_s"], flat["cost"], ok, simplicity(cfg_flat) + [flat["train_s"]])
    shown = np.zeros(len(ok), bool)
    shown[reps] = True
    best = best_of_kind(kind, flat["train_s"], shown)  # each machine's best plan at each GPU count leads
    order = (by_time(flat["train_s"], shown, cfg_flat["gpus"], flat["cost"], best) if limits.objective == "time"
             else by_cost(flat["cost"], flat["train_s"], shown, best))[:limits.top]
    rule = ranking_rule(limits.objective)
    if limits.objective == "time" and len(order):
        fastest = int(np.flatnonzero(shown)[np.argmin(flat["train_s"][shown])])
        if fastest != order[0]:
            notes.append(fastest_note(order, fastest, flat["train_s"], cfg_flat["gpus"]))
    if limits.objective == "cost" and any(not priced[i] for i in order):
        notes.append(f"plans without a {PRICE_LABELS[basis]} price are listed after the priced ones")
    if (priced & ok).any():
        pareto_y, front = "usd", pareto_front(flat["train_s"], flat["cost"], ok & priced)
    else:  # nothing priced: the front of time against GPU-hours, labelled as such
        pareto_y, front = "gpu_hours", pareto_front(flat["train_s"], flat["gpu_hours"], ok)

    def describe(i):
        r = parts[int(part_idx[i])]
        c, setup = r["cand"], r["setup"]
        q = {"gpus": int(cfg_flat["gpus"][i]), "tp": int(cfg_flat["tp"][i]), "pp": int(cfg_flat["pp"][i]),
             "dp": int(cfg_flat["dp"][i]), "cp": int(cfg_flat["cp"][i]), "ep": int(cfg_flat["ep"][i]),
             "zero": int(cfg_flat["zero"][i]), "sequence_parallel": bool(cfg_flat["sequence_parallel"][i]),
             "pp_schedule": "interleaved" if cfg_flat["pp_schedule"][i] else "1f1b",
             "vp": Layout.vp, "gpus_per_node": c.gpus_per_node}
        mb = int(cfg_flat["micro_batch"][i])
        recompute = RECOMPUTES[int(cfg_flat["recompute"][i])]
        usd = None if math.isnan(flat["cost"][i]) else float(flat["cost"][i])
        plan = plan_options(model_ref, setup, c, q, mb, recompute, basis, extra_options or {})
        cost = {"gpu_hours": float(flat["gpu_hours"][i]), "usd": usd, "price_basis": basis}
        if c.instance is not None:
            cost["instances"] = math.ceil(q["gpus"] / c.instance.gpu_count)
        if usd is None:
            cost["note"] = f"no price at {PRICE_LABELS[basis]}"
        others = np.flatnonzero(folded == folded[i])
        others = others[others != i][np.argsort(flat["train_s"][others[others != i]], kind="stable")]
        return {"candidate": c.name, "gpu": c.hardware.gpu.id,
                "instance": c.instance.instance_id if c.instance is not None else None,
                "parallel": q, "micro_batch": mb, "recompute": recompute, "price_basis": basis,
                "memory": {"fits": True, "peak_bytes": float(flat["peak"][i]),
                           "device_bytes": float(flat["device"][i]),
                           "capacity_bytes": float(c.hardware.gpu.capacity_bytes)},
                "time": {"step_s": float(flat["step_s"][i]), "tokens_per_s": float(flat["tokens_per_s"][i]),
                         "mfu": float(flat["mfu"][i]), "train_s": float(flat["train_s"][i]),
                         "train_days": float(flat["train_s"][i] / 86400)},
                "cost": cost, "plan": plan, "estimate_command": estimate_command(plan),
                "best_for_gpus": bool(best[i]), "similar": [similar_row(j) for j in others]}

    def similar_row(j):
        """A plan folded into a row (``similar``): its layout, time, cost and memory."""
        usd = None if math.isnan(flat["cost"][j]) else float(flat["cost"][j])
        return {"parallel": {k: int(cfg_flat[k][j]) for k in ("tp", "pp", "dp", "cp", "ep", "zero")}
                | {"sequence_parallel": bool(cfg_flat["sequence_parallel"][j]),
                   "pp_schedule": "interleaved" if cfg_flat["pp_schedule"][j] else "1f1b"},
                "micro_batch": int(cfg_flat["micro_batch"][j]), "recompute": RECOMPUTES[int(cfg_flat["recompute"][j])],
                "train_s": float(flat["train_s"][j]), "usd": usd, "peak_bytes": float(flat["peak"][j])}

    return SearchResult(plans=[describe(i) for i in order], pareto=[describe(i) for i in thinned(front)],
                        evaluated=evaluated, fitting=int(sum(len(r["step_s"]) for r in parts)),
                        elapsed_s=time.perf_counter() - t0, notes=notes, price_basis=basis, pareto_y=pareto_y,
                        assumptions=assumptions + [rule, SIMILAR_RULE], rule=rule)


# How a search ranks and collapses its plans, as its assumptions state it (ranking.py's constants)
SIMILAR_RULE = Text(QT_TRANSLATE_NOOP(
    "Engine", "plans on one machine and GPU count within {pct:g}% of each other in time and cost are one row, the "
              "simplest of them (fewest model-parallel axes, no interleaving or sequence parallelism, least "
              "recomputation, lowest ZeRO stage and micro-batch); '+N similar' counts the others"),
    pct=SIMILAR_FRACTION * 100)


def ranking_rule(objective: str) -> Text:
    """The sentence that states how the plans are ranked for ``objective`` (ranking.py's rule)."""
    if objective == "time":
        return Text(QT_TRANSLATE_NOOP(
            "Engine", "fastest first: plans within {pct:g}% or {minutes:g} minutes of the fastest, whichever is "
                      "more, count as equally fast (a run's start-up, minutes, is not in the estimate), and of those "
                      "the fewest GPUs, then the cheapest, rank first; each machine's best plan at each GPU count "
                      "comes before the slower and dearer plans of that machine and count"),
            pct=TIME_TIE_FRACTION * 100, minutes=TIME_TIE_FLOOR_S / 60)
    return Text(QT_TRANSLATE_NOOP(
        "Engine", "cheapest first at the price basis (equal costs: the faster first); each machine's best plan at "
                  "each GPU count comes before the slower and dearer plans of that machine and count"))


def fastest_note(order, fastest: int, train_s, gpus) -> Text:
    """The note that says where the fastest plan ranks when plans with fewer GPUs, about as fast,
    lead (``order``: the ranked indices)."""
    tol_s = time_tolerance_s(train_s[fastest])
    where = [int(i) for i in order].index(fastest) + 1 if fastest in order else None
    if tol_s > TIME_TIE_FLOOR_S:
        slower = Text(QT_TRANSLATE_NOOP("Engine", "at most {pct:g}% longer"), pct=TIME_TIE_FRACTION * 100)
    else:
        slower = Text(QT_TRANSLATE_NOOP("Engine", "at most {minutes:g} minutes longer"), minutes=tol_s / 60)
    if where is None:
        return Text(QT_TRANSLATE_NOOP("Engine", "the fastest plan ({gpus:,} GPUs) is below the rows shown: the "
                                                "plans shown use fewer GPUs or cost less and take {slower}"),
                    gpus=int(gpus[fastest]), slower=slower)
    return Text(QT_TRANSLATE_NOOP("Engine", "the fastest plan ({gpus:,} GPUs) is #{rank}: the plans above it use "
                                            "fewer GPUs or cost less and take {slower}"),
                gpus=int(gpus[fastest]), rank=where, slower=slower)


def simplicity(cfg: dict) -> list:
    """The keys that order plans from simplest to run (lower first, most significant first): how many
    model-parallel axes are used, how many GPUs hold one model copy, an interleaved schedule, sequence
    parallelism, recomputation, ZeRO stage, micro-batch."""
    axes = sum((cfg[k] > 1).astype(float) for k in ("tp", "pp", "cp", "ep"))
    return [axes, cfg["tp"] * cfg["pp"] * cfg["cp"] * cfg["ep"], cfg["pp_schedule"].astype(float),
            cfg["sequence_parallel"].astype(float), cfg["recompute"], cfg["zero"], cfg["micro_batch"]]


def memory_columns(model, setup: TrainingSetup, layout: Layout, capacity_bytes: float, min_headroom_fraction: float):
    """(peak bytes, device bytes, fits) of every configuration of ``layout``: what the search ranks
    on. ``fits`` is ``memory_verdict``'s "fits" at ``min_headroom_fraction``."""
    peak = memory_peak(model, setup, layout)
    device = device_bytes(peak, device_overhead(peak, layout.gpus, layout.recompute == RECOMPUTE_CODES["full"]))
    return peak, device, keeps_margin(device, capacity_bytes, min_headroom_fraction)


def plan_cost_usd(cand: Candidate, price_basis: str, gpus: np.ndarray, train_s: np.ndarray) -> np.ndarray:
    """USD of each plan at one price basis: whole instances (a plan on part of an instance rents all
    of it) x hours x the instance-hour price, as ``estimate`` charges; NaN where the machine has no
    price at that basis."""
    price = cand.usd_per_instance_hour.get(price_basis)
    if cand.instance is None or price is None:
        return np.full(len(gpus), np.nan)
    return np.ceil(gpus / cand.instance.gpu_count) * (train_s / 3600) * price


def price_assumptions(candidates: list[Candidate], price_basis: str) -> list[str]:
    """The assumption lines that say how the search priced its plans."""
    label = PRICE_LABELS[price_basis]
    out = [f"cost: {label} prices (price basis {price_basis}), whole instances x hours to train; "
           f"a plan on a machine with no {label} price has no cost (never a blend of other prices)"]
    rates = sorted({cny_rate(c.cny_per_usd) for c in candidates if c.currency == "CNY"})
    for rate in rates:
        out.append(f"CNY prices converted at {rate:g} CNY per USD (--cny-per-usd)")
    unpriced = [c.name for c in candidates if c.usd_per_instance_hour.get(price_basis) is None]
    if unpriced:
        out.append(f"no {label} price for: {', '.join(unpriced)}")
    return out


def plan_options(model_ref: str, setup: TrainingSetup, cand: Candidate, q: dict, micro_batch: int, recompute: str,
                 price_basis: str, extra: dict) -> dict:
    """The training request's options (CLI names) that reproduce one search row exactly: every
    option of the request built from them that differs from its default."""
    hw = cand.hardware
    opts: dict = {"model": model_ref, **given(setup), "micro_batch": micro_batch, "recompute": recompute,
                  **{k: q[k] for k in ("gpus", "tp", "pp", "cp", "ep", "dp", "zero", "sequence_parallel",
                                       "pp_schedule", "vp")},
                  "gpus_per_node": q["gpus_per_node"], "price": price_basis, **extra}
    if cand.instance is not None:
        opts["instance"] = cand.instance.instance_id
        if cand.currency == "CNY" and cand.cny_per_usd is not None:
            opts["cny_per_usd"] = cand.cny_per_usd
    else:
        opts["gpu"] = hw.gpu.id
    if hw.inter is not None:
        opts["fabric"] = hw.inter.id
    if hw.nics_per_node:
        opts["nics_per_node"] = hw.nics_per_node
    return {"model": model_ref, **given(build(TrainingRequest, opts))}


def estimate_command(options: dict) -> str:
    """One line of ``gpu-planner estimate`` that reproduces ``options``; every value shell-quoted."""
    return command_line("estimate", options)


def candidate_from_instance(name, hardware, instance, cny_per_usd: float | None) -> Candidate:
    """A search candidate with the instance's prices per instance-hour at each basis, in USD
    (CNY converted at ``cny_per_usd``, None: the built-in rate)."""
    return Candidate(name=name, hardware=hardware, gpus_per_node=instance.gpu_count, instance=instance,
                     usd_per_instance_hour=hourly_prices_usd(instance.prices, cny_per_usd),
                     currency=instance.prices.currency, cny_per_usd=cny_per_usd)
