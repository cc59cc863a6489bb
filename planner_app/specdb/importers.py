"""Bring outside data into the user's database, from local files only (the app never needs
the network): the spec CSV format itself, SkyPilot catalog ``vms.csv`` files, and the JSON
``aws ec2 describe-instance-types`` prints. Exports write CSV atomically."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import time

from planner_app.atomic import atomic_write_text  # noqa: F401  (re-exported: callers import it from here)
from planner_app.core.errors import InputError
from planner_app.specdb.schema import FILES, SpecDataError


def read_rows_csv(path: str, kind: str) -> list[dict]:
    """Rows of a CSV in the spec format (same columns as spec_data/<kind>.csv); checked by
    the user database when they are saved."""
    if kind not in FILES:
        raise InputError("kind", f"must be one of {', '.join(FILES)}; got {kind!r}")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            names = {c.name for c in FILES[kind]}
            if reader.fieldnames is None:
                raise SpecDataError(path, 1, None, "is empty: a header row is required")
            unknown = [h for h in reader.fieldnames if h not in names]
            if unknown:
                raise SpecDataError(path, 1, unknown[0], "is not a known column")
            return [dict(r) for r in reader]
    except UnicodeDecodeError as e:
        raise SpecDataError(path, None, None, f"is not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise SpecDataError(path, None, None, f"cannot be read: {e.strerror}") from None
    except csv.Error as e:
        raise SpecDataError(path, None, None, f"is not valid CSV: {e}") from None


def import_csv(userdb, kind: str, path: str) -> int:
    """Validate every row, then save them all in one transaction (nothing on any error)."""
    rows = read_rows_csv(path, kind)
    checked = []
    for i, raw in enumerate(rows):
        try:
            checked.append(userdb.validate_row(kind, raw))
        except SpecDataError as e:
            raise SpecDataError(path, i + 2, e.column, e.message) from None
    userdb.upsert_many(kind, checked)
    return len(checked)


def export_csv(rows: list[dict], kind: str, path: str) -> None:
    names = [c.name for c in FILES[kind]]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=names, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None or (isinstance(v, float) and v != v) else v) for k, v in r.items()})
    atomic_write_text(path, buf.getvalue())


def _match_gpu(db, name: str, memory_gib: float | None):
    """Spec-database GPU id for a catalog's accelerator name ("A100-80GB", "H100")."""
    cands = [name]
    if memory_gib:
        cands.insert(0, f"{name} {round(memory_gib)}GB")
    for c in cands:
        try:
            return db.gpu(c).id
        except InputError:
            continue
    return None


def _num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if x == x else None


def import_skypilot_vms(db, path: str, provider: str, region: str | None = None) -> tuple[list[dict], list[str]]:
    """Instance rows from a SkyPilot catalog vms.csv (columns InstanceType, vCPUs,
    MemoryGiB, AcceleratorName, AcceleratorCount, GpuInfo, Region, AvailabilityZone,
    Price, SpotPrice). One row per instance type: the given region, else the cheapest one;
    rows whose accelerator is not a known GPU are listed as skipped."""
    need = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "Price"}
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            missing = need - set(reader.fieldnames or [])
            if missing:
                raise SpecDataError(path, 1, sorted(missing)[0], "is missing (not a SkyPilot vms.csv?)")
            rows = list(reader)
    except OSError as e:
        raise SpecDataError(path, None, None, f"cannot be read: {e.strerror}") from None
    best: dict[str, dict] = {}
    skipped = []
    for i, r in enumerate(rows):
        if not r.get("AcceleratorName") or region and r.get("Region") != region:
            continue
        price = _num(r.get("Price"))
        key = r["InstanceType"]
        if key in best and (price is None or (best[key]["_price"] is not None and price >= best[key]["_price"])):
            continue
        mem = None
        try:
            info = json.loads(r.get("GpuInfo") or "null") or {}
            gpus = info.get("Gpus") or []
            if gpus and gpus[0].get("MemoryInfo"):
                mem = gpus[0]["MemoryInfo"].get("SizeInMiB", 0) / 1024
        except (json.JSONDecodeError, AttributeError, TypeError):
            pass
        gid = _match_gpu(db, r["AcceleratorName"], mem)
        if gid is None:
            skipped.append(f"{key}: accelerator {r['AcceleratorName']!r} is not in the GPU list")
            continue
        count = _num(r.get("AcceleratorCount")) or 1
        whole = max(1, round(count))
        best[key] = {"_price": price, "provider": provider, "region": r.get("Region") or "", "instance_id": key,
                     "gpu_id": gid, "gpu_count": whole, "gpu_fraction": min(1.0, count) if count < 1 else 1,
                     "vcpu": int(_num(r.get("vCPUs")) or 0), "ram_gb": _num(r.get("MemoryGiB")) or "",
                     "local_nvme_gb": "", "network_gbit_s": "", "fabric": "", "fabric_id": "", "nics": "",
                     "intra_node_link": "pcie4", "price_on_demand_hr": price if price is not None else "",
                     "price_1yr_hr": "", "price_3yr_hr": "", "price_spot_hr": _num(r.get("SpotPrice")) or "",
                     "currency": "USD", "price_date": time.strftime("%Y-%m-%d"),
                     "source_url": f"file:{os.path.basename(path)} (SkyPilot catalog)",
                     "retrieved": time.strftime("%Y-%m-%d"), "notes": "imported from a SkyPilot vms.csv"}
    out = []
    for r in best.values():
        r.pop("_price")
        out.append(r)
    return out, skipped


def import_aws_describe_instance_types(db, path: str, region: str = "us-east-1") -> tuple[list[dict], list[str]]:
    """Instance rows (no prices) from ``aws ec2 describe-instance-types --output json``."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise SpecDataError(path, e.lineno, None, f"is not valid JSON ({e.msg})") from None
    except OSError as e:
        raise SpecDataError(path, None, None, f"cannot be read: {e.strerror}") from None
    items = data.get("InstanceTypes") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise SpecDataError(path, None, "InstanceTypes", "is missing: expected the output of "
                                                          "`aws ec2 describe-instance-types --output json`")
    out, skipped = [], []
    for it in items:
        name = it.get("InstanceType", "?")
        gpus = (it.get("GpuInfo") or {}).get("Gpus") or []
        if not gpus:
            continue
        g = gpus[0]
        mem = (g.get("MemoryInfo") or {}).get("SizeInMiB", 0) / 1024
        gid = _match_gpu(db, g.get("Name", ""), mem)
        if gid is None:
            skipped.append(f"{name}: GPU {g.get('Name')!r} is not in the GPU list")
            continue
        net = (it.get("NetworkInfo") or {})
        perf = str(net.get("NetworkPerformance", ""))
        m = re.search(r"([\d.]+)\s*Gigabit", perf)
        gbit = float(m.group(1)) if m else ""
        efa = bool(net.get("EfaSupported"))
        cards = net.get("MaximumNetworkCards") or 1
        out.append({"provider": "AWS", "region": region, "instance_id": name, "gpu_id": gid,
                    "gpu_count": int(g.get("Count", 1)), "gpu_fraction": 1,
                    "vcpu": int((it.get("VCpuInfo") or {}).get("DefaultVCpus", 0)),
                    "ram_gb": round((it.get("MemoryInfo") or {}).get("SizeInMiB", 0) / 1024, 1),
                    "local_nvme_gb": (it.get("InstanceStorageInfo") or {}).get("TotalSizeInGB", 0) or 0,
                    "network_gbit_s": gbit, "fabric": "efa" if efa else "ethernet",
                    "fabric_id": ("efa" if efa else "") or "", "nics": cards if efa else 1,
                    "intra_node_link": "nvlink4" if int(g.get("Count", 1)) >= 8 and gid.startswith("h1") else "pcie4",
                    "price_on_demand_hr": "", "price_1yr_hr": "", "price_3yr_hr": "", "price_spot_hr": "",
                    "currency": "USD", "price_date": "", "source_url": f"file:{os.path.basename(path)} (aws ec2 "
                    "describe-instance-types)", "retrieved": time.strftime("%Y-%m-%d"),
                    "notes": "imported; prices not included (set a price override)"})
    return out, skipped
