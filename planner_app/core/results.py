"""The one check of an engine result's numbers, run when a result part is made (its
``__post_init__``): every number finite, quantities non-negative, what must take time positive,
utilisations at most 1. An impossible value is an error, never a number shown to a user; the
service names the option that caused it (service/estimate.py)."""
from __future__ import annotations

import math
from dataclasses import fields

from planner_app.core.errors import ImpossibleResult

# Time parts may be a rounding error below zero (-1.7e-18 s in one golden case: exposed
# data-parallel time computed as step - compute - optimizer); anything below this share of
# the step is a real negative time.
NEGATIVE_TIME_TOLERANCE = 1e-9
# MFU and HFU are ratios to the datasheet peak; the engine's own model stays below 1, and an
# override at exactly the peak gives 1 up to rounding.
UTILISATION_TOLERANCE = 1e-9


def _numbers(value, path: str):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{path}[{i}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, value


def check_quantities(obj, signed: tuple = (), positive: tuple = (), at_most_one: tuple = (),
                     tolerance_of: dict | None = None) -> None:
    """ImpossibleResult("result", ...) unless every number of dataclass ``obj``'s fields (dicts and
    lists walked) is finite and, outside ``signed`` fields, non-negative; ``positive`` fields above
    zero; ``at_most_one`` fields at most 1. ``tolerance_of``: field -> a scale; values of that field
    down to -NEGATIVE_TIME_TOLERANCE x the scale count as zero (rounding)."""
    tol = tolerance_of or {}
    for f in fields(obj):
        for path, v in _numbers(getattr(obj, f.name), f.name):
            if isinstance(v, float) and not math.isfinite(v):
                raise ImpossibleResult("result", f"the estimate has {path} = {v}: no real run gives that; "
                                                 "check the inputs")
            if v < 0 and f.name not in signed and not (f.name in tol and v > -NEGATIVE_TIME_TOLERANCE * abs(tol[f.name])):
                raise ImpossibleResult("result", f"the estimate has a negative {path} ({v:g}); check the inputs")
        v = getattr(obj, f.name)
        if f.name in positive and not v > 0:
            raise ImpossibleResult("result", f"the estimate has {f.name} = {v!r}; check the inputs")
        if f.name in at_most_one and v > 1 + UTILISATION_TOLERANCE:
            raise ImpossibleResult("result", f"the estimate has {f.name.upper()} {v:.0%}, above the GPU's peak; "
                                             "check the inputs")


def json_ready(obj):
    """JSON-safe: NaN and infinities become null (every face's JSON output)."""
    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
