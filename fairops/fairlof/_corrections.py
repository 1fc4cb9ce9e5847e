r"""Group statistics and the lambda-free coefficients of the FairLOF corrections.

Notation (Deepak P. and Abraham, "FairLOF: Fairness in Outlier Detection", eqs 5-14):
n rows, k neighbours N_k(x), sensitive attributes S (s of them), x.S the value of x,
R_LOF the top-t list of plain LOF.

    P_S(v) = share of the rows with S = v             Q_S(v) = share of R_LOF with S = v
    v*_S   = argmax_v P_S(v)  (the majority value; on a tie the first in sorted order)

The paper's terms (eqs 6-8, 11), one W and one direction per attribute:

    Div_S(x) = share of x's k neighbours y with y.S != x.S
    D_S(x)   = P_S(x.S)
    W_S      = c_S + |P_S(v*) - Q_S(v*)|          (c_S = 1/s unless given)
    Dir_S    = +1 if P_S(v*) > Q_S(v*) else -1

so that, with the FairLOF-Flex exponents (eq. 13; 1 and 1 is FairLOF),

    a_S(x) = Dir_S * W_S^weight_exponent * D_S(x)^share_exponent

depends on x only through x.S: :func:`paper_coefficients` tabulates it per attribute and
value. The compiled kernel turns the table into the per-pair term
``sum_S a_S(x) * [x.S != y.S]``, whose mean over the k neighbours is
``sum_S a_S(x) * Div_S(x)``; see ``fairops.fairlof._scoring`` for the corrected distances.

fairops' own per-value variant (``correction="per_value"``, not the paper's) uses
instead, per attribute and value, D = 1 - P, W = 1 + |Q - P|, direction sign(Q - P) and
c as a multiplier: :func:`per_value_coefficients`.

>>> import numpy as np
>>> stats = group_statistics(np.array([[0], [0], [0], [1]]), [2], top=np.array([3]))
>>> stats.data_share[0].tolist(), stats.outlier_share[0].tolist(), stats.majority.tolist()
([0.75, 0.25], [0.0, 1.0], [0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:

    from .._typing import ArrayLike


@dataclass(frozen=True)
class GroupStatistics:
    """P and Q as arrays of shape (n_attributes, max_values); entries past an attribute's value count are 0.

    Parameters
    ----------
    n_values : ndarray of int
        Number of values of each attribute.
    data_share, outlier_share : ndarray of shape (n_attributes, max_values)
        P (share of the rows) and Q (share of plain LOF's top-t) of each attribute's values.
    """

    n_values: np.ndarray
    data_share: np.ndarray
    outlier_share: np.ndarray

    @property
    def present(self) -> np.ndarray:
        """Mask of the (attribute, value) cells that exist."""
        width = self.data_share.shape[1]
        return np.arange(width)[None, :] < self.n_values[:, None]

    @property
    def majority(self) -> np.ndarray:
        """Code of v*_S per attribute: the largest data share, the first value on a tie."""
        majority: np.ndarray = np.argmax(self.data_share, axis=1).astype(np.intp)
        return majority


def group_statistics(codes: np.ndarray, n_values: ArrayLike, top: np.ndarray) -> GroupStatistics:
    """P and Q for every attribute (columns of ``codes``) and value; ``top`` is plain LOF's top-t.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_attributes)
        Each row's value code per attribute.
    n_values : sequence of int
        Number of values of each attribute.
    top : ndarray of int
        Row indices of plain LOF's top-t list.

    Returns
    -------
    GroupStatistics
        P and Q.

    Examples
    --------
    >>> s = group_statistics(np.array([[0], [1]]), [2], top=np.array([0]))
    >>> s.data_share.tolist(), s.outlier_share.tolist()
    ([[0.5, 0.5]], [[1.0, 0.0]])
    """
    codes = np.asarray(codes)
    n_values = np.asarray(n_values, dtype=np.intp)
    n_attributes = codes.shape[1]
    width = int(n_values.max()) if n_attributes else 1
    data_share = np.zeros((n_attributes, width))
    outlier_share = np.zeros((n_attributes, width))
    for s in range(n_attributes):
        m = int(n_values[s])
        data_share[s, :m] = np.bincount(codes[:, s], minlength=m) / codes.shape[0]
        outlier_share[s, :m] = np.bincount(codes[top, s], minlength=m) / len(top)
    return GroupStatistics(n_values, data_share, outlier_share)


@dataclass(frozen=True)
class Coefficients:
    """The lambda-free part of a correction: ``table[s, v]`` is a_S for rows with S = v.

    ``skew`` and ``direction`` are per attribute (shape (s,)) for the paper's correction and
    per attribute and value (shape (s, m)) for the per-value variant.
    """

    table: np.ndarray
    skew: np.ndarray
    direction: np.ndarray


def paper_coefficients(stats: GroupStatistics, c: ArrayLike, weight_exponent: float,
                       share_exponent: float) -> Coefficients:
    """a_S(v) = Dir_S * W_S^weight_exponent * P_S(v)^share_exponent (paper eqs 6-8, 11, 13).

    Parameters
    ----------
    stats : GroupStatistics
        P and Q.
    c : array-like of float
        c_S per attribute.
    weight_exponent, share_exponent : float
        The FairLOF-Flex exponents (1 and 1 are FairLOF).

    Returns
    -------
    Coefficients
        ``table[s, v]`` (0 past an attribute's values), W and Dir per attribute.

    Examples
    --------
    >>> s = group_statistics(np.array([[0], [0], [0], [1]]), [2], top=np.array([3]))
    >>> co = paper_coefficients(s, [1.0], 1.0, 1.0)   # P(v*) = 0.75 > Q(v*) = 0: Dir = +1, W = 1.75
    >>> co.skew.tolist(), co.direction.tolist(), co.table.round(4).tolist()
    ([1.75], [1.0], [[1.3125, 0.4375]])
    """
    c = np.asarray(c, dtype=np.float64)
    rows = np.arange(len(stats.n_values))
    gap = stats.data_share[rows, stats.majority] - stats.outlier_share[rows, stats.majority]
    skew = c + np.abs(gap)
    direction = np.where(gap > 0, 1.0, -1.0)
    table = (direction * skew**weight_exponent)[:, None] * stats.data_share**share_exponent
    return Coefficients(np.where(stats.present, table, 0.0), skew, direction)


def per_value_coefficients(stats: GroupStatistics, c: ArrayLike, weight_exponent: float,
                           share_exponent: float) -> Coefficients:
    """fairops' per-value variant: c_S * sign(Q - P) * (1 + |Q - P|)^weight_exponent * (1 - P)^share_exponent.

    Parameters
    ----------
    stats : GroupStatistics
        P and Q.
    c : array-like of float
        c_S per attribute, a multiplier here.
    weight_exponent, share_exponent : float
        Exponents on the skew and on 1 - P.

    Returns
    -------
    Coefficients
        ``table[s, v]``, the skew and the direction per attribute and value.

    Examples
    --------
    >>> s = group_statistics(np.array([[0], [0], [0], [1]]), [2], top=np.array([3]))
    >>> per_value_coefficients(s, [1.0], 1.0, 1.0).table.round(4).tolist()
    [[-0.4375, 1.3125]]
    """
    c = np.asarray(c, dtype=np.float64).reshape(-1, 1)
    gap = stats.outlier_share - stats.data_share
    present = stats.present
    skew = np.where(present, 1.0 + np.abs(gap), 0.0)
    direction = np.sign(gap)
    table = c * direction * skew**weight_exponent * np.where(present, 1.0 - stats.data_share, 0.0) ** share_exponent
    return Coefficients(table, skew, direction)


CORRECTIONS = {"paper": paper_coefficients, "per_value": per_value_coefficients}
