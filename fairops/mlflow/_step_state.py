"""Reading a fitted scikit-learn step's state for the checks of :mod:`fairops.mlflow._transformer_checks`.

Each reader returns the value in the form the step uses it, or raises a one-line ``ValueError`` naming the step
(``owner``) and the attribute.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._state_checks import floats, integers
from ..errors import InputError

# Above this a saved step would ask transform for more columns than any model here makes (PolynomialFeatures
# of a high degree, SplineTransformer of many knots): refused rather than allocated.
MAX_OUTPUT_COLUMNS = 1 << 20
MAX_SPLINE_DEGREE = 20


def is_index(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def read_count(owner: str, name: str, value, low: int = 0, high: int | None = None) -> int:
    if not is_index(value) or int(value) < low or (high is not None and int(value) > high):
        upper = "" if high is None else f" and <= {high}"
        raise InputError(f"{owner}: {name} must be an integer >= {low}{upper}, got {value!r}")
    return int(value)


def read_n_features(model, owner: str) -> int:
    # SelectFromModel reads both from its estimator_ (a property)
    n = read_count(owner, "n_features_in_", getattr(model, "n_features_in_", None), 1)
    names = getattr(model, "feature_names_in_", None)
    if names is not None and (not isinstance(names, np.ndarray) or names.shape != (n,)
                              or not all(isinstance(name, str) for name in names)):
        raise InputError(f"{owner}: feature_names_in_ must be {n} column names")
    return n


def read_floats(owner: str, name: str, value, shape: tuple, **limits) -> np.ndarray:
    return floats(f"{owner}: {name}", np.asarray(value), shape=shape, **limits)


def read_vector(model, owner: str, name: str, n: int, **limits) -> np.ndarray:
    return read_floats(owner, name, vars(model).get(name), (n,), **limits)


def read_mask(owner: str, name: str, value, n: int) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype != bool or array.shape != (n,):
        raise InputError(f"{owner}: {name} must be {n} true/false flags, got {array.dtype} of shape {array.shape}")
    return array


def read_indices(owner: str, name: str, value, high: int) -> np.ndarray:
    array = np.asarray(value)
    if array.shape == (0,):  # an empty list reads as floats
        return np.zeros(0, dtype=np.int64)
    return integers(f"{owner}: {name}", array, shape=(None,), low=0, high=high)
