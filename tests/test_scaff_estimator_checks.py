"""scikit-learn's own estimator checks on the SCAFF tree and forest (fit without sensitive features)."""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier


@parametrize_with_checks(
    [SCAFFTreeClassifier(theta=0.0), SCAFFClassifier(n_estimators=10, theta=0.0), SCAFFClassifier(n_estimators=5)],
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
