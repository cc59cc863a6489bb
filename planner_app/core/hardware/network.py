"""Time of collectives over a hierarchical topology (alpha-beta model).

A group of N ranks spans ``n`` nodes of ``g`` ranks each. Large messages follow NCCL's
hierarchical schedule: a reduce-scatter inside the node (NVLink/NVSwitch or PCIe), the
operation across nodes on each rank's 1/g shard over the node's NICs, an all-gather
inside the node. Bandwidth terms use the nccl-tests factors (doc/PERFORMANCE.md: an
all-reduce moves 2(N-1)/N of the buffer per rank, all-gather / reduce-scatter / all-to-all
(N-1)/N) at each fabric's achievable bandwidth (fabrics.csv ``efficiency``); latency is
alpha per step of a tree (log2 N steps) with each fabric's per-step latency.
Works elementwise on numpy arrays.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from planner_app.core.arrays import Num

if TYPE_CHECKING:
    from planner_app.core.hardware.specs import FabricSpec, GpuSpec


@dataclass(frozen=True)
class Topology:
    """Bandwidth per rank in GB/s (one direction, achievable) and per-step latency in s."""

    intra_gb_s: float  # per GPU inside a node
    inter_gb_s: float  # per GPU between nodes (node NIC bandwidth / GPUs per node)
    intra_latency_s: float
    inter_latency_s: float
    gpus_per_node: int

    def with_latency_added(self, extra_s: float) -> Topology:
        return Topology(self.intra_gb_s, self.inter_gb_s, self.intra_latency_s,
                        self.inter_latency_s + extra_s, self.gpus_per_node)


def topology(gpu: GpuSpec, intra: FabricSpec | None, inter: FabricSpec | None, nics_per_node: int,
             gpus_per_node: int, intra_override_gb_s: float | None = None,
             inter_override_gb_s: float | None = None) -> Topology:
    """Build a Topology from the GPU, the intra-node link and the inter-node network.

    The intra-node bandwidth is the GPU's NVLink (datasheet total / 2 per direction) or the
    intra fabric's (PCIe), times the fabric's efficiency; a probe's measured bus bandwidth
    overrides it. A multi-node probe's all-reduce bus bandwidth is the node's network rate
    (a ring's busbw across nodes approaches the node's aggregate NIC bandwidth, nccl-tests
    PERFORMANCE.md), so the per-GPU share is that divided by the GPUs per node.
    """
    if intra_override_gb_s:
        intra_bw = intra_override_gb_s
    elif intra is not None:
        nominal = intra.bw_gb_s
        if gpu.link_bw_gb_s and intra.id.startswith("nvlink"):
            nominal = gpu.link_bw_per_direction_gb_s
        intra_bw = nominal * intra.efficiency
    else:
        intra_bw = (gpu.link_bw_per_direction_gb_s or 25.0) * 0.75
    intra_lat = (intra.latency_us if intra is not None else 5.0) * 1e-6
    if inter_override_gb_s:
        inter_bw = inter_override_gb_s / gpus_per_node
    elif inter is not None:
        inter_bw = inter.bw_gb_s * inter.efficiency * max(nics_per_node, 1) / gpus_per_node
    else:
        inter_bw = 12.5 * 0.7 / gpus_per_node
    inter_lat = (inter.latency_us if inter is not None else 20.0) * 1e-6
    return Topology(intra_bw, inter_bw, intra_lat, inter_lat, gpus_per_node)


def group_per_node(size: Num, stride: Num, gpus_per_node: Num) -> Num:
    """Ranks of a parallel group inside one node when the group's ranks are ``stride`` apart
    (Megatron's order: tp innermost, then cp, ep, dp, pp)."""
    return np.maximum(1, np.minimum(size, gpus_per_node // np.maximum(stride, 1)))


def _split(n_ranks: Num, ranks_per_node: Num) -> tuple[Num, Num]:
    """(ranks inside a node g, nodes n) for a group laid out contiguously."""
    n_ranks = np.asarray(n_ranks, dtype=float)
    g = np.minimum(n_ranks, ranks_per_node)
    n = np.maximum(n_ranks / g, 1.0)
    return g, n


def _latency(topo: Topology, g: Num, n: Num) -> Num:
    steps_in = np.where(g > 1, np.log2(np.maximum(g, 1)) + 1, 0.0)
    steps_out = np.where(n > 1, np.log2(np.maximum(n, 1)) + 1, 0.0)
    return steps_in * topo.intra_latency_s + steps_out * topo.inter_latency_s


def all_reduce_s(size_bytes: Num, n_ranks: Num, topo: Topology, ranks_per_node: Num | None = None) -> np.ndarray:
    """Time of an all-reduce of ``size_bytes`` per rank over ``n_ranks``."""
    g, n = _split(n_ranks, topo.gpus_per_node if ranks_per_node is None else ranks_per_node)
    t = 2 * (g - 1) / g * size_bytes / (topo.intra_gb_s * 1e9)
    t = t + 2 * (n - 1) / n * (size_bytes / g) / (topo.inter_gb_s * 1e9)
    return np.where(np.asarray(n_ranks) > 1, t + _latency(topo, g, n), 0.0)


# All-gather and reduce-scatter reach a lower bus bandwidth than all-reduce on the same
# links: 2x H200 NVLink measured 0.80-0.88 of all-reduce's busbw from 64 MiB to 4 GiB
# (tests/data/collectives_h200x2.json).
GATHER_EFFICIENCY = 0.84


def all_gather_s(size_bytes: Num, n_ranks: Num, topo: Topology, ranks_per_node: Num | None = None) -> np.ndarray:
    """All-gather (or reduce-scatter) where ``size_bytes`` is the full (gathered) buffer."""
    g, n = _split(n_ranks, topo.gpus_per_node if ranks_per_node is None else ranks_per_node)
    t = (g - 1) / g * size_bytes / (topo.intra_gb_s * GATHER_EFFICIENCY * 1e9)
    t = t + (n - 1) / n * (size_bytes / g) / (topo.inter_gb_s * GATHER_EFFICIENCY * 1e9)
    return np.where(np.asarray(n_ranks) > 1, t + _latency(topo, g, n), 0.0)


reduce_scatter_s = all_gather_s


def all_to_all_s(size_bytes: Num, n_ranks: Num, topo: Topology, ranks_per_node: Num | None = None) -> np.ndarray:
    """All-to-all of ``size_bytes`` per rank: the part to ranks in the node over the intra
    link, the rest over the network, concurrently."""
    n_ranks = np.asarray(n_ranks, dtype=float)
    g, n = _split(n_ranks, topo.gpus_per_node if ranks_per_node is None else ranks_per_node)
    intra = (g - 1) / n_ranks * size_bytes / (topo.intra_gb_s * 1e9)
    inter = (n_ranks - g) / n_ranks * size_bytes / (topo.inter_gb_s * 1e9)
    return np.where(n_ranks > 1, np.maximum(intra, inter) + _latency(topo, g, n), 0.0)


def send_recv_s(size_bytes: Num, across_nodes: Num, topo: Topology) -> Num:
    """Point-to-point transfer (pipeline stages)."""
    bw = np.where(across_nodes, topo.inter_gb_s, topo.intra_gb_s)
    lat = np.where(across_nodes, topo.inter_latency_s, topo.intra_latency_s)
    return size_bytes / (bw * 1e9) + lat
