"""``gpu-planner serve --ttft-ms X --tpot-ms Y`` with one or more GPUs or instances: the
deployments that meet the targets. When none does: exit 2, one line on stderr naming the closest
deployment (with --json the result, with ``closest``, is printed to stdout as well)."""
from __future__ import annotations

import json
import sys

from planner_app.core.results import json_ready
from planner_app.service.serving import run_slo_search

EXIT_NONE = 2


def run(request, db, as_json: bool) -> int:
    """The search of a ``ServeSearchRequest`` (cli/serve.py builds it)."""
    res = run_slo_search(request, db)
    req, targets = request.serve, request.targets
    out = json_ready({"model": req.model if isinstance(req.model, str) else "custom", "isl": req.isl,
                      "osl": req.osl, "concurrency": req.concurrency, "request_rate": req.request_rate,
                      "engine": req.engine, "targets": {"ttft_ms": targets.ttft_ms, "tpot_ms": targets.tpot_ms},
                      "price": req.price or "on_demand", "quantized_weights": request.quantized_weights,
                      "evaluated": res.evaluated, "fitting": res.fitting, "meeting": res.meeting,
                      "elapsed_s": res.elapsed_s, "plans": res.cheapest, "cheapest": res.cheapest,
                      "fewest_gpus": res.fewest_gpus, "pareto": res.pareto, "closest": res.closest,
                      "notes": res.notes})
    if as_json:
        print(json.dumps(out, indent=1))
    else:
        print(format_text(out))
    if not res.meeting:
        c = res.closest
        near = ("none fits" if c is None else
                f"closest: {c['machine']} tp {c['tp']} pp {c['pp']} x{c['replicas']} {c['weights_dtype']}/"
                f"{c['kv_dtype']} with TTFT {_ms(c['ttft_ms'])}, TPOT {_ms(c['tpot_ms'])}")
        print(f"gpu-planner serve: error: no deployment meets TTFT <= {targets.ttft_ms:g} ms and TPOT <= "
              f"{targets.tpot_ms:g} ms ({res.evaluated:,} scored); {near}", file=sys.stderr)
        return EXIT_NONE
    return 0


def _ms(v) -> str:
    return "unbounded" if v is None else f"{v:,.1f} ms"


def _table(rows: list) -> list:
    width = max([len("machine")] + [len(p["machine"]) for p in rows])  # names in full, never cut
    # GPUs: those the replicas use; inst / idle: the whole instances billed and their GPUs left idle
    head = (f"{'#':>2} {'machine':{width}s} {'GPUs':>5} {'inst':>4} {'idle':>4} {'tp':>3} {'pp':>3} {'ep':>3} {'rep':>4} "
            f"{'weights':>7} {'kv':>5} {'TTFT ms':>9} {'TPOT ms':>8} {'tok/s/GPU':>10} {'tok/s/user':>10} {'$/h':>9} "
            f"{'$/M tok':>8} price")
    lines = [head]
    for i, p in enumerate(rows, 1):
        usd = "-" if p["usd_per_hour"] is None else f"{p['usd_per_hour']:,.2f}"
        inst = "-" if p["instances"] is None else f"{p['instances']:,}"
        idle = "-" if p["idle_gpus"] is None else f"{p['idle_gpus']:,}"
        per_m = "-" if p["usd_per_million_output_tokens"] is None else f"{p['usd_per_million_output_tokens']:,.3f}"
        ttft = "-" if p["ttft_ms"] is None else f"{p['ttft_ms']:,.1f}"
        lines.append(f"{i:>2} {p['machine']:{width}s} {p['gpus']:>5} {inst:>4} {idle:>4} {p['tp']:>3} {p['pp']:>3} "
                     f"{p['ep']:>3} {p['replicas']:>4} {p['weights_dtype']:>7} {p['kv_dtype']:>5} {ttft:>9} "
                     f"{p['tpot_ms']:8.1f} {p['output_tokens_per_s_per_gpu']:10,.0f} {p['tokens_per_s_per_user']:10,.1f} "
                     f"{usd:>9} {per_m:>8} {p['price_basis'] or '-'}")
    return lines


def format_text(out: dict) -> str:
    t = out["targets"]
    load = f"{out['concurrency']:,} concurrent" if out["concurrency"] is not None else f"{out['request_rate']:g} req/s"
    lines = [f"{out['model']}: {load}, {out['isl']:,} in / {out['osl']:,} out; TTFT <= {t['ttft_ms']:g} ms, "
             f"TPOT <= {t['tpot_ms']:g} ms; {out['evaluated']:,} deployments scored in {out['elapsed_s']:.2f} s, "
             f"{out['fitting']:,} fit, {out['meeting']:,} meet the targets",
             "weights: fp8/int4 tried too (--quantized-weights)" if out["quantized_weights"] else
             "weights: the model's own 16 bits only (--quantized-weights tries fp8/int4 too)"]
    if out["meeting"]:
        lines += ["", f"Cheapest (USD per million output tokens at {out['price']} prices, then fewer GPUs):"]
        lines += _table(out["cheapest"])
        lines += ["", "Fewest GPUs (then USD per million output tokens):"] + _table(out["fewest_gpus"])
        lines += ["", "reproduce the cheapest:", "  " + out["cheapest"][0]["serve_command"]]
    lines += ["", f"Pareto front (output tokens/s per GPU against tokens/s per user), {len(out['pareto'])} points:"]
    lines += _table(out["pareto"])
    lines += [f"note: {n}" for n in out.get("notes", [])]
    return "\n".join(lines)
