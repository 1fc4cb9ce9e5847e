"""Brute-force SCAFF split gains scored with scikit-learn's roc_auc_score: the oracle of the SCAFF tests."""

from functools import lru_cache

import numpy as np
from sklearn.metrics import roc_auc_score


@lru_cache(maxsize=2**16)
def _stored_auc(labels: bytes, labels_type: str, z: bytes) -> float:
    return float(roc_auc_score(np.frombuffer(labels, labels_type), np.frombuffer(z)))


def _auc(labels, z) -> float:
    """roc_auc_score(labels, z), each pair of arrays scored once per process: the tests of one data set at
    several thetas (and a fold's two sides) ask for the same AUCs again."""
    labels, z = np.ascontiguousarray(labels), np.ascontiguousarray(z, dtype=np.float64)
    return _stored_auc(labels.tobytes(), labels.dtype.str, z.tobytes())


def _folded(labels, z):
    auc = _auc(labels, z)
    return max(auc, 1.0 - auc)


def _candidates(column):
    """(threshold, missing_left) of every distinct split of one feature's node values; missing_left is None
    when the node holds no missing value (NaN) of it. With missing values each threshold is tried with them
    left and right, and +inf splits every value from them (the same partition as "only they go left")."""
    missing = np.isnan(column)
    values = np.unique(column[~missing])
    thresholds = (values[:-1] + values[1:]) / 2
    if not missing.any():
        return [(threshold, None) for threshold in thresholds]
    pairs = [(threshold, side) for threshold in thresholds for side in (False, True)]
    return pairs + ([(np.inf, False)] if len(values) else [])


def brute_force_gains(X, y, S, theta, aggregate="max", rows=None):
    """{(feature, threshold): SG} for every distinct split of the node holding ``rows``, scored with roc_auc_score;
    a feature with missing values (NaN) at the node keys its splits ``(feature, threshold, missing_left)``.

    Groups are the values of each column of ``S`` over all rows; a group absent from the node, or
    making up all of it, scores AUC 1 (the worst case). AUC_S is the max over all groups, or the
    mean per column and then across columns.
    """
    rows = np.arange(len(y)) if rows is None else np.asarray(rows)
    gains = {}
    for j in range(X.shape[1]):
        for threshold, missing_left in _candidates(X[rows, j]):
            left = X[rows, j] <= threshold
            if missing_left:
                left |= np.isnan(X[rows, j])
            node_y = y[rows]
            z = np.where(left, node_y[left].mean(), node_y[~left].mean())
            per_column = []
            for column in S.T:
                aucs = []
                for value in np.unique(column):
                    member = column[rows] == value
                    aucs.append(_folded(member, z) if 0 < member.sum() < len(member) else 1.0)
                per_column.append(aucs)
            if not per_column:
                s_term = 0.5
            elif aggregate == "max":
                s_term = max(a for aucs in per_column for a in aucs)
            else:
                s_term = float(np.mean([np.mean(aucs) for aucs in per_column]))
            key = (j, threshold) if missing_left is None else (j, threshold, missing_left)
            gains[key] = (1 - theta) * (_auc(node_y, z) - 0.5) - theta * (s_term - 0.5)
    return gains
