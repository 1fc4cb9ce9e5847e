"""The one place that calls FairLOF's scoring kernel, ``fairops.fairlof._kernel``
(``cython_ext/fairlof/_kernel.pyx``; which module calls each kernel: ``cython_ext/README.md``).

Each wrapper makes its arrays C-contiguous with the dtype the kernel expects and
checks that shapes agree, so the kernel itself never sees a bad buffer.

>>> import numpy as np
>>> lrd, clamped = corrected_lrd(np.array([[1.0], [1.0]]), np.array([[1], [0]]), np.array([2.0, 0.5]),
...                              np.zeros((2, 1)), 0.0, 0.01)
>>> lrd.round(6).tolist(), clamped
([1.0, 0.5], 0)
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import _kernel  # type: ignore[attr-defined]  # a compiled kernel: no source for mypy to read


def _float_matrix(values, name: str) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise InputError(f"{name} must be 2-D, got shape {array.shape}")
    return array


def _index_matrix(values, name: str) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=np.intp)
    if array.ndim != 2:
        raise InputError(f"{name} must be 2-D, got shape {array.shape}")
    return array


def _float_vector(values, name: str, length: int | None = None) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=np.float64)
    if array.ndim != 1 or (length is not None and len(array) != length):
        raise InputError(f"{name} must be 1-D with {length} values, got shape {array.shape}")
    return array


def _check_indices(neighbors: np.ndarray, n_fit: int) -> None:
    if neighbors.size and (neighbors.min() < 0 or neighbors.max() >= n_fit):
        raise InputError(f"neighbors holds indices outside [0, {n_fit})")


def pair_terms(neighbors, query_codes, fit_codes, coefficients) -> np.ndarray:
    """Per neighbour pair, sum over attributes of the row's coefficient where the pair's values differ."""
    neighbors = _index_matrix(neighbors, "neighbors")
    query_codes = _index_matrix(query_codes, "query_codes")
    fit_codes = _index_matrix(fit_codes, "fit_codes")
    coefficients = _float_matrix(coefficients, "coefficients")
    if query_codes.shape[0] != neighbors.shape[0]:
        raise InputError("query_codes and neighbors must have the same number of rows")
    if query_codes.shape[1] != fit_codes.shape[1] or coefficients.shape[0] != fit_codes.shape[1]:
        raise InputError("query_codes, fit_codes and coefficients must cover the same attributes")
    _check_indices(neighbors, fit_codes.shape[0])
    for codes, name in ((query_codes, "query_codes"), (fit_codes, "fit_codes")):
        if codes.size and (codes.min() < 0 or codes.max() >= coefficients.shape[1]):
            raise InputError(f"{name} holds a code outside [0, {coefficients.shape[1]})")
    return _kernel.pair_terms(neighbors, query_codes, fit_codes, coefficients)


def corrected_k_distances(k_distances, terms, lam: float, floor: float) -> tuple[np.ndarray, int]:
    """(kd * max(floor, 1 - lam * row mean of terms), number of rows clamped at the floor)."""
    terms = _float_matrix(terms, "terms")
    k_distances = _float_vector(k_distances, "k_distances", terms.shape[0])
    return _kernel.corrected_k_distances(k_distances, terms, float(lam), float(floor))


def _lrd_inputs(distances, neighbors, neighbor_k_distances, terms):
    distances = _float_matrix(distances, "distances")
    neighbors = _index_matrix(neighbors, "neighbors")
    terms = _float_matrix(terms, "terms")
    neighbor_k_distances = _float_vector(neighbor_k_distances, "neighbor_k_distances")
    if distances.shape != neighbors.shape or terms.shape != neighbors.shape:
        raise InputError("distances, neighbors and terms must have the same shape")
    _check_indices(neighbors, len(neighbor_k_distances))
    return distances, neighbors, neighbor_k_distances, terms


def corrected_lrd(distances, neighbors, neighbor_k_distances, terms, lam: float, floor: float,
                  scale_reach: bool = False):
    """(lrd, pairs clamped) with rd = max(kd_F(y), d(x, y) * max(floor, 1 - lam * term)) (paper eq. 12),
    or with ``scale_reach`` rd = max(kd(y), d(x, y)) * max(floor, 1 - lam * term) (per-value variant)."""
    arrays = _lrd_inputs(distances, neighbors, neighbor_k_distances, terms)
    return _kernel.corrected_lrd(*arrays, float(lam), float(floor), bool(scale_reach))


def local_outlier_factor(neighbors, neighbor_lrd, own_lrd) -> np.ndarray:
    """Mean over the neighbours of lrd(neighbour) / lrd(row)."""
    neighbors = _index_matrix(neighbors, "neighbors")
    neighbor_lrd = _float_vector(neighbor_lrd, "neighbor_lrd")
    own_lrd = _float_vector(own_lrd, "own_lrd", neighbors.shape[0])
    _check_indices(neighbors, len(neighbor_lrd))
    return _kernel.local_outlier_factor(neighbors, neighbor_lrd, own_lrd)
