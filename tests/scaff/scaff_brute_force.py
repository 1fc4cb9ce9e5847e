"""Brute-force SCAFF split gains scored with scikit-learn's roc_auc_score: the oracle of the SCAFF tests."""

import numpy as np
from sklearn.metrics import roc_auc_score


def _folded(labels, z):
    return max(roc_auc_score(labels, z), 1.0 - roc_auc_score(labels, z))


def brute_force_gains(X, y, S, theta, aggregate="max", rows=None):
    """{(feature, threshold): SG} for every distinct split of the node holding ``rows``, scored with roc_auc_score.

    Groups are the values of each column of ``S`` over all rows; a group absent from the node, or
    making up all of it, scores AUC 1 (the worst case). AUC_S is the max over all groups, or the
    mean per column and then across columns.
    """
    rows = np.arange(len(y)) if rows is None else np.asarray(rows)
    gains = {}
    for j in range(X.shape[1]):
        values = np.unique(X[rows, j])
        for threshold in (values[:-1] + values[1:]) / 2:
            left = X[rows, j] <= threshold
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
            gains[(j, threshold)] = (1 - theta) * (roc_auc_score(node_y, z) - 0.5) - theta * (s_term - 0.5)
    return gains
