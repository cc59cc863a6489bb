"""Ranking of scored configurations, one implementation for the training search, the serving search
and the merge of several searches: the Pareto front of two objectives, and orderings (fastest,
cheapest, fewest GPUs) with the unpriced after the priced."""
from __future__ import annotations

import numpy as np

FRONT_POINTS = 50  # a front of more points is thinned evenly to this many (a chart, not a table)


def pareto_front(a, b, ok=None) -> np.ndarray:
    """Indices of the points on the lower-left front of (``a``, ``b``), both minimised, in order of
    ``a`` (ties: lower ``b`` first): no other point is at least as low in both and lower in one.
    ``ok``: a mask of the points that may be on it (default all). To maximise, negate."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    idx = np.flatnonzero(np.ones(len(a), bool) if ok is None else np.asarray(ok, bool))
    if not len(idx):
        return idx
    order = idx[np.lexsort((b[idx], a[idx]))]
    front, best = [], np.inf
    for i in order:
        if b[i] < best:
            front.append(int(i))
            best = b[i]
    return np.array(front, dtype=int)


def thinned(indices, limit: int = FRONT_POINTS) -> list[int]:
    """At most ``limit`` of ``indices``, evenly spread, the first and last kept."""
    indices = [int(i) for i in indices]
    if len(indices) <= limit:
        return indices
    pick = np.linspace(0, len(indices) - 1, limit).round().astype(int)
    return [indices[j] for j in pick]


def by_cost(cost, tie, ok, first=None) -> np.ndarray:
    """Indices of ``ok`` points, the priced by cost (NaN: no price) then ``tie``, the unpriced after
    them by ``tie`` alone. ``first``: a mask of points that rank before the others of their kind
    (priced or not), such as each machine's best plan at each GPU count (``best_of_kind``)."""
    idx = np.flatnonzero(ok)
    c = np.asarray(cost, float)[idx]
    priced = ~np.isnan(c)
    later = np.zeros(len(idx), bool) if first is None else ~np.asarray(first, bool)[idx]
    return idx[np.lexsort((np.asarray(tie, float)[idx], np.nan_to_num(c, nan=np.inf), later, ~priced))]


# "Fastest" ranks by time, but plans whose times differ by less than the larger of these two count as
# equally fast, and among those the one with the fewest GPUs (then the cheapest) comes first:
# - 5%: the engine's median step-time error against measured runs (docs/validation.md, "Step time
#   against real single-GPU runs": median |error| 4.4%); a smaller gap is not a known difference.
# - 10 minutes: about the start-up that no estimate here includes (launching the instances, pulling
#   the container, loading the weights -- 141 GB of a 70B model in bf16 at ~1 GB/s from network
#   storage is over 2 minutes -- and initialising NCCL); a plan that saves less than that is not
#   sooner for the people waiting, only bigger. A judgement, stated in the search's assumptions.
# So a 2e8-token LoRA job that 1,024 GPUs finish in 2.4 minutes is led by 256 GPUs at 9.5 minutes
# (512 and then 1,024 GPUs next), while a run of weeks is ranked by time within 5%.
TIME_TIE_FRACTION = 0.05
TIME_TIE_FLOOR_S = 600.0

# Plans on one machine and GPU count whose time and cost are both within 1% of each other are one
# choice to a reader (they differ in settings such as micro-batch or ZeRO stage that change neither):
# they are shown as one row, the simplest of them, with the others counted ("+N similar"). 1% is well
# below the engine's resolution (TIME_TIE_FRACTION above).
SIMILAR_FRACTION = 0.01


def time_tolerance_s(best_s: float) -> float:
    """Seconds within which a plan's time counts as equal to the fastest's ``best_s`` (the larger of
    TIME_TIE_FRACTION of it and TIME_TIE_FLOOR_S)."""
    return max(TIME_TIE_FRACTION * float(best_s), TIME_TIE_FLOOR_S)


def by_time(train_s, ok, gpus=None, cost=None, first=None) -> np.ndarray:
    """Indices of ``ok`` points, fastest first. With ``gpus``: the points within ``time_tolerance_s``
    of the fastest count as equally fast and come first, fewest GPUs first, then cheapest (``cost``
    NaN: no price, after the priced), then fastest; the rest after them, fastest first. ``first``: a
    mask of points ranked so before the others, which follow ranked the same way."""
    idx = np.flatnonzero(ok)
    t = np.asarray(train_s, float)[idx]
    later = np.zeros(len(idx), bool) if first is None else ~np.asarray(first, bool)[idx]
    if gpus is None or not len(idx):
        return idx[np.lexsort((t, later))]
    tied = t <= t.min() + time_tolerance_s(t.min())
    g = np.where(tied, np.asarray(gpus, float)[idx], 0.0)
    c = np.zeros(len(idx)) if cost is None else np.asarray(cost, float)[idx]
    c = np.where(tied, np.nan_to_num(c, nan=np.inf), 0.0)
    return idx[np.lexsort((t, c, g, ~tied, later))]


def best_of_kind(kind, train_s, ok) -> np.ndarray:
    """A mask of the fastest ``ok`` point of each ``kind``. On one machine and GPU count a plan's cost
    is its time at one price, so that plan is also the cheapest there: every other plan of its kind
    is slower and dearer."""
    kind, t = np.asarray(kind), np.asarray(train_s, float)
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((t[idx], kind[idx]))]
    out = np.zeros(len(t), bool)
    out[order[np.r_[True, kind[order][1:] != kind[order][:-1]]] if len(order) else order] = True
    return out


def fold_similar(kind, train_s, cost, ok, simplicity: list) -> tuple[np.ndarray, np.ndarray]:
    """(a group number for each point, -1 where not ``ok``; the representative of each group, by
    group number). Points of one ``kind`` (the same machine and GPU count) are taken from the
    simplest (by the ``simplicity`` keys, most significant first, lower simpler): each not yet in a
    group represents the others of its kind within SIMILAR_FRACTION of its time and cost. So any
    two representatives of a kind differ by more than SIMILAR_FRACTION in time or cost. ``cost``
    NaN: no price (such points fold by time alone)."""
    kind = np.asarray(kind, float)
    t, c = np.asarray(train_s, float), np.asarray(cost, float)
    groups = np.full(len(t), -1)
    idx = np.flatnonzero(ok)
    by_kind = idx[np.lexsort((t[idx], kind[idx]))]  # each kind's points in rising time
    k_sorted, t_sorted = kind[by_kind], t[by_kind]
    simplest = idx[np.lexsort((*[np.asarray(s, float)[idx] for s in reversed(simplicity)],))]
    reps: list[int] = []
    for i in simplest:
        if groups[i] >= 0:
            continue
        lo, hi = np.searchsorted(k_sorted, kind[i], "left"), np.searchsorted(k_sorted, kind[i], "right")
        a = lo + np.searchsorted(t_sorted[lo:hi], t[i] * (1 - SIMILAR_FRACTION), "left")
        b = lo + np.searchsorted(t_sorted[lo:hi], t[i] * (1 + SIMILAR_FRACTION), "right")
        near = by_kind[a:b]
        near = near[(groups[near] < 0) & ((np.isnan(c[near]) & np.isnan(c[i]))
                                         | (np.abs(c[near] - c[i]) <= SIMILAR_FRACTION * np.abs(c[i])))]
        groups[near] = len(reps)
        groups[i] = len(reps)
        reps.append(int(i))
    return groups, np.array(reps, dtype=int)
