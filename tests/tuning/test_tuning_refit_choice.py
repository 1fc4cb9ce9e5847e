"""The robust rule end to end on real data: fits with intervals, the choice among refits, the floor."""

import numpy as np
import optuna
import pytest

from fairops.datasets import load_german
from fairops.fairband import select_best
from fairops.tuning import FairnessObjective, refit_choice
from fairops.tuning._cross_validation import cross_validated
from fairops.tuning._refit_choice import dominates, refit_all

optuna.logging.set_verbosity(optuna.logging.ERROR)


@pytest.fixture(scope="module")
def small_budget_study():
    objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0)

    def at_small_budget(trial):
        trial.set_user_attr("budget", 1 / 27)
        return objective(trial)

    study = optuna.create_study(directions=["maximize"] * 2, sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(at_small_budget, n_trials=12, catch=(Exception,))
    return objective, study


def test_each_fit_keeps_its_intervals_counts_and_attribute_ratios(small_budget_study):
    _, study = small_budget_study
    fits = [t for t in study.trials if t.state.name == "COMPLETE"]
    assert fits
    for trial in fits:
        accuracy, fairness = trial.values
        (a_low, a_high), (f_low, f_high) = trial.user_attrs["intervals"].values()
        assert a_low <= accuracy <= a_high and f_low <= fairness <= f_high <= 1
        assert trial.user_attrs["fairness_by_attribute"] == {"sex": pytest.approx(fairness)}
        groups = trial.user_attrs["counts"]["fairness"]["sex"]
        events = np.array([groups[g][0] for g in sorted(groups)])
        bases = np.array([groups[g][1] for g in sorted(groups)])
        assert (events / bases).min() / (events / bases).max() == pytest.approx(fairness)


def test_the_choice_among_refits_is_never_dominated_by_the_most_accurate_refit(small_budget_study):
    objective, study = small_budget_study
    ranked = select_best(study, alpha="auto", rule="robust", candidates=3)
    accurate = select_best(study, alpha=1.0).trial
    choice = refit_choice(objective, ranked, accurate)
    assert set(choice.refits) == {t.number for t in ranked.candidates} | {accurate.number}
    assert not dominates(choice.most_accurate.validation, choice.chosen.validation)
    kept = [r for n, r in choice.refits.items() if n not in choice.dominated]
    assert choice.chosen.lower_score(ranked.alpha) == max(r.lower_score(ranked.alpha) for r in kept)
    if len(kept) > 1:  # the kept refits were compared on cross-validated figures
        assert all(r.assessed is not None for r in kept)
        assert choice.chosen.assessed == pytest.approx(cross_validated(objective, choice.chosen.trial))
    # a refit is the configuration on all training rows: its validation figures are the objective's
    model = objective.refit(choice.chosen.trial, 1.0)
    assert objective.evaluate(model, "validation") == pytest.approx(choice.chosen.validation)



def test_a_configuration_promoted_through_rungs_is_refit_and_cross_validated_once(small_budget_study):
    objective, fixture_study = small_budget_study
    study = optuna.create_study(directions=["maximize"] * 2)  # a copy: the fixture is shared
    study.add_trials(fixture_study.trials)
    first = select_best(study, alpha="auto", rule="robust", candidates=1).trial
    # the same configuration fitted again at a larger budget, as Hyperband's promotion records it
    study.add_trial(optuna.trial.create_trial(params=first.params, distributions=first.distributions,
                                              values=first.values, user_attrs={**first.user_attrs, "budget": 1 / 9}))
    promoted = study.trials[-1]
    ranked = select_best(study, alpha="auto", rule="robust", candidates=3)
    assert {first.number, promoted.number} <= {t.number for t in ranked.candidates}
    fitted = []

    def counting_refit(objective, trial):
        fitted.append(trial.number)
        return refit_all(objective, trial)

    accurate = select_best(study, alpha=1.0).trial
    choice = refit_choice(objective, ranked, accurate, refit=counting_refit)
    assert sorted(fitted) == sorted({first.number, *(t.number for t in ranked.candidates), accurate.number}
                                    - {promoted.number})
    assert choice.refits[promoted.number].trial is not choice.refits[first.number].trial
    assert choice.refits[promoted.number].validation == choice.refits[first.number].validation
    assert choice.refits[promoted.number].assessed == choice.refits[first.number].assessed
    # what sharing assumes: a configuration refit from either trial is the same model
    assert (objective.evaluate(objective.refit(promoted, 1.0), "validation")
            == objective.evaluate(objective.refit(first, 1.0), "validation"))


def test_the_floor_raises_small_budgets_only():
    data = load_german()
    plain = FairnessObjective(data, seed=0)
    floored = FairnessObjective(data, seed=0, min_rows=120, min_positives=100)
    positives = int(np.asarray(data.y)[plain.rows("train")[0].index].sum())
    assert plain.fraction(1 / 81) == 1 / 81
    assert floored.fraction(1 / 81) == pytest.approx(max(120 / plain.n_train, 100 / positives))
    assert floored.fraction(1 / 3) == 1 / 3
    with pytest.raises(ValueError, match="min_rows must be None or a positive integer"):
        FairnessObjective(data, seed=0, min_rows=0)


def test_cross_validation_judges_at_the_objectives_decision():
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    trial = optuna.trial.create_trial(
        params={"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 101}, values=[0.5, 0.5],
        distributions={"lr_C": CategoricalDistribution([0.1, 1.0]), "lr_penalty": CategoricalDistribution(["l2"]),
                       "lr_tol": FloatDistribution(5e-5, 1e-2, log=True), "lr_max_iter": IntDistribution(101, 300)})
    data = load_german()
    single = FairnessObjective(data, families=["logistic_regression"], seed=0)
    per_group = FairnessObjective(data, families=["logistic_regression"], seed=0, decision="per-group")
    one, each = cross_validated(single, trial), cross_validated(per_group, trial)
    assert one["auc_y"] == each["auc_y"]  # the same out-of-fold scores, judged at two decision rules
    # a threshold per sex at 50% TPR: each group keeps ceil(n / 2) of its n positives among train + validation
    y = np.concatenate([single.rows(part)[1] for part in ("train", "validation")])
    sex = np.concatenate([single.rows(part)[2]["sex"].to_numpy() for part in ("train", "validation")])
    tpr = [np.ceil(n / 2) / n for n in (int(((sex == group) & (y == 1)).sum()) for group in np.unique(sex))]
    assert each["fairness"] == pytest.approx(min(tpr) / max(tpr))
    assert one["fairness"] < each["fairness"]


def test_with_a_fairness_line_the_choice_takes_the_best_standing_on_cross_validated_figures(small_budget_study):
    from fairops.metrics import FairnessRule
    from fairops.metrics._fairness_rule import STANDINGS

    objective, study = small_budget_study
    ranked = select_best(study, alpha="auto", rule="robust", candidates=3)
    accurate = select_best(study, alpha=1.0).trial
    plain = refit_choice(objective, ranked, accurate)
    assessed = sorted((r.assessed or r.validation)["fairness"] for r in plain.refits.values())
    rule = FairnessRule(line=(assessed[0] + assessed[-1]) / 2 if assessed[0] < assessed[-1] else 0.99)
    choice = refit_choice(objective, ranked, accurate, rule=rule)
    compared = [r for n, r in choice.refits.items() if n not in choice.dominated and n not in choice.set_aside]
    best = min(STANDINGS.index(r.standing(rule)) for r in compared)
    assert choice.standing == STANDINGS[best] == choice.chosen.standing(rule)
    judged = choice.chosen.assessed or choice.chosen.validation
    assert (judged["fairness"] >= rule.line) == (choice.standing == "meets")


def test_a_refit_deciding_one_class_is_set_aside_and_never_chosen(small_budget_study):
    objective, study = small_budget_study
    ranked = select_best(study, alpha="auto", rule="robust", candidates=3)
    accurate = select_best(study, alpha=1.0).trial
    every = {"rows": 200, "positive": 200, "positives": 140, "true_positives": 140}

    def first_refit_decides_positive_for_all(objective, trial):
        refit = refit_all(objective, trial)
        if trial.number == ranked.candidates[0].number:
            refit.counts = {**refit.counts, "decisions": every}
        return refit

    choice = refit_choice(objective, ranked, accurate, refit=first_refit_decides_positive_for_all)
    assert choice.set_aside == (ranked.candidates[0].number,)
    assert choice.chosen.trial.number != ranked.candidates[0].number
