"""The service layer's checks around the engine: inputs the option table cannot judge alone
(a rate against the GPU's peak, a price mix, a model config.json, a calibration profile) and
the results the engine returns (finite, non-negative, MFU <= 1). An impossible result is an
error naming the option that caused it, never a number shown to the user."""
from __future__ import annotations

import math

from planner_app.core.errors import InputError

# Time parts may be a rounding error below zero (-1.7e-18 s in one golden case: exposed
# data-parallel time computed as step - compute - optimizer); anything below this share of
# the step is a real negative time.
NEGATIVE_TIME_TOLERANCE = 1e-9
# MFU and HFU are ratios to the datasheet peak; the engine's own model stays below 1, and an
# override at exactly the peak gives 1 up to rounding.
UTILISATION_TOLERANCE = 1e-9


class ImpossibleResult(InputError):
    """The engine returned a value no real run can have (NaN, infinite, negative, MFU > 1)."""


def check_price_mix(text):
    """A ``--price-mix`` text parsed into a PriceMix, every share finite; InputError naming
    ``price_mix`` otherwise (the parser's own float() errors included)."""
    from planner_app.core.plans.cost import PriceMix

    try:
        mix = PriceMix.parse(text)
    except InputError:
        raise
    except (ValueError, TypeError, OverflowError):
        raise InputError("price_mix", f"cannot read {str(text)[:60]!r}; use e.g. reserved_1yr=0.8,on_demand=0.2 "
                                      "or '80% reserved-1yr + 20% on-demand'") from None
    shares = (mix.on_demand, mix.reserved_1yr, mix.reserved_3yr, mix.spot)
    if not all(math.isfinite(s) for s in shares):
        raise InputError("price_mix", f"shares must be finite numbers adding up to 1; got {str(text)[:60]!r}")
    return mix


def check_achieved_tflops(achieved_tflops, out: dict) -> None:
    """``--achieved-tflops`` counts hardware FLOPs per GPU per second: at most the peak the
    engine measures MFU against (``flops.peak_tflops_per_gpu``, the datasheet's dense rate for
    the recipe's GEMM precision)."""
    peak = out.get("flops", {}).get("peak_tflops_per_gpu")
    if achieved_tflops and peak and achieved_tflops > peak * (1 + UTILISATION_TOLERANCE):
        raise InputError("achieved_tflops", f"{achieved_tflops:,g} TFLOP/s is above the {out['gpu']['name']}'s "
                                            f"peak of {peak:,g} TFLOP/s for recipe {out['setup']['recipe']}; "
                                            f"allowed: 0.001 to {peak:,g}")


def _walk(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{path}.{k}" if path else k)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path, obj


# Values that may be negative: a plan that does not fit has negative headroom; advice lists
# changes that save or cost time and memory.
SIGNED = ("memory.headroom_bytes", "memory.headroom_fraction", "advice.")


def check_estimate(out: dict, cause: str = "result") -> dict:
    """``out`` when every number in it is finite, the quantities are non-negative, the step
    takes time and MFU/HFU are at most 1; ImpossibleResult naming ``cause`` (the option that
    set the numbers, or "result") and the value otherwise."""
    for path, v in _walk(out):
        if isinstance(v, float) and not math.isfinite(v):
            raise ImpossibleResult(cause, f"the estimate has {path} = {v}: no real run gives that; check the inputs")
        if v < 0 and not path.startswith(SIGNED):
            step = out.get("time", {}).get("step_s") or 1.0
            if path.startswith("time.breakdown_s.") and v > -NEGATIVE_TIME_TOLERANCE * abs(step):
                continue
            raise ImpossibleResult(cause, f"the estimate has a negative {path} ({v:g}); check the inputs")
    t = out.get("time", {})
    for key in ("mfu", "hfu"):
        if key in t and t[key] > 1 + UTILISATION_TOLERANCE:
            raise ImpossibleResult(cause, f"the estimate has {key.upper()} {t[key]:.0%}, above the GPU's peak; "
                                          "check the inputs")
    for key in ("step_s", "tokens_per_s", "prefill_s", "decode_tokens_per_s"):
        if key in t and not t[key] > 0:
            raise ImpossibleResult(cause, f"the estimate has time.{key} = {t[key]!r}; check the inputs")
    return out
