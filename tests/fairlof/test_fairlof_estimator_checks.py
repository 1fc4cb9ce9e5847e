"""scikit-learn's own estimator checks on FairLOF (fit without sensitive features: plain LOF)."""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from fairops.fairlof import FairLOF


@parametrize_with_checks([FairLOF(), FairLOF(novelty=True), FairLOF(correction_strength="auto", n_neighbors=3),
                          FairLOF(algorithm="fast"), FairLOF(algorithm="blocked", novelty=True),
                          FairLOF(algorithm="approximate"), FairLOF(algorithm="approximate", novelty=True),
                          FairLOF(algorithm="approximate", search_params={"graph": "nndescent"}, novelty=True)])
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="FairLOF was fitted without sensitive_features", category=UserWarning)
        check(estimator)
