"""A single SCAFF tree against the authors' package fair-trees 3.1.9: the same partition of the rows.

Both trees see every feature, no bootstrap, depth 5 and exact thresholds (every feature has fewer
distinct values than ``max_bins``, so the binned search tries every cut an exact tree tries). The
data has a rare sensitive group, so nodes lack it: the worst-case rule (AUC_S = 1 there) decides
whether and where those nodes split.

The trees are walked side by side from the root. Allowances, none of which changes a score:
- A split is the same when it sends the same rows left (the thresholds may differ: SCAFF cuts
  halfway between neighbouring values of all rows, fair-trees between those of the node).
- fair-trees also splits a node whose best split gains nothing and leaves both children with the
  same P(y = 1) (a pure node, for instance); such a split's subtree counts as one leaf. A split of
  gain 0 whose children differ (at theta > 0 the label term can exactly balance the sensitive
  one) is made by both.
- Where the two pick different splits, the oracle scores both with roc_auc_score: the gains must
  tie exactly. Equal gains on different features are an arbitrary choice in fair-trees: it visits
  the features of every node in an order drawn from its ``random_state`` and keeps the first best,
  so its own trees differ between seeds there. SCAFF keeps the first best in column order; putting
  the column fair-trees chose first makes SCAFF grow fair-trees' tree, row for row.
"""

import fair_trees  # the reference package, installed with the dev extras
import numpy as np
import pytest

from fairops.scaff import SCAFFTreeClassifier
from tests.scaff.scaff_brute_force import brute_force_gains

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
    """(number of leaves matched, [(rows, feature fair-trees chose) at each exact tie]); fails otherwise."""
    t = theirs.tree_
    S = S.reshape(len(y), -1)
    matched, ties = 0, []
    pending = [(0, 0, np.arange(len(y)))]
    while pending:
        mine, their, rows = pending.pop()
        mine_splits = ours.node_feature_[mine] >= 0
        if not mine_splits and not _their_split_moves_a_score(t, their):
            matched += 1
            continue
        assert mine_splits and t.children_left[their] >= 0, f"only one tree splits a node of {len(rows)} rows"
        feature, threshold = int(ours.node_feature_[mine]), float(ours.node_threshold_[mine])
        left = X[rows, feature] <= threshold
        their_left = X[rows, t.feature[their]] <= t.threshold[their]
        if not np.array_equal(left, their_left):
            gains = brute_force_gains(X, y, S, theta, aggregate, rows)
            # Thresholds sit between neighbouring values; look each one up by the values it separates.
            mine_gain = _gain_of(gains, X[rows], feature, threshold)
            their_gain = _gain_of(gains, X[rows], int(t.feature[their]), float(t.threshold[their]))
            assert mine_gain == pytest.approx(their_gain, abs=1e-9), "the trees pick splits of different gain"
            ties.append((len(rows), int(t.feature[their])))
            continue
        assert ours.node_gain_[mine] == pytest.approx(t.improvement[their], abs=1e-9)
        pending.append((ours.node_left_[mine], t.children_left[their], rows[left]))
        pending.append((ours.node_right_[mine], t.children_right[their], rows[~left]))
    return matched, ties


def _their_split_moves_a_score(t, node):
    """Whether fair-trees splits ``node`` with a gain or into children of different P(y = 1)."""
    if t.children_left[node] < 0:
        return False
    left, right = t.value[t.children_left[node]][0], t.value[t.children_right[node]][0]
    shares = [v[1] / v.sum() for v in (left, right)]
    return t.improvement[node] > ZERO_GAIN or abs(shares[0] - shares[1]) > 1e-12


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
        matched, ties = compare(ours, theirs, X, y, rare, theta)
        assert not ties and matched == len(np.unique(ours.apply(X)))
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
    matched, ties = compare(ours, theirs, X, y, S, theta, aggregate)
    assert not ties and matched == len(np.unique(ours.apply(X)))


def continuous_rare_group_data(seed):
    """4,000 rows on a 0.1 grid, a sensitive group of about 25 rows concentrated where feature 0 > 1.5."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(4000, 5)), 1)
    s = (rng.random(4000) < 0.004 + 0.02 * (X[:, 0] > 1.5)).astype(int)
    y = (X[:, 1] + 0.8 * s + 0.5 * X[:, 2] + rng.normal(scale=0.7, size=4000) > 0.3).astype(int)
    return X, y, s


def fit_in_column_order(X, y, s, theta, order):
    """A SCAFF tree fitted on the columns of X in ``order``, its node features mapped back so it reads X."""
    tree = SCAFFTreeClassifier(theta=theta, max_depth=5, max_features=None).fit(X[:, order], y, sensitive_features=s)
    split = tree.node_feature_ >= 0
    tree.node_feature_[split] = np.asarray(order)[tree.node_feature_[split]]
    return tree


@pytest.mark.parametrize("seed", [0, 1, pytest.param(2, marks=pytest.mark.slow), 3])
def test_every_training_row_matches_fair_trees_once_ties_follow_its_order(seed):
    X, y, s = continuous_rare_group_data(seed)
    tie_count = 0
    for theta in THETAS:
        theirs = fair_trees.FairDecisionTreeClassifier(max_depth=5, theta=theta, max_features=None, random_state=0)
        theirs.fit(X, y, Z=s)
        order = list(range(X.shape[1]))
        for _ in range(4):
            ours = fit_in_column_order(X, y, s, theta, order)
            matched, ties = compare(ours, theirs, X, y, s, theta)
            if not ties:
                break
            tie_count += 1
            order.remove(ties[0][1])
            order.insert(0, ties[0][1])
        assert not ties and matched == len(np.unique(ours.apply(X)))
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-12)
    # Ties across features occur on this data only for seed 2 (theta 0, 0.6 and 0.7).
    assert tie_count == (3 if seed == 2 else 0)
