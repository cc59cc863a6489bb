"""Bring outside data into the user's database, from local files only (the app never needs
the network): the spec CSV format itself, SkyPilot catalog ``vms.csv`` files, gpuhunt offline
catalogs, and the JSON ``aws ec2 describe-instance-types`` prints. Exports write CSV
atomically."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import time
import zipfile

from planner_app.atomic import atomic_write_text
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


def number_or_none(v):
    """A price or size cell as a float, None when empty, text or NaN."""
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
    for r in rows:
        if not r.get("AcceleratorName") or region and r.get("Region") != region:
            continue
        price = number_or_none(r.get("Price"))
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
        count = number_or_none(r.get("AcceleratorCount")) or 1
        whole = max(1, round(count))
        best[key] = {"_price": price, "provider": provider, "region": r.get("Region") or "", "instance_id": key,
                     "gpu_id": gid, "gpu_count": whole, "gpu_fraction": min(1.0, count) if count < 1 else 1,
                     "vcpu": int(number_or_none(r.get("vCPUs")) or 0), "ram_gb": number_or_none(r.get("MemoryGiB")) or "",
                     "local_nvme_gb": "", "network_gbit_s": "", "fabric": "", "fabric_id": "", "nics": "",
                     "intra_node_link": "pcie4", "price_on_demand_hr": price if price is not None else "",
                     "price_1yr_hr": "", "price_3yr_hr": "", "price_spot_hr": number_or_none(r.get("SpotPrice")) or "",
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


# gpuhunt (github.com/dstackai/gpuhunt) writes one CSV per provider into its offline catalog
# zip, with the columns of its RawCatalogItem (src/gpuhunt/_internal/models.py): price in USD
# per hour, memory in GB, one row per (instance, location, spot or not).
GPUHUNT_COLUMNS = {"instance_name", "location", "price", "cpu", "memory", "gpu_count", "gpu_name", "gpu_memory",
                   "spot"}


def _gpuhunt_rows(path: str, provider: str) -> list[dict]:
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                want = f"{provider.lower()}.csv"
                names = [n for n in z.namelist() if os.path.basename(n).lower() == want]
                if not names:
                    found = ", ".join(sorted(os.path.basename(n) for n in z.namelist() if n.endswith(".csv")))
                    raise SpecDataError(path, None, None, f"has no {want} (it has: {found or 'no CSV'})")
                text = z.read(names[0]).decode("utf-8")
        else:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
    except (OSError, zipfile.BadZipFile) as e:
        raise SpecDataError(path, None, None, f"cannot be read: {getattr(e, 'strerror', None) or e}") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = GPUHUNT_COLUMNS - set(reader.fieldnames or [])
    if missing:
        raise SpecDataError(path, 1, sorted(missing)[0], "is missing (not a gpuhunt catalog CSV?)")
    return list(reader)


def import_gpuhunt(db, path: str, provider: str, region: str | None = None) -> tuple[list[dict], list[str]]:
    """Instance rows from a gpuhunt offline catalog (the zip, or one provider's CSV from it):
    on-demand and spot rows of an instance type merge into one row, in ``region`` or else the
    location with the cheapest on-demand price; unknown accelerators are listed as skipped."""
    by_loc: dict[tuple[str, str], dict] = {}
    skipped = []
    for r in _gpuhunt_rows(path, provider):
        name, loc = r.get("instance_name") or "", r.get("location") or ""
        if not name or not r.get("gpu_name") or (region and loc != region):
            continue
        slot = by_loc.setdefault((name, loc), {"row": r, "od": None, "spot": None})
        price = number_or_none(r.get("price"))
        kind = "spot" if str(r.get("spot", "")).lower() == "true" else "od"
        if price is not None and (slot[kind] is None or price < slot[kind]):
            slot[kind] = price
    best: dict[str, tuple] = {}
    for (name, loc), slot in by_loc.items():
        key = slot["od"] if slot["od"] is not None else float("inf")
        if name not in best or key < best[name][0]:
            best[name] = (key, loc, slot)
    out = []
    for name, (_, loc, slot) in best.items():
        r = slot["row"]
        gid = _match_gpu(db, r["gpu_name"], number_or_none(r.get("gpu_memory")))
        if gid is None:
            skipped.append(f"{name}: accelerator {r['gpu_name']!r} is not in the GPU list")
            continue
        count = number_or_none(r.get("gpu_count")) or 1
        out.append({"provider": provider, "region": loc, "instance_id": name, "gpu_id": gid,
                    "gpu_count": max(1, round(count)), "gpu_fraction": min(1.0, count) if count < 1 else 1,
                    "vcpu": int(number_or_none(r.get("cpu")) or 0), "ram_gb": number_or_none(r.get("memory")) or "",
                    "local_nvme_gb": "", "network_gbit_s": "", "fabric": "", "fabric_id": "", "nics": "",
                    "intra_node_link": "pcie4", "price_on_demand_hr": "" if slot["od"] is None else slot["od"],
                    "price_1yr_hr": "", "price_3yr_hr": "",
                    "price_spot_hr": "" if slot["spot"] is None else slot["spot"],
                    "currency": "USD", "price_date": time.strftime("%Y-%m-%d"),
                    "source_url": f"file:{os.path.basename(path)} (gpuhunt catalog)",
                    "retrieved": time.strftime("%Y-%m-%d"), "notes": "imported from a gpuhunt catalog"})
    return out, skipped
