"""A FairLOF detector rebuilt from saved state is checked: indices, shapes, and every derived array."""

import numpy as np
import pytest

from fairops.fairlof import FairLOF


@pytest.fixture(scope="module")
def detector():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    S = {"sex": rng.choice(["f", "m"], 150), "race": rng.choice(["a", "b", "c"], 150)}
    return FairLOF(n_neighbors=5, correction_strength=0.4, novelty=True).fit(X, sensitive_features=S)


def _edit(array, index, value):
    edited = np.array(array, copy=True)
    edited[index] = value
    return edited


@pytest.mark.parametrize("name, edit, message", [
    ("neighbors", lambda a: _edit(a, (3, 2), 150), r"neighbors\[3, 2\] = 150 is outside \[0, 150\)"),
    ("neighbors", lambda a: _edit(a, (3, 2), 3), r"neighbors\[3, 2\] is the row itself"),
    ("neighbors", lambda a: a[:, :-1], r"neighbors has shape \(150, 4\), expected \(150, 5\)"),
    ("distances", lambda a: _edit(a, (7, 0), 1e308), r"distances\[7, 1\] = .* is below distances\[7, 0\]"),
    ("distances", lambda a: _edit(a, (7, 4), 1e308), r"k_distances\[7\] = .* differs from 1e\+308"),
    ("k_distances", lambda a: np.full_like(a, 1e308), r"k_distances\[0\] = 1e\+308 differs from"),
    ("fit_X", lambda a: _edit(a, (0, 0), 1e200), r"fit_X\[0, 0\] = 1e\+200 is outside \[-1e\+150, 1e\+150\]"),
    ("codes", lambda a: _edit(a, (4, 1), 3), r"codes\[4, 1\] = 3 is outside the 3 values of sensitive attribute 1"),
    ("coefficients", lambda a: _edit(a, (0, 0), -1e308), r"coefficients\[0, 0\] = -1e\+308 differs from"),
    ("data_share", lambda a: _edit(a, (1, 2), 0.9), r"data_share\[1, 2\] = 0.9 differs from"),
    ("fair_lrd", lambda a: _edit(a, 9, 1e308), r"fair_lrd\[9\] = 1e\+308 differs from"),
    ("fair_k_distances", lambda a: _edit(a, 9, -1.0), r"fair_k_distances\[9\] = -1.0 differs from"),
    ("c", lambda a: a * 2, r"c\[0\] = 1.0 differs from 0.5"),
    ("outlier_scores", lambda a: np.zeros_like(a), r"outlier_scores\[0\] = 0.0 differs from"),
    ("outliers", lambda a: a[::-1].copy(), r"outliers\[0\] = \d+ differs from"),
    ("n_values", lambda a: a.astype(np.float64), "n_values has dtype float64; expected integers"),
])
def test_array_edits_are_named(detector, name, edit, message):
    meta, arrays = detector._get_state()
    arrays = {**arrays, name: edit(arrays[name])}
    with pytest.raises((ValueError, TypeError), match=message):
        FairLOF._from_state(meta, arrays)


@pytest.mark.parametrize("key, value, message", [
    ("fitted_lambda", 0.7, r"saved fitted_lambda 0.7 differs from 0.4"),
    ("offset", 0.0, r"saved offset 0.0 differs from -\d"),
    ("clamped_pairs", 3, r"saved clamped_pairs 3 differs from 0"),
    ("n_neighbors", 4, "saved n_neighbors=4 differs from the parameter 5"),
    ("sensitive_labels", [["f", "m"], ["a", "b"]], r"n_values\[1\] = 3 differs from 2"),
    ("sensitive_labels", [["f", "f"], ["a", "b", "c"]], "sensitive_labels one list of distinct labels per name"),
    ("top_t", 0, r"saved top_t must be an integer in \[1, 150\]"),
])
def test_meta_must_agree_with_the_arrays(detector, key, value, message):
    meta, arrays = detector._get_state()
    with pytest.raises(ValueError, match=message):
        FairLOF._from_state({**meta, key: value}, arrays)


def test_unknown_params_are_a_type_error(detector):
    meta, arrays = detector._get_state()
    with pytest.raises(TypeError, match="saved params do not fit FairLOF"):
        FairLOF._from_state({**meta, "params": {**meta["params"], "planted": 1}}, arrays)
