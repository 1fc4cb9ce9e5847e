"""A deterministic, instant (accuracy, fairness) objective for schedule tests, examples and benchmarks.

Values depend only on the suggested parameters and the trial's budget, so a plain-Python run
(:mod:`tests.fairband.fairband_reference`) can reproduce them. Parameters with ``x < fail_below`` raise
(a failed fit) and ``y > nan_above`` return NaN (Optuna marks the trial FAIL).

>>> round(toy_values({"x": 0.5, "y": 0.25}, 1.0)[0], 4)
0.6532
"""

from __future__ import annotations

import math
import time

from fairops.fairband import budget as trial_budget


class ToyFitError(RuntimeError):
    """The toy objective's simulated failed fit."""


def toy_values(params: dict, fraction: float, *, fail_below: float = 0.0,
               nan_above: float = 1.0) -> tuple[float, float]:
    """(accuracy, fairness) of a configuration at a budget; see the module docstring."""
    x, y = float(params["x"]), float(params["y"])
    if x < fail_below:
        raise ToyFitError(f"simulated failed fit for x={x:.4f}")
    if y > nan_above:
        return float("nan"), float("nan")
    accuracy = 0.5 + 0.5 * x * fraction ** 0.25 - 0.1 * math.sin(7.0 * y) ** 2
    fairness = 1.0 - 0.8 * abs(y - 0.3) * (0.6 + 0.4 * x) - 0.05 * fraction
    return accuracy, fairness


def make_toy_objective(*, fail_below: float = 0.0, nan_above: float = 1.0, sleep: float = 0.0):
    """An Optuna objective suggesting ``x`` and ``y`` in [0, 1] and returning :func:`toy_values`.

    ``sleep`` seconds are multiplied by the budget (a stand-in for fit time).

    >>> objective = make_toy_objective()
    >>> callable(objective)
    True
    """

    def objective(trial):
        params = {"x": trial.suggest_float("x", 0.0, 1.0), "y": trial.suggest_float("y", 0.0, 1.0)}
        fraction = trial_budget(trial)
        if sleep:
            time.sleep(sleep * fraction)
        return toy_values(params, fraction, fail_below=fail_below, nan_above=nan_above)

    return objective
