"""``gpu-planner specs import FILE --provider P [--region R] [--price-date D] [--dry-run]``:
refresh instance rows and prices from a SkyPilot catalog ``vms.csv`` or a gpuhunt offline
catalog (zip or CSV) into the user's database (``service/spec_import.py``) and report what changed."""
from __future__ import annotations

import datetime as dt
import json
import sys

from planner_app.core.errors import InputError
from planner_app.service.catalog import open_catalog
from planner_app.service.spec_import import import_catalog


def run(args) -> int:
    if not args.file:
        raise InputError("file", "give the file to import (a SkyPilot vms.csv or a gpuhunt catalog): "
                                 "gpu-planner specs import FILE --provider P")
    if not args.provider:
        raise InputError("provider", "is required (the provider the file is for: AWS, GCP, Azure, ...)")
    if args.price_date:
        try:
            dt.date.fromisoformat(args.price_date)
        except ValueError:
            raise InputError("price_date", f"must be a date YYYY-MM-DD, got {args.price_date!r}") from None
    db = open_catalog()
    res = import_catalog(db, args.file, args.provider, args.region, args.price_date)
    saved = 0
    if not args.dry_run and res.rows:
        from planner_app.specdb.userdb import UserDB  # lazy: sqlite3 is optional (a Python built without it)
        udb = UserDB.open_default()
        try:
            saved = udb.upsert_many("instances", [udb.validate_row("instances", r) for r in res.rows])
        finally:
            udb.close()
    if args.json:
        print(json.dumps({"new": res.new, "changed": [{"row": k, "changes": c} for k, c in res.changed],
                          "unchanged": res.unchanged, "skipped": res.skipped, "saved": saved,
                          "dry_run": bool(args.dry_run)}, indent=1))
        return 0
    print(f"{args.file}: {res.summary()}" + (" (dry run: nothing saved)" if args.dry_run else
                                             f"; {saved} rows saved to your database"))
    for label in res.new:
        print(f"  new      {label}")
    for label, changes in res.changed:
        parts = [f"{col} {_fmt(a)} -> {_fmt(b)}" for col, (a, b) in changes.items()]
        print(f"  changed  {label}: " + "; ".join(parts))
    for reason in res.skipped:
        print(f"  skipped  {reason}", file=sys.stderr)
    return 0


def _fmt(v) -> str:
    return "-" if v in (None, "") else (f"{v:g}" if isinstance(v, float) else str(v))
