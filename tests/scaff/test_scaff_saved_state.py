"""A SCAFF model rebuilt from saved state (JSON + arrays, pickle, skops) is checked before it predicts."""

import pickle

import numpy as np
import pytest
import skops.io

from fairops.models import SCAFFOnColumns
from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier
from tests.fair_data import biased_rows


@pytest.fixture(scope="module")
def data():
    return biased_rows(7, n_features=3)


@pytest.fixture(scope="module")
def forest(data):
    X, y, s = data
    return SCAFFClassifier(n_estimators=4, theta=0.3, max_depth=None, random_state=0).fit(X, y, sensitive_features=s)


def _edited(model, **arrays):
    meta, saved = model._get_state()
    return meta, {**saved, **arrays}


def test_a_faithful_state_rebuilds_the_same_model(forest, data):
    again = SCAFFClassifier._from_state(*forest._get_state())
    np.testing.assert_array_equal(again.predict_proba(data[0]), forest.predict_proba(data[0]))
    assert again.node_left_.dtype == np.int32 and again.node_offsets_.dtype == np.int64


def _first_internal(model, tree=1):
    start = model.node_offsets_[tree]
    return int(start + np.flatnonzero(model.node_feature_[start:model.node_offsets_[tree + 1]] >= 0)[0])


def test_child_edits_are_named(forest):
    node = _first_internal(forest)
    size = int(np.diff(forest.node_offsets_)[1])
    cases = []
    for value, message in [
        (9999, rf"node_left_\[{node}\] = 9999 is outside tree 1's {size} nodes"),
        (-3, rf"node_left_\[{node}\] = -3 is outside tree 1's {size} nodes"),
        (0, "node 0 of tree 1 is a root but also a child"),
        (node - int(forest.node_offsets_[1]), "node 0 of tree 1 is a root but also a child"),
    ]:
        left = forest.node_left_.copy()
        left[node] = value
        cases.append((left, message))
    for left, message in cases:
        with pytest.raises(ValueError, match=message):
            SCAFFClassifier._from_state(*_edited(forest, node_left_=left))


def test_a_cycle_below_the_root_is_found(forest):
    """Every node keeps one parent, but node a points at itself and is cut off from the root."""
    left, right = forest.node_left_.copy(), forest.node_right_.copy()
    tree = forest.estimators_[0]
    a = int(np.flatnonzero(tree.node_feature_ >= 0)[1])
    parent = int(np.flatnonzero((tree.node_left_ == a) | (tree.node_right_ == a))[0])
    # a's parent adopts a's left child; a's left child becomes a itself
    old_left = int(tree.node_left_[a])
    if tree.node_left_[parent] == a:
        left[parent] = old_left
    else:
        right[parent] = old_left
    left[a] = a
    with pytest.raises(ValueError, match=rf"node {a} of tree 0 cannot be reached from its root \(it lies on a cycle\)"):
        SCAFFClassifier._from_state(*_edited(forest, node_left_=left, node_right_=right))


@pytest.mark.parametrize("name, edit, message", [
    ("node_feature_", lambda a: np.r_[10**8, a[1:]].astype(np.int64),
     r"node_feature_\[0\] = 100000000 is outside \[-1, 3\)"),
    ("node_feature_", lambda a: a.astype(np.float64), "node_feature_ has dtype float64; expected integers"),
    ("node_threshold_", lambda a: np.r_[np.nan, a[1:]], r"node_threshold_\[0\] is nan; it must be finite"),
    ("node_threshold_", lambda a: np.r_[a[0] + 1, a[1:]], r"node_threshold_\[0\] = .* differs from its cut point"),
    ("node_value_", lambda a: np.r_[a[:-1], 2.0], r"node_value_\[\d+\] = 2.0 is outside \[0.0, 1.0\]"),
    ("node_value_", lambda a: a[:-1], r"node_value_ has shape \(\d+,\), expected \(\d+,\) \(one entry per node\)"),
    ("node_offsets_", lambda a: a[:-1], r"node_offsets_ has shape \(4,\), expected \(5,\) \(one start per tree"),
    ("node_offsets_", lambda a: np.r_[a[0], a[2], a[2:]], "node_offsets_ gives tree 1 no nodes"),
    ("bin_offsets_", lambda a: np.r_[a[:-1], 2**40], r"bin_offsets_\[3\] = 1099511627776 is outside"),
    ("bin_edges_", lambda a: a[::-1].copy(), r"bin_edges_\[1\] = .* does not rise above bin_edges_\[0\]"),
    ("classes_", lambda a: np.array([1, 1]), "classes_ = \\[1, 1\\] must hold two different labels"),
    ("node_weight_", lambda a: np.zeros_like(a), r"node_weight_\[0\] = 0.0 is the root weight of tree 0"),
    ("node_gain_", lambda a: a.reshape(-1, 1), r"node_gain_ has shape \(\d+, 1\), expected \(\d+,\)"),
])
def test_array_edits_are_named(forest, name, edit, message):
    meta, arrays = _edited(forest, **{name: edit(getattr(forest, name))})
    with pytest.raises((ValueError, TypeError), match=message):
        SCAFFClassifier._from_state(meta, arrays)


@pytest.mark.parametrize("part, key, value, error, message", [
    ("params", "n_estimators", 5, ValueError, r"node_offsets_ has shape \(5,\), expected \(6,\)"),
    ("meta", "n_features_in", 2, ValueError, "saved feature_names_in has 3 names, the model has 2 features"),
    ("meta", "categories", {"7": ["x"]}, ValueError, "categories must map feature positions below 3"),
    ("params", "planted", 1, TypeError, "saved params do not fit SCAFFClassifier"),
    ("params", "theta", "high", ValueError, "theta must be a number in"),
])
def test_meta_must_agree_with_the_arrays(forest, part, key, value, error, message):
    meta, arrays = forest._get_state()
    meta[part][key] = value
    with pytest.raises(error, match=message):
        SCAFFClassifier._from_state(meta, arrays)
    with pytest.raises(ValueError, match="state holds a 'SCAFFClassifier', not a SCAFFTreeClassifier"):
        SCAFFTreeClassifier._from_state(*forest._get_state())


def test_pickle_and_skops_check_the_arrays_too(forest, data):
    tampered = pickle.loads(pickle.dumps(forest))
    assert np.array_equal(tampered.predict_proba(data[0]), forest.predict_proba(data[0]))
    tampered.node_feature_ = forest.node_feature_.copy()
    tampered.node_feature_[0] = 10**6
    blob = pickle.dumps(tampered)
    with pytest.raises(ValueError, match=r"node_feature_\[0\] = 1000000 is outside"):
        pickle.loads(blob)
    X, y, s = data
    wrapped = SCAFFOnColumns(sensitive_columns=("s",), n_estimators=3).fit(X.assign(s=(s == "m").astype(int)), y)
    wrapped.forest_.node_left_ = wrapped.forest_.node_left_.copy()
    wrapped.forest_.node_left_[0] = 0
    blob = skops.io.dumps(wrapped)
    with pytest.raises(ValueError, match="node 0 of tree 0 is a root but also a child"):
        skops.io.loads(blob, trusted=skops.io.get_untrusted_types(data=blob))


def test_a_split_of_gain_zero_is_a_state_fit_makes_and_loads(forest):
    """fit makes a split of gain exactly 0 when its children differ; a saved model holding one loads."""
    meta, arrays = forest._get_state()
    gain, split = arrays["node_gain_"].copy(), int(np.flatnonzero(arrays["node_feature_"] >= 0)[0])
    gain[split] = 0.0
    rebuilt = SCAFFClassifier._from_state(meta, {**arrays, "node_gain_": gain})
    np.testing.assert_array_equal(rebuilt.node_gain_, gain)
    gain[split] = -1e-9
    with pytest.raises(ValueError, match=r"is outside \[0, 0.5\]"):
        SCAFFClassifier._from_state(meta, {**arrays, "node_gain_": gain})
