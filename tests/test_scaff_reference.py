"""A single SCAFF tree against the authors' package fair-trees 3.1.9: the same partition of the rows.

Both trees see every feature, no bootstrap, depth 5 and exact thresholds (every feature has fewer
distinct values than ``max_bins``, so the binned search tries every cut an exact tree tries). The
data has a rare sensitive group (26 of 4,000 rows), so nodes lack it: the worst-case rule
(AUC_S = 1 there) decides whether and where those nodes split.

The trees are walked side by side from the root. Two allowances, neither of which changes a score:
- A split is the same when it sends the same rows left (the thresholds may differ: SCAFF cuts
  halfway between neighbouring values of all rows, fair-trees between those of the node).
- fair-trees also splits a node whose best split gains nothing (a pure node, for instance: every
  split there gains 0 and its splitter accepts a gain >= 0); such a split's subtree counts as one leaf.
- Where the two pick different splits, the oracle scores both with roc_auc_score, so a failure says
  whether the gains differ (a different criterion) or tie (the two round differently and may break
  an exact tie each its own way); on the data here no such tie occurs and the tests demand none.
"""

import fair_trees  # the reference package, installed with the dev extras
import numpy as np
import pytest
from scaff_brute_force import brute_force_gains

from fairops.scaff import SCAFFTreeClassifier


ZERO_GAIN = 1e-12  # the tree's own threshold for "the split gains"
THETAS = [round(0.1 * k, 1) for k in range(8)]


def rare_group_data(n=4000, seed=0, rare_share=0.01):
    """Features on a 0.25 grid (exact in float32, < 256 values each), a rare group that shifts the label."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 5)) * 8) / 4
    rare = (rng.random(n) < rare_share).astype(int)
    other = rng.integers(0, 3, n)
    logit = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 3] + 1.2 * rare
    y = (logit + rng.logistic(size=n) > 0.2).astype(int)
    return X, y, rare, other


def fit_both(X, y, S, theta, aggregate="max"):
    ours = SCAFFTreeClassifier(theta=theta, max_depth=5, max_features=None, sensitive_aggregation=aggregate)
    ours.fit(X, y, sensitive_features=S)
    theirs = fair_trees.FairDecisionTreeClassifier(theta=theta, max_depth=5, Z_agg=aggregate, random_state=0)
    theirs.fit(X, y, Z=S)
    return ours, theirs


def compare(ours, theirs, X, y, S, theta, aggregate="max"):
    """(number of leaves matched, rows under tied choices); fails on any other difference."""
    t = theirs.tree_
    S = S.reshape(len(y), -1)
    matched, tied = 0, 0
    pending = [(0, 0, np.arange(len(y)))]
    while pending:
        mine, their, rows = pending.pop()
        mine_splits = ours.node_feature_[mine] >= 0
        their_splits = t.children_left[their] >= 0 and t.improvement[their] > ZERO_GAIN
        if not mine_splits and not their_splits:
            matched += 1
            continue
        assert mine_splits and their_splits, f"only one tree splits a node of {len(rows)} rows"
        feature, threshold = int(ours.node_feature_[mine]), float(ours.node_threshold_[mine])
        left = X[rows, feature] <= threshold
        their_left = X[rows, t.feature[their]] <= t.threshold[their]
        if not np.array_equal(left, their_left):
            gains = brute_force_gains(X, y, S, theta, aggregate, rows)
            # Thresholds sit between neighbouring values; look each one up by the values it separates.
            mine_gain = _gain_of(gains, X[rows], feature, threshold)
            their_gain = _gain_of(gains, X[rows], int(t.feature[their]), float(t.threshold[their]))
            assert mine_gain == pytest.approx(their_gain, abs=1e-9), "the trees pick splits of different gain"
            tied += len(rows)  # an exact tie broken differently
            continue
        assert ours.node_gain_[mine] == pytest.approx(t.improvement[their], abs=1e-9)
        pending.append((ours.node_left_[mine], t.children_left[their], rows[left]))
        pending.append((ours.node_right_[mine], t.children_right[their], rows[~left]))
    return matched, tied


def _gain_of(gains, X_node, feature, threshold):
    values = np.unique(X_node[:, feature])
    below, above = values[values <= threshold].max(), values[values > threshold].min()
    return gains[(feature, (below + above) / 2)]


def nodes_lacking(tree, X, y, group):
    """(split nodes, impure leaves above the depth limit) of ``tree`` that lack a value of ``group``."""
    rows, depth = {0: np.arange(len(y))}, {0: 0}
    split, stopped = 0, 0
    for node in range(len(tree.node_feature_)):  # parents precede children
        here = rows[node]
        lacking = len(np.unique(group[here])) < 2
        if tree.node_feature_[node] >= 0:
            split += lacking
            left = X[here, tree.node_feature_[node]] <= tree.node_threshold_[node]
            for child, part in ((tree.node_left_[node], here[left]), (tree.node_right_[node], here[~left])):
                rows[child], depth[child] = part, depth[node] + 1
        else:
            stopped += lacking and depth[node] < tree.max_depth and 0 < y[here].mean() < 1
    return split, stopped


def test_rare_group_tree_partitions_match_fair_trees():
    X, y, rare, _ = rare_group_data()
    assert 20 <= rare.sum() <= 40
    split, stopped = 0, 0
    for theta in THETAS:
        ours, theirs = fit_both(X, y, rare, theta)
        matched, tied = compare(ours, theirs, X, y, rare, theta)
        assert tied == 0 and matched == len(np.unique(ours.apply(X)))
        counts = nodes_lacking(ours, X, y, rare)
        split, stopped = split + counts[0], stopped + counts[1]
    # The data tests the rule: nodes without the rare group are split under its fixed penalty, and
    # some are stopped by it before the depth limit although they hold both classes.
    assert split >= 3 and stopped >= 2


@pytest.mark.parametrize("aggregate", ["max", "mean"])
@pytest.mark.parametrize("theta", [0.2, 0.5])
def test_two_attribute_tree_partitions_match_fair_trees(aggregate, theta):
    X, y, rare, other = rare_group_data(seed=1, rare_share=0.03)
    S = np.column_stack([rare, other])
    ours, theirs = fit_both(X, y, S, theta, aggregate)
    matched, tied = compare(ours, theirs, X, y, S, theta, aggregate)
    assert tied == 0 and matched == len(np.unique(ours.apply(X)))
