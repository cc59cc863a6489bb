"""A scenario's ``serve`` section served on each plan's hardware (issue 15 item 4): the serving
numbers the report's Serving section and the Compare page's serving rows show, from one call.

Each deployment is exactly ``gpu-planner serve`` (service/serving.py ``run_serve``) with the serve
section's options and the hardware of one plan (its instance or GPU), so a cell of the report
equals what ``gpu-planner serve --json`` prints for the same options; nothing here computes a
latency, a throughput or a cost of its own.
"""
from __future__ import annotations

import datetime as _dt
from typing import Any

from planner_app.core.errors import InputError
from planner_app.core.options import build, options_of
from planner_app.core.requests import ServeRequest, SloTargets, serve_section_options
from planner_app.core.serving.deployment import check_layout, check_traffic
from planner_app.service.pricing import price_source
from planner_app.service.resolve import resolve_model
from planner_app.service.serving import run_serve
from planner_app.specdb.schema import SpecDataError

# The serve section's options, and those that shape the deployment (less the machine and the targets)
SERVE_KEYS = tuple(serve_section_options())
DEPLOYMENT_KEYS = tuple(k for k in options_of(ServeRequest) if k in SERVE_KEYS and k not in ("gpu", "instance"))
TARGET_KEYS = tuple(options_of(SloTargets))


def section_options(section: dict) -> dict:
    """The deployment options a serve section states."""
    return {k: section[k] for k in DEPLOYMENT_KEYS if section.get(k) is not None}


def serve_request(sc: dict, opts: dict, hardware: dict) -> ServeRequest:
    """The serve request of a scenario's model, prices and calibration, the section's deployment
    options and one machine; errors name ``serve.<field>``."""
    values = {"model": sc["workload"]["model"], "cny_per_usd": sc.get("cny_per_usd"),
              "calibration": sc.get("calibration"), **opts, **hardware}
    try:
        return build(ServeRequest, values, "a serve section")
    except InputError as e:
        raise InputError(f"serve.{e.field}" if e.field in SERVE_KEYS else e.field, e.message) from None


def _plan_hardware(plan: dict) -> dict:
    return {"instance": plan["instance"]} if plan.get("instance") else {"gpu": plan.get("gpu")}


def _check_section(sc: dict, opts: dict, db) -> None:
    """Errors of the section itself (whatever the hardware), naming ``serve.<field>``: traffic, and
    a layout the model cannot take (tp not dividing its heads, ep on a dense model)."""
    req = serve_request(sc, opts, {})
    try:
        check_traffic(req)
    except InputError as e:
        raise InputError(f"serve.{e.field}", e.message) from None
    try:
        model = resolve_model(req.model, db)
    except (InputError, SpecDataError):
        return  # the workload's model is the plans' error too: each deployment shows it
    try:
        check_layout(model, req.tp, req.pp, req.ep, req.attention_dp)
    except InputError as e:
        raise InputError(f"serve.{e.field}", e.message) from None


def _price(db, hardware: dict, cny_per_usd, today: _dt.date) -> dict | None:
    src = price_source(db, hardware.get("instance"), cny_per_usd)
    if src is None:
        return None
    age = src.age_days(today)
    return {"currency": src.currency, "date": src.date, "age_days": age,
            "stale": src.stale(today), "converted": src.converted,
            "cny_per_usd": src.cny_per_usd, "rate_given": src.rate_given}


def _slo(out: dict, ttft_ms, tpot_ms) -> dict:
    """Whether the deployment meets the section's targets; a queue that grows without bound
    (TTFT null) misses any TTFT target."""
    ttft = None if ttft_ms is None else (out["ttft_ms"] is not None and out["ttft_ms"] <= ttft_ms)
    tpot = None if tpot_ms is None else out["tpot_ms"] <= tpot_ms
    given = [v for v in (ttft, tpot) if v is not None]
    return {"ttft_met": ttft, "tpot_met": tpot, "met": all(given) if given else None}


def serve_deployment(sc: dict, opts: dict, hardware: dict, db) -> dict:
    """``gpu-planner serve --json`` for the scenario's model, ``opts`` and ``hardware``."""
    return run_serve(serve_request(sc, opts, hardware), db).to_json()


def serve_scenario(sc: dict, db, today: _dt.date | None = None) -> dict | None:
    """The serve section on its own machine (when it names one no plan has) and on each plan's
    machine; None when the scenario has no serve section.

    Returns ``{"options", "targets", "deployments": [...], "assumptions"}``; each deployment is
    ``{"name" (None: the section's own machine), "plan_index", "hardware", "serve"`` (the serve
    JSON) or ``"error"`` (naming ``serve.<field>``), ``"slo", "price"}``. Raises InputError naming
    ``serve.<field>`` when the section cannot be served on any machine.
    """
    section = sc.get("serve")
    if section is None:
        return None
    today = today or _dt.date.today()
    opts = section_options(section)
    _check_section(sc, opts, db)
    targets = {k: section.get(k) for k in TARGET_KEYS}
    # (name, plan index, hardware); None, None: the section's own machine
    machines: list[tuple[str | None, int | None, dict]] = [
        (p.get("name") or f"Plan {i + 1}", i, _plan_hardware(p)) for i, p in enumerate(sc["plans"])]
    own = {k: section[k] for k in ("instance", "gpu") if section.get(k)}
    own = {"instance": own["instance"]} if "instance" in own else own
    if own and own not in [hw for _n, _i, hw in machines]:
        machines.insert(0, (None, None, own))  # the faces name it ("the Serve page's deployment")
    out, notes = [], []
    for name, index, hw in machines:
        d: dict[str, Any] = {"name": name, "plan_index": index, "hardware": hw, "serve": None, "error": None,
                             "slo": None, "price": _price(db, hw, sc.get("cny_per_usd"), today)}
        try:
            d["serve"] = serve_deployment(sc, opts, hw, db)
        except (InputError, SpecDataError) as e:
            field = getattr(e, "field", None)
            d["error"] = f"serve.{field}: {e.message}" if field in DEPLOYMENT_KEYS else str(e)
        else:
            d["slo"] = _slo(d["serve"], targets["ttft_ms"], targets["tpot_ms"])
            notes += [a for a in d["serve"]["assumptions"] if a not in notes]
        out.append(d)
    return {"options": opts, "targets": targets, "deployments": out, "assumptions": notes}
