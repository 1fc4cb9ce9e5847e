"""Fits whose decisions say nothing are never picked, never the most accurate fit and never on the front; a fairness
line narrows the pick to the fits that meet it, falling back only when none does. The study reproduces German
credit at a fixed 0.5 cut-off: 18 of 38 fits decide positive for every validation row (precision = the base rate
0.70, TPR ratio 1.0), which the weighted score at alpha 0.5 used to pick."""

import optuna
import pytest

from fairops.errors import InputError
from fairops.fairband import pareto_front, select_best
from fairops.metrics import FairnessRule

optuna.logging.set_verbosity(optuna.logging.WARNING)
ROWS, POSITIVES = 200, 140


def _fit(accuracy, fairness, *, positive=100, interval=(None, None)):
    """A fit as FairnessObjective records it: values, the fairness interval, the counts behind the decisions."""
    low, high = interval
    decisions = {"rows": ROWS, "positive": positive, "positives": POSITIVES,
                 "true_positives": round(accuracy * positive)}
    return optuna.trial.create_trial(values=[accuracy, fairness], user_attrs={
        "counts": {"decisions": decisions, "level": 0.95},
        "intervals": {"accuracy": [accuracy - 0.05, accuracy + 0.05],
                      "fairness": [fairness - 0.2 if low is None else low, min(1.0, fairness + 0.2)
                                   if high is None else high]}})


@pytest.fixture
def german_like():
    study = optuna.create_study(directions=["maximize", "maximize"])
    for _ in range(18):
        study.add_trial(_fit(0.70, 1.0, positive=ROWS))  # positive for every row: the base rate, "fair"
    for k in range(20):
        study.add_trial(_fit(0.80 + 0.005 * k, 0.95 - 0.02 * k, positive=100))
    return study


def test_a_fit_deciding_one_class_is_never_picked_nor_most_accurate_nor_on_the_front(german_like):
    pick = select_best(german_like, alpha=0.5)
    assert pick.trial.number >= 18 and pick.screened.set_aside == {"one class": 18}
    assert len(pick.screened.kept) == 20
    assert select_best(german_like, alpha=1.0).trial.number == 37
    assert all(t.number >= 18 for t in pareto_front(german_like))
    robust = select_best(german_like, alpha=0.5, rule="robust")
    assert all(t.number >= 18 for t in robust.candidates)
    assert select_best(german_like, min_fairness=0.9).trial.number >= 18


def test_every_fit_set_aside_is_a_refusal_with_the_reason(german_like):
    only_degenerate = [t for t in german_like.trials if t.number < 18]
    with pytest.raises(InputError, match="no fit to pick: every one of the 18 fits was set aside: 18 decided one "
                                         "class for every validation row"):
        select_best(only_degenerate, alpha=0.5)


def test_the_line_narrows_the_pick_to_the_fits_meeting_it_and_falls_back_in_order(german_like):
    rule = FairnessRule(0.8)
    pick = select_best(german_like, alpha=1.0, line=rule)  # the most accurate fit meeting the line
    assert pick.trial.values[1] >= 0.8 and pick.screened.standing == "meets"
    assert pick.screened.standings == {"meets": 8, "unclear": 10, "below": 2}
    assert pick.trial.values[0] == max(t.values[0] for t in german_like.trials[18:] if t.values[1] >= 0.8)
    unclear = [_fit(0.9, 0.6, interval=(0.4, 0.85)), _fit(0.85, 0.7, interval=(0.5, 0.9)), _fit(0.95, 0.3)]
    fallback = select_best(unclear, alpha=1.0, line=rule)
    assert fallback.screened.standing == "unclear" and fallback.trial.values == [0.9, 0.6]
    below = select_best([_fit(0.95, 0.3), _fit(0.9, 0.5)], alpha=1.0, line=rule)
    assert below.screened.standing == "below" and below.trial.values == [0.95, 0.3]
    assert select_best(german_like, alpha=1.0, line=FairnessRule(0.0)).screened.standing is None  # off


@pytest.mark.slow
def test_register_best_sets_aside_what_select_best_sets_aside(german_like, tmp_path):
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    from fairops.registry import Refit, register_best
    from fairops.tracking import TrackingSession

    X, y = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]}), [0, 0, 1, 1]
    refit = Refit(lambda params, trial: LogisticRegression().fit(X, y), input_example=X.head(2),
                  pip_requirements=["fairops"])
    best = register_best(german_like, "german-like", "fairband", alpha=0.5, refit=refit,
                         session=TrackingSession(f"sqlite:///{tmp_path}/mlflow.db", "german-like"))
    assert int(best.version) == 1 and best.pick.trial.number >= 18
