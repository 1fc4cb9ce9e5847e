"""One threshold per group: decisions that meet the task's target in every group.

Post-processing in the sense of Hardt et al. (2016): the scores stay the model's, and each group of the
sensitive attributes (their combinations when there are several) gets its own cut, set on the rows it
is given so the group meets the target exactly there:

- ``tpr=t``: ``ceil(t * n_pos)`` true positives of the group's positives;
- ``fpr=f``: at most ``floor(f * n_neg)`` false positives of the group's negatives;
- ``top_k=k``: ``k`` positives in all, shared among the groups in proportion to their sizes (largest
  remainders first, ties to the earlier group), so every group's positive rate is about ``k / n``.

Ties at a group's cut are broken at random with a fixed seed, exactly as :func:`binarize` breaks them on
that group's rows alone, so the result is reproducible. :class:`GroupThresholds` keeps the cuts as
:class:`OperatingPoint` rules to score other rows with (the test rows, a served request); a row of a
group that had no rows when the cuts were set is refused, naming the group.

>>> import numpy as np
>>> scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
>>> labels = np.array([1, 1, 0, 0, 1, 0, 1, 0])
>>> sex = np.array(["m", "m", "m", "m", "f", "f", "f", "f"])
>>> rule = group_thresholds(scores, labels, {"sex": sex}, tpr=0.5)
>>> rule.apply(scores, {"sex": sex}).tolist()     # one of each group's two positives
[1, 0, 0, 0, 1, 0, 0, 0]
>>> rule.threshold_of(("f",))
OperatingPoint(threshold=0.5, tie_share=1.0)
>>> rule.apply([0.95], {"sex": ["x"]})
Traceback (most recent call last):
...
fairops.errors.RowError: sensitive group sex='x' (row 0) had no rows when the thresholds were set (known: sex='f', sex='m')
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import InputError, RowError
from ._inputs import _column_values, as_scores, encode_sensitive
from ._thresholds import OperatingPoint, binarize, given_target, operating_point

if TYPE_CHECKING:
    from .._typing import ArrayLike, Decision, IntArray, NDArray, Sensitive

DECISIONS = ("single", "per-group")


def check_decision(decision: str) -> Decision:
    """``decision`` if it is ``"single"`` or ``"per-group"``, else a ValueError naming it.

    >>> check_decision("per-group")
    'per-group'
    """
    if decision not in DECISIONS:
        raise InputError(f"decision must be one of {DECISIONS}, got {decision!r}")
    return cast("Decision", decision)


def _keys(sensitive_features, n_rows) -> tuple[tuple[str, ...], list[tuple[str, ...]], np.ndarray]:
    """(column names, the groups as tuples of text values, each row's group index)."""
    groups = encode_sensitive(sensitive_features, n_rows, min_values=1)
    joint = groups.intersection()
    labels: tuple | list = joint.labels[0]
    if len(groups.names) == 1:
        labels = [(value,) for value in labels]
    return groups.names, [tuple(str(value) for value in label) for label in labels], joint.codes[0]


def _shares(sizes: np.ndarray, k: int) -> np.ndarray:
    """``k`` split in proportion to ``sizes`` by largest remainders (earlier groups first on equal ones)."""
    exact = k * sizes / sizes.sum()
    shares = np.floor(exact).astype(int)
    order = np.lexsort((np.arange(len(sizes)), -(exact - shares)))
    shares[order[: k - int(shares.sum())]] += 1
    return np.minimum(shares, sizes)


def check_per_group_target(target: str) -> str:
    """``target`` if each group can be held to it; a fixed threshold cannot (it is one cut for everyone).

    >>> check_per_group_target("threshold")
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: per-group decisions need a target each group meets (tpr, fpr or top_k), not a fixed threshold
    """  # noqa: E501 - a doctest's expected output is one line
    if target == "threshold":
        raise InputError("per-group decisions need a target each group meets (tpr, fpr or top_k), not a fixed "
                         "threshold")
    return target


def _targets(name: str, value, codes: np.ndarray, n_groups: int) -> list[dict]:
    """The target each group must meet: the task's own rate, or its share of top-k."""
    if name != "top_k":
        return [{name: value}] * n_groups
    sizes = np.bincount(codes, minlength=n_groups)
    if not value <= sizes.sum():
        raise InputError(f"top_k must be an integer in [0, {sizes.sum()}], got {value!r}")
    return [{"top_k": int(share)} for share in _shares(sizes, int(value))]


@dataclass(frozen=True)
class GroupThresholds:
    """A decision rule per group of ``columns``.

    ``points[i]`` applies to rows of group ``groups[i]`` (a tuple of the columns' values as text).

    Parameters
    ----------
    columns : tuple of str
        The sensitive columns the groups are formed from.
    groups : tuple of tuple of str
        Each group's values, one per column.
    points : tuple of OperatingPoint
        Each group's rule.
    """

    columns: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    points: tuple[OperatingPoint, ...]

    def threshold_of(self, group: tuple[Any, ...]) -> OperatingPoint:
        """The rule of one group (a tuple of values, one per column).

        Parameters
        ----------
        group : tuple
            One value per column (compared as text).

        Returns
        -------
        OperatingPoint
            The group's rule.
        """
        key = tuple(str(value) for value in group)
        if key not in self.groups:
            raise InputError(f"sensitive group {self._name(key)} had no rows when the thresholds were set "
                             f"(known: {', '.join(self._name(g) for g in self.groups)})")
        return self.points[self.groups.index(key)]

    def _name(self, key) -> str:
        return ", ".join(f"{column}={value!r}" for column, value in zip(self.columns, key))

    def group_index(self, sensitive_features: Sensitive, n_rows: int | None = None) -> IntArray:
        """Each row's index into :attr:`groups`; a ValueError names the first row of an unknown group.

        Parameters
        ----------
        sensitive_features : DataFrame, dict or array-like
            Holds (at least) the columns named in :attr:`columns`.
        n_rows : int or None, default=None
            The number of rows every column must have.

        Returns
        -------
        ndarray of int
            The group index of each row.
        """
        pairs = dict(_column_values(sensitive_features))
        missing = [c for c in self.columns if c not in pairs]
        if missing:
            raise InputError(f"sensitive_features lacks the column(s) {missing} the thresholds were set on")
        names, keys, codes = _keys({c: pairs[c] for c in self.columns}, n_rows)
        lookup = {key: i for i, key in enumerate(self.groups)}
        unknown = [i for i, key in enumerate(keys) if key not in lookup]
        if unknown:
            row = int(np.flatnonzero(codes == unknown[0])[0])
            raise RowError(f"sensitive group {self._name(keys[unknown[0]])} (row ", row, ") had no rows when the "
                           f"thresholds were set (known: {', '.join(self._name(g) for g in self.groups)})")
        return np.array([lookup[key] for key in keys], dtype=np.intp)[codes]

    def apply(self, y_score: ArrayLike, sensitive_features: Sensitive, *, seed: int = 0) -> NDArray[np.int8]:
        """0/1 decisions, each row at its group's rule.

        On the rows the rule was set on (same seed) they equal :func:`group_decisions`'.

        Parameters
        ----------
        y_score : array-like of shape (n_samples,)
            Scores to decide on.
        sensitive_features : DataFrame, dict or array-like
            The rows' sensitive columns.
        seed : int, default=0
            Breaks ties at a group's threshold.

        Returns
        -------
        ndarray of int8
            One 0/1 decision per row.
        """
        y_score = as_scores(y_score, "y_score")
        index = self.group_index(sensitive_features, len(y_score))
        y_pred = np.zeros(len(y_score), dtype=np.int8)
        for i in np.unique(index):
            rows = np.flatnonzero(index == i)
            y_pred[rows] = self.points[i].apply(y_score[rows], seed=seed)
        return y_pred

    def to_dict(self) -> dict:
        """Plain JSON-able form (what a registered model stores).

        Returns
        -------
        dict
            ``{"columns": [...], "groups": [{"values", "threshold", "tie_share"}, ...]}``.
        """
        return {"columns": list(self.columns),
                "groups": [{"values": list(group), "threshold": point.threshold, "tie_share": point.tie_share}
                           for group, point in zip(self.groups, self.points)]}

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> GroupThresholds:
        """The inverse of :meth:`to_dict`; a ValueError names what is malformed.

        Parameters
        ----------
        document : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        GroupThresholds
            The rules.
        """
        try:
            columns = tuple(str(c) for c in document["columns"])
            groups = tuple(tuple(str(v) for v in entry["values"]) for entry in document["groups"])
            points = tuple(OperatingPoint(float(entry["threshold"]), float(entry["tie_share"]))
                           for entry in document["groups"])
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f"group thresholds are malformed: {error!r}") from None
        if not columns or not groups or any(len(g) != len(columns) for g in groups) or len(set(groups)) != len(groups):
            raise InputError("group thresholds are malformed: every group needs one value per column, once")
        return cls(columns, groups, points)


def _per_group(y_score: ArrayLike, y_true: ArrayLike | None, sensitive_features: Sensitive, targets: dict[str, Any],
               ) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], list[tuple[str, ...]], np.ndarray,
                          list[dict[str, Any]]]:
    """(scores, labels, column names, group keys, each row's group, each group's target)."""
    name, value = given_target(**targets)
    check_per_group_target(name)
    y_score = as_scores(y_score, "y_score")
    columns, keys, codes = _keys(sensitive_features, len(y_score))
    return y_score, np.asarray(y_true), columns, keys, codes, _targets(name, value, codes, len(keys))


def group_thresholds(y_score: ArrayLike, y_true: ArrayLike | None, sensitive_features: Sensitive, *,
                     tpr: float | None = None, fpr: float | None = None, top_k: int | None = None,
                     threshold: float | None = None, seed: int = 0) -> GroupThresholds:
    """One :class:`OperatingPoint` per group, set so each group meets the target exactly on these rows.

    A fixed ``threshold`` is refused: see :func:`check_per_group_target`.

    Parameters
    ----------
    y_score, y_true : array-like of shape (n_samples,)
        Scores and binary labels.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns; their combinations are the groups.
    tpr, fpr, top_k, threshold : float or int, optional
        The target, exactly one of them, as in :func:`binarize`; ``top_k`` is shared among the groups in
        proportion to their sizes.
    seed : int, default=0
        Breaks ties at each group's cut.

    Returns
    -------
    GroupThresholds
        The rules, to score other rows with.
    """
    y_score, y_true, columns, keys, codes, targets = _per_group(
        y_score, y_true, sensitive_features, {"tpr": tpr, "fpr": fpr, "top_k": top_k, "threshold": threshold})
    points = []
    for i, group_target in enumerate(targets):
        rows = np.flatnonzero(codes == i)
        try:
            points.append(operating_point(y_score[rows], y_true[rows], seed=seed, **group_target))
        except ValueError as error:
            names = ", ".join(f"{c}={v!r}" for c, v in zip(columns, keys[i]))
            raise InputError(f"group {names} ({len(rows)} rows): {error}") from None
    return GroupThresholds(columns, tuple(keys), tuple(points))


def group_decisions(y_score: ArrayLike, y_true: ArrayLike | None, sensitive_features: Sensitive, *,
                    tpr: float | None = None, fpr: float | None = None, top_k: int | None = None,
                    threshold: float | None = None, seed: int = 0) -> NDArray[np.int8]:
    """0/1 decisions meeting the target exactly in every group (ties broken with ``seed`` per group).

    Parameters
    ----------
    y_score, y_true : array-like of shape (n_samples,)
        Scores and binary labels.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns; their combinations are the groups.
    tpr, fpr, top_k, threshold : float or int, optional
        The target, exactly one of them (a fixed ``threshold`` is refused).
    seed : int, default=0
        Breaks ties at each group's cut.

    Returns
    -------
    ndarray of int8
        One 0/1 decision per row.

    Examples
    --------
    >>> group_decisions([0.9, 0.1, 0.8, 0.2], [1, 1, 1, 1], ["a", "a", "b", "b"], tpr=0.5).tolist()
    [1, 0, 1, 0]
    """
    y_score, y_true, _, _, codes, targets = _per_group(
        y_score, y_true, sensitive_features, {"tpr": tpr, "fpr": fpr, "top_k": top_k, "threshold": threshold})
    y_pred = np.zeros(len(y_score), dtype=np.int8)
    for i, group_target in enumerate(targets):
        rows = np.flatnonzero(codes == i)
        y_pred[rows] = binarize(y_score[rows], y_true[rows], seed=seed, **group_target)
    return y_pred


def served_decision(point: OperatingPoint, y_score) -> np.ndarray:
    """0/1 decisions of a served model, one row at a time: above the threshold positive, below it
    negative, exactly at it positive when at least half of the rows tied there were positive when it
    was set (a served row cannot be tie-broken against the others of its request).

    >>> served_decision(OperatingPoint(0.5, 0.6), [0.7, 0.5, 0.3]).tolist()
    [1, 1, 0]
    """
    y_score = as_scores(y_score, "y_score")
    at = y_score == point.threshold
    return ((y_score > point.threshold) | (at & (point.tie_share >= 0.5))).astype(np.int8)
