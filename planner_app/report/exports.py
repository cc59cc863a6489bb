"""Machine-readable exports: JSON (the scenario and every plan's estimate, as the report
saw them) and CSV (one row per plan with its key numbers)."""
from __future__ import annotations

import csv
import io
import json

from planner_app.core.cost import PRICE_KINDS

CSV_COLUMNS = ("plan", "recommended", "status", "error", "hardware", "gpu", "gpus", "nodes", "tp", "pp", "dp",
               "zero", "peak_memory_gb", "device_memory_gb", "capacity_gb", "fits", "step_s", "tokens_per_s", "mfu",
               "train_days", "gpu_hours", "prefill_s", "decode_tokens_per_s", "target_tokens_per_s",
               "usd_on_demand", "usd_reserved_1yr", "usd_reserved_3yr", "usd_spot", "usd_mix", "cost_unit",
               "price_date")


def to_json(report) -> str:
    return json.dumps(report.to_dict(), indent=1, ensure_ascii=False, default=str) + "\n"


def csv_rows(report) -> list[dict]:
    rows = []
    for p in report.plans:
        o = p.options
        row = {c: "" for c in CSV_COLUMNS}
        row.update(plan=p.name, recommended=int(p.index == report.chosen), hardware=o.get("instance") or o.get("gpu"),
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
    return rows


def to_csv(report) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in csv_rows(report):
        w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
    return buf.getvalue()
