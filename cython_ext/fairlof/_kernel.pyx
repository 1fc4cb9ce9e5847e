# cython: language_level=3
"""Compiled FairLOF kernels: pair corrections, reachability distances, lrd and LOF.

Every function works on neighbour arrays of shape (n, k) found once by a
nearest-neighbour search, so a whole lambda path reuses them. Called only from
``fairops.fairlof._native``, which checks dtypes, shapes and contiguity first.
"""

import numpy as np

cimport numpy as cnp

cnp.import_array()

# scikit-learn adds this to the mean reachability distance before inverting it;
# FairLOF keeps it so that lambda = 0 reproduces LocalOutlierFactor.
cdef double LRD_EPSILON = 1e-10


def pair_weights(
    const cnp.intp_t[:, ::1] neighbors,
    const cnp.intp_t[:, ::1] query_codes,
    const cnp.intp_t[:, ::1] fit_codes,
    const double[:, ::1] coefficients,
):
    """g[i, j] = sum_s coefficients[s, a] * [a != fit_codes[neighbors[i, j], s]], a = query_codes[i, s].

    ``query_codes`` (n_query, n_attributes) are the sensitive codes of the rows
    being scored, ``fit_codes`` (n_fit, n_attributes) those of the fitted rows the
    neighbour indices point into. The correction factor of the pair is then
    ``1 - lambda * g[i, j]`` (before the floor).
    """
    cdef Py_ssize_t n = neighbors.shape[0], k = neighbors.shape[1]
    cdef Py_ssize_t n_attributes = query_codes.shape[1]
    cdef Py_ssize_t i, j, s, other
    cdef cnp.intp_t own
    cdef double total
    weights_array = np.empty((n, k), dtype=np.float64)
    cdef double[:, ::1] weights = weights_array
    with nogil:
        for i in range(n):
            for j in range(k):
                other = neighbors[i, j]
                total = 0.0
                for s in range(n_attributes):
                    own = query_codes[i, s]
                    if own != fit_codes[other, s]:
                        total = total + coefficients[s, own]
                weights[i, j] = total
    return weights_array


def reachability(
    const double[:, ::1] distances,
    const cnp.intp_t[:, ::1] neighbors,
    const double[::1] k_distances,
):
    """reach[i, j] = max(k_distances[neighbors[i, j]], distances[i, j])."""
    cdef Py_ssize_t n = distances.shape[0], k = distances.shape[1]
    cdef Py_ssize_t i, j
    cdef double d, kd
    reach_array = np.empty((n, k), dtype=np.float64)
    cdef double[:, ::1] reach = reach_array
    with nogil:
        for i in range(n):
            for j in range(k):
                d = distances[i, j]
                kd = k_distances[neighbors[i, j]]
                reach[i, j] = kd if kd > d else d
    return reach_array


def local_reachability_density(
    const double[:, ::1] reach,
    const double[:, ::1] weights,
    double lam,
    double floor,
):
    """lrd[i] = 1 / (mean_j reach[i, j] * max(floor, 1 - lam * weights[i, j]) + 1e-10).

    With ``lam == 0`` every factor is exactly 1, giving plain LOF's lrd.
    """
    cdef Py_ssize_t n = reach.shape[0], k = reach.shape[1]
    cdef Py_ssize_t i, j
    cdef double total, factor
    lrd_array = np.empty(n, dtype=np.float64)
    cdef double[::1] lrd = lrd_array
    with nogil:
        for i in range(n):
            total = 0.0
            if lam == 0.0:
                for j in range(k):
                    total = total + reach[i, j]
            else:
                for j in range(k):
                    factor = 1.0 - lam * weights[i, j]
                    if factor < floor:
                        factor = floor
                    total = total + reach[i, j] * factor
            lrd[i] = 1.0 / (total / k + LRD_EPSILON)
    return lrd_array


def local_outlier_factor(
    const cnp.intp_t[:, ::1] neighbors,
    const double[::1] neighbor_lrd,
    const double[::1] own_lrd,
):
    """lof[i] = mean_j neighbor_lrd[neighbors[i, j]] / own_lrd[i] (mean of ratios, as scikit-learn)."""
    cdef Py_ssize_t n = neighbors.shape[0], k = neighbors.shape[1]
    cdef Py_ssize_t i, j
    cdef double total, own
    lof_array = np.empty(n, dtype=np.float64)
    cdef double[::1] lof = lof_array
    with nogil:
        for i in range(n):
            own = own_lrd[i]
            total = 0.0
            for j in range(k):
                total = total + neighbor_lrd[neighbors[i, j]] / own
            lof[i] = total / k
    return lof_array
