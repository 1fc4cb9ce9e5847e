"""A plain-Python Fairband run, written without Optuna, as the oracle the sampler is tested against.

``evaluate(configuration_id, budget)`` returns (accuracy, fairness) or None for a failed fit.
Configuration ids and slot positions follow the same numbering as the sampler: in each iteration the
rung-0 configurations of bracket s_max come first, then those of bracket s_max - 1, and so on.
Ties follow the paper's implementation: a rung's scores in position order (the final pick: all fits in
evaluation order) are sorted ascending with NumPy 1.x's default argsort and read backwards.

>>> run = reference_run(lambda c, b: (b * (c % 7) / 7, 1 - (c % 5) / 5), alpha="auto")
>>> len(run.fits), len({f.configuration for f in run.fits})
(206, 143)
>>> run.promoted[(0, 4, 1)][:3]
[20, 55, 40]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from fairops.fairband._ranking import numpy1_argsort


@dataclass(frozen=True)
class ReferenceFit:
    iteration: int
    bracket: int
    rung: int
    position: int
    configuration: int
    budget: float
    accuracy: float | None
    fairness: float | None


@dataclass
class ReferenceRun:
    fits: list[ReferenceFit]
    promoted: dict[tuple[int, int, int], list[int]]  # (iteration, bracket, rung) -> configuration ids
    alphas: dict[tuple[int, int, int], float]  # alpha used to rank the rung feeding (iteration, bracket, rung)
    pick: ReferenceFit
    pick_alpha: float


def _ok(a, f) -> bool:
    return a is not None and f is not None and math.isfinite(a) and math.isfinite(f)


def _alpha(setting, pairs) -> float:
    if setting != "auto":
        return float(setting)
    good = [(a, f) for a, f in pairs if _ok(a, f)]
    if not good:
        return 0.5
    return 0.5 * (math.fsum(f for _, f in good) / len(good) - math.fsum(a for a, _ in good) / len(good)) + 0.5


def _score(a, f, alpha) -> float:
    return alpha * a + (1 - alpha) * f if _ok(a, f) else -math.inf


def reference_run(evaluate: Callable[[int, float], tuple[float, float] | None], alpha="auto",
                  eta: int = 3, s_max: int = 4, iterations: int = 1) -> ReferenceRun:
    """Run Fairband for ``iterations`` full iterations; see the module docstring."""
    fits: list[ReferenceFit] = []
    promoted: dict = {}
    alphas: dict = {}
    configuration = 0
    for it in range(iterations):
        # rung-0 configuration ids, bracket by bracket from s_max down
        brackets = {}
        for s in range(s_max, -1, -1):
            n = math.ceil((s_max + 1) / (s + 1) * eta**s)
            brackets[s] = list(range(configuration, configuration + n))
            configuration += n
        for s in range(s_max, -1, -1):
            current = brackets[s]
            promoted[(it, s, 0)] = list(current)
            for i in range(s + 1):
                budget = float(eta) ** (i - s)
                results = []
                for j, c in enumerate(current):
                    out = evaluate(c, budget)
                    a, f = (out if out is not None else (None, None))
                    a = None if a is None or not math.isfinite(a) else float(a)
                    f = None if f is None or not math.isfinite(f) else float(f)
                    fits.append(ReferenceFit(it, s, i, j, c, budget, a, f))
                    results.append((c, a, f))
                if i == s:
                    break
                value = _alpha(alpha, [(a, f) for _, a, f in results])
                keep = len(current) // eta
                scores = [_score(a, f, value) for _, a, f in results]
                ordered = [results[j] for j in reversed(numpy1_argsort(scores))]
                current = [c for c, _, _ in ordered[:keep]]
                promoted[(it, s, i + 1)] = current
                alphas[(it, s, i + 1)] = value
    good = [f for f in fits if _ok(f.accuracy, f.fairness)]
    pick_alpha = _alpha(alpha, [(f.accuracy, f.fairness) for f in good])
    # ``fits`` is in evaluation order: iteration, bracket from s_max down, rung, position
    scores = [_score(f.accuracy, f.fairness, pick_alpha) for f in good]
    pick = good[numpy1_argsort(scores)[-1]]
    return ReferenceRun(fits, promoted, alphas, pick, pick_alpha)
