"""``gpu-planner serve``: one serving deployment at steady state, or (with --ttft-ms/--tpot-ms)
the search for deployments that meet the targets."""
from __future__ import annotations

import json

from planner_app import units
from planner_app.cli.arguments import add_request, values_of
from planner_app.core.errors import InputError
from planner_app.core.options import build
from planner_app.core.requests import ServeSearchRequest
from planner_app.service.catalog import open_catalog


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="a continuous-batching server at steady state: latency, throughput, cost; "
                                     "with --ttft-ms/--tpot-ms, the deployments that meet them")
    add_request(p, ServeSearchRequest, exclusive=("gpu", "instance"), required=("model", "isl", "osl"),
                titles={"": "deployment search (with --ttft-ms/--tpot-ms)"})
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    request = build(ServeSearchRequest, values_of(args, ServeSearchRequest), "serve")
    req = request.serve
    if req.gpu is None and req.instance is None:
        raise InputError("gpu", "give --gpu NAME or --instance ID (comma-separated lists with --ttft-ms/--tpot-ms)")
    if req.concurrency is None and req.request_rate is None:
        raise InputError("concurrency", "give --concurrency N or --request-rate R")
    db = open_catalog()
    if request.targets.ttft_ms is not None or request.targets.tpot_ms is not None:
        if req.benchmark_requests is not None:
            raise InputError("benchmark_requests", "the search meets the targets at steady state; "
                                                   "--benchmark-requests describes one deployment's benchmark run")
        # lazy: keeps the engine off the CLI's start (its parser imports this module)
        from planner_app.cli import serve_search
        return serve_search.run(request, db, args.json)
    # lazy: keeps the engine off the CLI's start (its parser imports this module)
    from planner_app.service.serving import run_serve

    for flag, value in (("gpu", req.gpu), ("instance", req.instance)):
        if value and "," in value:
            raise InputError(flag, "a list of machines needs --ttft-ms and --tpot-ms (the search); give one")
    out = run_serve(req, db).to_json()
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(format_text(out))
    return 0


def _ms(v) -> str:
    return "unbounded (queue grows)" if v is None else f"{v:,.1f} ms"


def format_text(out: dict) -> str:
    gb = units.fmt_bytes
    d, t = out["deployment"], out["traffic"]
    load = f"{t['concurrency']:,} concurrent" if t["concurrency"] is not None else f"{t['request_rate']:g} req/s"
    where = out.get("instance") or out["gpu"]
    lines = [f"{out['model']} on {d['gpus']} x {out['gpu']}" + (f" ({where})" if "instance" in out else "")
             + f": {d['replicas']} replica(s) of tp {d['tp']} x pp {d['pp']} x attention-dp {d['attention_dp']}"
             + (f", ep {d['ep']}" if d["ep"] > 1 else "") + f"; {d['weights_dtype']} weights, {d['kv_dtype']} KV; "
             f"{out['engine']}",
             f"Traffic: {load}, {t['isl']:,} in / {t['osl']:,} out tokens",
             "",
             f"TTFT {_ms(out['ttft_ms'])}   TPOT {_ms(out['tpot_ms'])}   end-to-end {_ms(out['e2e_latency_ms'])}"
             + (f" (queueing {_ms(out['queueing_delay_ms'])})" if out["queueing_delay_ms"] else ""),
             *([f"A closed-loop benchmark of {b['requests']:,} requests from {b['clients']:,} clients that start "
                f"together reports a mean TTFT of {_ms(b['mean_ttft_ms'])} and a median of "
                f"{_ms(b['median_ttft_ms'])} (its first round {_ms(b['opening_burst_ttft_ms'])})"]
               if (b := out.get("benchmark")) else []),
             f"Throughput {out['output_tokens_per_s']:,.0f} output tokens/s ({out['output_tokens_per_s_per_gpu']:,.0f} "
             f"per GPU), {out['tokens_per_s_per_user']:,.1f} tokens/s per user, "
             f"{out['requests_per_s']:,.2f} requests/s",
             f"KV cache: {out['kv_cache_tokens']:,} tokens" + (" per replica" if d["replicas"] > 1 else "")
             + f"; at most {out['max_concurrency']:,} requests at once"
             + (": SATURATED, requests queue" if out["saturated"] else "")]
    cost = out.get("cost") or {}
    if cost.get("usd_per_million_output_tokens") is not None:
        lines.append(f"Cost: ${cost['usd_per_million_output_tokens']:,.3f} per million output tokens "
                     f"(${cost['usd_per_hour']:,.2f}/h for {cost['instances']} whole instance(s) of {cost['gpus_per_instance']} "
                     f"GPUs, {cost['idle_gpus']} GPU(s) idle; {cost['price_basis']}, "
                     f"price of {cost['price_date']})")
    m = out["memory"]
    lines += ["", f"Memory per GPU: {gb(m['device_bytes'])} of {gb(m['capacity_bytes'])}"]
    lines += [f"  {k.replace('_', ' '):22s} {gb(v):>12s}" for k, v in m["breakdown"].items()]
    lines += ["", f"Time per output token: {_ms(out['tpot_ms'])} (an average engine step)"]
    lines += [f"  {k.replace('_', ' '):22s} {v:>9,.2f} ms" for k, v in out["step_breakdown_ms"].items() if v > 0]
    lines += ["", "Assumptions:"] + [f"  - {a}" for a in out["assumptions"]]
    return "\n".join(lines)
