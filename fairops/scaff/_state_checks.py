"""Checks of a fitted SCAFF model's arrays, run whenever one is rebuilt from saved state.

The compiled predict code (``_tree.pyx``) indexes without bounds checks: it follows
``node_left_``/``node_right_`` from each tree's root until ``node_feature_`` is negative and reads
``X[row, node_feature_[node]]``. :func:`check_arrays` proves, in O(number of nodes) NumPy work, that
every such read stays inside its array and every walk ends in a leaf: dtypes, shapes, index ranges,
node offsets per tree, child indices that form one tree per offset range (each node reached exactly
once from its root, so no cycle), thresholds equal to their bin edge (or +inf, one bin past a feature's
last edge: every value left, the missing ones right), the side missing values take (0 or 1; right at a
+inf threshold), leaf values in [0, 1], and the rest as fit writes it (zeros at leaves, split gains in
(0, 0.5], children no heavier than their parent), so ``feature_importances_`` stays finite too.

A model saved before SCAFF learnt where missing values go has no ``node_missing_left_`` nor
``feature_missing_`` (:func:`with_missing_sides` adds them as all zeros: its features had no missing
value in fit, so it refuses them as it did, and its splits would send one right, as ``x <= threshold`` did).

>>> import numpy as np
>>> arrays = {"classes_": np.array([0, 1]), "bin_edges_": np.array([0.5]), "bin_offsets_": np.array([0, 1]),
...           "node_offsets_": np.array([0, 3]), "node_feature_": np.array([0, -1, -1], dtype=np.int32),
...           "node_threshold_": np.array([0.5, 0, 0]), "node_threshold_bin_": np.array([0, 0, 0], dtype=np.int32),
...           "node_left_": np.array([1, -1, -1], dtype=np.int32), "node_right_": np.array([2, -1, -1], dtype=np.int32),
...           "node_value_": np.array([0.5, 0.0, 1.0]), "node_weight_": np.array([4.0, 2, 2]),
...           "node_gain_": np.array([0.5, 0, 0]), "node_missing_left_": np.array([1, 0, 0], dtype=np.uint8),
...           "feature_missing_": np.array([1], dtype=np.uint8)}
>>> sorted(check_arrays(arrays, n_features=1, n_trees=1)) == sorted(arrays)
True
>>> arrays["node_right_"] = np.array([0, -1, -1], dtype=np.int32)
>>> check_arrays(arrays, n_features=1, n_trees=1)
Traceback (most recent call last):
...
fairops.errors.InputError: node_left_/node_right_ do not form a tree: node 0 of tree 0 is a root but also a child (a cycle)
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

import numpy as np

from .._state_checks import check_shape, first_false, floats, integers, only_names, reached_from
from ..errors import InputError

STATE_ARRAYS = (
    "classes_",
    "bin_edges_",
    "bin_offsets_",
    "node_offsets_",
    "node_feature_",
    "node_threshold_",
    "node_threshold_bin_",
    "node_left_",
    "node_right_",
    "node_value_",
    "node_weight_",
    "node_gain_",
    "node_missing_left_",
    "feature_missing_",
)
# A feature has at most max_bins (<= 256) bins, so at most 255 cut points.
MAX_EDGES_PER_FEATURE = 255
MAX_GAIN = 0.5
WEIGHT_RTOL = 1e-9


def _classes(value) -> np.ndarray:
    classes = np.asarray(value)
    if classes.dtype.kind not in "biufUS":
        raise TypeError(f"classes_ has dtype {classes.dtype}; expected numbers, booleans or text")
    check_shape("classes_", classes, (2,), "(SCAFF is a binary classifier)")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise InputError(f"classes_ = {classes.tolist()} must be finite")
    if classes[0] == classes[1]:
        raise InputError(f"classes_ = {classes.tolist()} must hold two different labels")
    return classes


def _bins(arrays: dict, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    edges = floats("bin_edges_", arrays["bin_edges_"], shape=(None,))
    offsets = integers("bin_offsets_", arrays["bin_offsets_"], shape=(n_features + 1,), low=0, high=len(edges) + 1,
                       what="(n_features_in + 1)")
    counts = np.diff(offsets)
    if offsets[0] != 0 or offsets[-1] != len(edges):
        raise InputError(f"bin_offsets_ must run from 0 to the {len(edges)} entries of bin_edges_, "
                         f"got {offsets[0]} .. {offsets[-1]}")
    bad = first_false((counts >= 0) & (counts <= MAX_EDGES_PER_FEATURE))
    if bad is not None:
        raise InputError(f"bin_offsets_ gives feature {bad} {counts[bad]} cut points; expected 0 to "
                         f"{MAX_EDGES_PER_FEATURE}")
    rising = np.diff(edges) > 0
    rising[offsets[1:-1][(offsets[1:-1] > 0) & (offsets[1:-1] < len(edges))] - 1] = True  # feature boundaries
    bad = first_false(rising)
    if bad is not None:
        raise InputError(f"bin_edges_[{bad + 1}] = {edges[bad + 1]} does not rise above bin_edges_[{bad}] = "
                         f"{edges[bad]} within its feature")
    return edges, offsets


def _node_offsets(arrays: dict, n_trees: int, n_nodes: int) -> np.ndarray:
    offsets = integers("node_offsets_", arrays["node_offsets_"], shape=(n_trees + 1,), low=0, high=n_nodes + 1,
                       what=f"(one start per tree of the model's {n_trees}, plus the end)")
    if offsets[0] != 0 or offsets[-1] != n_nodes:
        raise InputError(f"node_offsets_ must run from 0 to the {n_nodes} nodes, got {offsets[0]} .. {offsets[-1]}")
    bad = first_false(np.diff(offsets) >= 1)
    if bad is not None:
        raise InputError(f"node_offsets_ gives tree {bad} no nodes ({offsets[bad]} .. {offsets[bad + 1]})")
    return offsets


def _children(name: str, value, internal, tree_of, size) -> np.ndarray:
    """Tree-local child ids: in [0, tree size) at internal nodes, -1 at leaves."""
    child = integers(name, value, shape=(len(internal),), dtype=np.int32, what="(one entry per node)")
    local = child.astype(np.int64)
    ok = np.where(internal, (local >= 0) & (local < size[tree_of]), local == -1)
    bad = first_false(ok)
    if bad is not None:
        t = tree_of[bad]
        if internal[bad]:
            raise InputError(f"{name}[{bad}] = {local[bad]} is outside tree {t}'s {size[t]} nodes")
        raise InputError(f"{name}[{bad}] = {local[bad]} at a leaf; leaves have no children (-1)")
    return child


def _check_tree_shape(left, right, internal, tree_of, start) -> None:
    """Every node is reached exactly once from its tree's root, level by level: no cycle, no stray node."""
    n_nodes = len(internal)
    roots = start[:-1]
    parents = np.concatenate([(left + start[tree_of])[internal], (right + start[tree_of])[internal]])
    indegree = np.bincount(parents, minlength=n_nodes)
    is_root = np.zeros(n_nodes, dtype=bool)
    is_root[roots] = True
    bad = first_false(np.where(is_root, indegree == 0, indegree == 1))
    if bad is not None:
        t = tree_of[bad]
        local = bad - start[t]
        if is_root[bad]:
            raise InputError(f"node_left_/node_right_ do not form a tree: node {local} of tree {t} is a root "
                             "but also a child (a cycle)")
        raise InputError(f"node_left_/node_right_ do not form a tree: node {local} of tree {t} has "
                         f"{indegree[bad]} parents, expected 1")
    bad = first_false(reached_from(roots, left + start[tree_of], right + start[tree_of], internal))
    if bad is not None:
        t = tree_of[bad]
        raise InputError(f"node_left_/node_right_ do not form a tree: node {bad - start[t]} of tree {t} cannot "
                         "be reached from its root (it lies on a cycle)")


def _splits(arrays: dict, edges, bin_offsets, feature, internal) -> tuple:
    """Each node's cut bin, threshold (its cut point, or +inf one past a feature's last) and side for missing
    values, as fit writes them (zeros at leaves)."""
    per_node = (len(feature),)
    cut = integers("node_threshold_bin_", arrays["node_threshold_bin_"], shape=per_node, dtype=np.int32,
                   what="(one entry per node)")
    threshold = floats("node_threshold_", arrays["node_threshold_"], shape=per_node, finite=False,
                       what="(one entry per node)")
    bad = first_false(np.isfinite(threshold) | (threshold == np.inf))
    if bad is not None:
        raise InputError(f"node_threshold_[{bad}] is {threshold[bad]}; it must be finite or +inf (one past a "
                         "feature's last cut point)")
    missing_left = integers("node_missing_left_", arrays["node_missing_left_"], shape=per_node, low=0, high=2,
                            dtype=np.uint8, what="(one entry per node)")
    for name, values in (("node_threshold_bin_", cut), ("node_threshold_", threshold),
                         ("node_missing_left_", missing_left)):
        bad = first_false(internal | (values == 0))
        if bad is not None:
            raise InputError(f"{name}[{bad}] = {values[bad]} at a leaf; fit leaves 0 there")
    n_cuts = np.diff(bin_offsets)
    cut_of_internal = cut[internal].astype(np.int64)
    # One past the last cut point is the split of every value left, only the missing ones right (+inf).
    bad = first_false((cut_of_internal >= 0) & (cut_of_internal <= n_cuts[feature[internal]]))
    if bad is not None:
        node = int(np.flatnonzero(internal)[bad])
        raise InputError(f"node_threshold_bin_[{node}] = {cut[node]} is outside the {n_cuts[feature[node]]} cut "
                         f"points of feature {feature[node]} (and the one past them, +inf)")
    top = cut_of_internal == n_cuts[feature[internal]]
    bad = first_false(~top | (missing_left[internal] == 0))
    if bad is not None:
        node = int(np.flatnonzero(internal)[bad])
        raise InputError(f"node_missing_left_[{node}] = 1 at a +inf threshold; every value goes left there, the "
                         "missing ones right")
    expected = np.full(len(top), np.inf)
    expected[~top] = edges[(bin_offsets[feature[internal]] + cut_of_internal)[~top]]
    bad = first_false(threshold[internal] == expected)
    if bad is not None:
        node = int(np.flatnonzero(internal)[bad])
        raise InputError(f"node_threshold_[{node}] = {threshold[node]} differs from its cut point {expected[bad]} "
                         f"(bin_edges_ of feature {feature[node]}, bin {cut[node]})")
    return cut, threshold, missing_left


def with_missing_sides(arrays: dict, n_features: int) -> dict:
    """``arrays`` with ``node_missing_left_`` and ``feature_missing_`` all zeros when a model saved before them
    lacks both (any other array as given; a missing ``node_feature_`` is left for :func:`check_arrays` to name).

    >>> with_missing_sides({"node_feature_": np.array([0, -1, -1])}, 2)["node_missing_left_"].tolist()
    [0, 0, 0]
    """
    if "node_missing_left_" in arrays or "feature_missing_" in arrays or "node_feature_" not in arrays:
        return arrays
    return {**arrays, "node_missing_left_": np.zeros(np.shape(arrays["node_feature_"]), dtype=np.uint8),
            "feature_missing_": np.zeros(n_features, dtype=np.uint8)}


def check_arrays(arrays: dict, *, n_features: int, n_trees: int) -> dict:
    """The arrays of a SCAFF model with ``n_features`` inputs and ``n_trees`` trees, checked, in kernel dtypes."""
    only_names(arrays, STATE_ARRAYS, "SCAFF")
    edges, bin_offsets = _bins(arrays, n_features)
    feature = integers("node_feature_", arrays["node_feature_"], shape=(None,), low=-1, high=n_features,
                       dtype=np.int32)
    n_nodes = len(feature)
    start = _node_offsets(arrays, n_trees, n_nodes)
    size = np.diff(start)
    tree_of = np.repeat(np.arange(n_trees), size)
    internal = feature >= 0
    per_node = (n_nodes,)
    left = _children("node_left_", arrays["node_left_"], internal, tree_of, size)
    right = _children("node_right_", arrays["node_right_"], internal, tree_of, size)
    _check_tree_shape(left.astype(np.int64), right.astype(np.int64), internal, tree_of, start)

    cut, threshold, missing_left = _splits(arrays, edges, bin_offsets, feature, internal)
    gain = floats("node_gain_", arrays["node_gain_"], shape=per_node, what="(one entry per node)")
    bad = first_false(internal | (gain == 0))
    if bad is not None:
        raise InputError(f"node_gain_[{bad}] = {gain[bad]} at a leaf; fit leaves 0 there")
    seen_missing = integers("feature_missing_", arrays["feature_missing_"], shape=(n_features,), low=0, high=2,
                            dtype=np.uint8, what="(one flag per feature)")
    # SG = (1 - theta)(AUC_Y - 0.5) - theta(AUC_S - 0.5) <= 0.5; a split of gain exactly 0 is made when its
    # children differ (as fair-trees makes it), so 0 is a gain a saved model holds.
    bad = first_false((gain[internal] >= 0) & (gain[internal] <= MAX_GAIN))
    if bad is not None:
        node = int(np.flatnonzero(internal)[bad])
        raise InputError(f"node_gain_[{node}] = {gain[node]} is outside [0, {MAX_GAIN}], the gains of a split")
    value = floats("node_value_", arrays["node_value_"], shape=per_node, low=0.0, high=1.0,
                   what="(one entry per node)")
    weight = floats("node_weight_", arrays["node_weight_"], shape=per_node, low=0.0, what="(one entry per node)")
    bad = first_false(weight[start[:-1]] > 0)
    if bad is not None:
        raise InputError(f"node_weight_[{start[bad]}] = {weight[start[bad]]} is the root weight of tree {bad}; "
                         "it must be positive")
    # A child holds part of its parent's rows (the tolerance absorbs summation order).
    nodes = np.flatnonzero(internal)
    for name, child in (("node_left_", left), ("node_right_", right)):
        below = weight[child[nodes] + start[tree_of[nodes]]]
        bad = first_false(below <= weight[nodes] * (1 + WEIGHT_RTOL))
        if bad is not None:
            raise InputError(f"node_weight_ of node {nodes[bad]}'s child ({below[bad]}, by {name}) exceeds its own "
                             f"({weight[nodes[bad]]})")
    return {
        "classes_": _classes(arrays["classes_"]),
        "bin_edges_": edges,
        "bin_offsets_": bin_offsets,
        "node_offsets_": start,
        "node_feature_": feature,
        "node_threshold_": threshold,
        "node_threshold_bin_": cut,
        "node_left_": left,
        "node_right_": right,
        "node_value_": value,
        "node_weight_": weight,
        "node_gain_": gain,
        "node_missing_left_": missing_left,
        "feature_missing_": seen_missing,
    }
