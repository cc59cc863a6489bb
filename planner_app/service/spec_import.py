"""``gpu-planner specs import``: refresh instance prices from a catalog file the user has (a
SkyPilot ``vms.csv`` or a gpuhunt offline catalog) into the user's database, and say what
changed.

Neither catalog has a network figure: they give prices, vCPUs, memory and GPUs, no network,
fabric or intra-node link. An imported row that matches a row already in the catalog (same
provider, region and instance id) keeps those fields from it and takes the file's vCPU,
memory and prices; a new row keeps the importer's defaults (PCIe 4 intra-node link, no
network figure)."""
from __future__ import annotations

import datetime as _dt
import zipfile
from dataclasses import dataclass, field

from planner_app.specdb.importers import (
    import_gpuhunt,
    import_skypilot_vms,
    number_or_none,
)

PRICE_COLS = ("price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr")
# Fields a SkyPilot vms.csv does not carry: taken from the matching catalog row.
KEEP_FROM_CATALOG = ("local_nvme_gb", "network_gbit_s", "fabric", "fabric_id", "nics", "intra_node_link",
                     "price_1yr_hr", "price_3yr_hr", "notes")


@dataclass
class ImportResult:
    """What an import would change (``dry_run``) or changed."""

    rows: list = field(default_factory=list)      # the rows to save, validated by the caller
    new: list = field(default_factory=list)       # "provider region id" of rows not in the catalog
    changed: list = field(default_factory=list)   # (key, {column: (old, new)}) for rows whose prices moved
    unchanged: list = field(default_factory=list)
    skipped: list = field(default_factory=list)   # the importer's reasons (unknown accelerator...)

    def summary(self) -> str:
        return (f"{len(self.new)} new, {len(self.changed)} with changed prices, {len(self.unchanged)} unchanged, "
                f"{len(self.skipped)} skipped")


def _catalog_rows(db) -> dict:
    return {(r["provider"], r["region"], r["instance_id"]): r for r in db.records["instances"]}


def diff_import(db, rows: list[dict], price_date: str) -> ImportResult:
    """Compare imported rows with the catalog ``db``; the returned rows carry ``price_date``."""
    res = ImportResult()
    current = _catalog_rows(db)
    for r in rows:
        key = (r["provider"], r["region"], r["instance_id"])
        label = " ".join(key)
        r = dict(r, price_date=price_date)
        old = current.get(key)
        if old is None:
            res.new.append(label)
            res.rows.append(r)
            continue
        for col in KEEP_FROM_CATALOG:
            v = old.get(col)
            r[col] = "" if v is None or (isinstance(v, float) and v != v) else v
        r["notes"] = (str(r["notes"]) + "; " if r["notes"] else "") + "prices refreshed by `specs import`"
        moved = {}
        for col in ("price_on_demand_hr", "price_spot_hr"):
            a, b = number_or_none(old.get(col)), number_or_none(r.get(col))
            if a != b and not (a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), 1.0)):
                moved[col] = (a, b)
        if old.get("currency") != r.get("currency"):
            moved["currency"] = (old.get("currency"), r.get("currency"))
        if moved:
            moved["price_date"] = (old.get("price_date") or "", price_date)
            res.changed.append((label, moved))
        else:
            res.unchanged.append(label)
        res.rows.append(r)
    return res


def catalog_format(path: str) -> str:
    """'skypilot' (a vms.csv: InstanceType, ...) or 'gpuhunt' (its catalog zip, or a CSV with
    instance_name, ...), from the file itself."""
    if zipfile.is_zipfile(path):
        return "gpuhunt"
    try:
        with open(path, encoding="utf-8") as f:
            head = f.readline()
    except (OSError, UnicodeDecodeError):
        return "skypilot"  # the importer reports the file's problem
    return "gpuhunt" if "instance_name" in head.split(",") else "skypilot"


def import_catalog(db, path: str, provider: str, region: str | None = None,
                   price_date: str | None = None, fmt: str | None = None) -> ImportResult:
    """Read a SkyPilot ``vms.csv`` or a gpuhunt catalog and compare it with ``db`` (nothing
    is saved here)."""
    if price_date is not None:
        _dt.date.fromisoformat(price_date)  # ValueError names the bad date
    reader = import_gpuhunt if (fmt or catalog_format(path)) == "gpuhunt" else import_skypilot_vms
    rows, skipped = reader(db, path, provider, region)
    res = diff_import(db, rows, price_date or _dt.date.today().isoformat())
    res.skipped = skipped
    return res
