"""Scenario files: a workload, the plans being compared, the calibration profile, currency
and notes, as versioned JSON (``schema_version``). Older versions migrate on load; newer
ones are refused with a clear message. Plans use the CLI's estimate option names, so a
scenario's numbers are exactly what ``gpu-planner estimate`` prints for the same options.

Version history:
  1  draft format: one plan, ``model`` and ``gpu``/``instance`` at the top level.
  2  ``workload`` (model and setup options), ``plans`` (list, each named), ``meta``
     (title, project, author, notes), ``calibration``, ``currency``, ``price_mix``,
     ``chosen_plan``; optional ``serve`` (the Serve page's deployment, traffic and SLO
     targets, with the ``serve`` command's option names; files without it load unchanged).
"""
from __future__ import annotations

import copy
import json
import os
import stat

from planner_app.atomic import atomic_write_text
from planner_app.core.errors import InputError
from planner_app.core.options import MAX_TEXT, build, options_of
from planner_app.core.requests import ESTIMATE_REQUESTS, MODE, serve_section_options
from planner_app.paths import examples_dir
from planner_app.service.estimate import run_estimate
from planner_app.specdb.schema import SpecDataError

SCHEMA_VERSION = 2
MAX_PLANS = 8

# Every option of the estimate requests, by key (one declaration each, core/requests.py): a
# scenario keeps each where its scope says, the workload the options every plan shares, a plan its
# hardware and layout, the scenario its calibration and prices.
ESTIMATE_OPTIONS = {k: o for cls in ESTIMATE_REQUESTS.values() for k, o in options_of(cls).items()}
WORKLOAD_KEYS = ("mode",) + tuple(k for k, o in ESTIMATE_OPTIONS.items() if o.scope == "workload") + (
    "target_tokens_per_s",)
PLAN_KEYS = ("name",) + tuple(k for k, o in ESTIMATE_OPTIONS.items() if o.scope == "plan")
SCENARIO_KEYS = ("calibration", "price_mix", "cny_per_usd")
# A plan may hold its own value of a workload option (a plan opened from Search carries the
# micro-batch, recomputation and precision it was scored with); the workload's value applies to
# every plan without one. The model, the mode and the serving target stay the workload's.
PLAN_OWN_KEYS = tuple(k for k in WORKLOAD_KEYS if k not in ("model", "mode", "target_tokens_per_s"))
CURRENCIES = ("USD", "CNY")
# The Serve page's inputs (optional section "serve"): the serve request's deployment, traffic and
# engine options and the search's targets (the model, prices and calibration are the scenario's).
SERVE_OPTIONS = serve_section_options()
SERVE_KEYS = tuple(SERVE_OPTIONS)


def new_scenario(title: str = "Untitled sizing", model="llama-2-7b") -> dict:
    """A new scenario that works as it opens: Llama-2-7B fully fine-tuned on 8 H100 with ZeRO-3
    (FSDP's full sharding: 59 GB per GPU; without sharding every GPU would need 161 GB and the
    first thing a new user saw was DOES NOT FIT). The sequence length is left to the model's
    default, as ``gpu-planner estimate`` takes it (a fixed 4096 gave Llama-3.1-8B 39 GB here and
    59 GB in the CLI for the same plan)."""
    return {"schema_version": SCHEMA_VERSION,
            "meta": {"title": title, "project": "", "author": "", "notes": ""},
            "workload": {"mode": "training", "model": model, "micro_batch": 1},
            "plans": [{"name": "Plan A", "gpu": "h100-sxm", "gpus": 8, "zero": 3}],
            "calibration": None, "currency": "USD", "price_mix": None, "cny_per_usd": None, "chosen_plan": 0}


def migrate(data: dict, source: str = "scenario") -> dict:
    """Bring a loaded scenario to the current version (a copy); refuse newer versions."""
    if not isinstance(data, dict):
        raise SpecDataError(source, None, None, "is not a scenario (expected a JSON object)")
    version = data.get("schema_version")
    if version is None:
        raise SpecDataError(source, None, "schema_version", "is missing: not a GPU Capacity Planner scenario")
    if not isinstance(version, int) or version < 1:
        raise SpecDataError(source, None, "schema_version", f"must be a positive integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise SpecDataError(source, None, "schema_version",
                            f"is {version}, newer than this version of the app understands ({SCHEMA_VERSION}); "
                            "update the app to open it")
    data = copy.deepcopy(data)
    if version == 1:
        workload = {k: data.pop(k) for k in list(data) if k in WORKLOAD_KEYS}
        plan = {k: data.pop(k) for k in list(data) if k in PLAN_KEYS}
        plan.setdefault("name", "Plan A")
        data = {"schema_version": 2,
                "meta": {"title": data.get("title", "Untitled sizing"), "project": "", "author": "",
                         "notes": data.get("notes", "")},
                "workload": workload, "plans": [plan], "calibration": data.get("calibration"),
                "currency": data.get("currency", "USD"), "price_mix": None, "cny_per_usd": None, "chosen_plan": 0}
    return data


# Text the report prints: a title is one line of a page; notes are a paragraph or a few.
META_LIMITS = {"title": 200, "project": 200, "author": 200, "notes": 20_000}
MAX_SCENARIO_BYTES = 64 << 20  # scenarios embed config.json files (a few kB each)


def _check_meta(sc: dict, source: str) -> None:
    meta = sc["meta"]
    if not isinstance(meta, dict):
        raise SpecDataError(source, None, "meta", "must be an object with title, project, author and notes")
    for k, v in meta.items():
        if k not in META_LIMITS:
            continue  # other keys are kept as they are and never shown
        if v is not None and (not isinstance(v, str) or len(v) > META_LIMITS[k]):
            raise SpecDataError(source, None, f"meta.{k}", f"must be text of at most {META_LIMITS[k]:,} characters")


def _check_top_level(sc: dict, source: str) -> None:
    cal = sc.get("calibration")
    if cal is not None and (not isinstance(cal, str) or len(cal) > MAX_TEXT):
        raise SpecDataError(source, None, "calibration", "must be the name of a calibration profile, or null")
    for key in ("price_mix", "cny_per_usd"):
        if sc.get(key) is not None:
            _check_value(source, key, key, sc[key])


def validate(sc: dict, source: str = "scenario") -> dict:
    """Check the structure and the option names; errors name the field."""
    for key in ("meta", "workload", "plans"):
        if key not in sc:
            raise SpecDataError(source, None, key, "is missing")
    _check_meta(sc, source)
    _check_top_level(sc, source)
    if not isinstance(sc["workload"], dict):
        raise SpecDataError(source, None, "workload", "must be an object")
    for k, v in sc["workload"].items():
        if k not in WORKLOAD_KEYS:
            raise SpecDataError(source, None, f"workload.{k}", f"is not a workload option; allowed: "
                                                             f"{', '.join(WORKLOAD_KEYS)}")
        _check_value(source, f"workload.{k}", k, v)
    if not sc["workload"].get("model"):
        raise SpecDataError(source, None, "workload.model", "is missing: name a preset or embed a config")
    plans = sc["plans"]
    if not isinstance(plans, list) or not 1 <= len(plans) <= MAX_PLANS:
        raise SpecDataError(source, None, "plans", f"must be a list of 1 to {MAX_PLANS} plans")
    for i, p in enumerate(plans):
        if not isinstance(p, dict):
            raise SpecDataError(source, None, f"plans[{i}]", "must be an object")
        for k, v in p.items():
            if k not in PLAN_KEYS and k not in PLAN_OWN_KEYS:
                raise SpecDataError(source, None, f"plans[{i}].{k}", f"is not a plan option; allowed: "
                                                                  f"{', '.join(PLAN_KEYS + PLAN_OWN_KEYS)}")
            _check_value(source, f"plans[{i}].{k}", k, v)
        if not (p.get("gpu") or p.get("instance")):
            raise SpecDataError(source, None, f"plans[{i}]", "needs a gpu or an instance")
    _check_serve(sc, source)
    if sc.get("currency", "USD") not in CURRENCIES:
        raise SpecDataError(source, None, "currency", f"must be one of {', '.join(CURRENCIES)}")
    chosen = sc.get("chosen_plan", 0)
    if isinstance(chosen, bool) or not isinstance(chosen, int) or not 0 <= chosen < len(plans):
        raise SpecDataError(source, None, "chosen_plan", f"must be an index from 0 to {len(plans) - 1}")
    return sc


def _check_serve(sc: dict, source: str) -> None:
    """The optional ``serve`` section: known serve options, each passing the serve table's check."""
    serve = sc.get("serve")
    if serve is None:
        return
    if not isinstance(serve, dict):
        raise SpecDataError(source, None, "serve", "must be an object")
    for k, v in serve.items():
        if k not in SERVE_KEYS:
            raise SpecDataError(source, None, f"serve.{k}", f"is not a serve option; allowed: {', '.join(SERVE_KEYS)}")
        try:
            SERVE_OPTIONS[k].check(v)
        except InputError as e:
            raise SpecDataError(source, None, f"serve.{k}", e.message) from None


def _check_value(source: str, where: str, key: str, value) -> None:
    """A scenario value passes its option's check (the CLI's rules); ``name`` and
    ``target_tokens_per_s`` are the scenario's own."""
    if key == "name":
        if value is not None and (not isinstance(value, str) or len(value) > 200):
            raise SpecDataError(source, None, where, "must be text of at most 200 characters")
        return
    if key == "target_tokens_per_s":
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not 0 < value < float("inf")):
            raise SpecDataError(source, None, where, f"must be a positive number; got {value!r}")
        return
    opt = MODE if key == "mode" else ESTIMATE_OPTIONS.get(key)
    try:
        if opt is None:
            raise InputError(key, f"is not an estimate option; allowed: {', '.join(sorted(ESTIMATE_OPTIONS))}")
        opt.check(value)
    except InputError as e:
        raise SpecDataError(source, None, where, e.message) from None


def loads(text: str, source: str = "scenario") -> dict:
    if len(text) > MAX_SCENARIO_BYTES:
        raise SpecDataError(source, None, None, f"is larger than {MAX_SCENARIO_BYTES >> 20} MiB: not a scenario")
    try:
        data = json.loads(text)  # NaN/Infinity read as numbers: the field checks name them
    except json.JSONDecodeError as e:
        raise SpecDataError(source, e.lineno, None, f"is not valid JSON ({e.msg})") from None
    except RecursionError:
        raise SpecDataError(source, None, None, "is nested too deeply to be a scenario") from None
    return validate(migrate(data, source), source)


def load(path: str) -> dict:
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block the read
            raise SpecDataError(path, None, None, "is not a regular file")
        if st.st_size > MAX_SCENARIO_BYTES:
            raise SpecDataError(path, None, None, f"is larger than {MAX_SCENARIO_BYTES >> 20} MiB: not a scenario")
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SpecDataError(path, None, None, f"cannot be read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise SpecDataError(path, None, None, "is not UTF-8 text") from None
    return loads(text, path)


def dumps(sc: dict) -> str:
    return json.dumps(sc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def save(sc: dict, path: str) -> None:
    """Validate, then write atomically (a temporary file renamed over the target)."""
    validate(sc, path)
    atomic_write_text(path, dumps(sc))


def plan_options(sc: dict, index: int) -> dict:
    """The estimate options (CLI names) of plan ``index``: the workload's options of its mode (a
    workload keeps the other mode's too, for switching back), the plan's, the scenario's."""
    mode = sc["workload"].get("mode") or MODE.default
    mine = options_of(ESTIMATE_REQUESTS[mode])
    opts = {k: v for k, v in sc["workload"].items() if k in mine and v is not None}
    opts.update({k: v for k, v in sc["plans"][index].items() if k in mine and v is not None})
    opts.update({k: sc[k] for k in SCENARIO_KEYS if sc.get(k) and k in mine})
    return opts


def plan_own_settings(sc: dict, index: int) -> dict:
    """The workload options plan ``index`` sets for itself (PLAN_OWN_KEYS), in option order."""
    plan = sc["plans"][index]
    return {k: plan[k] for k in PLAN_OWN_KEYS if plan.get(k) is not None}


def plan_request(sc: dict, index: int):
    """The typed estimate request of plan ``index`` (core/requests.py)."""
    mode = sc["workload"].get("mode") or MODE.default
    return build(ESTIMATE_REQUESTS[mode], plan_options(sc, index), f"plan {index + 1}")


def evaluate(sc: dict, db, on_error: str = "keep") -> list[dict]:
    """One result per plan: ``{"name", "options", "request", "result", "estimate"}`` (the estimate's
    JSON) or ``{"name", "options", "error"}``."""
    out = []
    for i, p in enumerate(sc["plans"]):
        opts = plan_options(sc, i)
        name = p.get("name") or f"Plan {i + 1}"
        try:
            request = plan_request(sc, i)
            result = run_estimate(request, db)
            out.append({"name": name, "options": opts, "request": request, "result": result,
                        "estimate": result.to_json(), "own": plan_own_settings(sc, i)})
        except (InputError, SpecDataError) as e:
            if on_error == "raise":
                raise
            out.append({"name": name, "options": opts, "error": str(e)})
    return out


def example_dir() -> str:
    return examples_dir()


def examples() -> list[str]:
    d = example_dir()
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".json")) if os.path.isdir(d) else []
