"""Checks of arrays read back from a saved model, before compiled code indexes with them.

Each check raises a ``ValueError`` (``TypeError`` for a wrong dtype) that names the array and
the first offending entry, and returns the array in the dtype and layout the kernels take.

>>> import numpy as np
>>> integers("node_left_", np.array([1, 2], dtype=np.int64), shape=(2,), low=-1, high=3, dtype=np.int32).dtype
dtype('int32')
>>> integers("node_left_", np.array([1, 9999]), shape=(2,), low=-1, high=3)
Traceback (most recent call last):
...
fairops.errors.InputError: node_left_[1] = 9999 is outside [-1, 3)
>>> floats("node_value_", np.array([0.5, np.nan]), shape=(2,))
Traceback (most recent call last):
...
fairops.errors.InputError: node_value_[1] is nan; it must be finite
"""

from __future__ import annotations

import numpy as np

from .errors import InputError


def _where(name: str, array: np.ndarray, flat_index: int) -> str:
    index = np.unravel_index(int(flat_index), array.shape)
    return f"{name}[{', '.join(str(int(i)) for i in index)}]"


def check_shape(name: str, array: np.ndarray, shape: tuple, what: str = "") -> None:
    """Refuse ``array`` unless its shape is ``shape`` (an entry of None matches any length)."""
    if array.ndim != len(shape) or any(want is not None and got != want for got, want in zip(array.shape, shape)):
        wanted = ("(" + ", ".join("n" if want is None else str(want) for want in shape)
                  + ("," if len(shape) == 1 else "") + ")")
        raise InputError(f"{name} has shape {array.shape}, expected {wanted}{' ' + what if what else ''}")


def first_false(ok: np.ndarray) -> int | None:
    """Flat index of the first False in ``ok`` (None when all hold)."""
    if ok.all():
        return None
    return int(np.flatnonzero(~ok.ravel())[0])


def reached_from(roots: np.ndarray, left: np.ndarray, right: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Which nodes a walk from ``roots`` down the children of inner nodes meets (indices already in range).

    Call it once every node but a root has exactly one parent: the walk then meets each node at most once,
    and a node it never meets lies on a cycle apart from the roots.

    >>> reached_from(np.array([0]), np.array([1, -1, -1, 4, 3]), np.array([2, -1, -1, 4, 3]),
    ...              np.array([True, False, False, True, True])).tolist()
    [True, True, True, False, False]
    """
    reached, level = np.zeros(len(inner), dtype=bool), roots
    while level.size:
        reached[level] = True
        level = level[inner[level]]
        level = np.concatenate([left[level], right[level]])
    return reached


def integers(name: str, value, *, shape: tuple, low=None, high=None, dtype=np.int64, what: str = "") -> np.ndarray:
    """``value`` as a C-contiguous ``dtype`` array of ``shape`` with every entry in ``[low, high)``."""
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} has dtype {array.dtype}; expected integers")
    check_shape(name, array, shape, what)
    limits = np.iinfo(dtype)
    low = limits.min if low is None else low
    high = limits.max + 1 if high is None else high
    if array.size:
        bad = first_false((array >= low) & (array < high))
        if bad is not None:
            raise InputError(f"{_where(name, array, bad)} = {array.ravel()[bad]} is outside [{low}, {high})")
    return np.ascontiguousarray(array, dtype=dtype)


def floats(name: str, value, *, shape: tuple, finite: bool = True, low=None, high=None, what: str = "") -> np.ndarray:
    """``value`` as a C-contiguous float64 array of ``shape``; finite and in ``[low, high]`` as asked."""
    array = np.asarray(value)
    if array.dtype.kind != "f":
        raise TypeError(f"{name} has dtype {array.dtype}; expected floating-point numbers")
    check_shape(name, array, shape, what)
    array = np.ascontiguousarray(array, dtype=np.float64)
    if finite and array.size:
        bad = first_false(np.isfinite(array))
        if bad is not None:
            raise InputError(f"{_where(name, array, bad)} is {array.ravel()[bad]}; it must be finite")
    if (low is not None or high is not None) and array.size:
        inside = np.isnan(array) | ((array >= (-np.inf if low is None else low))
                                    & (array <= (np.inf if high is None else high)))
        bad = first_false(inside)
        if bad is not None:
            raise InputError(f"{_where(name, array, bad)} = {array.ravel()[bad]} is outside [{low}, {high}]")
    return array


def only_names(arrays: dict, expected, owner: str) -> None:
    """Refuse a state whose array names are not exactly ``expected``."""
    missing = [name for name in expected if name not in arrays]
    unknown = sorted(set(arrays) - set(expected))
    if missing:
        raise InputError(f"{owner} state arrays are missing {missing}")
    if unknown:
        raise InputError(f"{owner} state holds unknown array(s) {unknown}")
