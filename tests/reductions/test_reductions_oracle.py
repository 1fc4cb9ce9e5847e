"""fairops' reductions against fairlearn's (0.15), the oracle: same base learner, data and settings.

On COMPAS's training rows (the bundled data, one-hot encoded, race as the group):

- ``GridSearch``: the same grid, the same chosen predictor and the same probabilities, for every
  constraint and base learner.
- ``ExponentiatedGradient``: the same predictors and weights wherever the base learner gives the same
  fit to the same weights. fairlearn's signed weights carry rounding noise of ~1e-15 (a matrix product
  over every moment) where fairops' are exact, so a learner that turns such noise into another fit (a
  tree choosing between two tied splits, an unconverged logistic regression) leads the two games apart
  after a few rounds. There both results must still solve the same problem equally well: training error
  within 0.01 and the largest moment (the constraint's violation) within 0.01 of fairlearn's.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from lightgbm import LGBMClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from fairops.datasets import load_dataset
from fairops.metrics._inputs import encode_sensitive
from fairops.reductions import ExponentiatedGradient, GridSearch
from fairops.reductions._constraints import ErrorObjective, ParityConstraint
from fairops.tuning import FairnessObjective

fairlearn = pytest.importorskip("fairlearn.reductions")

MOMENTS = {"tpr": "TruePositiveRateParity", "fpr": "FalsePositiveRateParity", "ppr": "DemographicParity"}
TOLERANCE = 0.01
pytestmark = pytest.mark.slow  # 21 fits of both libraries on 3,706 rows: ~35 s


@pytest.fixture(scope="module")
def compas():
    data = load_dataset("compas")
    X, y, s = FairnessObjective(data, seed=0, blind=True).rows("train")
    features = pd.get_dummies(X, dtype=float).to_numpy()
    groups = pd.DataFrame({"race": s["race"].astype(str).to_numpy(),
                           "sex": data.X.loc[X.index, "sex"].astype(str).to_numpy()})
    return features, np.asarray(y), groups


def _learners():
    return {"tree": DecisionTreeClassifier(max_depth=6, random_state=0),
            "lightgbm": LGBMClassifier(n_estimators=20, verbose=-1, n_jobs=1, random_state=0),
            "logistic": LogisticRegression(max_iter=300)}


def _quality(predictors, weights, X, y, groups, kind):
    """(training error, largest moment) of a weighted set of predictors, with fairops' moments."""
    decided = sum(w * np.asarray(p.predict(X), dtype=float) for p, w in zip(predictors, weights) if w > 0)
    codes = encode_sensitive(groups).intersection().codes
    return ErrorObjective(y).error(decided), float(ParityConstraint(kind, y, codes).gamma(decided).max())


@pytest.mark.parametrize("kind", sorted(MOMENTS))
@pytest.mark.parametrize("learner", ["tree", "lightgbm", "logistic"])
def test_grid_search_matches_fairlearn(compas, kind, learner):
    X, y, groups = compas
    estimator = _learners()[learner]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unscaled logistic regression's ConvergenceWarning, in both
        theirs = fairlearn.GridSearch(estimator, getattr(fairlearn, MOMENTS[kind])(), grid_size=12).fit(
            X, y, sensitive_features=groups["race"])
        ours = GridSearch(estimator, constraint=kind, grid_size=12, mix="probabilities").fit(
            X, y, sensitive_features=groups["race"])
    np.testing.assert_allclose(ours.lambdas_, theirs.lambda_vecs_.to_numpy().T, atol=1e-12)
    assert ours.best_index_ == theirs.best_idx_
    np.testing.assert_allclose(ours.predict_proba(X)[:, 1], theirs.predict_proba(X)[:, 1], atol=1e-6)
    # An unconverged logistic regression turns fairlearn's rounding noise into another fit at a grid point.
    np.testing.assert_allclose(ours.errors_, theirs.objectives_, atol=TOLERANCE if learner == "logistic" else 1e-12)


# (constraint, learner, grouping) where fairlearn's rounding noise leaves the base fit unchanged: the
# same game, to the last predictor. Since scikit-learn 1.9 a depth-6 tree on race alone breaks a tie
# differently under that noise from the first oracle call on (the same node count, other decisions), so
# those two cases are held to the quality bounds only.
EXACT = [("tpr", "lightgbm", "race"),
         ("fpr", "lightgbm", "race"), ("ppr", "lightgbm", "race"), ("ppr", "logistic", "race"),
         ("tpr", "tree", "race&sex"), ("ppr", "tree", "race&sex")]
CASES = [(kind, learner, grouping) for kind in sorted(MOMENTS) for learner in ("tree", "lightgbm", "logistic")
         for grouping in ("race", "race&sex") if learner == "tree" or grouping == "race"]


@pytest.mark.parametrize("kind,learner,grouping", CASES)
def test_exponentiated_gradient_matches_fairlearn(compas, kind, learner, grouping):
    X, y, groups = compas
    columns = groups[["race"]] if grouping == "race" else groups[["race", "sex"]]
    estimator = _learners()[learner]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = fairlearn.ExponentiatedGradient(estimator, getattr(fairlearn, MOMENTS[kind])()).fit(
            X, y, sensitive_features=columns)
        ours = ExponentiatedGradient(estimator, constraint=kind, groups="intersectional", mix="decisions").fit(
            X, y, sensitive_features=columns)
    their_weights = theirs.weights_.sort_index().to_numpy()
    if (kind, learner, grouping) in EXACT:
        assert len(ours.predictors_) == len(theirs.predictors_)
        np.testing.assert_allclose(ours.weights_, their_weights, atol=1e-9)
        np.testing.assert_allclose(ours.predict_proba(X)[:, 1], theirs._pmf_predict(X)[:, 1], atol=1e-9)
        assert ours.n_oracle_calls_ == theirs.n_oracle_calls_
    ours_error, ours_gamma = _quality(ours.predictors_, ours.weights_, X, y, columns, kind)
    theirs_error, theirs_gamma = _quality(list(theirs.predictors_), their_weights, X, y, columns, kind)
    assert ours_error == pytest.approx(theirs_error, abs=TOLERANCE)
    assert ours_gamma == pytest.approx(theirs_gamma, abs=TOLERANCE)
    assert ours.train_error_ == pytest.approx(ours_error, abs=1e-9)
