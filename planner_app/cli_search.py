"""``gpu-planner search`` and ``gpu-planner scaling``."""
from __future__ import annotations

import json

from planner_app import units
from planner_app.core.cost import PriceMix
from planner_app.core.errors import InputError
from planner_app.core.scaling import scaling_curve
from planner_app.core.search import Candidate, candidate_from_instance, search
from planner_app.resolve import default_seq_len, resolve_hardware, resolve_model


def build_candidates(db, gpus: str | None, instances: str | None, fabric: str | None, cny_per_usd: float,
                     mix: PriceMix | None = None) -> list[Candidate]:
    out = []
    if instances:
        for name in [x.strip() for x in instances.split(",") if x.strip()]:
            hw, per_node, _ = resolve_hardware(db, instance=name, fabric=fabric)
            out.append(candidate_from_instance(name, hw, hw.instance, mix, cny_per_usd))
    else:
        for name in [x.strip() for x in (gpus or "").split(",") if x.strip()]:
            hw, per_node, _ = resolve_hardware(db, gpu=name, fabric=fabric)
            out.append(Candidate(name=hw.gpu.name, hardware=hw, gpus_per_node=per_node))
    if not out:
        raise InputError("gpu", "give one or more GPUs (--gpu A,B) or instances (--instance X,Y)")
    return out


def run_search(args) -> int:
    from planner_app.cli import _user_db_catalog

    db = _user_db_catalog()
    model = resolve_model(args.model, db)
    seq = args.seq_len or default_seq_len(model, db)
    import math

    # default: about 4M tokens per step, in a power-of-two number of sequences
    gbs = args.global_batch or 2 ** max(0, round(math.log2(4_000_000 / seq)))
    cands = build_candidates(db, args.gpu, args.instance, args.fabric, args.cny_per_usd or 7.10)
    res = search(model, cands, tokens=args.tokens, max_gpus=args.max_gpus, seq_len=seq, global_batch=gbs,
                 recipe=args.recipe, framework=args.framework, deadline_days=args.deadline_days,
                 budget_usd=args.budget_usd, objective=args.objective, top=args.top)
    out = {"model": model.name, "tokens": args.tokens, "seq_len": seq, "global_batch": gbs,
           "objective": args.objective, "evaluated": res.evaluated, "fitting": res.fitting,
           "elapsed_s": res.elapsed_s, "plans": res.plans, "pareto": res.pareto, "notes": res.notes,
           "assumptions": [f"recipe {args.recipe}, framework {args.framework}, AdamW, flash attention",
                           f"global batch {gbs} sequences of {seq} tokens",
                           "GPU counts: powers of two and 1.5x powers of two in whole nodes",
                           "cost: 80% 1-year reserved + 20% on-demand where both prices are known, else on-demand"]}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{model.summary()}; {args.tokens:.3g} tokens; {res.evaluated:,} configurations scored in "
          f"{res.elapsed_s:.2f} s ({res.fitting:,} fit)")
    for n in res.notes:
        print(f"  note: {n}")
    print(f"{'#':>2} {'machine':22s} {'GPUs':>5} {'tp':>3} {'pp':>3} {'dp':>4} {'cp':>3} {'ep':>3} {'Z':>2} {'mb':>3} "
          f"{'recompute':>9} {'days':>8} {'MFU':>6} {'cost $':>14}")
    for i, p in enumerate(res.plans, 1):
        q = p["parallel"]
        usd = p["cost"]["usd"]
        print(f"{i:>2} {p['candidate'][:22]:22s} {q['gpus']:>5} {q['tp']:>3} {q['pp']:>3} {q['dp']:>4} {q['cp']:>3} "
              f"{q['ep']:>3} {q['zero']:>2} {p['micro_batch']:>3} {p['recompute']:>9} {p['time']['train_days']:8.1f} "
              f"{p['time']['mfu'] * 100:5.1f}% {('-' if usd is None else f'{usd:,.0f}'):>14}")
    return 0


def run_scaling(args) -> int:
    from planner_app.cli import _user_db_catalog
    from planner_app.cli_estimate import build_request, training_setup_and_plan

    db = _user_db_catalog()
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
    out = {"model": model.name, "gpu": hw.gpu.id, "mode": "weak" if args.weak else "strong", "curves": curves,
           "assumptions": notes + ["efficiency = throughput(n) / (n x throughput(1 node)); no_overlap_efficiency "
                                   "= 1/(1 + t_comm/t_compute), the special case with nothing overlapped",
                                   "step_s_plus_50us: every inter-node collective step 50 us slower"]}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    for fid, pts in curves.items():
        print(f"{fid}: {'weak' if args.weak else 'strong'} scaling of {model.name} on {hw.gpu.name}")
        print(f"  {'nodes':>5} {'GPUs':>6} {'tokens/s':>12} {'efficiency':>10} {'no-overlap':>10} {'step':>10} {'+50us':>8}")
        for p in pts:
            print(f"  {p['nodes']:>5} {p['gpus']:>6} {p['tokens_per_s']:12,.0f} {p['efficiency'] * 100:9.1f}% "
                  f"{p['no_overlap_efficiency'] * 100:9.1f}% {units.fmt_seconds(p['step_s']):>10} "
                  f"{(p['step_s_plus_50us'] / p['step_s'] - 1) * 100:+7.2f}%")
    return 0
