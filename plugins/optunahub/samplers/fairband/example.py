"""One Fairband iteration (206 fits) on a two-objective function with a fairness floor.

Run: ``python example.py`` (fetches the package from OptunaHub), or pass a loaded module to ``main``.
"""

from __future__ import annotations

import math
import warnings

import optuna

import optunahub
from fairops.fairband import budget, select_best


def objective(trial: optuna.Trial) -> tuple[float, float]:
    """(accuracy, fairness) of a made-up model: more budget buys accuracy; a stronger x costs fairness."""
    x = trial.suggest_float("x", 0.0, 1.0)
    depth = trial.suggest_int("depth", 1, 8)
    share = budget(trial)  # the share of the training rows this fit gets: 1/81 ... 1
    accuracy = (0.5 + 0.4 * x) * (1 - math.exp(-3 * share * depth / 8))
    fairness = 1.0 - 0.5 * x * depth / 8
    return accuracy, fairness


def main(fairband=None, *, min_fairness: float = 0.8) -> optuna.Study:
    fairband = fairband or optunahub.load_module("samplers/fairband")
    sampler = fairband.FairbandSampler(alpha="auto", seed=0, iterations=1, min_fairness=min_fairness)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler,
                                pruner=fairband.FairbandPruner())
    with warnings.catch_warnings():  # set_metric_names is marked experimental
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(["accuracy", "fairness"])
    study.optimize(objective)  # stops by itself after the iteration's 206 fits
    pick = select_best(study)  # the paper's pick among the fits with fairness >= min_fairness
    fits = sum(trial.state == optuna.trial.TrialState.COMPLETE for trial in study.trials)
    print(f"{fits} fits; pick: trial {pick.trial.number}, accuracy {pick.accuracy:.3f}, "
          f"fairness {pick.fairness:.3f} (alpha {pick.alpha:.3f}); Pareto front: {len(study.best_trials)} fits")
    return study


if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    main()
