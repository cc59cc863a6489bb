"""``gpu-planner search`` and ``gpu-planner scaling``."""
from __future__ import annotations

import json

from planner_app import units
from planner_app.cli.arguments import values_of
from planner_app.core.options import build
from planner_app.core.plans.search import PRICE_LABELS
from planner_app.core.requests import ScalingRequest, SearchRequest
from planner_app.service import scaling as service_scaling
from planner_app.service import search as service_search
from planner_app.service.catalog import open_catalog


def search_request(args) -> SearchRequest:
    """The service request for the parsed ``search`` options (unset ones: the request's defaults,
    which are ``estimate``'s)."""
    return build(SearchRequest, values_of(args, SearchRequest), "search")


def run_search(args) -> int:
    request = search_request(args)
    db = open_catalog()
    got = service_search.run_search(request, db)
    res = got.result
    if args.json:
        print(json.dumps(got.to_json(), indent=1))
        return 0
    print(format_text(got.model, args.tokens, res, got.notes + res.assumptions, converted=_cny_candidates(db, res)))
    return 0


def _cny_candidates(db, res) -> set:
    """Names of the candidates whose prices are CNY (their USD costs are converted)."""
    out = set()
    for p in res.plans:
        if p.get("instance"):
            try:
                if db.instance(p["candidate"]).prices.currency != "USD":
                    out.add(p["candidate"])
            except ValueError:
                pass
    return out


def format_text(model, tokens: float, res, assumptions: list | None = None, converted=frozenset()) -> str:
    """The ranked plans as a table (machine names in full; times in their natural unit; "+N": plans
    folded into the row), then the assumptions and the ``estimate`` command of the best plan."""
    lines = [f"{model.summary()}; {tokens:.3g} tokens; {res.evaluated:,} configurations scored in "
             f"{res.elapsed_s:.2f} s ({res.fitting:,} fit)"]
    lines += [f"  note: {n}" for n in res.notes]
    width = max([len("machine")] + [len(p["candidate"]) for p in res.plans])
    cost_head = f"cost $ ({PRICE_LABELS[res.price_basis]})"
    cost_w = max(14, len(cost_head), *[len(p["cost"].get("note", "")) for p in res.plans])
    lines.append(f"{'#':>2} {'machine':{width}s} {'GPUs':>5} {'tp':>3} {'pp':>3} {'dp':>4} {'cp':>3} {'ep':>3} "
                 f"{'sp':>3} {'schedule':>13} {'Z':>2} {'mb':>3} {'recompute':>9} {'time':>10} {'MFU':>6} "
                 f"{cost_head:>{cost_w}} similar")
    for i, p in enumerate(res.plans, 1):
        if i > 1 and not p.get("best_for_gpus", True) and res.plans[i - 2].get("best_for_gpus", True):
            lines.append("   other plans on the machines and GPU counts above (each slower and dearer than its "
                         "machine's row at that count):")
        q = p["parallel"]
        usd = p["cost"]["usd"]
        sched = q["pp_schedule"] + (f" vp={q['vp']}" if q["pp_schedule"] == "interleaved" else "")
        cost = p["cost"].get("note", "-") if usd is None else f"{usd:,.0f}"
        if usd is not None and p["candidate"] in converted:
            cost = "¥→$ " + cost  # a CNY price converted to USD (the rate is in the notes below)
        lines.append(f"{i:>2} {p['candidate']:{width}s} {q['gpus']:>5} {q['tp']:>3} {q['pp']:>3} {q['dp']:>4} "
                     f"{q['cp']:>3} {q['ep']:>3} {('yes' if q['sequence_parallel'] else 'no'):>3} {sched:>13} "
                     f"{q['zero']:>2} {p['micro_batch']:>3} {p['recompute']:>9} "
                     f"{units.fmt_seconds(p['time']['train_s']):>10} {p['time']['mfu'] * 100:5.1f}% {cost:>{cost_w}} "
                     f"{'+' + str(len(p['similar'])) if p.get('similar') else ''}".rstrip())
    lines += [f"  - {a}" for a in (res.assumptions if assumptions is None else assumptions)]
    if converted & {p["candidate"] for p in res.plans if p["cost"]["usd"] is not None}:
        lines.append("  - ¥→$ marks a cost converted from a CNY price (rate above)")
    if res.plans:
        lines.append("reproduce plan 1 (--json has every plan's command):")
        lines.append("  " + res.plans[0]["estimate_command"])
    return "\n".join(lines)


def scaling_request(args) -> ScalingRequest:
    """The service request for the parsed ``scaling`` options."""
    return build(ScalingRequest, values_of(args, ScalingRequest), "scaling")


def run_scaling(args) -> int:
    request = scaling_request(args)
    db = open_catalog()
    got = service_scaling.run_scaling(request, db)
    out = got.to_json()
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    hw, model, weak = got.hardware, got.model, request.curves.weak
    for fid, pts in out["curves"].items():
        print(f"{fid}: {'weak' if weak else 'strong'} scaling of {model.name} on {hw.gpu.name} "
              f"({got.gpus_per_node} GPUs and {got.nics.get(fid) or hw.nics_per_node} NICs per node"
              + (f": {got.nics_from[fid]})" if fid in got.nics_from else ")"))
        print(f"  {'nodes':>5} {'GPUs':>6} {'fits':>4} {'tokens/s':>12} {'efficiency':>10} {'no-overlap':>10} "
              f"{'step':>10} {'+50us':>8}")
        for p in pts:
            print(f"  {p['nodes']:>5} {p['gpus']:>6} {'yes' if p['fits'] else 'NO':>4} {p['tokens_per_s']:12,.0f} "
                  f"{p['efficiency'] * 100:9.1f}% {p['no_overlap_efficiency'] * 100:9.1f}% "
                  f"{units.fmt_seconds(p['step_s']):>10} {(p['step_s_plus_50us'] / p['step_s'] - 1) * 100:+7.2f}%")
    for n, reason in got.skipped.items():
        print(f"  left out {n} node(s): {reason}")
    return 0
