r"""Per-attribute statistics behind the FairLOF distance correction.

Notation: n rows, k neighbours, sensitive attributes S (each with values x), the
plain-LOF top-t outlier list T, lambda in [0, 1], Flex exponents alpha and beta.

Plain LOF (Breunig et al.; the paper's equations 1-4), neighbours from the search:

    k-distance(o)    = distance from o to its k-th nearest neighbour
    reach-dist(p, o) = max(k-distance(o), d(p, o))
    lrd(p)           = 1 / (mean_{o in N_k(p)} reach-dist(p, o) + 1e-10)
    LOF(p)           = mean_{o in N_k(p)} lrd(o) / lrd(p)

(the 1e-10 and the mean of ratios are scikit-learn's, so lambda = 0 is its LOF).

The three fairness principles, per attribute S and value x:

    P_S(x)   = |{p : p.S = x}| / n                      share of x in the data
    Q_S(x)   = |{p in T : p.S = x}| / t                 share of x among plain-LOF outliers
    D_S(x)   = 1 - P_S(x)                               apriori outlier propensity (rarer group, larger)
    W_S(x)   = 1 + |Q_S(x) - P_S(x)|                    group-level skew among the outliers
    dir_S(x) = sign(Q_S(x) - P_S(x))                    +1 over-represented, -1 under, 0 exact

Neighbourhood diversity enters per neighbour pair through [p.S != o.S]: only the
distances to neighbours of another group are corrected, so a point in a mixed
neighbourhood is corrected in proportion to Div_S(p) = share of its k neighbours
with another value of S. The corrected reachability distance (c_S = 1/|S| unless given):

    g(p, o)           = sum_S c_S * [p.S != o.S] * dir_S(p.S) * W_S(p.S)^alpha * D_S(p.S)^beta
    factor(p, o)      = max(floor, 1 - lambda * g(p, o))
    reach-dist'(p, o) = reach-dist(p, o) * factor(p, o)

and lrd', FairLOF follow from reach-dist' as above. alpha = beta = 1 is FairLOF,
other exponents FairLOF-Flex. A group over-represented among LOF's outliers gets
its cross-group reachability distances shrunk (it looks denser, less outlying); an
under-represented group gets them stretched.

>>> import numpy as np
>>> stats = group_statistics(np.array([[0], [0], [0], [1]]), [2], top=np.array([3]))
>>> stats.data_share[0].tolist(), stats.outlier_share[0].tolist(), stats.direction[0].tolist()
([0.75, 0.25], [0.0, 1.0], [-1.0, 1.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GroupStatistics:
    """Arrays of shape (n_attributes, max_values); entries past an attribute's value count are 0."""

    n_values: np.ndarray
    data_share: np.ndarray
    outlier_share: np.ndarray
    propensity: np.ndarray
    skew: np.ndarray
    direction: np.ndarray


def group_statistics(codes: np.ndarray, n_values, top: np.ndarray) -> GroupStatistics:
    """P, Q, D, W and the direction for every attribute (columns of ``codes``) and value.

    >>> s = group_statistics(np.array([[0], [1]]), [2], top=np.array([0]))
    >>> s.skew[0].tolist(), s.propensity[0].tolist()
    ([1.5, 1.5], [0.5, 0.5])
    """
    codes = np.asarray(codes)
    n_values = np.asarray(n_values, dtype=np.intp)
    n_attributes = codes.shape[1]
    width = int(n_values.max())
    data_share = np.zeros((n_attributes, width))
    outlier_share = np.zeros((n_attributes, width))
    for s in range(n_attributes):
        m = int(n_values[s])
        data_share[s, :m] = np.bincount(codes[:, s], minlength=m) / codes.shape[0]
        outlier_share[s, :m] = np.bincount(codes[top, s], minlength=m) / len(top)
    present = np.arange(width)[None, :] < n_values[:, None]
    propensity = np.where(present, 1.0 - data_share, 0.0)
    skew = np.where(present, 1.0 + np.abs(outlier_share - data_share), 0.0)
    direction = np.sign(outlier_share - data_share)
    return GroupStatistics(n_values, data_share, outlier_share, propensity, skew, direction)


def correction_coefficients(stats: GroupStatistics, weights, alpha: float, beta: float) -> np.ndarray:
    """coef[s, x] = c_s * dir_S(x) * W_S(x)^alpha * D_S(x)^beta, the per-group part of g(p, o).

    >>> s = group_statistics(np.array([[0], [0], [0], [1]]), [2], top=np.array([3]))
    >>> correction_coefficients(s, [1.0], 1.0, 1.0).round(4).tolist()
    [[-0.4375, 1.3125]]
    """
    weights = np.asarray(weights, dtype=np.float64).reshape(-1, 1)
    return weights * stats.direction * stats.skew**alpha * stats.propensity**beta
