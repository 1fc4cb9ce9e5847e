"""Bad input to FairLOF gets a clear ValueError/TypeError/AttributeError naming the argument."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from fairops.fairlof import FairLOF, quota_outliers


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    S = pd.DataFrame({"sex": rng.choice(["f", "m"], 60), "race": rng.choice(["a", "b", "c"], 60)})
    return X, S


def test_nan_in_X(data):
    X, S = data
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        FairLOF().fit(bad, sensitive_features=S)
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match=r"column 1 has 2, the first a missing value \(NaN\) in row 3; FairLOF "
                                         "measures distances between complete rows"):
        FairLOF().fit(bad, sensitive_features=S)
    bad[7, 1] = 0.0
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="X contains NaN or infinite"):
        FairLOF().fit(bad, sensitive_features=S)


def test_nan_or_missing_sensitive(data):
    X, S = data
    bad = S.copy()
    bad.loc[4, "sex"] = None
    with pytest.raises(ValueError, match="'sex' contains missing values"):
        FairLOF().fit(X, sensitive_features=bad)
    with pytest.raises(ValueError, match="'sensitive_0' contains missing values"):
        FairLOF().fit(X, sensitive_features=np.r_[np.nan, np.zeros(29), np.ones(30)])
    with pytest.warns(UserWarning, match="fitted without sensitive_features: there is no group to correct for"):
        FairLOF().fit(X)


def test_constant_or_misshapen_sensitive(data):
    X, _ = data
    with pytest.raises(ValueError, match="1 distinct value"):
        FairLOF().fit(X, sensitive_features={"sex": ["f"] * 60})
    with pytest.raises(ValueError, match="has 59 rows, expected 60"):
        FairLOF().fit(X, sensitive_features={"sex": ["f", "m"] * 29 + ["f"]})


def test_group_of_one_row_is_refused(data):
    X, S = data
    lonely = S["race"].to_numpy().copy()
    lonely[:] = "a"
    lonely[:30] = "b"
    lonely[7] = "z"
    with pytest.raises(ValueError, match="'race' has a group of one row \\(value 'z'\\)"):
        FairLOF().fit(X, sensitive_features={"race": lonely})


@pytest.mark.parametrize("k", [60, 100, 0, -1, 2.5, True])
def test_bad_n_neighbors(data, k):
    X, S = data
    with pytest.raises(ValueError, match="n_neighbors"):
        FairLOF(n_neighbors=k).fit(X, sensitive_features=S)


@pytest.mark.parametrize("lam", [-0.1, 1.01, np.nan, "half", None])
def test_lambda_outside_unit_interval(data, lam):
    X, S = data
    with pytest.raises(ValueError, match="correction_strength must be a number in \\[0, 1\\]"):
        FairLOF(correction_strength=lam).fit(X, sensitive_features=S)


def test_path_lambdas_outside_unit_interval(data):
    X, S = data
    det = FairLOF().fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="lambdas must be a number in \\[0, 1\\]"):
        det.path([0.0, 1.5])


def test_bad_target_and_exponents_and_floor(data):
    X, S = data
    with pytest.raises(ValueError, match="target_jaccard"):
        FairLOF(correction_strength="auto", target_jaccard=0.0).fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="weight_exponent must be a finite number > 0, got 0"):
        FairLOF(weight_exponent=0).fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="share_exponent must be a finite number > 0, got inf"):
        FairLOF(share_exponent=np.inf).fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="correction must be one of \\['paper', 'per_value'\\]"):
        FairLOF(correction="ordinal").fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="floor"):
        FairLOF(floor=0.0).fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="c must"):
        FairLOF(c=[1.0]).fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="c must hold finite non-negative"):
        FairLOF(c=[1.0, -1.0]).fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="Invalid parameter 'lam' for estimator FairLOF"):
        FairLOF().set_params(lam=0.2)


@pytest.mark.parametrize("top_t", [61, 0, 1.5])
def test_bad_top_t(data, top_t):
    X, S = data
    with pytest.raises(ValueError, match="top_t"):
        FairLOF(top_t=top_t).fit(X, sensitive_features=S)


def test_novelty_errors(data):
    X, S = data
    det = FairLOF(novelty=True).fit(X, sensitive_features=S)
    new_s = pd.DataFrame({"sex": ["f", "x"], "race": ["a", "b"]})
    with pytest.raises(ValueError, match="'sex' holds value\\(s\\) \\['x'\\] unseen at fit time"):
        det.score_samples(X[:2], sensitive_features=new_s)
    with pytest.raises(ValueError, match="X has 2 features, but FairLOF is expecting 3 features"):
        det.predict(X[:2, :2], sensitive_features=new_s)
    with pytest.raises(ValueError, match="sensitive_features is required"):
        det.decision_function(X[:2])
    with pytest.raises(ValueError, match="1 column\\(s\\), the detector was fitted with 2"):
        det.score_samples(X[:2], sensitive_features={"sex": ["f", "m"]})
    with pytest.raises(ValueError, match="differ from the fitted"):
        det.score_samples(X[:2], sensitive_features={"gender": ["f", "m"], "race": ["a", "a"]})
    with pytest.raises(AttributeError, match="has no attribute 'fit_predict'") as refused:
        det.fit_predict(X, sensitive_features=S)
    assert "fit_predict is not available when novelty=True" in str(refused.value.__cause__)
    plain = FairLOF().fit(X, sensitive_features=S)
    with pytest.raises(AttributeError, match="has no attribute 'score_samples'") as refused:
        plain.score_samples(X[:2], sensitive_features=S.iloc[:2])
    assert "not available when novelty=False; refit with novelty=True" in str(refused.value.__cause__)
    assert not hasattr(plain, "predict") and not hasattr(det, "fit_predict")
    with pytest.raises(ValueError, match="fitted without sensitive_features"):
        with pytest.warns(UserWarning):
            FairLOF(novelty=True).fit(X).score_samples(X[:2], sensitive_features=S.iloc[:2])
    with pytest.raises(AttributeError, match="not fitted"):
        FairLOF(novelty=True).predict(X[:2], sensitive_features=S.iloc[:2])


def test_quota_bad_input():
    with pytest.raises(ValueError, match="top_t must be an integer in \\[1, 4\\]"):
        quota_outliers([1.0, 2.0, 3.0, 4.0], ["a", "a", "b", "b"], 5)
    with pytest.raises(ValueError, match="one sensitive column"):
        quota_outliers([1.0, 2.0], {"a": [0, 1], "b": [1, 0]}, 1)
    with pytest.raises(ValueError, match="scores contains NaN"):
        quota_outliers([np.nan, 2.0], [0, 1], 1)


@pytest.mark.parametrize("old", ["lambda_", "alpha", "beta"])
def test_pre_release_names_are_not_parameters(old):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{old}'"):
        FairLOF(**{old: 0.5})
    with pytest.raises(ValueError, match=f"Invalid parameter '{old}' for estimator FairLOF"):
        FairLOF().set_params(**{old: 0.5})


def test_parameters_are_stored_verbatim_and_cloned():
    det = FairLOF(n_neighbors=7, correction_strength="auto", c={"sex": 0.3}, weight_exponent=2)
    params = clone(det).get_params()
    assert params["c"] == {"sex": 0.3} and params["correction_strength"] == "auto" and params["weight_exponent"] == 2
    assert not {"lambda_", "alpha", "beta"} & set(params)
