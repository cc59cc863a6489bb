"""Collective-communication arithmetic shared by the engine and the probes.

Bus-bandwidth factors follow nccl-tests (NVIDIA, doc/PERFORMANCE.md): algbw is
bytes / time; busbw = algbw x factor, where the factor makes busbw comparable with
the hardware's link bandwidth whatever the number of ranks n.
"""
from __future__ import annotations

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv")


def bus_factor(collective: str, n_ranks: int) -> float:
    """nccl-tests busbw/algbw factor for a collective over ``n_ranks`` ranks.

    all-reduce 2(n-1)/n; reduce-scatter, all-gather and all-to-all (n-1)/n; broadcast,
    reduce and point-to-point 1 (nccl-tests doc/PERFORMANCE.md, "Bus bandwidth").
    """
    if n_ranks < 1:
        raise ValueError(f"n_ranks must be at least 1, got {n_ranks}")
    if collective == "all_reduce":
        return 2.0 * (n_ranks - 1) / n_ranks
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n_ranks - 1) / n_ranks
    if collective in ("broadcast", "reduce", "send_recv"):
        return 1.0
    raise ValueError(f"unknown collective {collective!r}; allowed: {', '.join(COLLECTIVES)}")


def algbw_gbps(size_bytes: float, time_s: float) -> float:
    """Algorithm bandwidth in GB/s (1e9 bytes/s): the buffer size over the time."""
    return size_bytes / time_s / 1e9


def busbw_gbps(collective: str, n_ranks: int, size_bytes: float, time_s: float) -> float:
    """Bus bandwidth in GB/s as nccl-tests reports it."""
    return algbw_gbps(size_bytes, time_s) * bus_factor(collective, n_ranks)
