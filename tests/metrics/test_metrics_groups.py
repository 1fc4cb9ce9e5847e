import numpy as np
import pandas as pd
import pytest
from hypothesis import given, strategies as st

from fairops.metrics import fairness_ratio, group_rates, precision, recall
from fairops.metrics._inputs import encode_sensitive


def _frame(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    s = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "race": rng.choice(["a", "b", "c"], n)})
    y = rng.integers(0, 2, n)
    pred = rng.integers(0, 2, n)
    return y, pred, s


def test_group_rates_match_pandas_groupby():
    y, pred, s = _frame()
    rates = group_rates(y, pred, s[["race"]])
    frame = pd.DataFrame({"y": y, "p": pred, "g": s["race"]})
    for i, group in enumerate(rates.groups):
        part = frame[frame.g == group]
        assert rates.count[i] == len(part)
        assert rates.tpr[i] == pytest.approx(part.p[part.y == 1].mean())
        assert rates.fpr[i] == pytest.approx(part.p[part.y == 0].mean())
        assert rates.ppr[i] == pytest.approx(part.p.mean())


def test_intersectional_groups_are_pairs():
    y, pred, s = _frame()
    rates = group_rates(y, pred, s)
    assert len(rates.groups) == 6
    assert ("F", "a") in rates.groups
    assert rates.count.sum() == len(y)


def test_fairness_ratio_is_min_over_max():
    y, pred, s = _frame()
    frame = pd.DataFrame({"y": y, "p": pred, "g": s["race"]})
    for rate, rows in (("tpr", frame.y == 1), ("fpr", frame.y == 0), ("ppr", slice(None))):
        per_group = frame[rows].groupby("g").p.mean()
        expected = per_group.min() / per_group.max()
        assert fairness_ratio(y, pred, s["race"], rate=rate) == pytest.approx(expected)


def test_per_column_ratio_is_the_worst_column():
    y, pred, s = _frame()
    one_by_one = fairness_ratio(y, pred, s, rate="tpr", intersectional=False)
    expected = min(fairness_ratio(y, pred, s[[c]], rate="tpr") for c in s.columns)
    assert one_by_one == pytest.approx(expected)


def test_ratio_is_one_when_all_rates_are_zero():
    assert fairness_ratio([1, 1, 1, 1], [0, 0, 0, 0], ["a", "a", "b", "b"]) == 1.0


def test_group_without_positives_is_named():
    with pytest.raises(ValueError, match=r"tpr is undefined for group\(s\) \['b'\]"):
        fairness_ratio([1, 1, 0, 0], [1, 0, 1, 0], ["a", "a", "b", "b"], rate="tpr")


def test_unknown_rate_and_bad_groups():
    with pytest.raises(ValueError, match="rate must be one of"):
        fairness_ratio([1, 0], [1, 0], ["a", "b"], rate="accuracy")
    with pytest.raises(ValueError, match="single group"):
        fairness_ratio([1, 0], [1, 0], ["a", "a"])
    with pytest.raises(ValueError, match="missing values"):
        fairness_ratio([1, 0], [1, 0], pd.Series(["a", None], name="sex"))
    with pytest.raises(ValueError, match="'sex' has 3 rows, expected 2"):
        fairness_ratio([1, 0], [1, 0], pd.DataFrame({"sex": ["a", "b", "a"]}))


@pytest.mark.parametrize("values", [["f", 1, "f", 1], [0, "0", 0, "0"], [True, 1, True, 0]])
def test_sensitive_values_of_mixed_types_are_refused_not_merged(values):
    y = np.array([0, 1, 0, 1])
    sensitive = pd.Series(values, dtype=object, name="sex")
    with pytest.raises(ValueError, match="'sex' mixes value types"):
        group_rates(y, y, sensitive)


@given(st.one_of(
    st.lists(st.text(max_size=3), min_size=1, max_size=40),
    st.lists(st.booleans(), min_size=1, max_size=40),
    st.lists(st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_nan=False)), min_size=1, max_size=40),
))
def test_an_object_column_is_encoded_as_numpy_unique_encodes_it(values):
    column = np.array(values, dtype=object)
    uniques, inverse = np.unique(column, return_inverse=True)
    groups = encode_sensitive({"g": column}, min_values=1)
    assert groups.labels[0] == tuple(uniques)
    assert groups.codes[0].tolist() == inverse.tolist()


def test_precision_and_recall():
    assert precision([1, 0, 1, 1], [1, 1, 1, 0]) == pytest.approx(2 / 3)
    assert recall([1, 0, 1, 1], [1, 1, 1, 0]) == pytest.approx(2 / 3)
    assert precision([1, 0], [0, 0]) == 0.0
    with pytest.raises(ValueError, match="no positive rows"):
        recall([0, 0], [1, 0])


def test_records_for_artifacts():
    records = group_rates([1, 0, 1, 0], [1, 0, 0, 0], {"sex": ["F", "F", "M", "M"]}).to_records()
    assert records[0] == {"attribute": "sex", "group": "F", "count": 2, "positives": 1,
                          "predicted_positive": 1, "tpr": 1.0, "fpr": 0.0, "ppr": 0.5}
