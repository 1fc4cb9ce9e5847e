"""Confidence intervals for an accuracy rate and for a fairness ratio, from the counts behind them.

- Accuracy (precision, recall) is a share of a count: Wilson's score interval
  (:func:`wilson_interval`), or the exact Clopper-Pearson one (:func:`clopper_pearson`).
- A fairness ratio (:func:`ratio_interval`) has two methods: ``method="exact"`` is guaranteed to cover
  at least the stated level at any counts, which is what a gate that refuses and an alert that must not cry
  wolf need; every fairops surface shows and judges it (:func:`fairops.metrics.decision_figures`:
  tuning's fits and picks, the registered version's record, the evaluator plugin, monitoring).
  ``method="katz"`` (this function's default) covers close to the stated level; tuning ranked fits by it
  before one rule joined the surfaces.

``katz``: the lowest group rate over the highest is the smallest ratio ``p_g / p_h`` over
  every pair of groups. Each pair's ratio gets the log-scale (Katz) interval of a ratio of two
  proportions, 0.5 added to every count so a group without events still has a finite bound. The
  ratio's lower bound is the smallest pair's lower bound: the pair that attains the true minimum
  misses from below with probability at most ``(1 - level) / 2``, so no correction for the number
  of pairs is needed there. The upper bound is the smallest pair's upper bound (capped at 1) with a
  Bonferroni correction over the pairs, as any pair missing from above can push it below the truth.

With two groups this reads: the interval of ``p_1 / p_2`` folded at 1. Folding makes the interval
conservative when the true ratio is near 1 and the counts are small (the upper bound sits at 1 more
often); at the counts of a 10% FPR on COMPAS-sized groups it covers close to the stated level (the
tests simulate it).

``exact``: each group's rate gets an exact Clopper-Pearson interval at level ``1 - (1 - level) / G``
(Bonferroni over the ``G`` groups), so all rates lie inside their intervals together with probability
at least ``level``; whenever they do, the ratio lies inside
``[min_g L_g / max_g U_g, min(1, min_g U_g / max_g L_g)]``: valid for any number of groups and any
counts, and conservative. Groups whose rate does not exist (no base) are left out; with fewer than two
left the interval is ``(nan, nan)`` (a monitoring window may hold one group, or none with the rate).
Its upper bound cannot go below :func:`lowest_possible_upper` of the bases, whatever the events: that is how
the monitor tells a window too small for any alert.

Counts must be whole numbers with ``0 <= events <= bases`` per group; ``katz`` also needs at least two
groups, each with a base (its 0.5 correction would give a group without one a rate of 1).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from ..errors import InputError

#: The confidence level of every interval fairops shows by default (tuning, the registry, the gate, the monitor);
#: :class:`~fairops.metrics.FairnessRule` carries it, and a command's ``--level`` replaces it.
LEVEL = 0.95


def _check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise InputError(f"level must be a float in (0, 1), got {level!r}")
    return float(level)


def _z(tail: float) -> float:
    return NormalDist().inv_cdf(1 - tail)


def _whole_counts(values, name: str) -> np.ndarray:
    """``values`` as a 1-D int64 array of counts; a ValueError names ``name`` and what is wrong."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise InputError(f"{name} must be a 1-D array of per-group counts, got shape {array.shape}")
    if array.dtype.kind not in "iuf" or (array.dtype.kind == "f" and not np.all(np.isfinite(array))):
        raise InputError(f"{name} must hold whole-number counts, got {array.tolist()[:5]}")
    if np.any(array != np.round(array)) or np.any(array < 0):
        raise InputError(f"{name} must hold whole numbers >= 0, got {array.tolist()[:5]}")
    return array.astype(np.int64)


def _check_counts(events, bases, where: str, names=("events", "bases")) -> tuple[np.ndarray, np.ndarray]:
    """Per-group ``(events, bases)`` checked: whole numbers, same length, at least one group, events <= bases."""
    events, bases = (_whole_counts(values, f"{where} {name}") for values, name in zip((events, bases), names))
    if len(events) != len(bases):
        raise InputError(f"{where}: {names[0]} and {names[1]} need the same length, got {len(events)} and {len(bases)}")
    if len(events) == 0:
        raise InputError(f"{where} holds no groups")
    over = np.flatnonzero(events > bases)
    if over.size:
        group = int(over[0])
        which = f"group {group} has" if len(events) > 1 else "got"
        raise InputError(f"{where}: {which} {events[group]} {names[0]} of {bases[group]}; "
                         f"counts need 0 <= {names[0]} <= {names[1]} per group")
    return events, bases


def _attribute_counts(counts) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``counts`` of :func:`ratio_interval` as ``(where, events, bases)`` per attribute, checked."""
    single = not isinstance(counts, list)
    pairs = [counts] if single else counts
    if not pairs:
        raise InputError("counts holds no attribute: give an (events, bases) pair of per-group arrays "
                         "or a list of them")
    checked = []
    for index, pair in enumerate(pairs):
        where = "counts" if single else f"counts[{index}]"
        try:
            events, bases = pair
        except (TypeError, ValueError):
            raise InputError(f"{where} must be an (events, bases) pair of per-group arrays") from None
        checked.append((where, *_check_counts(events, bases, where)))
    return checked


def _check_katz(pairs) -> None:
    """Katz needs two groups or more, each with a base: the 0.5 correction would give a group without one rate 1."""
    for where, events, bases in pairs:
        if len(events) < 2:
            raise InputError(f"{where} holds {len(events)} group; a ratio needs at least two groups")
        if np.any(bases == 0):
            raise InputError(f"{where}: group {int(np.flatnonzero(bases == 0)[0])} has no base (bases 0), so its rate "
                             "does not exist; leave it out (GroupRates.defined) or use method='exact', which does")


def wilson_interval(successes: int, trials: int, *, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval of a proportion ``successes / trials``; ``(0.0, 1.0)`` without trials.

    >>> low, high = wilson_interval(45, 50, level=0.9)
    >>> round(low, 3), round(high, 3)
    (0.808, 0.95)
    """
    level = _check_level(level)
    successes, trials = (int(value[0]) for value in _check_counts([successes], [trials], "wilson_interval",
                                                                   ("successes", "trials")))
    if trials == 0:
        return 0.0, 1.0
    z = _z((1 - level) / 2)
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def _pair_bounds(events: np.ndarray, bases: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Katz log intervals of ``rate_g / rate_h`` for every ordered pair g != h (as k x k matrices)."""
    x, n = events + 0.5, bases + 0.5
    log_rate = np.log(x / n)
    spread = 1 / x - 1 / n
    centre = log_rate[:, None] - log_rate[None, :]
    half = z * np.sqrt(spread[:, None] + spread[None, :])
    return np.exp(centre - half), np.exp(centre + half)


METHODS = ("katz", "exact")


def ratio_interval(counts, *, level: float = LEVEL, method: str = "katz") -> tuple[float, float]:
    """Interval of ``min(rate) / max(rate)`` over groups whose rate is ``events / bases``.

    ``counts``: one ``(events, bases)`` pair of per-group arrays, or a list of them (one per
    attribute; the ratio is then the lowest of the attributes' ratios). ``method``: see the module
    docstring.

    >>> low, high = ratio_interval(([25, 42], [256, 416]))
    >>> round(low, 3), high
    (0.612, 1.0)
    >>> low, high = ratio_interval(([25, 42], [256, 416]), method="exact")
    >>> round(low, 3), high
    (0.409, 1.0)
    """
    level = _check_level(level)
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, got {method!r}")
    pairs = _attribute_counts(counts)
    if method == "exact":
        return _exact_ratio_interval(pairs, level)
    _check_katz(pairs)
    arrays = [(events.astype(float), bases.astype(float)) for _, events, bases in pairs]
    tail = (1 - level) / 2
    n_pairs = sum(len(e) * (len(e) - 1) // 2 for e, _ in arrays)
    low, high = math.inf, math.inf
    for events, bases in arrays:
        off_diagonal = ~np.eye(len(events), dtype=bool)
        lower, _ = _pair_bounds(events, bases, _z(tail))
        _, upper = _pair_bounds(events, bases, _z(tail / n_pairs))
        low = min(low, float(lower[off_diagonal].min()))
        high = min(high, float(upper[off_diagonal].min()))
    # The 0.5 added to the counts can lift a bound past the point estimate when a group has no events.
    point = min(_point_ratio(events, bases) for events, bases in arrays)
    return min(low, point), max(min(high, 1.0), point)


def clopper_pearson(successes, trials, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided binomial intervals (1-D arrays in, arrays out); every ``trials`` must be positive.

    >>> lower, upper = clopper_pearson([0, 5], [10, 10], 0.95)
    >>> round(float(lower[0]), 4), round(float(upper[0]), 4), round(float(lower[1]), 4)
    (0.0, 0.3085, 0.1871)
    """
    from scipy.stats import beta

    k, n = _check_counts(successes, trials, "clopper_pearson", ("successes", "trials"))
    if np.any(n == 0):
        raise InputError(f"clopper_pearson: trials must be positive, group {int(np.flatnonzero(n == 0)[0])} has none")
    k, n = k.astype(np.float64), n.astype(np.float64)
    tail = (1.0 - _check_level(level)) / 2.0
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, beta.ppf(tail, k, n - k + 1), 0.0)
        upper = np.where(k < n, beta.ppf(1.0 - tail, k + 1, n - k), 1.0)
    return lower, upper


def exact_attribute_intervals(counts, *, level: float = LEVEL) -> list[tuple[float, float]]:
    """Each attribute's ``exact`` interval, the level split over the attributes (Bonferroni), so that every
    attribute's ratio lies inside its interval together with probability at least ``level``; ``(nan, nan)``
    for an attribute with fewer than two groups holding the rate. ``counts`` as in :func:`ratio_interval`.

    >>> [(round(low, 3), high) for low, high in exact_attribute_intervals([([25, 42], [256, 416]), ([3], [9])])]
    [(0.371, 1.0), (nan, nan)]
    """
    return _exact_bounds(_attribute_counts(counts), _check_level(level))


def _group_level(level: float, attributes: int, groups: int) -> float:
    """The level of each group's Clopper-Pearson interval in the ``exact`` method: ``1 - level`` split
    (Bonferroni) over the attributes, then over the groups of one."""
    per_attribute = 1.0 - (1.0 - level) / attributes
    return 1.0 - (1.0 - per_attribute) / groups


def _exact_bounds(pairs, level: float) -> list[tuple[float, float]]:
    bounds = []
    for _, events, bases in pairs:
        k, n = events[bases > 0], bases[bases > 0]
        if len(n) < 2:
            bounds.append((float("nan"), float("nan")))
            continue
        lower, upper = clopper_pearson(k, n, _group_level(level, len(pairs), len(n)))
        top_upper, top_lower = upper.max(), lower.max()
        bounds.append((float(lower.min() / top_upper) if top_upper > 0 else 0.0,
                       float(min(1.0, upper.min() / top_lower)) if top_lower > 0 else 1.0))
    return bounds


def lowest_possible_upper(bases, *, level: float = LEVEL, attributes: int = 1) -> float:
    """The lowest upper bound an attribute's ``exact`` interval can reach with these per-group ``bases``
    (positives for TPR, negatives for FPR, rows for PPR), whatever the events: no decisions on such rows can
    give a lower one. ``attributes``: how many attributes ``level`` is split over, as
    :func:`exact_attribute_intervals` splits it; NaN with fewer than two groups holding a base.

    The upper bound ``min_g U_g / max_h L_h`` is lowest with 0 events in the largest group but one, ``i``, and
    every row an event in the remaining one, ``j``: ``min_j CP_upper(0, max_{i != j} n_i) / CP_lower(n_j, n_j)``.

    >>> round(lowest_possible_upper([10, 25], level=0.975), 3), lowest_possible_upper([4, 10], level=0.975)
    (0.305, 1.0)
    """
    level = _check_level(level)
    if isinstance(attributes, bool) or not isinstance(attributes, int) or attributes < 1:
        raise InputError(f"attributes must be a whole number >= 1, got {attributes!r}")
    n = _whole_counts(bases, "lowest_possible_upper bases")
    n = n[n > 0]
    if len(n) < 2:
        return float("nan")
    group_level = _group_level(level, attributes, len(n))
    _, none_upper = clopper_pearson(np.zeros(len(n), dtype=np.int64), n, group_level)
    all_lower, _ = clopper_pearson(n, n, group_level)
    other_upper = np.array([np.delete(none_upper, j).min() for j in range(len(n))])
    return float(min(1.0, (other_upper / all_lower).min()))


def _exact_ratio_interval(pairs, level: float) -> tuple[float, float]:
    """The ``exact`` method, Bonferroni over the attributes as over the groups within one; attributes
    without a ratio (fewer than two groups with the rate) are left out."""
    bounds = [bound for bound in _exact_bounds(pairs, level) if not math.isnan(bound[0])]
    if not bounds:
        return float("nan"), float("nan")
    return min(low for low, _ in bounds), min(high for _, high in bounds)


def _point_ratio(events: np.ndarray, bases: np.ndarray) -> float:
    rates = events / bases
    return float(rates.min() / rates.max()) if rates.max() > 0 else 1.0


def rate_counts(rates, rate: str):
    """``(events, bases)`` per group behind a rate of :class:`~fairops.metrics.GroupRates` (or a list).

    >>> from fairops.metrics import group_rates
    >>> events, bases = rate_counts(group_rates([1, 0, 1, 0], [1, 1, 0, 0], ["a", "a", "b", "b"]), "fpr")
    >>> events.tolist(), bases.tolist()
    ([1, 0], [1, 1])
    """
    if isinstance(rates, list):
        return [rate_counts(per_column, rate) for per_column in rates]
    events = {"tpr": rates.true_positives, "fpr": rates.false_positives, "ppr": rates.predicted_positive}
    bases = {"tpr": rates.positives, "fpr": rates.negatives, "ppr": rates.count}
    if rate not in events:
        raise InputError(f"rate must be one of {sorted(events)}, got {rate!r}")
    return np.asarray(events[rate]), np.asarray(bases[rate])
