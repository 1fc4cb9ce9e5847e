"""Reproducible splits and nested budget slices, stratified by label x sensitive group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..metrics._inputs import as_binary_labels, encode_sensitive

if TYPE_CHECKING:
    from .._typing import ArrayLike, IntArray, Sensitive


def strata(y: ArrayLike, sensitive_features: Sensitive) -> IntArray:
    """One integer code per row for its (label, intersectional group) cell.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels (0/1 or booleans).
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns (one or several); their values seen together make the group.

    Returns
    -------
    ndarray of shape (n_samples,)
        ``2 * group code + label``.
    """
    y = as_binary_labels(y, "y")
    groups = encode_sensitive(sensitive_features, len(y), min_values=1).intersection()
    return groups.codes[0] * 2 + y


def _shuffled_members(cells: np.ndarray, seed: int) -> list[np.ndarray]:
    """Per stratum, its row indices in a random order fixed by ``seed``."""
    rng = np.random.default_rng(seed)
    order = np.argsort(cells, kind="stable")
    bounds = np.flatnonzero(np.diff(cells[order])) + 1
    return [rng.permutation(members) for members in np.split(order, bounds)]


@dataclass(frozen=True)
class Split:
    """Row indices of the train, validation and test parts (sorted, disjoint, covering all rows).

    Parameters
    ----------
    train, validation, test : ndarray of int
        Row positions of each part.
    """

    train: np.ndarray
    validation: np.ndarray
    test: np.ndarray


def train_validation_test_split(y: ArrayLike, sensitive_features: Sensitive, *, validation: float = 0.2,
                                test: float = 0.2, seed: int = 0) -> Split:
    """Split rows into train / validation / test, stratified by label x group.

    Each (label, group) cell is shared out in the given proportions, so every part keeps
    the data's base rates per group.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns; the strata are label x their intersection.
    validation, test : float, default=0.2
        Shares of the rows in [0, 1) for each part; their sum must be below 1.
    seed : int, default=0
        Seeds the order in which each cell's rows are shared out.

    Returns
    -------
    Split
        The parts' sorted row indices.

    Raises
    ------
    InputError
        If a share is outside [0, 1) or the two leave no rows to train on.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 1] * 50); s = np.array(["a"] * 50 + ["b"] * 50)
    >>> parts = train_validation_test_split(y, s, validation=0.2, test=0.2, seed=0)
    >>> len(parts.train), len(parts.validation), len(parts.test)
    (60, 20, 20)
    """
    for name, share in (("validation", validation), ("test", test)):
        if not 0 <= share < 1:
            raise InputError(f"{name} must be a share in [0, 1), got {share}")
    if validation + test >= 1:
        raise InputError(f"validation + test must leave rows to train on, got {validation + test}")
    parts: dict[str, list] = {"train": [], "validation": [], "test": []}
    for members in _shuffled_members(strata(y, sensitive_features), seed):
        n_test = int(round(test * len(members)))
        n_validation = int(round(validation * len(members)))
        parts["test"].append(members[:n_test])
        parts["validation"].append(members[n_test:n_test + n_validation])
        parts["train"].append(members[n_test + n_validation:])
    return Split(**{name: np.sort(np.concatenate(chunks)) for name, chunks in parts.items()})


def split_around(y, sensitive_features, test_rows, *, validation=0.2, seed=0) -> Split:
    """Split rows into train / validation around given test rows (a held-out part chosen beforehand, e.g.
    by :func:`~fairops.datasets._row_ids.content_holdout` or a column of the file); the other rows are
    shared out stratified by label x group at ``seed``, ``validation`` being a share of all rows.

    >>> import numpy as np
    >>> y = np.array([0, 1] * 50); s = np.array(["a"] * 50 + ["b"] * 50)
    >>> parts = split_around(y, s, np.arange(80, 100), validation=0.2, seed=0)
    >>> len(parts.train), len(parts.validation), parts.test.tolist() == list(range(80, 100))
    (60, 20, True)
    """
    cells = strata(y, sensitive_features)
    test = np.unique(np.asarray(test_rows, dtype=np.int64))
    if len(test) and (test[0] < 0 or test[-1] >= len(cells)):
        raise InputError(f"test rows must be row positions in [0, {len(cells)})")
    rest = np.setdiff1d(np.arange(len(cells)), test)
    if len(rest) == 0:
        raise InputError("every row is held out: none is left to train on")
    share = validation * len(cells) / len(rest)
    if not 0 <= share < 1:
        raise InputError(f"validation share {validation} leaves no training rows beside {len(test)} test rows")
    parts: dict[str, list] = {"train": [], "validation": []}
    for members in _shuffled_members(cells[rest], seed):
        n_validation = int(round(share * len(members)))
        parts["validation"].append(rest[members[:n_validation]])
        parts["train"].append(rest[members[n_validation:]])
    return Split(test=test, **{name: np.sort(np.concatenate(chunks)) for name, chunks in parts.items()})


class BudgetSlicer:
    """Nested, stratified subsets of a training set, one per budget fraction.

    Every (label, group) cell gets one fixed random order; the slice for fraction ``r``
    takes the first ``max(1, round(r * n_cell))`` rows of each cell. The counts grow with
    ``r``, so a smaller slice is always inside every larger one.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels of the training rows.
    sensitive_features : DataFrame, Series, dict or array-like
        Their sensitive columns.
    seed : int, default=0
        Seeds each cell's order.

    Attributes
    ----------
    n_rows : int
        Number of training rows.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 1] * 50); s = np.array(["a"] * 50 + ["b"] * 50)
    >>> slicer = BudgetSlicer(y, s, seed=0)
    >>> small, large = slicer.indices(1 / 9), slicer.indices(1 / 3)
    >>> len(small), len(large), bool(np.isin(small, large).all())
    (12, 32, True)
    """

    def __init__(self, y: ArrayLike, sensitive_features: Sensitive, *, seed: int = 0) -> None:
        self._members = _shuffled_members(strata(y, sensitive_features), seed)
        self.n_rows = sum(len(members) for members in self._members)

    def indices(self, fraction: float) -> np.ndarray:
        """Sorted row indices of the slice for ``fraction`` in (0, 1].

        Parameters
        ----------
        fraction : float
            The budget, a share of the rows in (0, 1].

        Returns
        -------
        ndarray of int
            The slice's row positions, sorted.
        """
        if not 0 < fraction <= 1:
            raise InputError(f"fraction must be in (0, 1], got {fraction}")
        chosen = [members[: max(1, int(round(fraction * len(members))))] for members in self._members]
        return np.sort(np.concatenate(chosen))


def budget_slice(y: ArrayLike, sensitive_features: Sensitive, fraction: float, *, seed: int = 0) -> IntArray:
    """The nested budget slice of :class:`BudgetSlicer` for one fraction.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns.
    fraction : float
        The budget, a share of the rows in (0, 1].
    seed : int, default=0
        Seeds each cell's order.

    Returns
    -------
    ndarray of int
        The slice's row positions, sorted.

    Examples
    --------
    >>> import numpy as np
    >>> len(budget_slice(np.array([0, 1] * 50), np.array(["a", "b"] * 50), 0.5))
    50
    """
    return BudgetSlicer(y, sensitive_features, seed=seed).indices(fraction)
