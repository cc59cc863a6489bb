"""Machine-readable exports: JSON (the scenario and every plan's estimate, as the report
saw them) and CSV (one row per plan with its key numbers).

With a serve section (report.serving, service/serving_plans.py) each plan's row also carries the
``serve_*`` columns: the section served on that plan's machine, the numbers of ``gpu-planner serve
--json`` (units in the names: ``_ms``, ``_per_s``, ``usd_per_``; ``fits``/``saturated``/``slo_met``
1 or 0; ``inf`` where the queue grows without bound). A serve section on a machine no plan has adds
one row of its own (status ``serve_only``, the plan columns empty)."""
from __future__ import annotations

import csv
import io
import json

from planner_app.core.plans.cost import PRICE_KINDS

CSV_COLUMNS = ("plan", "recommended", "status", "error", "hardware", "gpu", "gpus", "nodes", "tp", "pp", "dp",
               "zero", "peak_memory_gb", "device_memory_gb", "capacity_gb", "fits", "step_s", "tokens_per_s", "mfu",
               "train_days", "gpu_hours", "prefill_s", "decode_tokens_per_s", "target_tokens_per_s",
               "usd_on_demand", "usd_reserved_1yr", "usd_reserved_3yr", "usd_spot", "usd_mix", "cost_unit",
               "price_date")
# the serve JSON's keys (service/serving.py run_serve) under a serve_ prefix, units in the names
SERVE_NUMBER_KEYS = ("ttft_ms", "tpot_ms", "e2e_latency_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu",
                     "tokens_per_s_per_user", "requests_per_s", "kv_cache_tokens", "max_concurrency")
UNBOUNDED_KEYS = ("ttft_ms", "e2e_latency_ms")  # None in the serve JSON: the queue grows without bound
SERVE_COLUMNS = ("serve_hardware", "serve_engine", "serve_gpus", "serve_tp", "serve_pp", "serve_ep", "serve_replicas",
                 "serve_weights_dtype", "serve_kv_dtype") + tuple(f"serve_{k}" for k in SERVE_NUMBER_KEYS) + (
                 "serve_fits", "serve_saturated", "serve_usd_per_hour", "serve_usd_per_million_output_tokens",
                 "serve_slo_met", "serve_error")
CSV_COLUMNS = CSV_COLUMNS + SERVE_COLUMNS


def to_json(report) -> str:
    return json.dumps(report.to_dict(), indent=1, ensure_ascii=False, default=str) + "\n"


def _flag(v) -> object:
    return "" if v is None else int(bool(v))


def serve_cells(d: dict) -> dict:
    """The serve_* cells of one deployment of report.serving (its serve JSON, or its error)."""
    hw = d["hardware"].get("instance") or d["hardware"].get("gpu") or ""
    if d["serve"] is None:
        return {"serve_hardware": hw, "serve_error": d["error"] or ""}
    out, dep, cost = d["serve"], d["serve"]["deployment"], d["serve"].get("cost") or {}
    cells = {"serve_hardware": hw, "serve_engine": out["engine"], "serve_gpus": dep["gpus"],
             **{f"serve_{k}": dep[k] for k in ("tp", "pp", "ep", "replicas", "weights_dtype", "kv_dtype")},
             "serve_fits": _flag(out["fits"]), "serve_saturated": _flag(out["saturated"]),
             "serve_usd_per_hour": cost.get("usd_per_hour", ""),
             "serve_usd_per_million_output_tokens": cost.get("usd_per_million_output_tokens", ""),
             "serve_slo_met": _flag((d.get("slo") or {}).get("met"))}
    for k in SERVE_NUMBER_KEYS:
        v = out[k]
        cells[f"serve_{k}"] = float("inf") if v is None and k in UNBOUNDED_KEYS else ("" if v is None else v)
    return {k: ("" if v is None else v) for k, v in cells.items()}


def csv_rows(report) -> list[dict]:
    rows = []
    deployments = (report.serving or {}).get("deployments", [])
    by_plan = {d["plan_index"]: d for d in deployments if d["plan_index"] is not None}
    for p in report.plans:
        o = p.options
        row = {c: "" for c in CSV_COLUMNS}
        if p.index in by_plan:
            row.update(serve_cells(by_plan[p.index]))
        row.update(plan=p.name, recommended=int(report.recommends(p.index)), hardware=o.get("instance") or o.get("gpu"),
                   target_tokens_per_s=report.target_tokens_per_s or "")
        if not p.ok:
            row.update(status="error", error=p.error)
            rows.append(row)
            continue
        e = p.estimate
        m, t, c, par = e["memory"], e.get("time", {}), e.get("cost", {}), e["parallel"]
        row.update(status="ok", gpu=e["gpu"]["name"], gpus=par.get("gpus"), nodes=par.get("nodes", ""),
                   tp=par.get("tp"), pp=par.get("pp", ""), dp=par.get("dp", ""), zero=par.get("zero", ""),
                   peak_memory_gb=m["peak_bytes"] / 1e9, device_memory_gb=(m.get("device_bytes") or 0) / 1e9,
                   capacity_gb=m["capacity_bytes"] / 1e9, fits=int(bool(m["fits"])),
                   step_s=t.get("step_s", ""), tokens_per_s=t.get("tokens_per_s", ""), mfu=t.get("mfu", ""),
                   train_days=t.get("train_days", ""), gpu_hours=c.get("gpu_hours", ""),
                   prefill_s=t.get("prefill_s", ""), decode_tokens_per_s=t.get("decode_tokens_per_s", ""),
                   usd_mix=c.get("usd_mix") if c.get("usd_mix") is not None else "",
                   cost_unit="run" if e["mode"] == "training" else "million_tokens",
                   price_date=(p.instance or {}).get("price_date", ""))
        for k in PRICE_KINDS:
            v = p.cost_by_price.get(k)
            row[f"usd_{k}"] = "" if v is None else v
        rows.append(row)
    for d in deployments:  # the serve section's own machine, which no plan has: a row of its own
        if d["plan_index"] is None:
            row = {c: "" for c in CSV_COLUMNS}
            row.update(serve_cells(d))
            row.update(plan="serve section", recommended=0, status="serve_only", hardware=row["serve_hardware"])
            rows.append(row)
    return rows


def to_csv(report) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in csv_rows(report):
        w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
    return buf.getvalue()
