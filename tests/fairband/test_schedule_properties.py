"""The Hyperband schedule's invariants for any eta and s_max, over generated trial numbers: a slot and the
trial numbers of its rung are inverses, rungs shrink by eta as their budgets grow by it, and every fit of a
rung comes after the whole rung below it."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from fairops.fairband import _schedule as schedule

QUICK = settings(max_examples=60, deadline=None)
shapes = st.tuples(st.integers(2, 5), st.integers(0, 4))


@QUICK
@given(shapes, st.integers(0, 10**6))
def test_a_trial_number_is_found_in_its_own_rung_at_its_own_position(shape, number):
    eta, s_max = shape
    slot = schedule.slot_of(number, eta, s_max)
    assert schedule.trial_numbers_of_rung(slot.iteration, slot.bracket, slot.rung, eta, s_max)[slot.position] \
        == number
    assert slot.budget == pytest.approx(schedule.rung_budget(slot.bracket, slot.rung, eta, s_max))
    assert (slot.configuration is None) == (slot.rung > 0)


@QUICK
@given(shapes, st.integers(0, 4))
def test_rungs_shrink_by_eta_while_their_budgets_grow_by_it_up_to_all_rows(shape, s):
    eta, s_max = shape
    s = min(s, s_max)
    sizes = schedule.rung_sizes(s, eta, s_max)
    assert sizes[0] == math.ceil((s_max + 1) / (s + 1) * eta**s)
    assert all(after == before // eta for before, after in zip(sizes, sizes[1:]))
    budgets = [schedule.rung_budget(s, i, eta, s_max) for i in range(len(sizes))]
    assert budgets[-1] == pytest.approx(1.0)
    assert all(after == pytest.approx(before * eta) for before, after in zip(budgets, budgets[1:]))


@QUICK
@given(shapes, st.integers(0, 3), st.data())
def test_a_rung_starts_after_every_fit_of_the_rung_below(shape, iteration, data):
    eta, s_max = shape
    s = data.draw(st.integers(0, s_max))
    i = data.draw(st.integers(1, s)) if s else 0
    numbers = schedule.trial_numbers_of_rung(iteration, s, i, eta, s_max)
    if i:
        assert max(schedule.trial_numbers_of_rung(iteration, s, i - 1, eta, s_max)) < min(numbers)
    assert len(numbers) == schedule.rung_sizes(s, eta, s_max)[i]


@QUICK
@given(shapes, st.integers(0, 3))
def test_an_iteration_holds_each_bracket_once_and_numbers_its_configurations_in_order(shape, iteration):
    eta, s_max = shape
    size = schedule.iteration_size(eta, s_max)
    assert size == sum(sum(schedule.rung_sizes(s, eta, s_max)) for s in range(s_max + 1))
    first = iteration * size
    slots = [schedule.slot_of(n, eta, s_max) for n in range(first, first + size)]
    starts = [sl.configuration for sl in slots if sl.rung == 0]
    per_iteration = schedule.configurations_per_iteration(eta, s_max)
    assert starts == list(range(iteration * per_iteration, (iteration + 1) * per_iteration))
