"""Fairband's ranking rule: the weighted score, the dynamic alpha and a deterministic top-k.

``o = alpha * accuracy + (1 - alpha) * fairness``. With ``alpha="auto"`` (FB-auto) a rung uses
``alpha = 0.5 * (mean fairness - mean accuracy) + 0.5`` over its successful fits. Failed fits (no
values, NaN or infinite values) rank after every successful fit.

Two tie rules, both pure functions of the entries (never of execution order):

- ``ties="key"``: equal scores are ordered by the smaller key (configuration id or trial number).
- ``ties="paper"``: the entries are taken in slot order (their position in the rung) and ordered the way
  the paper's implementation did, as its published logs show: an ascending sort of the scores with
  NumPy 1.x's default ``argsort`` (introsort: median-of-three quicksort, insertion sort on runs of up
  to 16, heap sort past a depth of ``2 * floor(log2 n)``), read backwards. That sort is unstable, so
  on ties the order depends on the positions, e.g. two tied entries in a small rung come out later
  position first. :func:`top_k` (the promotion) uses this rule by default; on the Adult logs it
  reproduces every promoted set and its order, for HB, FB and FB-auto.

>>> rank([(0, 0.9, 0.5), (1, 0.7, 0.9), (2, float("nan"), 1.0)], alpha=0.5)
[1, 0, 2]
>>> rank([(0, 1.0, 0.2), (1, 1.0, 0.9), (2, 0.5, 0.5)], alpha=1.0, ties="paper")
[1, 0, 2]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from .._param_checks import check_alpha
from ..errors import InputError

AUTO = "auto"
TIES = ("key", "paper")
_INSERTION_RUN = 16  # NumPy 1.x sorts runs of up to 16 elements by insertion


def is_valid(accuracy: float | None, fairness: float | None) -> bool:
    """True when both values are finite numbers (a successful fit).

    >>> is_valid(0.5, 0.7), is_valid(None, 0.7), is_valid(0.5, float("inf"))
    (True, False, False)
    """
    return (
        accuracy is not None
        and fairness is not None
        and math.isfinite(float(accuracy))
        and math.isfinite(float(fairness))
    )


def dynamic_alpha(values: Iterable[tuple[float | None, float | None]]) -> float:
    """FB-auto's alpha over (accuracy, fairness) pairs; invalid pairs are ignored, none valid -> 0.5.

    >>> round(dynamic_alpha([(0.9, 0.5), (0.7, 0.9)]), 6)
    0.45
    """
    pairs = [(float(a), float(f)) for a, f in values if is_valid(a, f)]  # type: ignore[arg-type]  # valid: no None
    if not pairs:
        return 0.5
    mean_accuracy = math.fsum(a for a, _ in pairs) / len(pairs)
    mean_fairness = math.fsum(f for _, f in pairs) / len(pairs)
    return 0.5 * (mean_fairness - mean_accuracy) + 0.5


def resolve_alpha(alpha: float | str, values: Iterable[tuple[float | None, float | None]]) -> float:
    """The alpha to use: the fixed number, or the dynamic alpha of ``values`` for ``"auto"``.

    >>> resolve_alpha(1.0, []), resolve_alpha("auto", [(0.8, 0.8)])
    (1.0, 0.5)
    """
    checked = check_alpha(alpha)
    return dynamic_alpha(values) if isinstance(checked, str) else checked  # the one string is AUTO


def weighted_score(accuracy: float | None, fairness: float | None, alpha: float) -> float:
    """``alpha * accuracy + (1 - alpha) * fairness``; ``-inf`` for a failed fit.

    >>> weighted_score(0.8, 0.4, 0.5), weighted_score(None, 0.4, 0.5)
    (0.6000000000000001, -inf)
    """
    if not is_valid(accuracy, fairness):
        return -math.inf
    return alpha * float(accuracy) + (1.0 - alpha) * float(fairness)  # type: ignore[arg-type]  # valid: no None


def _heap_order(values: Sequence[float], order: list[int], lo: int, hi: int) -> None:
    """Heap-sort ``order[lo:hi]`` by ``values`` in place (the introsort's fallback, max-heap, 1-based)."""
    n = hi - lo

    def sift(root: int, size: int, item: int) -> None:
        child = 2 * root
        while child <= size:
            if child < size and values[order[lo + child - 1]] < values[order[lo + child]]:
                child += 1
            if not values[item] < values[order[lo + child - 1]]:
                break
            order[lo + root - 1] = order[lo + child - 1]
            root, child = child, 2 * child
        order[lo + root - 1] = item

    for root in range(n // 2, 0, -1):
        sift(root, n, order[lo + root - 1])
    for size in range(n - 1, 0, -1):
        item = order[lo + size]
        order[lo + size] = order[lo]
        sift(1, size, item)


def numpy1_argsort(values: Sequence[float]) -> list[int]:
    """Indices that sort ``values`` ascending, in exactly the order NumPy 1.x's default argsort gives.

    The result differs from a stable sort only among equal values. Written out because NumPy 2 may
    dispatch float arrays to SIMD sorts whose tie order depends on the CPU.

    >>> numpy1_argsort([0.3, 0.1, 0.2])
    [1, 2, 0]
    """
    v = list(values)
    order = list(range(len(v)))
    if len(v) < 2:
        return order
    depth_limit = 2 * (len(v).bit_length() - 1)
    pending = []  # (lo, hi, depth limit) of partitions still to sort, inclusive bounds
    lo, hi = 0, len(v) - 1
    while True:
        if depth_limit < 0:
            _heap_order(v, order, lo, hi + 1)
        else:
            while hi - lo >= _INSERTION_RUN:
                mid = lo + (hi - lo) // 2
                # median of three into order[mid], then parked at hi - 1 as the pivot
                if v[order[mid]] < v[order[lo]]:
                    order[mid], order[lo] = order[lo], order[mid]
                if v[order[hi]] < v[order[mid]]:
                    order[hi], order[mid] = order[mid], order[hi]
                if v[order[mid]] < v[order[lo]]:
                    order[mid], order[lo] = order[lo], order[mid]
                pivot = v[order[mid]]
                order[mid], order[hi - 1] = order[hi - 1], order[mid]
                left, right = lo, hi - 1
                while True:  # both scans stop on values equal to the pivot
                    left += 1
                    while v[order[left]] < pivot:
                        left += 1
                    right -= 1
                    while pivot < v[order[right]]:
                        right -= 1
                    if left >= right:
                        break
                    order[left], order[right] = order[right], order[left]
                order[left], order[hi - 1] = order[hi - 1], order[left]
                depth_limit -= 1
                if left - lo < hi - left:  # keep the smaller side, defer the larger one
                    pending.append((left + 1, hi, depth_limit))
                    hi = left - 1
                else:
                    pending.append((lo, left - 1, depth_limit))
                    lo = left + 1
            for k in range(lo + 1, hi + 1):
                item, j = order[k], k
                while j > lo and v[item] < v[order[j - 1]]:
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = item
        if not pending:
            return order
        lo, hi, depth_limit = pending.pop()


def rank(entries: Sequence[tuple[int, float | None, float | None]], alpha: float | str, ties: str = "key") -> list[int]:
    """Keys of ``(key, accuracy, fairness)`` entries, best first (alpha may be ``"auto"``).

    ``ties`` is ``"key"`` (smaller key first) or ``"paper"`` (the paper's order; entries in slot order).

    >>> rank([(5, 0.5, 0.5), (3, 0.5, 0.5)], alpha=1.0)
    [3, 5]
    """
    if ties not in TIES:
        raise InputError(f"ties must be one of {TIES}, got {ties!r}")
    value = resolve_alpha(alpha, [(a, f) for _, a, f in entries])
    scored = [(weighted_score(a, f, value), key) for key, a, f in entries]
    if ties == "paper":
        return [scored[j][1] for j in reversed(numpy1_argsort([score for score, _ in scored]))]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [key for _, key in scored]


def top_k(entries: Sequence[tuple[int, float | None, float | None]], k: int, alpha: float | str,
          ties: str = "paper") -> list[int]:
    """The ``k`` best keys by :func:`rank`; by default with the paper's tie rule (entries in slot order).

    >>> top_k([(0, 0.1, 0.1), (1, 0.9, 0.9), (2, 0.5, 0.5)], 2, alpha="auto")
    [1, 2]
    >>> tied = [(0, 1.0, 0.1), (1, 1.0, 0.9), (2, 0.5, 0.5)]
    >>> top_k(tied, 1, alpha=1.0), top_k(tied, 1, alpha=1.0, ties="key")
    ([1], [0])
    """
    if not isinstance(k, int) or k < 0:
        raise InputError(f"k must be a non-negative integer, got {k!r}")
    return rank(entries, alpha, ties)[:k]
