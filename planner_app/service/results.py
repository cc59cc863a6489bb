"""What the estimate service returns, and the checks around the engine that need more than one
option: a rate against the GPU's peak, a price mix. An impossible result (core/results.py) is
an error naming the option that caused it, never a number shown to the user."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner_app.core.errors import InputError
from planner_app.core.plans.cost import PriceMix
from planner_app.core.results import UTILISATION_TOLERANCE, check_quantities, json_ready

if TYPE_CHECKING:
    from planner_app.core.inference.estimate import InferenceEstimate
    from planner_app.core.requests import InferenceRequest, TrainingRequest
    from planner_app.core.training.estimate import TrainingEstimate


def check_price_mix(text) -> PriceMix:
    """A price-mix text parsed into a PriceMix, every share finite; InputError naming
    ``price_mix`` otherwise (the parser's own float() errors included)."""
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


def check_achieved_tflops(achieved_tflops, estimate) -> None:
    """An achieved TFLOP/s counts hardware FLOPs per GPU per second: at most the peak the engine
    measures MFU against (the datasheet's dense rate for the recipe's GEMM precision)."""
    peak = estimate.flops.peak_tflops_per_gpu
    if achieved_tflops and peak and achieved_tflops > peak * (1 + UTILISATION_TOLERANCE):
        raise InputError("achieved_tflops", f"{achieved_tflops:,g} TFLOP/s is above the "
                                            f"{estimate.hardware.gpu.name}'s peak of {peak:,g} TFLOP/s for recipe "
                                            f"{estimate.setup.recipe}; allowed: 0.001 to {peak:,g}")


@dataclass(frozen=True)
class EstimateResult:
    """An estimate and the request it answers: faces that need more numbers of the same plan (a
    scaling curve, a report's prices) run this ``request`` again; none rebuilds inputs from the
    JSON. ``notes``: what the service assumed before the engine did (the defaults it took, the
    calibration profile); ``host``: the host side of a training plan (service/host.py)."""

    request: TrainingRequest | InferenceRequest
    estimate: TrainingEstimate | InferenceEstimate
    notes: tuple
    host: dict | None = None

    def __post_init__(self):
        check_quantities(self)

    @property
    def mode(self) -> str:
        return self.request.mode

    def to_json(self) -> dict:
        """The JSON ``gpu-planner estimate --json`` prints (PRODUCT.md's contract)."""
        out = self.estimate.to_json()
        out["assumptions"] = list(self.notes) + out["assumptions"]
        if self.host is not None:
            out["host"] = self.host
        return json_ready(out)
