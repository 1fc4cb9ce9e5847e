"""Fairband's ranking rule: the weighted score, the dynamic alpha and a deterministic top-k.

``o = alpha * accuracy + (1 - alpha) * fairness``. With ``alpha="auto"`` (FB-auto) a rung uses
``alpha = 0.5 * (mean fairness - mean accuracy) + 0.5`` over its successful fits. Failed fits (no
values, NaN or infinite values) rank after every successful fit; ties are broken by the smaller key
(configuration id), so the order never depends on execution order.

>>> rank([(0, 0.9, 0.5), (1, 0.7, 0.9), (2, float("nan"), 1.0)], alpha=0.5)
[1, 0, 2]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

AUTO = "auto"


def check_alpha(alpha) -> float | str:
    """Validate an alpha setting: ``"auto"`` or a real number in [0, 1].

    >>> check_alpha("auto"), check_alpha(1)
    ('auto', 1.0)
    """
    if isinstance(alpha, str):
        if alpha != AUTO:
            raise ValueError(f"alpha must be 'auto' or a float in [0, 1], got {alpha!r}")
        return alpha
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"alpha must be 'auto' or a float in [0, 1], got {type(alpha).__name__}")
    if not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"alpha must be 'auto' or a float in [0, 1], got {alpha!r}")
    return float(alpha)


def is_valid(accuracy, fairness) -> bool:
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


def dynamic_alpha(values: Iterable[tuple[float, float]]) -> float:
    """FB-auto's alpha over (accuracy, fairness) pairs; invalid pairs are ignored, none valid -> 0.5.

    >>> round(dynamic_alpha([(0.9, 0.5), (0.7, 0.9)]), 6)
    0.45
    """
    pairs = [(float(a), float(f)) for a, f in values if is_valid(a, f)]
    if not pairs:
        return 0.5
    mean_accuracy = math.fsum(a for a, _ in pairs) / len(pairs)
    mean_fairness = math.fsum(f for _, f in pairs) / len(pairs)
    return 0.5 * (mean_fairness - mean_accuracy) + 0.5


def resolve_alpha(alpha, values: Iterable[tuple[float, float]]) -> float:
    """The alpha to use: the fixed number, or the dynamic alpha of ``values`` for ``"auto"``.

    >>> resolve_alpha(1.0, []), resolve_alpha("auto", [(0.8, 0.8)])
    (1.0, 0.5)
    """
    alpha = check_alpha(alpha)
    return dynamic_alpha(values) if alpha == AUTO else alpha


def weighted_score(accuracy, fairness, alpha: float) -> float:
    """``alpha * accuracy + (1 - alpha) * fairness``; ``-inf`` for a failed fit.

    >>> weighted_score(0.8, 0.4, 0.5), weighted_score(None, 0.4, 0.5)
    (0.6000000000000001, -inf)
    """
    if not is_valid(accuracy, fairness):
        return -math.inf
    return alpha * float(accuracy) + (1.0 - alpha) * float(fairness)


def rank(entries: Sequence[tuple[int, float, float]], alpha) -> list[int]:
    """Keys of ``(key, accuracy, fairness)`` entries, best first (alpha may be ``"auto"``).

    >>> rank([(5, 0.5, 0.5), (3, 0.5, 0.5)], alpha=1.0)
    [3, 5]
    """
    value = resolve_alpha(alpha, [(a, f) for _, a, f in entries])
    scored = [(weighted_score(a, f, value), key) for key, a, f in entries]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [key for _, key in scored]


def top_k(entries: Sequence[tuple[int, float, float]], k: int, alpha) -> list[int]:
    """The ``k`` best keys by :func:`rank`.

    >>> top_k([(0, 0.1, 0.1), (1, 0.9, 0.9), (2, 0.5, 0.5)], 2, alpha="auto")
    [1, 2]
    """
    if not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    return rank(entries, alpha)[:k]
