"""The search service: a typed request (core/requests.SearchRequest: the workload's setup, the
machines, the limits) -> the engine's ranked plans. The CLI's ``search`` and the GUI's Search page
both run it, so the same workload gets the same plans everywhere, with ``estimate``'s defaults (the
recipe from ``default_recipe``, the attention from ``default_attention``, the sequence length from
the preset, the calibration profile through ``resolve_hardware``)."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

from planner_app.core.errors import ImpossibleResult, InputError
from planner_app.core.models.spec import ModelSpec
from planner_app.core.plans.search import (
    Candidate,
    SearchGroup,
    SearchResult,
    candidate_from_instance,
    search,
)
from planner_app.core.requests import SearchRequest
from planner_app.core.results import check_quantities
from planner_app.service.calibration import load_calibration
from planner_app.service.resolve import (
    check_attention,
    default_attention,
    default_recipe,
    default_seq_len,
    resolve_hardware,
    resolve_model,
)

OPTIMIZER_LABELS = {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD", "sgd-momentum": "SGD with momentum",
                    "adafactor": "Adafactor", "adamw-8bit": "8-bit AdamW", "adamw-8bit-paged": "paged 8-bit AdamW"}


def build_candidates(db, machines: tuple, fabric: str | None, cny_per_usd: float | None,
                     calibration=None) -> list[Candidate]:
    """Candidates of ``machines`` ((kind, name) pairs; ``calibration``: a loaded profile every
    candidate's hardware carries, as ``estimate``'s does)."""
    out = []
    for kind, name in machines:
        if kind == "instance":
            hw, _per_node, _ = resolve_hardware(db, instance=name, fabric=fabric, calibration=calibration)
            out.append(candidate_from_instance(name, hw, hw.instance, cny_per_usd))
        elif kind == "gpu":
            hw, per_node, _ = resolve_hardware(db, gpu=name, fabric=fabric, calibration=calibration)
            out.append(Candidate(name=hw.gpu.name, hardware=hw, gpus_per_node=per_node))
        else:
            raise InputError("machines", f"kinds are gpu or instance; got {kind}")
    if not out:
        raise InputError("gpu", "give one or more GPUs or instances, comma-separated")
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


@dataclass
class SearchOutput:
    """The engine's result with the request it answers and the workload it was scored at."""

    request: SearchRequest
    result: SearchResult
    model: ModelSpec
    seq_len: int
    global_batch: int
    recipe: str  # the recipe; recipes joined by "/" when the machines' defaults differ
    framework: str
    optimizer: str
    attention: str
    assumptions: list = field(default_factory=list)  # everything, as the JSON lists it
    notes: list = field(default_factory=list)  # the defaults taken and the profile (in ``assumptions`` too)

    def to_json(self) -> dict:
        res = self.result
        return {"model": self.model.name, "tokens": self.request.setup.tokens, "seq_len": self.seq_len,
                "global_batch": self.global_batch, "objective": self.request.limits.objective,
                "price_basis": res.price_basis, "pareto_y": res.pareto_y, "evaluated": res.evaluated,
                "fitting": res.fitting, "elapsed_s": res.elapsed_s, "plans": res.plans, "pareto": res.pareto,
                "notes": res.notes, "assumptions": self.assumptions}


def _groups(request: SearchRequest, setup, candidates: list[Candidate]) -> tuple[list[SearchGroup], list[str]]:
    """One group when a recipe is given or the machines share a default, else one per default (a T4
    runs fp16 autocast, an A10 bf16), with the notes that say so."""
    if setup.recipe:
        return [SearchGroup(setup=setup, candidates=tuple(candidates))], []
    by_recipe: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_recipe.setdefault(default_recipe(c.hardware.gpu, setup.framework, setup.finetune), []).append(c)
    notes = [f"recipe {r} (default for {', '.join(c.name for c in cs)} with {setup.framework}; --recipe)"
             for r, cs in by_recipe.items()]
    return [SearchGroup(setup=replace(setup, recipe=r), candidates=tuple(cs)) for r, cs in by_recipe.items()], notes


def run_search(request: SearchRequest, db, progress=None, cancelled=None) -> SearchOutput | None:
    """Rank the plans of ``request`` (None when ``cancelled()`` says so before scoring).

    ``progress(fraction, text)`` and ``cancelled()`` are the background-task callbacks."""
    s = request.setup
    if not s.tokens:
        raise InputError("tokens", "the search needs a training budget (tokens)")
    model = resolve_model(request.model, db)
    seq = s.seq_len or default_seq_len(model, db)
    gbs = s.global_batch or default_global_batch(seq)
    attention = s.attention or default_attention(s.framework, model)
    check_attention(model, attention, s.framework)
    setup = replace(s, seq_len=seq, global_batch=gbs, attention=attention)
    profile = load_calibration(request.calibration, db)
    cands = build_candidates(db, request.machines, request.fabric, request.cny_per_usd, profile)
    groups, notes = _groups(request, setup, cands)
    if cancelled is not None and cancelled():
        return None
    if progress:
        progress(0.1, "scoring")
    ref = model_ref(request.model) if isinstance(request.model, str) else model.name
    extra = {"calibration": profile.name} if profile is not None else {}
    try:
        res = search(model, groups, request.limits, request.price, ref, extra)
        for p in res.plans + res.pareto:  # a ranked plan is a result the engine returned: checked as one
            check_quantities(_Row(p["time"], p["memory"], p["cost"]))
    except ImpossibleResult as e:
        raise ImpossibleResult("calibration" if profile is not None else "result", e.message) from None
    if profile is not None:
        notes.append(f"calibration profile {profile.name!r} ({profile.summary()})")
    if progress:
        progress(1.0, "done")
    recipe = "/".join(g.setup.recipe for g in groups)
    assumptions = [f"recipe {recipe}, framework {s.framework}, {OPTIMIZER_LABELS.get(s.optimizer, s.optimizer)}, "
                   f"{attention} attention", f"global batch {gbs} sequences of {seq} tokens",
                   "GPU counts: powers of two and 1.5x powers of two in whole nodes"] + notes + res.assumptions
    return SearchOutput(request=request, result=res, model=model, seq_len=seq, global_batch=gbs, recipe=recipe,
                        framework=s.framework, optimizer=s.optimizer, attention=attention, assumptions=assumptions,
                        notes=notes)


@dataclass(frozen=True)
class _Row:
    """A ranked row's numbers, as check_quantities reads a result part."""

    time: dict
    memory: dict
    cost: dict
