"""Array-generic helpers: each takes Python numbers or numpy arrays (one column per configuration),
so the single estimate and the search share every formula. A scalar stays a Python number (numpy
on one element costs ~1 us a call)."""
from __future__ import annotations

import math
from typing import TypeAlias, TypeGuard, overload

import numpy as np

# A value of the array-generic formulas: a Python number for one estimate, a numpy column (one value
# per configuration) for a search. ``float`` admits ``int`` and ``bool`` (PEP 484 numeric promotion).
Num: TypeAlias = float | np.ndarray


def is_array(x: object) -> TypeGuard[np.ndarray]:
    return isinstance(x, np.ndarray) and x.ndim > 0


# The overloads say what a scalar call returns (a Python number, as the single estimate keeps);
# they cost nothing at run time (the last definition is the function).
@overload
def where(cond: bool, a: float, b: float) -> float: ...
@overload
def where(cond: object, a: Num, b: Num) -> Num: ...
def where(cond, a, b):
    """``np.where`` for an array condition; a plain choice for a scalar one, so that the single
    estimate keeps Python floats (numpy on one element costs ~1 us a call)."""
    return np.where(cond, a, b) if is_array(cond) else (a if cond else b)


@overload
def minimum(a: float, b: float) -> float: ...
@overload
def minimum(a: Num, b: Num) -> Num: ...
def minimum(a, b):
    return np.minimum(a, b) if is_array(a) or is_array(b) else min(a, b)


@overload
def maximum(a: float, b: float) -> float: ...
@overload
def maximum(a: Num, b: Num) -> Num: ...
def maximum(a, b):
    return np.maximum(a, b) if is_array(a) or is_array(b) else max(a, b)


@overload
def logical_not(x: bool) -> bool: ...
@overload
def logical_not(x: Num) -> Num: ...
def logical_not(x):
    return ~x if is_array(x) else not x


@overload
def ceil(x: float) -> int: ...
@overload
def ceil(x: np.ndarray) -> Num: ...  # a 0-d array takes math.ceil
def ceil(x):
    return np.ceil(x) if is_array(x) else math.ceil(x)
