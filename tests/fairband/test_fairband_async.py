"""Asynchronous (ASHA-style) mode of FairbandPruner, and its passive role in synchronous mode."""

import math

import optuna
import pytest

from fairops.fairband import (
    FairbandPruner,
    FairbandSampler,
    FairbandScheduleError,
    RungProgress,
    _ranking as ranking,
    _schedule as schedule,
)
from fairops.tuning._toy import toy_values

optuna.logging.set_verbosity(optuna.logging.ERROR)


def _async_objective(trial):
    params = {"x": trial.suggest_float("x", 0, 1), "y": trial.suggest_float("y", 0, 1)}
    progress = RungProgress(trial)
    for fraction in progress:
        progress.report(*toy_values(params, fraction))
    return progress.values


def _async_study(alpha="auto", base_sampler=None, n_trials=300, seed=0):
    study = optuna.create_study(directions=["maximize", "maximize"], pruner=FairbandPruner(),
                                sampler=FairbandSampler(mode="async", alpha=alpha, seed=seed,
                                                        base_sampler=base_sampler))
    study.optimize(_async_objective, n_trials=n_trials)
    return study


@pytest.mark.parametrize("alpha", ["auto", 1.0, 0.5])
def test_serial_async_decisions_equal_brute_force(alpha):
    study = _async_study(alpha)
    trials = sorted(study.trials, key=lambda t: t.number)
    fits = 0
    for t in trials:
        s = t.user_attrs["bracket"]
        assert s == schedule.async_slot_of(t.number).bracket
        top = t.user_attrs["rung"]
        fits += top + 1
        for i in range(top + 1):
            assert t.user_attrs[f"rung{i}_accuracy"] == pytest.approx(toy_values(t.params, 3.0 ** (i - s))[0])
            if i == s:
                break
            # at report time (n_jobs=1) the trials at rung i of bracket s are the lower-numbered ones + itself
            peers = [u for u in trials if u.number <= t.number and u.user_attrs["bracket"] == s
                     and f"rung{i}_accuracy" in u.user_attrs]
            pairs = [(u.user_attrs[f"rung{i}_accuracy"], u.user_attrs[f"rung{i}_fairness"]) for u in peers]
            a = ranking.resolve_alpha(alpha, pairs)
            scores = sorted(((-(a * p[0] + (1 - a) * p[1]), u.number) for u, p in zip(peers, pairs)))
            promoted = t.number in [n for _, n in scores[: len(peers) // 3]]
            assert promoted == (top > i), (t.number, i)
        assert t.values == pytest.approx(toy_values(t.params, t.user_attrs["budget"]))
    assert fits > len(trials)  # some trials went past rung 0
    assert max(t.user_attrs["rung"] for t in trials if t.user_attrs["bracket"] == 4) >= 2


@pytest.mark.slow  # over 5 s in the quick tier
def test_async_tpe_sees_every_configuration_numbered_in_order():
    seen = []

    class Spy(optuna.samplers.TPESampler):
        def sample_independent(self, study, trial, name, dist):
            seen.append(([u.number for u in study.get_trials()], trial.number,
                         {u.user_attrs.get("bracket") for u in study.get_trials()}))
            return super().sample_independent(study, trial, name, dist)

    _async_study(base_sampler=Spy(seed=0, n_startup_trials=3), n_trials=160)
    assert seen and all(numbers == list(range(len(numbers))) and own in numbers for numbers, own, _ in seen)
    assert len(seen[-1][2]) > 1  # the configurations of every bracket, not one bracket's


def test_pruner_is_passive_in_sync_mode_and_rung_progress_refuses():
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=FairbandSampler(seed=0),
                                pruner=FairbandPruner())
    trial = study.ask()
    assert study.pruner.prune(study, study.trials[0]) is False
    with pytest.raises(ValueError, match="asynchronous"):
        RungProgress(trial)


def test_pruner_settings_must_agree_with_sampler():
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=FairbandSampler(alpha=0.5, seed=0),
                                pruner=FairbandPruner(alpha=1.0))
    with pytest.raises(FairbandScheduleError, match="alpha"):
        study.ask()


def test_async_with_plain_random_sampler_uses_number_brackets():
    study = optuna.create_study(directions=["maximize", "maximize"], pruner=FairbandPruner(alpha=0.5),
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_async_objective, n_trials=60)
    assert {t.user_attrs["bracket"] for t in study.trials} == {4}  # the first 81 numbers are bracket 4
    assert all(math.isfinite(t.values[0]) for t in study.trials)


def test_a_report_half_written_by_another_worker_is_not_counted_yet():
    """Another worker's report writes accuracy, then fairness: a trial seen in between is left out."""
    study = optuna.create_study(directions=["maximize", "maximize"], pruner=FairbandPruner(alpha=0.5),
                                sampler=optuna.samplers.RandomSampler(seed=0))
    for accuracy in (0.9, 0.8):
        study.add_trial(optuna.trial.create_trial(state=optuna.trial.TrialState.RUNNING,
                                                  user_attrs={"bracket": 4, "rung0_accuracy": accuracy}))
    study.optimize(_async_objective, n_trials=3)
    first = study.trials[2]  # the first trial with its whole report; alone at its rung, it stops
    assert first.user_attrs["rung"] == 0 and "rung0_fairness" in first.user_attrs


@pytest.mark.parametrize("pruner", [optuna.pruners.HyperbandPruner(), optuna.pruners.MedianPruner(n_startup_trials=9)])
def test_a_pruner_of_the_users_own_is_refused_not_replaced(pruner):
    study = optuna.create_study(directions=["maximize", "maximize"], pruner=pruner,
                                sampler=FairbandSampler(mode="async", seed=0))
    with pytest.raises(ValueError, match=f"the study's pruner is {type(pruner).__name__}, which RungProgress"):
        RungProgress(study.ask())


@pytest.mark.parametrize("pruner", [None, optuna.pruners.NopPruner()])
def test_a_study_without_a_pruner_of_its_own_runs_under_fairbands(pruner):
    study = optuna.create_study(directions=["maximize", "maximize"], pruner=pruner,
                                sampler=FairbandSampler(mode="async", seed=0))
    study.optimize(_async_objective, n_trials=30)
    assert max(t.user_attrs["rung"] for t in study.trials) >= 1  # Fairband's pruner let some trials go on
