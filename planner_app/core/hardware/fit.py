"""Whether a plan's device memory fits a GPU, and with what margin: the one rule behind every
verdict (training, inference, the search's "fits", the GUI's colours)."""
from __future__ import annotations

from planner_app.core.errors import InputError

# Free memory a plan should keep beyond the estimate before it is called comfortable (users
# set their own in Settings): 2.5x the engine's largest memory error on the 21 measured H200
# runs (2.0%, docs/validation.md), for allocator fragmentation and framework-version variance
# the estimate cannot see. Below it a plan that fits is "tight".
DEFAULT_MIN_HEADROOM_FRACTION = 0.05
MEMORY_VERDICTS = ("fits", "tight", "does_not_fit")


def check_min_headroom(min_headroom_fraction: float) -> float:
    """The memory margin as a fraction in [0, 1), or InputError("min_headroom")."""
    if not 0 <= min_headroom_fraction < 1:
        raise InputError("min_headroom", f"must be from 0 to 99%; got {min_headroom_fraction * 100:g}%")
    return min_headroom_fraction


def keeps_margin(device_bytes, capacity_bytes, min_headroom_fraction):
    """True where at least ``min_headroom_fraction`` of the GPU stays free (numbers or columns):
    the one rule behind the verdict and the search's "fits"."""
    return capacity_bytes - device_bytes >= min_headroom_fraction * capacity_bytes


def memory_verdict(device_bytes: float, capacity_bytes: float,
                   min_headroom_fraction: float = DEFAULT_MIN_HEADROOM_FRACTION) -> str:
    """"fits" (at least ``min_headroom_fraction`` of the GPU stays free), "tight" (fits with
    less free than that) or "does_not_fit"."""
    check_min_headroom(min_headroom_fraction)
    if device_bytes > capacity_bytes:
        return "does_not_fit"
    return "fits" if keeps_margin(device_bytes, capacity_bytes, min_headroom_fraction) else "tight"


def add_margin(mem: dict, min_headroom_fraction: float = DEFAULT_MIN_HEADROOM_FRACTION) -> None:
    """Free memory left on the GPU and the verdict against the default margin (the GUI
    applies the user's own margin with the same ``memory_verdict``)."""
    cap, dev = mem["capacity_bytes"], mem["device_bytes"]
    mem["headroom_bytes"] = cap - dev
    mem["headroom_fraction"] = (cap - dev) / cap
    mem["verdict"] = memory_verdict(dev, cap, min_headroom_fraction)
    mem["min_headroom_fraction"] = min_headroom_fraction
