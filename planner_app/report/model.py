"""The report model: everything a sizing report shows, as plain data built from a scenario
(no Qt, no formatting). Renderers (``html``, ``pdf``, ``exports``) only lay it out.

The numbers are the estimate dicts of ``scenario.evaluate`` unchanged (the same as
``gpu-planner estimate --json``); the report adds what the estimate does not carry: the
cost at each price of the instance where the estimate gives only one (inference), the
scaling curve of the chosen plan, the calibration profile, and the data sources.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from planner_app import ENGINE_VERSION, __version__
from planner_app import scenario as scenario_mod
from planner_app.core.errors import InputError
from planner_app.core.plans.cost import PRICE_KINDS, hourly_prices_usd
from planner_app.core.plans.scaling import group_size
from planner_app.core.requests import ScalingCurves, ScalingRequest
from planner_app.service.calibration import load_calibration
from planner_app.service.scaling import run_scaling
from planner_app.service.serving_plans import serve_scenario
from planner_app.specdb.schema import SpecDataError

# Memory components shown in the chart: (key, breakdown keys summed into it). What is not
# listed goes to "other"; the runtime overhead (CUDA context, NCCL, allocator reserve) is
# device_bytes - peak_bytes.
MEMORY_GROUPS = (
    ("parameters", ("parameters",)),
    ("gradients", ("gradients",)),
    ("optimizer_states", ("optimizer_states", "master_weights", "optimizer_temporaries")),
    ("activations", ("activations", "logits_and_loss", "temporaries")),
    ("kv_cache", ("kv_cache",)),
)


@dataclass
class PlanResult:
    """One compared plan: its options and estimate, or the error that stopped it."""

    index: int
    name: str
    options: dict
    estimate: dict | None = None  # the estimate's JSON (what gpu-planner estimate --json prints)
    error: str | None = None
    result: object | None = None  # service/results.EstimateResult: the request and its typed estimate
    own: dict = field(default_factory=dict)  # the workload options this plan sets for itself (scenario.PLAN_OWN_KEYS)
    # USD for the whole run (training) or per million tokens (inference), per price kind
    cost_by_price: dict = field(default_factory=dict)
    hourly_usd: dict = field(default_factory=dict)  # instance-hour prices, per price kind
    instance: dict | None = None  # provider, region, id, source, retrieved, price_date

    @property
    def ok(self) -> bool:
        return self.estimate is not None

    def memory_groups(self) -> list[tuple[str, float]]:
        """(component, bytes) summing to the device memory the plan needs per GPU."""
        m = self.estimate["memory"]
        bd = dict(m["breakdown"])
        out = []
        for key, parts in MEMORY_GROUPS:
            v = sum(float(bd.pop(p, 0.0) or 0.0) for p in parts)
            if v > 0:
                out.append((key, v))
        rest = sum(float(v or 0.0) for v in bd.values())
        if rest > 0:
            out.append(("other", rest))
        overhead = float(m.get("device_bytes") or m["peak_bytes"]) - float(m["peak_bytes"])
        if overhead > 0:
            out.append(("runtime_overhead", overhead))
        return out


@dataclass
class Source:
    kind: str  # gpu, instance, fabric, model
    name: str
    url: str
    retrieved: str
    price_date: str = ""


@dataclass
class Report:
    """A sizing report, ready to render."""

    scenario: dict
    lang: str
    title: str
    project: str
    author: str
    notes: str
    created: str  # ISO date the report was made
    app_version: str
    engine_version: str
    spec_data: dict  # newest retrieved date, row counts, user rows
    mode: str  # training | inference
    workload: dict
    plans: list[PlanResult]
    chosen: int  # the scenario's chosen_plan: the plan open in the planner (not a recommendation)
    currency: str
    target_tokens_per_s: float | None = None
    scaling: dict | None = None  # {"gpus_per_node", "points": [...], "plan_nodes", "fabric"} or {"error"}
    calibration: dict | None = None  # {"name", "summary", "efficiency": {...}} or {"name", "error"}
    # the scenario's serve section on each plan's machine (service/serving_plans.py), None without one
    serving: dict | None = None
    assumptions: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    # the plan the report recommends and the rule that picked it (``recommend``)
    recommended: int = 0
    rule: dict = field(default_factory=dict)

    @property
    def chosen_plan(self) -> PlanResult:
        return self.plans[self.chosen]

    @property
    def recommended_plan(self) -> PlanResult:
        return self.plans[self.recommended]

    def recommends(self, index: int) -> bool:
        """Whether plan ``index`` is the recommendation (when no plan fits, none is)."""
        return index == self.recommended and self.rule.get("rule") in ("cheapest_on_demand", "fastest")

    def to_dict(self) -> dict:
        """JSON-ready: the scenario and every plan's estimate, plus what the report added."""
        return {
            "report": {"title": self.title, "project": self.project, "author": self.author, "created": self.created,
                       "app_version": self.app_version, "engine_version": self.engine_version,
                       "spec_data": self.spec_data, "lang": self.lang, "mode": self.mode,
                       "chosen_plan": self.chosen, "recommended_plan": self.recommended,
                       "recommendation_rule": self.rule, "currency": self.currency,
                       "target_tokens_per_s": self.target_tokens_per_s},
            "scenario": self.scenario,
            "plans": [{"name": p.name, "options": p.options,
                       **({"estimate": p.estimate} if p.ok else {"error": p.error}),
                       "cost_by_price_usd": p.cost_by_price, "hourly_price_usd": p.hourly_usd,
                       "instance": p.instance} for p in self.plans],
            "scaling": self.scaling,
            "calibration": self.calibration,
            **({"serving": self.serving} if self.serving is not None else {}),
            "assumptions": self.assumptions,
            "sources": [vars(s) for s in self.sources],
        }


def build_report(sc: dict, db, lang: str = "en", today: _dt.date | None = None) -> Report:
    """Evaluate every plan of scenario ``sc`` against spec database ``db`` and collect what
    the report shows. Plans that fail keep their error; nothing here raises for them."""
    if lang not in ("en", "zh_CN"):
        raise InputError("lang", f"must be en or zh_CN, got {lang!r}")
    scenario_mod.validate(sc)
    meta = sc.get("meta") or {}
    results = scenario_mod.evaluate(sc, db)
    plans = []
    for i, r in enumerate(results):
        p = PlanResult(index=i, name=r["name"], options=r["options"], estimate=r.get("estimate"),
                       error=r.get("error"), result=r.get("result"), own=r.get("own") or {})
        if p.ok:
            _add_prices(p, db)
        plans.append(p)
    workload = dict(sc["workload"])
    mode = workload.get("mode", "training")
    rep = Report(scenario=sc, lang=lang, title=meta.get("title") or "Untitled sizing",
                 project=meta.get("project") or "", author=meta.get("author") or "", notes=meta.get("notes") or "",
                 created=(today or _dt.date.today()).isoformat(), app_version=__version__,
                 engine_version=ENGINE_VERSION, spec_data=_spec_data_version(db), mode=mode, workload=workload,
                 plans=plans, chosen=int(sc.get("chosen_plan", 0) or 0), currency=sc.get("currency") or "USD",
                 target_tokens_per_s=workload.get("target_tokens_per_s"))
    rep.recommended, rep.rule = recommend(plans, mode, rep.target_tokens_per_s, rep.chosen)
    if mode == "training" and rep.recommended_plan.ok:
        rep.scaling = _scaling(rep.recommended_plan, db)
    if sc.get("calibration"):
        rep.calibration = _calibration(sc["calibration"], db)
    # the serving numbers are gpu-planner serve's (one engine): the report adds none of its own
    rep.serving = serve_scenario(sc, db, today)
    rep.assumptions = _assumptions(plans)
    if rep.serving is not None:
        rep.assumptions += [a for a in rep.serving["assumptions"] if a not in rep.assumptions]
    rep.sources = _sources(plans, db, rep.serving)
    return rep


# ---- the recommendation ------------------------------------------------------------------
# The rule (the report states which branch chose): of the plans that fit in GPU memory -- for
# inference with a target, those that also reach it, when any does -- the cheapest at the on-demand
# price (one price kind, so like is compared with like: a spot-only price is not "cheaper"); when
# none of them has an on-demand price, the fastest. When no plan fits, none is recommended and the
# plan open in the planner is shown.
RULES = ("cheapest_on_demand", "fastest", "none_fits", "none_estimated")


def _speed(p: PlanResult) -> float:
    """Larger is faster: training tokens/s (same order as the time to train), decode tokens/s."""
    t = p.estimate["time"]
    return float(t["tokens_per_s"] if p.estimate["mode"] == "training" else t["decode_tokens_per_s"])


def recommend(plans: list[PlanResult], mode: str, target_tokens_per_s: float | None,
              opened: int) -> tuple[int, dict]:
    """(index of the recommended plan, the rule that chose it: {"rule", "candidates", "total",
    "target_met"}). ``opened``: the plan open in the planner, shown when no plan fits."""
    ok = [p for p in plans if p.ok]
    rule = {"total": len(plans), "candidates": 0, "target_met": None}
    if not ok:
        return opened, rule | {"rule": "none_estimated"}
    fit = [p for p in ok if p.estimate["memory"]["fits"]]
    if not fit:
        return opened, rule | {"rule": "none_fits"}
    if mode != "training" and target_tokens_per_s:
        meet = [p for p in fit if p.estimate["time"]["decode_tokens_per_s"] >= target_tokens_per_s]
        rule["target_met"] = bool(meet)
        fit = meet or fit
    rule["candidates"] = len(fit)
    priced = [p for p in fit if p.cost_by_price.get("on_demand") is not None]
    if priced:  # ties: the faster, then the first listed
        best = min(priced, key=lambda p: (p.cost_by_price["on_demand"], -_speed(p), p.index))
        return best.index, rule | {"rule": "cheapest_on_demand"}
    best = min(fit, key=lambda p: (-_speed(p), p.index))
    return best.index, rule | {"rule": "fastest"}


# ---- prices -------------------------------------------------------------------------------
def _add_prices(p: PlanResult, db) -> None:
    """Cost at every price of the plan's instance. Training: the estimate's ``usd_by_price``
    as it is. Inference: the estimate gives the cost per million tokens at its basis; the other
    prices scale it by their hourly price (same tokens/s, so cost is proportional to price)."""
    est = p.estimate
    inst = p.result.estimate.hardware.instance
    if inst is not None:
        p.hourly_usd = hourly_prices_usd(inst.prices, p.result.request.pricing.cny_per_usd)
        p.instance = {"provider": inst.provider, "region": inst.region, "id": inst.instance_id,
                      "gpus_per_instance": inst.gpu_count, "source": inst.source, "retrieved": inst.retrieved,
                      "price_date": inst.prices.date, "currency": inst.prices.currency}
    cost = est.get("cost") or {}
    if est["mode"] == "training":
        p.cost_by_price = {k: (cost.get("usd_by_price") or {}).get(k) for k in PRICE_KINDS}
    else:
        per_m = cost.get("usd_per_million_tokens")
        per_h = cost.get("usd_per_hour")  # the batch's tp GPUs, their share of the instance, at its basis
        out = {k: None for k in PRICE_KINDS}
        if per_m is not None and per_h and inst is not None:
            basis_instance_h = per_h * inst.gpu_count / p.result.estimate.setup.tp
            out = {k: (None if h is None else per_m * h / basis_instance_h) for k, h in p.hourly_usd.items()}
        p.cost_by_price = out


# ---- spec data version -----------------------------------------------------------------------
def _spec_data_version(db) -> dict:
    out = {"retrieved_latest": "", "retrieved_earliest": "", "rows": {}, "user_rows": 0}
    dates = []
    for kind in ("gpus", "instances", "fabrics", "models"):
        rows = db.records.get(kind) if hasattr(db, "records") else None
        if rows is None:
            continue
        out["rows"][kind] = len(rows)
        dates += [r["retrieved"] for r in rows if isinstance(r.get("retrieved"), str) and r["retrieved"]]
        out["user_rows"] += sum(1 for r in rows if r.get("origin", "shipped") != "shipped")
    if dates:
        out["retrieved_latest"], out["retrieved_earliest"] = max(dates), min(dates)
    return out


# ---- scaling ----------------------------------------------------------------------------
def _scaling(p: PlanResult, db) -> dict:
    """Strong-scaling curve of the chosen plan: its own request (service/scaling.py) with the
    data-parallel degree grown over node counts (powers of two up to at least twice the plan's nodes,
    and the plan's own count)."""
    req = p.result.request
    try:
        plan = p.result.estimate.plan
        per = group_size(plan)
        plan_nodes = max(1, -(-plan.gpus // per))
        top = max(8, 2 * plan_nodes)
        nodes = sorted({2 ** i for i in range(0, top.bit_length() + 1) if 2 ** i <= top} | {plan_nodes})
        out = run_scaling(ScalingRequest(plan=req, curves=ScalingCurves(nodes=",".join(map(str, nodes)))), db)
    except (InputError, SpecDataError, ValueError) as e:
        return {"error": str(e)}
    pts = next(iter(out.curves.values()))
    if not pts:
        return {"error": "no node count holds a whole tp x pp x cp x ep group"}
    return {"gpus_per_node": out.gpus_per_node, "plan_nodes": out.plan_nodes, "plan_gpus": plan.gpus,
            "fabric": out.hardware.inter.name if out.hardware.inter else "", "points": [vars(x) for x in pts]}


# ---- calibration --------------------------------------------------------------------------
def _calibration(name: str, db) -> dict:
    try:
        prof = load_calibration(name, db)
    except (InputError, SpecDataError) as e:
        return {"name": name, "error": getattr(e, "message", None) or str(e)}
    except Exception as e:  # the user database may be unreadable: the report still renders
        return {"name": name, "error": f"{type(e).__name__}: {e}"}
    eff = prof.efficiency
    return {"name": prof.name, "device": prof.device, "gpu_id": prof.gpu_id, "created": prof.created,
            "summary": prof.summary(),
            "gemm_max": getattr(eff, "gemm_max", None), "gemm_overhead_s": getattr(eff, "gemm_overhead_s", None),
            "bw_elementwise": getattr(eff, "bw_elementwise", None),
            "intra_busbw_gb_s": prof.intra_busbw_gb_s, "inter_busbw_gb_s": prof.inter_busbw_gb_s}


# ---- assumptions and sources -------------------------------------------------------------
def _assumptions(plans: list[PlanResult]) -> list[str]:
    seen, out = set(), []
    for p in plans:
        for a in (p.estimate or {}).get("assumptions", []):
            if a not in seen:
                seen.add(a)
                out.append(a)
    return out


def _sources(plans: list[PlanResult], db, serving: dict | None = None) -> list[Source]:
    out: dict = {}
    for d in (serving or {}).get("deployments", []):  # the serve section's own machine, when no plan has it
        if d["plan_index"] is None and d["hardware"].get("instance"):
            try:
                i = db.instance(d["hardware"]["instance"])
            except (InputError, SpecDataError):
                continue
            out[("instance", i.provider, i.instance_id)] = Source(
                "instance", f"{i.provider} {i.instance_id} ({i.region})", i.source, i.retrieved, i.prices.date)
    for p in plans:
        if not p.ok:
            continue
        g = p.estimate["gpu"]
        out.setdefault(("gpu", g["id"]), Source("gpu", g["name"], g.get("source", ""), g.get("retrieved", "")))
        if p.instance:
            i = p.instance
            out.setdefault(("instance", i["provider"], i["id"]),
                           Source("instance", f"{i['provider']} {i['id']} ({i['region']})", i["source"],
                                  i["retrieved"], i["price_date"]))
        est = p.result.estimate
        model, hw = est.model, est.hardware
        par = p.estimate.get("parallel", {})
        nodes = par.get("nodes") or -(-int(par.get("gpus", 1)) // max(1, int(par.get("gpus_per_node") or 8)))
        for fab in (hw.intra, hw.inter if nodes > 1 else None):  # the network matters from two nodes up
            if fab is not None:
                out.setdefault(("fabric", fab.id), Source("fabric", fab.name, fab.source, fab.retrieved))
        mid = p.estimate["model"]["name"]
        r = db.row("models", mid)
        if r is not None:
            out.setdefault(("model", mid), Source("model", r["name"], r["source_url"], r["retrieved"]))
        elif getattr(model, "source", ""):
            out.setdefault(("model", mid), Source("model", mid, model.source, ""))
    order = {"model": 0, "gpu": 1, "instance": 2, "fabric": 3}
    return sorted(out.values(), key=lambda s: (order[s.kind], s.name))
