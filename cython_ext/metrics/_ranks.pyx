# cython: language_level=3
"""Rank kernel behind the rank-sum (Mann-Whitney) form of the AUC.

Called only from ``fairops.metrics._auc``.
"""

import numpy as np

cimport numpy as cnp

cnp.import_array()


def average_ranks(const double[::1] scores, const cnp.intp_t[::1] order):
    """1-based ranks of ``scores`` with ties sharing their mean rank.

    ``order`` must sort ``scores`` ascending (``np.argsort(scores, kind="stable")``).
    """
    cdef Py_ssize_t n = scores.shape[0]
    cdef Py_ssize_t start = 0, stop, j
    cdef double shared_rank
    ranks_array = np.empty(n, dtype=np.float64)
    cdef double[::1] ranks = ranks_array
    with nogil:
        while start < n:
            stop = start + 1
            while stop < n and scores[order[stop]] == scores[order[start]]:
                stop += 1
            # Positions start..stop-1 hold one tie; their ranks are start+1..stop.
            shared_rank = 0.5 * (start + 1 + stop)
            for j in range(start, stop):
                ranks[order[j]] = shared_rank
            start = stop
    return ranks_array
