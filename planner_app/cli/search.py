"""``gpu-planner search`` and ``gpu-planner scaling``."""
from __future__ import annotations

import json
import math
import os

from planner_app import units
from planner_app.core.cost import DEFAULT_CNY_PER_USD
from planner_app.core.errors import InputError
from planner_app.core.scaling import scaling_curve, skipped_node_counts
from planner_app.core.search import PRICE_LABELS, Candidate, candidate_from_instance, search
from planner_app.service.catalog import open_catalog
from planner_app.service.resolve import default_seq_len, resolve_model
from planner_app.service.search import build_candidates, default_global_batch, model_ref


def run_search(args) -> int:

    db = open_catalog()
    model = resolve_model(args.model, db)
    seq = args.seq_len or default_seq_len(model, db)
    gbs = args.global_batch or default_global_batch(seq)
    cands = build_candidates(db, args.gpu, args.instance, args.fabric, args.cny_per_usd or DEFAULT_CNY_PER_USD)
    res = search(model, cands, tokens=args.tokens, max_gpus=args.max_gpus, seq_len=seq, global_batch=gbs,
                 recipe=args.recipe, framework=args.framework, deadline_days=args.deadline_days,
                 budget_usd=args.budget_usd, objective=args.objective, top=args.top, price_basis=args.price,
                 model_ref=model_ref(args.model), min_headroom_fraction=args.min_headroom_pct / 100)
    out = {"model": model.name, "tokens": args.tokens, "seq_len": seq, "global_batch": gbs,
           "objective": args.objective, "price_basis": res.price_basis, "pareto_y": res.pareto_y,
           "evaluated": res.evaluated, "fitting": res.fitting,
           "elapsed_s": res.elapsed_s, "plans": res.plans, "pareto": res.pareto, "notes": res.notes,
           "assumptions": [f"recipe {args.recipe}, framework {args.framework}, AdamW, flash attention",
                           f"global batch {gbs} sequences of {seq} tokens",
                           "GPU counts: powers of two and 1.5x powers of two in whole nodes"] + res.assumptions}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(format_text(model, args.tokens, res))
    return 0


def format_text(model, tokens: float, res) -> str:
    """The ranked plans as a table (machine names in full), then the assumptions and the
    ``estimate`` command of the best plan."""
    lines = [f"{model.summary()}; {tokens:.3g} tokens; {res.evaluated:,} configurations scored in "
             f"{res.elapsed_s:.2f} s ({res.fitting:,} fit)"]
    lines += [f"  note: {n}" for n in res.notes]
    width = max([len("machine")] + [len(p["candidate"]) for p in res.plans])
    cost_head = f"cost $ ({PRICE_LABELS[res.price_basis]})"
    cost_w = max(14, len(cost_head), *[len(p["cost"].get("note", "")) for p in res.plans])
    lines.append(f"{'#':>2} {'machine':{width}s} {'GPUs':>5} {'tp':>3} {'pp':>3} {'dp':>4} {'cp':>3} {'ep':>3} "
                 f"{'sp':>3} {'schedule':>13} {'Z':>2} {'mb':>3} {'recompute':>9} {'days':>8} {'MFU':>6} "
                 f"{cost_head:>{cost_w}}")
    for i, p in enumerate(res.plans, 1):
        q = p["parallel"]
        usd = p["cost"]["usd"]
        sched = q["pp_schedule"] + (f" vp={q['vp']}" if q["pp_schedule"] == "interleaved" else "")
        cost = p["cost"].get("note", "-") if usd is None else f"{usd:,.0f}"
        lines.append(f"{i:>2} {p['candidate']:{width}s} {q['gpus']:>5} {q['tp']:>3} {q['pp']:>3} {q['dp']:>4} "
                     f"{q['cp']:>3} {q['ep']:>3} {('yes' if q['sequence_parallel'] else 'no'):>3} {sched:>13} "
                     f"{q['zero']:>2} {p['micro_batch']:>3} {p['recompute']:>9} {p['time']['train_days']:8.1f} "
                     f"{p['time']['mfu'] * 100:5.1f}% {cost:>{cost_w}}")
    lines += [f"  - {a}" for a in res.assumptions]
    if res.plans:
        lines.append("reproduce plan 1 (--json has every plan's command):")
        lines.append("  " + res.plans[0]["estimate_command"])
    return "\n".join(lines)


def run_scaling(args) -> int:
    from planner_app.service.estimate import apply_cli_defaults, build_request, training_setup_and_plan

    db = open_catalog()
    apply_cli_defaults(args, mode="training")
    model, hw, per_node, overrides, notes = build_request(args, db)
    setup, plan = training_setup_and_plan(args, model, hw, per_node, db, dp=1)
    if args.nodes:
        try:
            nodes = sorted({int(x) for x in args.nodes.split(",") if x.strip()})
        except ValueError:
            raise InputError("nodes", f"must be whole numbers separated by commas; got {args.nodes!r}") from None
        if not nodes or nodes[0] < 1:
            raise InputError("nodes", "must be positive")
    else:
        nodes = [1, 2, 4, 8, 16, 32, 64]
    fabric_ids = [f.strip() for f in (args.fabrics or "").split(",") if f.strip()] or [hw.inter.id]
    from dataclasses import replace

    curves = {}
    for fid in fabric_ids:
        fab = db.fabric(fid)
        h = replace(hw, inter=fab)
        pts = scaling_curve(model, h, setup, plan, nodes, weak=args.weak)
        curves[fid] = [vars(p) for p in pts]
    skipped = skipped_node_counts(nodes, plan)
    out = {"model": model.name, "gpu": hw.gpu.id, "mode": "weak" if args.weak else "strong", "curves": curves,
           "gpus_per_node": plan.gpus_per_node, "nics_per_node": hw.nics_per_node,
           "skipped_nodes": [{"nodes": n, "reason": r} for n, r in skipped.items()],
           "assumptions": notes + [f"each node: {plan.gpus_per_node} GPUs and {hw.nics_per_node} NICs "
                                   "(--gpus-per-node, --nics-per-node)",
                                   "fits: the per-GPU memory at that node count fits the GPU","efficiency = throughput(n) / (n x throughput(1 node)); no_overlap_efficiency "
                                   "= 1/(1 + t_comm/t_compute), the special case with nothing overlapped",
                                   "step_s_plus_50us: every inter-node collective step 50 us slower"]}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    for fid, pts in curves.items():
        print(f"{fid}: {'weak' if args.weak else 'strong'} scaling of {model.name} on {hw.gpu.name} "
              f"({plan.gpus_per_node} GPUs and {hw.nics_per_node} NICs per node)")
        print(f"  {'nodes':>5} {'GPUs':>6} {'fits':>4} {'tokens/s':>12} {'efficiency':>10} {'no-overlap':>10} "
              f"{'step':>10} {'+50us':>8}")
        for p in pts:
            print(f"  {p['nodes']:>5} {p['gpus']:>6} {'yes' if p['fits'] else 'NO':>4} {p['tokens_per_s']:12,.0f} "
                  f"{p['efficiency'] * 100:9.1f}% {p['no_overlap_efficiency'] * 100:9.1f}% "
                  f"{units.fmt_seconds(p['step_s']):>10} {(p['step_s_plus_50us'] / p['step_s'] - 1) * 100:+7.2f}%")
    for n, reason in skipped.items():
        print(f"  left out {n} node(s): {reason}")
    return 0
