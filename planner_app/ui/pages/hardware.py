"""The hardware choices shared by the Plan, Compare and Search pages: every GPU and every
cloud instance of the spec database (with the user's rows), as (kind, id, label)."""
from __future__ import annotations


def hardware_choices(db) -> list[tuple[str, str, str]]:
    """An instance sold in several regions (Alibaba's gn7e in cn-beijing and cn-shanghai) is
    named ``provider:region:id`` (what ``SpecDB.instance`` resolves) and shows its region."""
    out = []
    rows = db.records["instances"]
    seen: dict[str, int] = {}
    for r in rows:
        seen[r["instance_id"]] = seen.get(r["instance_id"], 0) + 1
    for r in rows:
        price = r.get("price_on_demand_hr")
        price_txt = f", {r.get('currency', 'USD')} {price:,.2f}/h" if isinstance(price, float) and price == price else ""
        ident, where = r["instance_id"], ""
        if seen[ident] > 1:
            ident, where = f"{r['provider']}:{r['region']}:{r['instance_id']}", f" {r['region']}"
        out.append(("instance", ident, f"{r['provider']} {r['instance_id']}{where} "
                                       f"({int(r['gpu_count'])}x {r['gpu_id']}{price_txt})"))
    gpus = [("gpu", r["id"], f"GPU {r['name']} ({r['memory_gb']:g} GB)") for r in db.records["gpus"]]
    return gpus + out


def hardware_rows(db) -> list[dict]:
    """``hardware_choices`` with what a chooser filters on: provider, region and GPU of each row
    (a bare GPU's provider and region are empty)."""
    gpu_names = {r["id"]: r["name"] for r in db.records["gpus"]}
    inst = iter(db.records["instances"])
    out = []
    for kind, ident, label in hardware_choices(db):
        if kind == "gpu":
            out.append({"kind": kind, "id": ident, "label": label, "provider": "", "region": "",
                        "gpu": gpu_names.get(ident, ident)})
        else:
            r = next(inst)
            out.append({"kind": kind, "id": ident, "label": label, "provider": r.get("provider") or "",
                        "region": r.get("region") or "", "gpu": gpu_names.get(r.get("gpu_id"), r.get("gpu_id") or "")})
    return out


def plan_hardware(plan: dict) -> tuple[str, str]:
    if plan.get("instance"):
        return "instance", plan["instance"]
    return "gpu", plan.get("gpu") or ""


def hw_key(kind: str, ident: str) -> str:
    """A string key for item data (Qt compares strings reliably, not Python tuples)."""
    return f"{kind}:{ident}"


def parse_hw_key(key: str) -> tuple[str, str]:
    kind, _, ident = (key or "").partition(":")
    return kind, ident
