"""Where a plan runs: a GPU type, optionally an instance, the links between its GPUs, and the
probe's calibration of them. The engine reads the GPU's efficiencies and the network topology
from here, so a calibration profile changes every estimate the same way."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from planner_app.core.hardware import compute, network
from planner_app.core.hardware.specs import FabricSpec, GpuSpec, InstanceSpec


class Calibration(Protocol):
    """What the engine reads of a probe calibration profile (probe/calibration.py
    ``CalibrationProfile``): measured efficiencies and bus bandwidths, each None where not measured.
    Read-only members, so frozen dataclasses (MeasuredEfficiency) satisfy it."""

    @property
    def efficiency(self) -> compute.Efficiency | None: ...

    @property
    def intra_busbw_gb_s(self) -> float | None: ...

    @property
    def inter_busbw_gb_s(self) -> float | None: ...


@dataclass(frozen=True)
class MeasuredEfficiency:
    """A calibration of the efficiencies alone (a validation run re-estimated with a profile's
    efficiencies, or a benchmark's own fit); the links keep the datasheet's bandwidth."""

    efficiency: compute.Efficiency | None
    intra_busbw_gb_s: float | None = None
    inter_busbw_gb_s: float | None = None


@dataclass(frozen=True)
class Hardware:
    """A GPU type, optionally its instance, the link inside a node and the network between nodes."""

    gpu: GpuSpec
    intra: FabricSpec | None = None  # link inside a node (NVLink or PCIe)
    inter: FabricSpec | None = None  # network between nodes
    nics_per_node: int | None = None  # None: one (the topology's floor)
    instance: InstanceSpec | None = None
    calibration: Calibration | None = None

    def efficiency(self, framework: str) -> compute.Efficiency:
        """The calibration's measured efficiencies, else the GPU family's defaults for ``framework``."""
        cal = self.calibration
        if cal is not None and cal.efficiency is not None:
            return cal.efficiency
        return compute.default_efficiency(self.gpu, framework)

    def topology(self, gpus_per_node: int) -> network.Topology:
        """The links of nodes of ``gpus_per_node`` GPUs, at the calibration's bus bandwidths where measured."""
        cal = self.calibration
        return network.topology(self.gpu, self.intra, self.inter, self.nics_per_node or 1, gpus_per_node,
                                intra_override_gb_s=cal.intra_busbw_gb_s if cal is not None else None,
                                inter_override_gb_s=cal.inter_busbw_gb_s if cal is not None else None)
