"""select_best, constraints and the Pareto front against brute force."""

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState, create_trial

from fairops.fairband import pareto_front, select_best

optuna.logging.set_verbosity(optuna.logging.ERROR)


def _study(values, failed=0):
    study = optuna.create_study(directions=["maximize", "maximize"])
    for a, f in values:
        study.add_trial(create_trial(values=[float(a), float(f)]))
    for _ in range(failed):
        study.add_trial(create_trial(state=TrialState.FAIL))
    return study


@pytest.mark.parametrize("seed", range(5))
def test_pick_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    values = np.round(rng.random((60, 2)), 2)
    study = _study(values, failed=3)
    for alpha in (0.0, 0.3, 0.5, 1.0, "auto"):
        a = 0.5 * (values[:, 1].mean() - values[:, 0].mean()) + 0.5 if alpha == "auto" else alpha
        o = a * values[:, 0] + (1 - a) * values[:, 1]
        expected = int(np.flatnonzero(np.isclose(o, o.max(), rtol=0, atol=1e-12))[0])
        pick = select_best(study, alpha=alpha)
        assert pick.trial.number == expected and pick.alpha == pytest.approx(a)
        assert pick.score == pytest.approx(o.max())


@pytest.mark.parametrize("seed", range(5))
def test_constraints_and_front_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    values = np.round(rng.random((50, 2)), 1)
    study = _study(values)
    ok = values[:, 1] >= 0.7
    best = max(np.flatnonzero(ok), key=lambda k: (values[k, 0], values[k, 1], -k))
    assert select_best(study, min_fairness=0.7).trial.number == best
    ok = values[:, 0] >= 0.6
    best = max(np.flatnonzero(ok), key=lambda k: (values[k, 1], values[k, 0], -k))
    assert select_best(study, min_accuracy=0.6).trial.number == best
    dominated = {i for i in range(50) for j in range(50)
                 if (values[j] >= values[i]).all() and (values[j] > values[i]).any()}
    front_values = {tuple(values[i]) for i in range(50) if i not in dominated}
    front = pareto_front(study)
    assert {tuple(t.values) for t in front} == front_values and len(front) == len(front_values)


def test_errors_name_the_argument():
    study = _study([(0.5, 0.5)])
    with pytest.raises(ValueError, match="alpha is required"):
        select_best(study)
    with pytest.raises(ValueError, match="min_fairness"):
        select_best(study, min_fairness=1.5)
    with pytest.raises(ValueError, match="at most one"):
        select_best(study, min_fairness=0.1, min_accuracy=0.1)
    with pytest.raises(ValueError, match="no fit has fairness"):
        select_best(study, min_fairness=0.9)
    with pytest.raises(ValueError, match="no successful fit"):
        select_best(_study([], failed=2), alpha=0.5)
    with pytest.raises(ValueError, match="two objectives"):
        select_best(optuna.create_study(), alpha=0.5)


def _study_with_intervals(rows):
    study = optuna.create_study(directions=["maximize", "maximize"])
    for a, f, a_low, f_low in rows:
        study.add_trial(create_trial(values=[a, f], user_attrs={
            "intervals": {"accuracy": [a_low, min(1.0, a + 0.05)], "fairness": [f_low, 1.0]}}))
    return study


@pytest.mark.parametrize("seed", range(3))
def test_robust_rule_ranks_lower_bounds_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    values = np.round(rng.random((40, 2)), 3)
    lows = values - np.round(rng.random((40, 2)) * 0.3, 3)
    study = _study_with_intervals(np.column_stack([values, lows]).tolist())
    for alpha in (0.3, "auto"):
        a = 0.5 * (values[:, 1].mean() - values[:, 0].mean()) + 0.5 if alpha == "auto" else alpha
        o_low = a * lows[:, 0] + (1 - a) * lows[:, 1]
        pick = select_best(study, alpha=alpha, rule="robust", candidates=4)
        assert pick.alpha == pytest.approx(a) and pick.score == pytest.approx(o_low.max())
        assert [t.number for t in pick.candidates] == list(np.argsort(-o_low, kind="stable")[:4])
        assert pick.trial is pick.candidates[0]


def test_robust_rule_prefers_the_ratio_with_more_rows_behind_it():
    # Same point values; the first fit's fairness rests on few rows (a wide interval).
    study = _study_with_intervals([(0.8, 0.95, 0.75, 0.55), (0.8, 0.9, 0.75, 0.8)])
    assert select_best(study, alpha=0.5).trial.number == 0
    assert select_best(study, alpha=0.5, rule="robust").trial.number == 1


def test_robust_candidates_include_the_best_fits_at_the_largest_budget():
    study = optuna.create_study(directions=["maximize", "maximize"])
    for low, budget in [(0.9, 1 / 81), (0.8, 1 / 81), (0.5, 1.0), (0.7, 1 / 9), (0.4, 1.0)]:
        study.add_trial(create_trial(values=[0.8, 0.9], user_attrs={
            "budget": budget, "intervals": {"accuracy": [0.7, 0.9], "fairness": [low, 1.0]}}))
    pick = select_best(study, alpha=0.5, rule="robust", candidates=2)
    assert pick.trial.number == 0 and [t.number for t in pick.candidates] == [0, 1, 2, 4]


def test_robust_rule_needs_intervals_and_a_known_rule():
    study = _study([(0.8, 0.9)])
    with pytest.raises(ValueError, match="trial 0 has no user attribute 'intervals'"):
        select_best(study, alpha=0.5, rule="robust")
    with pytest.raises(ValueError, match="rule must be one of"):
        select_best(study, alpha=0.5, rule="safest")
    with pytest.raises(ValueError, match="candidates must be a positive integer"):
        select_best(study, alpha=0.5, rule="robust", candidates=0)


def _fairband_like_trial(rng, paper):
    """A finished trial with values drawn from few levels (so fits tie), some failed, set aside or infeasible."""
    if rng.random() < 0.1:
        return create_trial(state=TrialState.FAIL)
    attrs = {"budget": float(rng.choice([1 / 9, 1 / 3, 1.0]))}
    if paper:
        attrs.update(iteration=int(rng.integers(0, 2)), bracket=int(rng.integers(0, 3)), rung=int(rng.integers(0, 3)))
    if rng.random() < 0.1:  # decides one class for everyone: set aside
        attrs["counts"] = {"decisions": {"rows": 100, "positive": 100, "positives": 70, "true_positives": 70}}
    system = {"constraints": [float(rng.choice([-0.1, 0.2]))]} if rng.random() < 0.2 else {}
    values = [float(v) for v in rng.choice([0.5, 0.7, 0.9, 1.0], 2)]
    return create_trial(values=values, user_attrs=attrs, system_attrs=system)


@pytest.mark.parametrize("seed", range(6))
def test_running_selection_picks_as_select_best_after_every_trial(seed):
    from fairops.fairband._selection import RunningSelection

    rng = np.random.default_rng(seed)
    paper = seed % 2 == 0  # the paper's evaluation order and tie rule, or trial order
    changes = 0
    for alpha in (0.0, 0.5, 1.0, "auto"):
        study = optuna.create_study(directions=["maximize", "maximize"])
        running, picked = RunningSelection(alpha), []
        for _ in range(40):
            study.add_trial(_fairband_like_trial(rng, paper))
            trials = study.get_trials(deepcopy=False)
            try:
                expected = select_best(trials, alpha=alpha)
            except ValueError as error:
                with pytest.raises(type(error), match="fit"):
                    running.select(trials)
                continue
            pick = running.select(trials)
            assert (pick.trial.number, pick.score, pick.alpha) == \
                (expected.trial.number, expected.score, expected.alpha)
            changes += bool(picked) and picked[-1] != pick.trial.number
            picked.append(pick.trial.number)
        # a trial object it has not read (another study's trial of the same number) is read anew
        other = optuna.create_study(directions=["maximize", "maximize"])
        for trial in trials:
            other.add_trial(create_trial(values=[1.0, 1.0]) if trial.number == 7 else trial)
        assert running.select(other.get_trials(deepcopy=False)).trial.number == \
            select_best(other.get_trials(deepcopy=False), alpha=alpha).trial.number
    assert changes > 0
