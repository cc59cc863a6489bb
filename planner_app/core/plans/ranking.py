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


def by_time(train_s, ok) -> np.ndarray:
    """Indices of ``ok`` points, fastest first."""
    idx = np.flatnonzero(ok)
    return idx[np.argsort(np.asarray(train_s, float)[idx], kind="stable")]


def by_cost(cost, tie, ok) -> np.ndarray:
    """Indices of ``ok`` points, the priced by cost (NaN: no price) then ``tie``, the unpriced after
    them by ``tie`` alone."""
    idx = np.flatnonzero(ok)
    c = np.asarray(cost, float)[idx]
    priced = ~np.isnan(c)
    return idx[np.lexsort((np.asarray(tie, float)[idx], np.nan_to_num(c, nan=np.inf), ~priced))]
