"""The Fairband (Hyperband) schedule as pure functions of ``eta``, ``s_max`` and a trial number.

One iteration runs every bracket ``s = s_max .. 0``. Bracket ``s`` starts with
``n = ceil((s_max + 1) / (s + 1) * eta**s)`` configurations at budget ``eta**-s`` and keeps
``floor(n_i / eta)`` of them per rung. Slots inside an iteration are ordered rung-major: all
rung-0 fits of every bracket first (brackets from ``s_max`` down), then every bracket's rung 1, and so
on. A later-rung slot therefore only depends on lower-numbered slots, and brackets interleave so
parallel workers have work while a rung waits.

>>> [rung_sizes(s) for s in (4, 3, 2, 1, 0)]
[[81, 27, 9, 3, 1], [34, 11, 3, 1], [15, 5, 1], [8, 2], [5]]
>>> iteration_size(), configurations_per_iteration()
(206, 143)
>>> slot_of(0), slot_of(205).rung
(Slot(iteration=0, bracket=4, rung=0, position=0, configuration=0, budget=0.012345679012345678), 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from ..errors import InputError

ETA = 3
S_MAX = 4
# The largest bracket starts eta**s_max configurations and an iteration holds about (s_max + 1) times
# that many fits; the schedule is laid out in memory, so both are bounded (the default is 81).
MAX_BRACKET = 100_000
MAX_ETA = 1_000
MAX_S_MAX = 16
MAX_ITERATIONS = 10_000  # trial numbers stay far below what a study's storage counts and can list


def check_iterations(iterations: object, *, allow_none: bool = False) -> None:
    """Refuse an iteration count that is not a whole number in ``[1, MAX_ITERATIONS]``.

    >>> check_iterations(10**9)
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: iterations must be at most 10000 (each holds a whole Hyperband schedule), got 1000000000
    """
    if iterations is None and allow_none:
        return
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"iterations must be a positive integer{' or None' if allow_none else ''}, "
                         f"got {iterations!r}")
    if iterations > MAX_ITERATIONS:
        raise InputError(f"iterations must be at most {MAX_ITERATIONS} (each holds a whole Hyperband schedule), "
                         f"got {iterations}")


def _check(eta: int, s_max: int) -> None:
    """Refuse a schedule shape that is not one or that would not fit in memory (see ``MAX_BRACKET``).

    >>> _check(3, 30)
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: s_max must be at most 16 (the largest bracket starts eta**s_max configurations), got 30
    """
    if not isinstance(eta, int) or isinstance(eta, bool) or eta < 2:
        raise InputError(f"eta must be an integer >= 2, got {eta!r}")
    if not isinstance(s_max, int) or isinstance(s_max, bool) or s_max < 0:
        raise InputError(f"s_max must be an integer >= 0, got {s_max!r}")
    if eta > MAX_ETA:
        raise InputError(f"eta must be at most {MAX_ETA} (each rung keeps 1/eta of the last), got {eta}")
    if s_max > MAX_S_MAX:
        raise InputError(f"s_max must be at most {MAX_S_MAX} (the largest bracket starts eta**s_max "
                         f"configurations), got {s_max}")
    if eta**s_max > MAX_BRACKET:
        raise InputError(f"eta**s_max = {eta}**{s_max} = {eta**s_max} configurations in the largest bracket, above "
                         f"{MAX_BRACKET:,}: one iteration would not fit in memory; lower s_max or eta")


def bracket_start(s: int, eta: int = ETA, s_max: int = S_MAX) -> int:
    """Configurations that bracket ``s`` starts with.

    >>> [bracket_start(s) for s in (4, 3, 2, 1, 0)]
    [81, 34, 15, 8, 5]
    """
    _check(eta, s_max)
    if not 0 <= s <= s_max:
        raise InputError(f"bracket s must be in [0, {s_max}], got {s!r}")
    # Exact integer form of ceil((s_max + 1) / (s + 1) * eta**s).
    configurations: int = -(-((s_max + 1) * eta**s) // (s + 1))  # int ** int is typed as Any
    return configurations


def rung_sizes(s: int, eta: int = ETA, s_max: int = S_MAX) -> list[int]:
    """Fits per rung of bracket ``s``: ``n_0 = bracket_start(s)``, ``n_{i+1} = floor(n_i / eta)``.

    Parameters
    ----------
    s : int
        The bracket, in [0, s_max].
    eta : int, default=3
        Hyperband's reduction factor.
    s_max : int, default=4
        The largest bracket.

    Returns
    -------
    list of int
        ``s + 1`` rung sizes.

    Examples
    --------
    >>> rung_sizes(2)
    [15, 5, 1]
    """
    sizes = [bracket_start(s, eta, s_max)]
    for _ in range(s):
        sizes.append(sizes[-1] // eta)
    return sizes


def rung_budget(s: int, i: int, eta: int = ETA, s_max: int = S_MAX) -> float:
    """Share of the training set for rung ``i`` of bracket ``s``: ``eta**(i - s)``.

    Parameters
    ----------
    s : int
        The bracket, in [0, s_max].
    i : int
        The rung, in [0, s].
    eta : int, default=3
        Hyperband's reduction factor.
    s_max : int, default=4
        The largest bracket.

    Returns
    -------
    float
        The budget in (0, 1].

    Examples
    --------
    >>> round(rung_budget(4, 0), 5), rung_budget(0, 0)
    (0.01235, 1.0)
    """
    _check(eta, s_max)
    if not 0 <= i <= s:
        raise InputError(f"rung i must be in [0, {s}] for bracket {s}, got {i!r}")
    return float(eta) ** (i - s)


@dataclass(frozen=True)
class Slot:
    """Where one trial sits in the schedule.

    Parameters
    ----------
    iteration : int
        The Hyperband iteration, from 0.
    bracket : int
        The bracket ``s``.
    rung : int
        The rung ``i`` inside the bracket.
    position : int
        The index inside its rung.
    configuration : int or None
        The global configuration id of a rung-0 slot (``None`` for later rungs, whose configuration is
        decided by promotion).
    budget : float
        The share of the training set, ``eta**(rung - bracket)``.
    """

    iteration: int
    bracket: int
    rung: int
    position: int
    configuration: int | None
    budget: float


@cache
def _layout(eta: int, s_max: int) -> tuple[tuple[tuple[int, int, int], ...], dict[tuple[int, int], int], int]:
    """Rung-major slot order: tuple of (bracket, rung, position), start offset per (bracket, rung)."""
    order: list[tuple[int, int, int]] = []
    offsets: dict[tuple[int, int], int] = {}
    for i in range(s_max + 1):
        for s in range(s_max, i - 1, -1):
            offsets[(s, i)] = len(order)
            order.extend((s, i, j) for j in range(rung_sizes(s, eta, s_max)[i]))
    n_configurations = sum(bracket_start(s, eta, s_max) for s in range(s_max + 1))
    return tuple(order), offsets, n_configurations


def iteration_size(eta: int = ETA, s_max: int = S_MAX) -> int:
    """Fits in one iteration (206 for eta=3, s_max=4).

    Parameters
    ----------
    eta : int, default=3
        Hyperband's reduction factor.
    s_max : int, default=4
        The largest bracket.

    Returns
    -------
    int
        The number of slots of one iteration.

    Examples
    --------
    >>> iteration_size(eta=2, s_max=1)
    5
    """
    _check(eta, s_max)
    return len(_layout(eta, s_max)[0])


def configurations_per_iteration(eta: int = ETA, s_max: int = S_MAX) -> int:
    """New configurations in one iteration (143 for eta=3, s_max=4).

    >>> configurations_per_iteration(eta=2, s_max=1)
    4
    """
    _check(eta, s_max)
    return _layout(eta, s_max)[2]


def rung_offset(s: int, i: int, eta: int = ETA, s_max: int = S_MAX) -> int:
    """Index inside an iteration of the first slot of rung ``i`` of bracket ``s``.

    >>> rung_offset(4, 0), rung_offset(3, 0), rung_offset(4, 1)
    (0, 81, 143)
    """
    _check(eta, s_max)
    return _layout(eta, s_max)[1][(s, i)]


def trial_numbers_of_rung(iteration: int, s: int, i: int, eta: int = ETA, s_max: int = S_MAX) -> range:
    """Trial numbers holding rung ``i`` of bracket ``s`` in ``iteration``.

    >>> trial_numbers_of_rung(1, 4, 1)
    range(349, 376)
    """
    start = iteration * iteration_size(eta, s_max) + rung_offset(s, i, eta, s_max)
    return range(start, start + rung_sizes(s, eta, s_max)[i])


def slot_of(number: int, eta: int = ETA, s_max: int = S_MAX) -> Slot:
    """The schedule slot of trial ``number`` (a pure function: no storage, no state).

    Parameters
    ----------
    number : int
        The trial number (slot index), from 0.
    eta : int, default=3
        Hyperband's reduction factor.
    s_max : int, default=4
        The largest bracket.

    Returns
    -------
    Slot
        Its iteration, bracket, rung, position, configuration and budget.

    Examples
    --------
    >>> slot_of(206 + 81)
    Slot(iteration=1, bracket=3, rung=0, position=0, configuration=224, budget=0.037037037037037035)
    """
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise InputError(f"number must be a non-negative integer, got {number!r}")
    order, _, n_configurations = _layout(eta, s_max)
    iteration, offset = divmod(number, len(order))
    s, i, j = order[offset]
    configuration = iteration * n_configurations + offset if i == 0 else None
    return Slot(iteration, s, i, j, configuration, rung_budget(s, i, eta, s_max))


def promotions(n_i: int, eta: int = ETA) -> int:
    """How many configurations of a rung of ``n_i`` move up: ``floor(n_i / eta)``.

    >>> promotions(81), promotions(2)
    (27, 0)
    """
    return n_i // eta


def total_budget(s_max: int = S_MAX, eta: int = ETA) -> float:
    """Sum of budgets (in full-training-set units) over one iteration.

    >>> round(total_budget(), 3)
    23.481
    """
    return math.fsum(
        n * rung_budget(s, i, eta, s_max)
        for s in range(s_max + 1)
        for i, n in enumerate(rung_sizes(s, eta, s_max))
    )


def async_slot_of(number: int, eta: int = ETA, s_max: int = S_MAX) -> Slot:
    """Bracket of trial ``number`` in asynchronous mode (one trial = one configuration up the rungs).

    Trials cycle through the brackets in proportion to their rung-0 sizes (81, 34, 15, 8, 5 out of 143),
    so a block of 143 trials starts as many configurations per bracket as one synchronous iteration.
    The returned slot is rung 0 of that bracket; ``configuration`` is the trial number.

    >>> [async_slot_of(n).bracket for n in (0, 80, 81, 142, 143)]
    [4, 4, 3, 0, 4]
    """
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise InputError(f"number must be a non-negative integer, got {number!r}")
    block, offset = divmod(number, configurations_per_iteration(eta, s_max))
    for s in range(s_max, -1, -1):
        n = bracket_start(s, eta, s_max)
        if offset < n:
            return Slot(block, s, 0, offset, number, rung_budget(s, 0, eta, s_max))
        offset -= n
    raise AssertionError("unreachable")
