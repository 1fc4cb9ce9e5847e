"""Schedule and ranking: pure functions checked against brute force."""

import math
from collections import Counter

import numpy as np
import pytest

from fairops.fairband import _ranking as ranking, _schedule as schedule


def test_paper_rungs_and_budgets():
    expected = {4: [(81, 1 / 81), (27, 1 / 27), (9, 1 / 9), (3, 1 / 3), (1, 1.0)],
                3: [(34, 1 / 27), (11, 1 / 9), (3, 1 / 3), (1, 1.0)],
                2: [(15, 1 / 9), (5, 1 / 3), (1, 1.0)],
                1: [(8, 1 / 3), (2, 1.0)],
                0: [(5, 1.0)]}
    for s, rungs in expected.items():
        assert schedule.rung_sizes(s) == [n for n, _ in rungs]
        for i, (_, b) in enumerate(rungs):
            assert schedule.rung_budget(s, i) == pytest.approx(b)
    assert schedule.iteration_size() == 206
    assert schedule.configurations_per_iteration() == 143


@pytest.mark.parametrize("eta,s_max", [(3, 4), (2, 3), (4, 2), (3, 0)])
def test_slots_cover_each_fit_once_and_depend_only_on_lower_numbers(eta, s_max):
    size = schedule.iteration_size(eta, s_max)
    slots = [schedule.slot_of(n, eta, s_max) for n in range(3 * size)]
    counts = Counter((sl.iteration, sl.bracket, sl.rung) for sl in slots)
    for it in range(3):
        for s in range(s_max + 1):
            for i, n in enumerate(schedule.rung_sizes(s, eta, s_max)):
                assert counts[(it, s, i)] == n
                numbers = schedule.trial_numbers_of_rung(it, s, i, eta, s_max)
                assert [slots[k].position for k in numbers] == list(range(n))
                if i > 0:  # every fit of the previous rung has a lower number
                    assert max(schedule.trial_numbers_of_rung(it, s, i - 1, eta, s_max)) < min(numbers)
    configs = [sl.configuration for sl in slots if sl.rung == 0]
    assert configs == list(range(3 * schedule.configurations_per_iteration(eta, s_max)))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_slot_of_rejects_bad_numbers(bad):
    with pytest.raises(ValueError, match="number"):
        schedule.slot_of(bad)


@pytest.mark.parametrize("eta,s_max", [(1, 4), (3, -1), (2.5, 2)])
def test_bad_eta_s_max(eta, s_max):
    with pytest.raises(ValueError, match="eta|s_max"):
        schedule.iteration_size(eta, s_max)


def test_dynamic_alpha_matches_numpy_and_ignores_failures():
    rng = np.random.default_rng(0)
    acc, fair = rng.random(50), rng.random(50)
    pairs = list(zip(acc, fair)) + [(float("nan"), 0.3), (None, None)]
    assert ranking.dynamic_alpha(pairs) == pytest.approx(0.5 * (fair.mean() - acc.mean()) + 0.5)
    assert ranking.dynamic_alpha([]) == 0.5


def test_rank_matches_brute_force_with_ties_and_failures():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        acc = np.round(rng.random(n), 1)  # many ties
        fair = np.round(rng.random(n), 1)
        keys = rng.permutation(1000)[:n]
        entries = [(int(k), float(a), float(f)) for k, a, f in zip(keys, acc, fair)]
        entries[0] = (entries[0][0], float("nan"), 0.9)
        alpha = float(rng.choice([0.0, 0.5, 1.0]))
        brute = sorted(entries, key=lambda e: (-(alpha * e[1] + (1 - alpha) * e[2])
                                               if not math.isnan(e[1]) else math.inf, e[0]))
        assert ranking.rank(entries, alpha) == [e[0] for e in brute]
        assert ranking.rank(entries, alpha)[-1] == entries[0][0] or n == 1


@pytest.mark.parametrize("bad,err", [("dynamic", ValueError), (1.5, ValueError), (-0.1, ValueError),
                                     (None, TypeError), (True, TypeError)])
def test_check_alpha_rejects(bad, err):
    with pytest.raises(err, match="alpha"):
        ranking.check_alpha(bad)
