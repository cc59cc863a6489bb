"""Array-generic helpers: each takes Python numbers or numpy arrays (one column per configuration),
so the single estimate and the search share every formula. A scalar stays a Python number (numpy
on one element costs ~1 us a call)."""
from __future__ import annotations

import math

import numpy as np


def is_array(x) -> bool:
    return isinstance(x, np.ndarray) and x.ndim > 0


def where(cond, a, b):
    """``np.where`` for an array condition; a plain choice for a scalar one, so that the single
    estimate keeps Python floats (numpy on one element costs ~1 us a call)."""
    return np.where(cond, a, b) if is_array(cond) else (a if cond else b)


def minimum(a, b):
    return np.minimum(a, b) if is_array(a) or is_array(b) else min(a, b)


def maximum(a, b):
    return np.maximum(a, b) if is_array(a) or is_array(b) else max(a, b)


def logical_not(x):
    return ~x if is_array(x) else not x


def ceil(x):
    return np.ceil(x) if is_array(x) else math.ceil(x)
