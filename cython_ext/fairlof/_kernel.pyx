# cython: language_level=3
"""Compiled FairLOF kernels: pair terms, corrected k-distances, corrected lrd and LOF.

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


def pair_terms(
    const cnp.intp_t[:, ::1] neighbors,
    const cnp.intp_t[:, ::1] query_codes,
    const cnp.intp_t[:, ::1] fit_codes,
    const double[:, ::1] coefficients,
):
    """g[i, j] = sum_s coefficients[s, a] * [a != fit_codes[neighbors[i, j], s]], a = query_codes[i, s].

    ``query_codes`` (n_query, n_attributes) are the sensitive codes of the rows
    being scored, ``fit_codes`` (n_fit, n_attributes) those of the fitted rows the
    neighbour indices point into. The mean of row i's terms is
    sum_s coefficients[s, a] * Div_s(i), the neighbourhood-diversity term.
    """
    cdef Py_ssize_t n = neighbors.shape[0], k = neighbors.shape[1]
    cdef Py_ssize_t n_attributes = query_codes.shape[1]
    cdef Py_ssize_t i, j, s, other
    cdef cnp.intp_t own
    cdef double total
    terms_array = np.empty((n, k), dtype=np.float64)
    cdef double[:, ::1] terms = terms_array
    with nogil:
        for i in range(n):
            for j in range(k):
                other = neighbors[i, j]
                total = 0.0
                for s in range(n_attributes):
                    own = query_codes[i, s]
                    if own != fit_codes[other, s]:
                        total = total + coefficients[s, own]
                terms[i, j] = total
    return terms_array


def corrected_k_distances(
    const double[::1] k_distances,
    const double[:, ::1] terms,
    double lam,
    double floor,
):
    """(kd_F, clamped): kd_F[i] = k_distances[i] * max(floor, 1 - lam * mean_j terms[i, j]).

    ``clamped`` counts the rows whose factor fell below ``floor``. With ``lam == 0``
    every factor is exactly 1.
    """
    cdef Py_ssize_t n = terms.shape[0], k = terms.shape[1]
    cdef Py_ssize_t i, j, clamped = 0
    cdef double total, factor
    out_array = np.empty(n, dtype=np.float64)
    cdef double[::1] out = out_array
    with nogil:
        for i in range(n):
            if lam == 0.0:
                out[i] = k_distances[i]
                continue
            total = 0.0
            for j in range(k):
                total = total + terms[i, j]
            factor = 1.0 - lam * (total / k)
            if factor < floor:
                factor = floor
                clamped = clamped + 1
            out[i] = k_distances[i] * factor
    return out_array, int(clamped)


def corrected_lrd(
    const double[:, ::1] distances,
    const cnp.intp_t[:, ::1] neighbors,
    const double[::1] neighbor_k_distances,
    const double[:, ::1] terms,
    double lam,
    double floor,
    bint scale_reach=False,
):
    """(lrd, clamped) with lrd[i] = 1 / (mean_j rd[i, j] + 1e-10) and, f = max(floor, 1 - lam * terms[i, j]),

        rd[i, j] = max(kd[nb], distances[i, j] * f)      (the paper, eq. 12)
        rd[i, j] = max(kd[nb], distances[i, j]) * f      (``scale_reach``: the per-value variant)

    ``neighbor_k_distances`` (kd) are the k-distances of the rows the neighbour indices
    point into; ``clamped`` counts the pairs whose factor fell below ``floor``.
    """
    cdef Py_ssize_t n = distances.shape[0], k = distances.shape[1]
    cdef Py_ssize_t i, j, clamped = 0
    cdef double total, factor, d, kd
    lrd_array = np.empty(n, dtype=np.float64)
    cdef double[::1] lrd = lrd_array
    with nogil:
        for i in range(n):
            total = 0.0
            for j in range(k):
                d = distances[i, j]
                kd = neighbor_k_distances[neighbors[i, j]]
                factor = 1.0
                if lam != 0.0:
                    factor = 1.0 - lam * terms[i, j]
                    if factor < floor:
                        factor = floor
                        clamped = clamped + 1
                if scale_reach:
                    d = (kd if kd > d else d) * factor
                else:
                    d = d * factor
                    d = kd if kd > d else d
                total = total + d
            lrd[i] = 1.0 / (total / k + LRD_EPSILON)
    return lrd_array, int(clamped)


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
