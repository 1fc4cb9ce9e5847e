"""trial.report / trial.should_prune in a Fairband study: Optuna refuses both for two objectives before asking
any pruner; a trial of a Fairband study says what to call instead (nothing in synchronous mode, RungProgress in
asynchronous mode), still as a NotImplementedError, whether or not the objective asked its budget first."""

import optuna
import pytest
from optuna.trial import TrialState

from fairops.fairband import FairbandPruner, FairbandSampler, RungProgress, budget

optuna.logging.set_verbosity(optuna.logging.ERROR)


def _study(mode):
    return optuna.create_study(directions=["maximize", "maximize"], pruner=FairbandPruner(),
                               sampler=FairbandSampler(seed=0, eta=3, s_max=1, iterations=1, mode=mode))


def _pruning_loop_from_optunas_examples(trial, accuracy, call):
    if call == "report":
        trial.report(accuracy, step=0)
    if call == "should_prune" and trial.should_prune():
        raise optuna.TrialPruned()


@pytest.mark.parametrize("call", ["report", "should_prune"])
def test_a_synchronous_trial_says_nothing_is_needed(call):
    study = _study("sync")

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        accuracy = x * budget(trial)
        _pruning_loop_from_optunas_examples(trial, accuracy, call)
        return accuracy, 1 - x

    with pytest.raises(NotImplementedError, match=r"two objectives .* Nothing is needed in synchronous mode: "
                                                  r"each trial is one fit on budget\(trial\)"):
        study.optimize(objective, n_trials=1)
    assert study.trials[0].state == TrialState.FAIL


@pytest.mark.parametrize("call", ["report", "should_prune"])
def test_an_asynchronous_trial_names_rung_progress(call):
    study = _study("async")

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        progress = RungProgress(trial)
        for fraction in progress:
            _pruning_loop_from_optunas_examples(trial, x * fraction, call)
            progress.report(x * fraction, 1 - x)
        return progress.values

    with pytest.raises(NotImplementedError, match=r"progress\.report\(accuracy, fairness\)"):
        study.optimize(objective, n_trials=1)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("call", ["report", "should_prune"])
def test_the_advice_comes_before_the_budget_is_asked_too(mode, call):
    study = _study(mode)

    def objective(trial):  # Optuna's example loop, before any budget(trial) or RungProgress
        x = trial.suggest_float("x", 0, 1)
        _pruning_loop_from_optunas_examples(trial, x, call)
        return x, 1 - x

    way = "Nothing is needed in synchronous mode" if mode == "sync" else r"progress\.report\(accuracy, fairness\)"
    with pytest.raises(NotImplementedError, match=way):
        study.optimize(objective, n_trials=1)
    plain = optuna.create_study(directions=["maximize", "maximize"])  # any other study: Optuna's own message
    with pytest.raises(NotImplementedError) as raised:
        getattr(plain.ask(), call)(*((0.5, 0) if call == "report" else ()))
    assert "Fairband" not in str(raised.value) and "RungProgress" not in str(raised.value)


def test_the_documented_way_prunes_nothing_by_hand():
    study = _study("sync")

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        return x * budget(trial), 1 - x

    study.optimize(objective)
    assert {t.state for t in study.trials} == {TrialState.COMPLETE, TrialState.PRUNED}  # the last: past the run
    for documented in (FairbandSampler.__doc__, FairbandPruner.__doc__):
        assert "should_prune" in documented and "RungProgress" in documented


def test_a_one_objective_study_keeps_optunas_pruning():
    # RungProgress refuses such a study, and budget() reads the attribute: nothing is shadowed there.
    study = optuna.create_study(pruner=optuna.pruners.ThresholdPruner(lower=0.5))
    trial = study.ask()
    trial.set_user_attr("budget", 1.0)
    assert budget(trial) == 1.0
    trial.report(0.1, step=0)
    assert trial.should_prune()
