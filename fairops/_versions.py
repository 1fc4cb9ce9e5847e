"""The version ranges the guarded modules were written for (each uses a private Optuna or MLflow API).

>>> in_range("3.17.2", ((3, 17), (3, 18))), in_range("3.18.0rc1", ((3, 17), (3, 18)))
(True, False)
>>> describe(((3, 17), (4, 0)))
'>= 3.17, < 4.0'
"""

from __future__ import annotations


def release(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a version string; a missing part is 0, a pre-release suffix is ignored.

    >>> release("5"), release("3.18.0rc1"), release("6.0.dev0")
    ((5, 0), (3, 18), (6, 0))
    """
    parts = [int("".join(ch for ch in piece if ch.isdigit()) or 0) for piece in version.split(".")[:2]]
    major, minor = parts + [0] * (2 - len(parts))
    return major, minor


def in_range(version: str, written_for: tuple[tuple[int, int], tuple[int, int]]) -> bool:
    """Whether ``version`` lies in ``written_for = (lowest included, highest excluded)``."""
    low, high = written_for
    within: bool = low <= release(version) < high
    return within


def describe(written_for: tuple[tuple[int, int], tuple[int, int]]) -> str:
    low, high = written_for
    return f">= {low[0]}.{low[1]}, < {high[0]}.{high[1]}"
