"""A fairness floor as Optuna's constraints: the same attribute an Optuna ``constraints_func`` writes, so
Optuna's own feasibility rules (best_trials, the Pareto plot) agree with fairops' pick."""

import optuna
import pytest
from optuna.trial import TrialState

from fairops.cli import main
from fairops.fairband import FairbandConfigurationError, FairbandSampler, budget, pareto_front, select_best
from fairops.fairband._selection import FLOOR_NAME, ConstraintNameError
from fairops.tuning._baselines import FullBudgetRandomSampler

optuna.logging.set_verbosity(optuna.logging.ERROR)
FLOOR = 0.8


def _objective(trial):
    # Accuracy grows with x and the budget, fairness falls with x: a real trade-off, both sides of the floor.
    x = trial.suggest_float("x", 0, 1)
    fairness = 1.0 - 0.4 * x
    trial.set_user_attr("fairness", fairness)  # what a constraints_func can read (values are not set yet)
    return x * budget(trial), fairness


def _fairband_study(storage=None, s_max=2):
    sampler = FairbandSampler(seed=3, eta=3, s_max=s_max, iterations=1, min_fairness=FLOOR)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler, storage=storage)
    study.optimize(_objective)
    return study


def _optuna_oracle(fits):
    """The same fits told to a study whose sampler writes Optuna's own constraints_func result (deprecated in
    Optuna 5 for Trial.set_constraint, but the format optuna-dashboard reads)."""
    with pytest.warns(FutureWarning, match="constraints_func"):
        sampler = optuna.samplers.NSGAIISampler(seed=0, constraints_func=lambda t: (FLOOR - t.user_attrs["fairness"],))
    oracle = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    for fit in fits:
        trial = oracle.ask()
        trial.set_user_attr("fairness", fit.values[1])
        oracle.tell(trial, fit.values)
    return oracle


@pytest.mark.parametrize("storage, s_max, n_fits", [(None, 2, 22), ("sqlite", 1, 6)])
def test_every_fit_carries_the_constraint_optuna_would_write(storage, s_max, n_fits, tmp_path):
    url = None if storage is None else f"sqlite:///{tmp_path / 'optuna.db'}"  # stored as JSON there
    study = _fairband_study(url, s_max)
    fits = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(fits) == n_fits and any(t.values[1] < FLOOR for t in fits) and any(t.values[1] >= FLOOR for t in fits)
    oracle = _optuna_oracle(fits)
    for ours, theirs in zip(fits, oracle.trials, strict=True):
        # the list as Optuna's constraints_func writes it (what optuna-dashboard reads), and the floor's own name
        assert ours.constraints == {**theirs.constraints, FLOOR_NAME: theirs.constraints["0"]}
        assert ours.system_attrs["constraints"] == pytest.approx(theirs.system_attrs["constraints"])
    (refused,) = [t for t in study.trials if t.state != TrialState.COMPLETE]  # past the one iteration: no fit
    assert "constraints" not in refused.system_attrs
    assert [fits[t.number].number for t in oracle.best_trials] == [t.number for t in study.best_trials]
    assert study.best_trials and all(t.values[1] >= FLOOR for t in study.best_trials)
    assert {t.number for t in pareto_front(study)} == {t.number for t in study.best_trials}


def test_the_pick_is_feasible_and_matches_brute_force():
    study = _fairband_study()
    pick = select_best(study)  # FB-auto: alpha from the feasible fits' means, argmax o over them
    feasible = [t for t in study.trials if t.state == TrialState.COMPLETE and t.values[1] >= FLOOR]
    acc = sum(t.values[0] for t in feasible) / len(feasible)
    fair = sum(t.values[1] for t in feasible) / len(feasible)
    alpha = 0.5 * (fair - acc) + 0.5
    best = max(alpha * t.values[0] + (1 - alpha) * t.values[1] for t in feasible)
    assert pick.trial.values[1] >= FLOOR and pick.alpha == pytest.approx(alpha)
    assert pick.score == pytest.approx(best)
    assert select_best(study, alpha=1.0).trial.values[1] >= FLOOR  # the most accurate among feasible fits


def test_without_a_floor_nothing_is_written_and_nothing_is_filtered():
    sampler = FairbandSampler(seed=3, eta=3, s_max=2, iterations=1)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    study.optimize(_objective)
    assert sampler.min_fairness is None
    assert all("constraints" not in t.system_attrs for t in study.trials)
    assert select_best(study, alpha=1.0).trial.values[1] < FLOOR  # the most accurate fit is below the floor


def test_no_feasible_fit_is_a_clear_error():
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.add_trial(optuna.trial.create_trial(values=[0.9, 0.5], system_attrs={"constraints": [0.3]}))
    with pytest.raises(ValueError, match="no fit is feasible: all 1 fits"):
        select_best(study, alpha=0.5)
    assert pareto_front(study) == [] and study.best_trials == []


def test_workers_must_agree_on_the_floor():
    study = _fairband_study()
    for floor, stored in ((0.5, "0.8 in the study, 0.5 here"), (None, "0.8 in the study, not set here")):
        other = FairbandSampler(seed=3, eta=3, s_max=2, iterations=1, min_fairness=floor)
        with pytest.raises(FairbandConfigurationError, match=f"min_fairness: {stored}"):
            other.check_configuration(study)


@pytest.mark.parametrize("bad", [1.5, -0.1, "0.8", True])
def test_bad_floor_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="min_fairness must be a float in"):
        FairbandSampler(min_fairness=bad)
    with pytest.raises(ValueError, match="min_fairness must be a float in"):
        FullBudgetRandomSampler(min_fairness=bad)


def test_random_search_writes_the_same_constraint():
    study = optuna.create_study(directions=["maximize", "maximize"],
                                sampler=FullBudgetRandomSampler(seed=0, min_fairness=FLOOR))
    study.optimize(_objective, n_trials=12)
    assert all(t.constraints == {name: pytest.approx(FLOOR - t.values[1]) for name in ("0", FLOOR_NAME)}
               for t in study.trials)


def test_cli_refuses_a_floor_outside_0_1(tmp_path, capsys):
    assert main(["tune", "--dataset", "german", "--min-fairness", "1.5", "--project-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == "fairops tune: error: min-fairness must be in [0, 1], got 1.5"


X_MIN = 0.2  # a constraint of the user's own, beside the floor (x <= 0.5): x >= X_MIN


def _objective_with_own_constraint(trial):
    values = _objective(trial)
    trial.set_constraint("x_min", X_MIN - trial.params["x"])  # Optuna 5's API for constraints_func
    return values


def _both_ways_oracle(fits, *, own_in_list: bool):
    """The fits told to NSGA-II: the floor through constraints_func, the own constraint either in the same
    list (a constraints_func returning both) or through trial.set_constraint, as the Fairband study had it."""
    def constraints(t):
        own = (X_MIN - t.params["x"],) if own_in_list else ()
        return (*own, FLOOR - t.user_attrs["fairness"])

    with pytest.warns(FutureWarning, match="constraints_func"):
        sampler = optuna.samplers.NSGAIISampler(seed=0, constraints_func=constraints)
    oracle = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    for fit in fits:
        oracle.enqueue_trial(fit.params)
        trial = oracle.ask({"x": fit.distributions["x"]})
        trial.set_user_attr("fairness", fit.values[1])
        if not own_in_list:
            trial.set_constraint("x_min", X_MIN - trial.params["x"])
        oracle.tell(trial, fit.values)
    return oracle


def _agrees_with(study, oracle):
    fits = [t for t in study.trials if t.state == TrialState.COMPLETE]
    for ours, theirs in zip(fits, oracle.trials, strict=True):
        mine = {name: value for name, value in ours.constraints.items() if name != FLOOR_NAME}
        assert ours.params == theirs.params and mine == pytest.approx(theirs.constraints)
    feasible = [t for t in fits if t.values[1] >= FLOOR and t.params["x"] >= X_MIN]
    assert 0 < len(feasible) < len(fits) and any(t.values[1] >= FLOOR for t in fits if t not in feasible)
    assert [fits[t.number].number for t in oracle.best_trials] == [t.number for t in study.best_trials]
    assert {t.number for t in pareto_front(study)} == {t.number for t in study.best_trials}
    pick = select_best(study, alpha=1.0)  # the most accurate fit both constraints allow
    assert pick.trial == max(feasible, key=lambda t: (t.values[0], -t.number))


@pytest.mark.parametrize("storage", [None, "sqlite"])
def test_set_constraint_in_the_objective_counts_beside_the_floor(storage, tmp_path):
    url = None if storage is None else f"sqlite:///{tmp_path / 'optuna.db'}"
    sampler = FairbandSampler(seed=3, eta=3, s_max=2, iterations=1, min_fairness=FLOOR)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler, storage=url)
    study.optimize(_objective_with_own_constraint)
    fits = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert all(set(t.constraints) == {"0", "x_min", FLOOR_NAME} for t in fits)  # list, objective's, floor's own
    _agrees_with(study, _both_ways_oracle(fits, own_in_list=False))


def test_a_base_samplers_constraints_func_keeps_the_floor():
    # The base sampler's constraints_func writes the same 'constraints' list as the floor: its values come
    # first and the floor is appended, where the sampler used to overwrite the floor with its own list.
    with pytest.warns(FutureWarning, match="constraints_func"):
        base = optuna.samplers.TPESampler(seed=0, n_startup_trials=4,
                                          constraints_func=lambda t: (X_MIN - t.params["x"],))
    sampler = FairbandSampler(seed=3, eta=3, s_max=2, iterations=1, min_fairness=FLOOR, base_sampler=base)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    study.optimize(_objective)
    fits = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert all(len(t.system_attrs["constraints"]) == 2 for t in fits)
    _agrees_with(study, _both_ways_oracle(fits, own_in_list=True))


def test_no_feasible_fit_names_the_constraints_it_breaks():
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.add_trial(optuna.trial.create_trial(values=[0.9, 0.9], constraints={"latency_ms": 12.0, "memory": -1.0}))
    with pytest.raises(ValueError, match=r"broken: 'latency_ms'; .* trial.set_constraint"):
        select_best(study, alpha=0.5)


def test_a_constraint_named_0_and_the_floor_both_hold():
    # "0" is also the name Optuna gives the first entry of the constraints list, where the floor's copy sits
    def objective(trial):
        values = _objective(trial)
        trial.set_constraint("0", X_MIN - trial.params["x"])
        return values

    sampler = FairbandSampler(seed=3, eta=3, s_max=2, iterations=1, min_fairness=FLOOR)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    study.optimize(objective)
    with pytest.warns(UserWarning, match="Overwrite an old format constraint"):  # Optuna's merge of the formats
        best = {t.number for t in study.best_trials}
    fits = [t for t in study.trials if t.state == TrialState.COMPLETE]
    feasible = [t for t in fits if t.values[1] >= FLOOR and t.params["x"] >= X_MIN]
    assert 0 < len(feasible) < len(fits)
    assert any(t.values[1] < FLOOR and t.params["x"] >= X_MIN for t in fits)  # the floor alone rules some out
    assert any(t.values[1] >= FLOOR and t.params["x"] < X_MIN for t in fits)  # and "0" alone others
    pick = select_best(study, alpha=1.0)
    assert pick.trial == max(feasible, key=lambda t: (t.values[0], -t.number))
    assert select_best(study).trial in feasible
    assert {t.number for t in pareto_front(study)} <= {t.number for t in feasible}
    assert best <= {t.number for t in feasible}  # Optuna's own view keeps the floor too, under its name


def test_a_constraint_named_as_the_floor_is_an_error():
    def objective(trial):
        values = _objective(trial)
        trial.set_constraint(FLOOR_NAME, 0.0)
        return values

    study = optuna.create_study(directions=["maximize", "maximize"],
                                sampler=FairbandSampler(seed=3, s_max=1, iterations=1, min_fairness=FLOOR))
    with pytest.raises(ConstraintNameError, match=f"trial 0 sets a constraint named '{FLOOR_NAME}'"):
        study.optimize(objective)
    (trial,) = study.trials
    assert trial.system_attrs["constraints:" + FLOOR_NAME] == pytest.approx(FLOOR - trial.values[1])  # floor kept


def test_a_name_that_replaces_an_entry_of_the_constraints_func_list_is_an_error():
    with pytest.warns(FutureWarning, match="constraints_func"):
        base = optuna.samplers.TPESampler(seed=0, constraints_func=lambda t: (X_MIN - t.params["x"],))

    def objective(trial):
        values = _objective(trial)
        trial.set_constraint("0", 0.0)
        return values

    study = optuna.create_study(directions=["maximize", "maximize"], sampler=FairbandSampler(
        seed=3, s_max=1, iterations=1, min_fairness=FLOOR, base_sampler=base))
    with pytest.raises(ConstraintNameError, match=r"two constraints named '0': trial.set_constraint\('0', ...\) "
                                                  r"and entry 0 of the list the base sampler's constraints_func"):
        study.optimize(objective)
