"""The search service: one typed request (the workload, the machines to consider, the limits)
-> the engine's ranked plans. The CLI's ``search`` and the GUI's Search page both run it, so
the same workload gets the same plans everywhere, with the same defaults as ``estimate``
(framework and optimizer from ``OPTION_DEFAULTS``, the recipe from ``default_recipe``, the
attention from ``default_attention``, the calibration profile through ``resolve_hardware``)."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from planner_app.core.errors import InputError
from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION
from planner_app.core.plans.cost import DEFAULT_CNY_PER_USD
from planner_app.core.plans.search import Candidate, SearchResult, candidate_from_instance, estimate_command, search
from planner_app.service.options import OPTION_DEFAULTS
from planner_app.service.resolve import (
    check_attention,
    default_attention,
    default_recipe,
    default_seq_len,
    resolve_hardware,
    resolve_model,
)

OPTIMIZER_LABELS = {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD", "sgd-momentum": "SGD with momentum",
                    "adafactor": "Adafactor", "adamw-8bit": "8-bit AdamW"}


def build_candidates(db, gpus: str | None, instances: str | None, fabric: str | None,
                     cny_per_usd: float = DEFAULT_CNY_PER_USD, calibration=None) -> list[Candidate]:
    """Candidates from comma-separated instance ids, else GPU names (``calibration``: a loaded
    profile every candidate's hardware carries, as ``estimate``'s does)."""
    out = []
    if instances:
        for name in [x.strip() for x in instances.split(",") if x.strip()]:
            hw, per_node, _ = resolve_hardware(db, instance=name, fabric=fabric, calibration=calibration)
            out.append(candidate_from_instance(name, hw, hw.instance, cny_per_usd))
    else:
        for name in [x.strip() for x in (gpus or "").split(",") if x.strip()]:
            hw, per_node, _ = resolve_hardware(db, gpu=name, fabric=fabric, calibration=calibration)
            out.append(Candidate(name=hw.gpu.name, hardware=hw, gpus_per_node=per_node))
    if not out:
        raise InputError("gpu", "give one or more GPUs (--gpu A,B) or instances (--instance X,Y)")
    return out


def default_global_batch(seq_len: int) -> int:
    """About 4M tokens per step, in a power-of-two number of sequences (Llama 3's 4M-token
    batches, Dubey et al. 2024 table 4)."""
    return 2 ** max(0, round(math.log2(4_000_000 / seq_len)))


def model_ref(text) -> str:
    """The model as an ``estimate`` command names it: a config file by its absolute path."""
    if text.endswith(".json") or os.path.sep in text or os.path.exists(text):
        return os.path.abspath(text)
    return text


@dataclass(frozen=True)
class SearchRequest:
    """What to search: the workload (None: the ``estimate`` default), the machines as
    ``("gpu", id)`` / ``("instance", id)`` pairs, and the limits and ranking."""

    model: object  # a preset name, a config.json path, or an embedded config (dict)
    tokens: float
    machines: tuple  # (kind, id) pairs, kind "gpu" or "instance"
    max_gpus: int
    seq_len: int | None = None
    global_batch: int | None = None
    recipe: str | None = None
    framework: str | None = None
    optimizer: str | None = None
    optimizer_impl: str | None = None  # PyTorch AdamW implementation (None: the estimate's default)
    # LoRA / QLoRA (None: full fine-tuning, PEFT's defaults), as estimate's options of the same names
    finetune: str | None = None
    lora_rank: int | None = None
    lora_targets: str | None = None
    lora_dtype: str | None = None
    lora_dropout: float | None = None
    qlora_prepare: bool | None = None
    attention: str | None = None
    deadline_days: float | None = None
    budget_usd: float | None = None
    objective: str = "time"
    top: int = 10
    price_basis: str = "on_demand"
    fabric: str | None = None
    cny_per_usd: float | None = None
    min_headroom_fraction: float = DEFAULT_MIN_HEADROOM_FRACTION
    calibration: str | None = None  # a saved probe calibration profile's name


@dataclass
class SearchOutput:
    """The engine's result with the workload it was scored at and every assumption."""

    result: SearchResult
    model: object
    seq_len: int
    global_batch: int
    recipe: str  # the recipe; recipes joined by "/" when the machines' defaults differ
    framework: str
    optimizer: str
    attention: str
    assumptions: list = field(default_factory=list)  # everything, as the JSON lists it
    notes: list = field(default_factory=list)  # the defaults taken and the profile (in ``assumptions`` too)


def _workload_defaults(request: SearchRequest, candidates: list[Candidate], model=None):
    """(recipe groups, framework, optimizer, attention, notes): what was given, else what
    ``estimate`` would use for the same workload. The recipe groups map each recipe to its
    candidates: one group when a recipe is given or the machines share a default, else one per
    default (a T4 runs fp16 autocast, an A10 bf16)."""
    from planner_app.service.options import OPTION_DEFAULTS

    framework = request.framework or OPTION_DEFAULTS["framework"]
    optimizer = request.optimizer or OPTION_DEFAULTS["optimizer"]
    attention = request.attention or default_attention(framework, model)
    if model is not None:
        check_attention(model, attention, framework)
    if request.recipe:
        return {request.recipe: list(candidates)}, framework, optimizer, attention, []
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(default_recipe(c.hardware.gpu, framework, request.finetune or "full"), []).append(c)
    notes = [f"recipe {r} (default for {', '.join(c.name for c in cs)} with {framework}; --recipe)"
             for r, cs in groups.items()]
    return groups, framework, optimizer, attention, notes


def run_search(request: SearchRequest, db, progress=None, cancelled=None) -> SearchOutput | None:
    """Rank the plans of ``request`` (None when ``cancelled()`` says so before scoring).

    ``progress(fraction, text)`` and ``cancelled()`` are the background-task callbacks."""
    from planner_app.service.estimate import load_calibration

    if not request.tokens:
        raise InputError("tokens", "the search needs a training budget (tokens)")
    model = resolve_model(request.model, db)
    seq = request.seq_len or default_seq_len(model, db)
    gbs = request.global_batch or default_global_batch(seq)
    cny = request.cny_per_usd or DEFAULT_CNY_PER_USD
    profile = load_calibration(request.calibration)
    kinds = {k for k, _ in request.machines} - {"gpu", "instance"}
    if kinds:
        raise InputError("machines", f"kinds are gpu or instance; got {', '.join(sorted(kinds))}")
    insts = ",".join(i for k, i in request.machines if k == "instance")
    gpus = ",".join(i for k, i in request.machines if k == "gpu")
    cands = []
    if insts:
        cands += build_candidates(db, None, insts, request.fabric, cny, profile)
    if gpus or not cands:
        cands += build_candidates(db, gpus, None, request.fabric, cny, profile)
    groups, framework, optimizer, attention, notes = _workload_defaults(request, cands, model)
    from types import SimpleNamespace

    from planner_app.service.estimate import LORA_OPTIONS, finetune_options
    finetune = finetune_options(SimpleNamespace(finetune=request.finetune, recompute="full",
                                                **{k: getattr(request, k) for k in LORA_OPTIONS}))
    finetune = finetune if finetune["finetune"] != "full" else None
    if cancelled is not None and cancelled():
        return None
    if progress:
        progress(0.1, "scoring")
    ref = model_ref(request.model) if isinstance(request.model, str) else model.name
    results = [search(model, group, tokens=float(request.tokens), max_gpus=request.max_gpus, seq_len=seq,
                      global_batch=gbs, recipe=recipe, framework=framework, optimizer=optimizer,
                      attention=attention, deadline_days=request.deadline_days, budget_usd=request.budget_usd,
                      objective=request.objective, top=request.top, price_basis=request.price_basis, model_ref=ref,
                      min_headroom_fraction=request.min_headroom_fraction,
                      optimizer_impl=request.optimizer_impl or OPTION_DEFAULTS["optimizer_impl"],
                      finetune=finetune)
               for recipe, group in groups.items()]
    res = results[0] if len(results) == 1 else _merge(results, cands, request)
    recipe = "/".join(groups)
    if profile is not None:
        _add_calibration(res, profile)
        notes.append(f"calibration profile {profile.name!r} ({profile.summary()})")
    from planner_app.service.results import check_estimate
    for p in res.plans + res.pareto:  # a ranked plan is a result the engine returned: checked as an estimate
        check_estimate({k: p[k] for k in ("time", "memory", "cost") if isinstance(p.get(k), dict)},
                       "calibration" if profile is not None else "result")
    if progress:
        progress(1.0, "done")
    assumptions = [f"recipe {recipe}, framework {framework}, {OPTIMIZER_LABELS.get(optimizer, optimizer)}, "
                   f"{attention} attention", f"global batch {gbs} sequences of {seq} tokens",
                   "GPU counts: powers of two and 1.5x powers of two in whole nodes"] + notes + res.assumptions
    return SearchOutput(result=res, model=model, seq_len=seq, global_batch=gbs, recipe=recipe, framework=framework,
                        optimizer=optimizer, attention=attention, assumptions=assumptions,
                        notes=notes)


def _add_calibration(res: SearchResult, profile) -> None:
    """Every row's ``estimate`` options and command name the profile it was scored with."""
    for p in res.plans + res.pareto:
        p["plan"] = {**p["plan"], "calibration": profile.name}
        p["estimate_command"] = estimate_command(p["plan"])


def _merge(results: list[SearchResult], candidates: list[Candidate], request: SearchRequest) -> SearchResult:
    """One ranking from the searches of several recipe groups, ranked, filtered and with the
    Pareto front as ``core.search.search`` does within one."""
    from planner_app.core.plans.search import PRICE_LABELS, price_assumptions

    deadline_s = None if request.deadline_days is None else request.deadline_days * 86400
    budget = request.budget_usd

    def meets(p):
        usd = p["cost"]["usd"]
        return ((deadline_s is None or p["time"]["train_s"] <= deadline_s)
                and (budget is None or (usd is not None and usd <= budget)))

    def key(p):
        usd = p["cost"]["usd"]
        if request.objective == "time":
            return (p["time"]["train_s"],)
        return (usd is None, math.inf if usd is None else usd, p["time"]["train_s"])

    fallback = "no fitting plan meets the deadline and budget; showing the fastest fitting plans"
    plans = [p for r in results for p in r.plans]
    notes = [n for r in results for n in r.notes
             if n not in (fallback, "nothing fits") and not n.startswith("plans without a")]
    if any(meets(p) for p in plans):
        plans = [p for p in plans if meets(p)]
    elif plans and (deadline_s is not None or budget is not None):
        notes.append(fallback)
    plans = sorted(plans, key=key)[:request.top]
    if request.objective == "cost" and any(p["cost"]["usd"] is None for p in plans):
        notes.append(f"plans without a {PRICE_LABELS[request.price_basis]} price are listed after the priced ones")
    if not plans and not notes:
        notes = ["nothing fits"]
    pareto_y = "usd" if any(r.pareto_y == "usd" and r.pareto for r in results) else "gpu_hours"
    points = sorted((p for r in results for p in r.pareto if p["cost"][pareto_y] is not None),
                    key=lambda p: (p["time"]["train_s"], p["cost"][pareto_y]))
    pareto, best = [], math.inf
    for p in points:
        if p["cost"][pareto_y] < best:
            pareto.append(p)
            best = p["cost"][pareto_y]
    assumptions = price_assumptions(candidates, request.price_basis) + [
        a for a in results[0].assumptions if a.startswith("fits:")]
    return SearchResult(plans=plans, pareto=pareto, evaluated=sum(r.evaluated for r in results),
                        fitting=sum(r.fitting for r in results), elapsed_s=sum(r.elapsed_s for r in results),
                        notes=notes, price_basis=request.price_basis, pareto_y=pareto_y, assumptions=assumptions)
