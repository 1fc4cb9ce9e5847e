"""The one place that calls the compiled FairLOF kernel.

Each wrapper makes its arrays C-contiguous with the dtype the kernel expects and
checks that shapes agree, so the kernel itself never sees a bad buffer.

>>> import numpy as np
>>> reach = reachability(np.array([[1.0], [1.0]]), np.array([[1], [0]]), np.array([2.0, 0.5]))
>>> reach.tolist()
[[1.0], [2.0]]
"""

from __future__ import annotations

import numpy as np

from . import _kernel


def _float_matrix(values, name: str) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {array.shape}")
    return array


def _index_matrix(values, name: str) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=np.intp)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {array.shape}")
    return array


def _check_indices(neighbors: np.ndarray, n_fit: int) -> None:
    if neighbors.size and (neighbors.min() < 0 or neighbors.max() >= n_fit):
        raise ValueError(f"neighbors holds indices outside [0, {n_fit})")


def pair_weights(neighbors, query_codes, fit_codes, coefficients) -> np.ndarray:
    """Per neighbour pair, the lambda-free part of the correction (see ``corrections``)."""
    neighbors = _index_matrix(neighbors, "neighbors")
    query_codes = _index_matrix(query_codes, "query_codes")
    fit_codes = _index_matrix(fit_codes, "fit_codes")
    coefficients = _float_matrix(coefficients, "coefficients")
    if query_codes.shape[0] != neighbors.shape[0]:
        raise ValueError("query_codes and neighbors must have the same number of rows")
    if query_codes.shape[1] != fit_codes.shape[1] or coefficients.shape[0] != fit_codes.shape[1]:
        raise ValueError("query_codes, fit_codes and coefficients must cover the same attributes")
    _check_indices(neighbors, fit_codes.shape[0])
    for codes, name in ((query_codes, "query_codes"), (fit_codes, "fit_codes")):
        if codes.size and (codes.min() < 0 or codes.max() >= coefficients.shape[1]):
            raise ValueError(f"{name} holds a code outside [0, {coefficients.shape[1]})")
    return _kernel.pair_weights(neighbors, query_codes, fit_codes, coefficients)


def reachability(distances, neighbors, k_distances) -> np.ndarray:
    """reach-dist(p, o) = max(k-distance(o), d(p, o)) for every (row, neighbour) pair."""
    distances = _float_matrix(distances, "distances")
    neighbors = _index_matrix(neighbors, "neighbors")
    k_distances = np.ascontiguousarray(k_distances, dtype=np.float64)
    if distances.shape != neighbors.shape:
        raise ValueError("distances and neighbors must have the same shape")
    _check_indices(neighbors, len(k_distances))
    return _kernel.reachability(distances, neighbors, k_distances)


def local_reachability_density(reach, weights, lam: float, floor: float) -> np.ndarray:
    """lrd with every pair's reachability distance scaled by max(floor, 1 - lam * weight)."""
    reach = _float_matrix(reach, "reach")
    weights = _float_matrix(weights, "weights")
    if reach.shape != weights.shape:
        raise ValueError("reach and weights must have the same shape")
    return _kernel.local_reachability_density(reach, weights, float(lam), float(floor))


def local_outlier_factor(neighbors, neighbor_lrd, own_lrd) -> np.ndarray:
    """Mean over the neighbours of lrd(neighbour) / lrd(row)."""
    neighbors = _index_matrix(neighbors, "neighbors")
    neighbor_lrd = np.ascontiguousarray(neighbor_lrd, dtype=np.float64)
    own_lrd = np.ascontiguousarray(own_lrd, dtype=np.float64)
    if own_lrd.shape != (neighbors.shape[0],):
        raise ValueError("own_lrd must hold one value per row of neighbors")
    _check_indices(neighbors, len(neighbor_lrd))
    return _kernel.local_outlier_factor(neighbors, neighbor_lrd, own_lrd)
