"""``gpu-planner estimate``: parse, call the estimate service, print text or JSON."""
from __future__ import annotations

import json

from planner_app import units
from planner_app.cli.arguments import values_of
from planner_app.core.plans.search import PRICE_LABELS
from planner_app.core.requests import InferenceRequest, TrainingRequest
from planner_app.service.catalog import open_catalog
from planner_app.service.estimate import estimate_request, run_estimate
from planner_app.service.pricing import native_amount, price_source


def run(args) -> int:
    mode = args.mode or "training"
    values = {**values_of(args, TrainingRequest), **values_of(args, InferenceRequest)}
    request = estimate_request(values, mode)  # before the catalog: a bad option costs no database
    db = open_catalog()
    try:
        out = run_estimate(request, db).to_json()
        if args.json:
            print(json.dumps(out, indent=1))
        else:
            print(format_text(out, price_source(db, args.instance, args.cny_per_usd)))
    finally:
        # Closed here, not left to the garbage collector (a connection is in a reference cycle
        # with its statement cache): the command's process skips that collection at exit.
        if db.user_db is not None:
            db.user_db.close()
    return 0


def _cost_suffix(usd, src) -> str:
    """'' for a bare GPU; else the price's currency, date and age, and for a CNY price the
    amount in CNY and the exchange rate the USD figure used."""
    if src is None:
        return ""
    native = native_amount(usd, src)
    head = f" = CNY {native:,.0f}" if src.converted and native is not None and native >= 100 else (
        f" = CNY {native:,.3f}" if src.converted and native is not None else "")
    return f"{head} [{src.describe()}]"


def _basis(kind) -> str:
    """A price kind in words ("on_demand" -> "on-demand")."""
    return PRICE_LABELS.get(kind, str(kind))


def _mix_suffix(cost: dict) -> str:
    """The cost at the blended price, with the blend it is (the shares of the hours bought at each
    price: --price-mix, by default 80% 1-year reserved + 20% on-demand); '' where it is not known."""
    if cost.get("usd_mix") is None:
        return ""
    shares = " + ".join(f"{v * 100:.0f}% {_basis(k)}" for k, v in (cost.get("mix") or {}).items() if v)
    return f"; at a blend of prices ({shares}; --price-mix): ${cost['usd_mix']:,.0f}"


def format_text(out: dict, price_src=None) -> str:
    """A readable summary of an estimate; ``price_src`` (service.pricing.PriceSource) adds the
    price's currency, date and exchange rate to the cost line."""
    gb = units.fmt_bytes
    m = out["memory"]
    lines = [f"{out['model']['summary']}",
             f"GPU: {out['gpu']['name']} ({out['gpu']['memory_gb']:g} GB)"
             + (f" in {out['instance']['provider']} {out['instance']['id']}" if "instance" in out else "")]
    if out["mode"] == "training":
        p = out["parallel"]
        lines.append(f"Layout: {p['gpus']} GPUs = tp {p['tp']} x pp {p['pp']} x cp {p['cp']} x ep {p['ep']} "
                     f"x dp {p['dp']}, ZeRO {p['zero']}")
        s = out["setup"]
        lines.append(f"Setup: micro-batch {s['micro_batch']}, seq {s['seq_len']}, {s['recipe']}, {s['optimizer']}, "
                     f"{s['attention']} attention, recompute {s['recompute']}, {s['framework']}")
        if s.get("finetune", "full") != "full":
            lines.append(f"Fine-tuning: {'QLoRA (NF4 base)' if s['finetune'] == 'qlora' else 'LoRA'} rank "
                         f"{s['lora_rank']} on {', '.join(s['lora_targets'])}, {s['lora_dtype']} adapters, "
                         f"{out['params']['trainable']:,} trainable parameters")
    verdict = "FITS" if m["fits"] else "DOES NOT FIT"
    lines.append("")
    lines.append(f"Memory per GPU: peak {gb(m['peak_bytes'])} (+ overheads = {gb(m['device_bytes'])}) "
                 f"of {gb(m['capacity_bytes'])}: {verdict}")
    for k, v in m["breakdown"].items():
        if v:
            lines.append(f"  {k.replace('_', ' '):24s} {gb(v):>12s}")
    if "largest_micro_batch" in m:
        lines.append(f"  largest micro-batch that fits: {m['largest_micro_batch']}")
    if "kv_cache_bytes" in m:
        lines.append(f"  KV cache: {gb(m['kv_cache_bytes'])}; largest batch {m['largest_batch']}, "
                     f"longest context {m['longest_context']:,} tokens")
    t = out.get("time", {})
    if out["mode"] == "training" and t:
        lines.append("")
        lines.append(f"Step: {units.fmt_seconds(t['step_s'])}, {t['tokens_per_s']:,.0f} tokens/s, "
                     f"MFU {t['mfu'] * 100:.1f}% ({t['tflops_per_gpu']:.0f} TFLOP/s per GPU)")
        for k, v in t["breakdown_s"].items():
            if v > 0:
                lines.append(f"  {k.replace('_', ' '):28s} {units.fmt_seconds(v):>10s}")
        if "train_s" in t:
            c = out["cost"]
            lines.append(f"Time to train: {t['train_days']:.1f} days, {c['gpu_hours']:,.0f} GPU-hours, "
                         f"{c['energy_kwh']:,.0f} kWh")
            if c.get("usd") is not None:
                lines.append(f"Cost: ${c['usd']:,.0f} at {_basis(c.get('usd_price_basis'))} prices"
                             + _cost_suffix(c["usd"], price_src) + _mix_suffix(c))
    elif t:
        lines.append("")
        lines.append(f"Prefill {units.fmt_seconds(t['prefill_s'])}; decode {t['decode_tokens_per_s']:,.0f} tokens/s "
                     f"({t['decode_tokens_per_s_per_user']:,.1f} per user, {t['decode_bound']}-bound)")
        first = t.get("decode_s_per_token_first_call", t["decode_s_per_token"])
        lines.append(f"Per token: {units.fmt_seconds(t['decode_s_per_token'])}"
                     + (f", first call at new lengths {units.fmt_seconds(first)}" if first > t["decode_s_per_token"]
                        else "")
                     + f"; a serving engine (vLLM): {units.fmt_seconds(t['serving_engine_decode_s_per_token'])}")
        if out.get("cost", {}).get("usd_per_million_tokens") is not None:
            per_m = out["cost"]["usd_per_million_tokens"]
            basis = out["cost"].get("usd_price_basis")
            lines.append(f"Cost: ${per_m:.3f} per million tokens at {_basis(basis)} prices"
                         + _cost_suffix(per_m, price_src))
    if out.get("host"):
        lines += [""] + _host_lines(out["host"])
    if out.get("advice"):
        lines.append("")
        lines.append("Advice: " + out["advice"]["text"])
    for a in (out.get("host") or {}).get("advice", []):
        lines.append("Advice: " + a)
    lines.append("")
    lines.append("Assumptions:")
    lines += [f"  - {a}" for a in out["assumptions"]]
    return "\n".join(lines)


def _host_lines(h: dict) -> list[str]:
    """The host side (issue 19): checkpoint, host RAM, input pipeline."""
    gb, c, r, p = units.fmt_bytes, h["checkpoint"], h["ram"], h["input"]
    ram = f"{gb(r['needed_bytes'])} per node" + (f" of {gb(r['ram_bytes'])}" if r["ram_bytes"] else "")
    if r["fits"] is False:
        ram += " (DOES NOT FIT the host)"
    return [f"Checkpoint: {gb(c['resumable_bytes'])} resumable ({gb(c['weights_bytes'])} weights, {c['format']}, "
            f"{c['files']} file(s)); {units.fmt_seconds(c['write_s'])} per save at {c['write_gb_s_per_node']:g} GB/s "
            f"per node = {c['overhead_fraction'] * 100:.2f}% at one save per {c['interval_s'] / 60:g} min; "
            f"{c['kept']} kept: {gb(c['disk_bytes'])}",
            f"Host RAM: {ram}",
            # two significant digits: a small job reads 0.082 samples/s, which ",.0f" printed as "0"
            f"Input pipeline: {p['verdict']}, {units.fmt_rate(p['samples_per_s_per_node'])} samples/s per node "
            f"({gb(p['read_gb_s_per_node'] * 1e9)}/s, {units.fmt_rate(p['cores_needed_per_node'])} cores), "
            f"{p['workers_per_gpu']} loader workers per GPU"]
