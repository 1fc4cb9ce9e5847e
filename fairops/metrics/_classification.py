"""Accuracy metrics and per-group rates of binary decisions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from ..errors import InputError
from ._inputs import EncodedGroups, as_binary_labels, check_same_length, encode_sensitive

if TYPE_CHECKING:
    from .._typing import ArrayLike, Rate, Sensitive

RATES = ("tpr", "fpr", "ppr")
#: The four-fifths rule of US employment practice: a group's selection rate under 4/5 of the highest
#: group's is taken as evidence of adverse impact (29 CFR 1607.4(D)); fairops' default fairness line.
FOUR_FIFTHS = 0.8


def _labels_and_predictions(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    y_true = as_binary_labels(y_true, "y_true")
    y_pred = as_binary_labels(y_pred, "y_pred")
    check_same_length(y_true=y_true, y_pred=y_pred)
    return y_true, y_pred


def precision(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of predicted positives that are positive; 0.0 when nothing is predicted positive.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Binary labels and binary decisions.

    Returns
    -------
    float
        The precision in [0, 1].

    Examples
    --------
    >>> precision([1, 0, 1, 1], [1, 1, 0, 0])
    0.5
    """
    y_true, y_pred = _labels_and_predictions(y_true, y_pred)
    predicted = int(y_pred.sum())
    return float((y_true & y_pred).sum() / predicted) if predicted else 0.0


def recall(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of positives predicted positive (the true-positive rate).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Binary labels (at least one positive) and binary decisions.

    Returns
    -------
    float
        The recall in [0, 1].

    Examples
    --------
    >>> recall([1, 0, 1, 1], [1, 1, 0, 0])
    0.3333333333333333
    """
    y_true, y_pred = _labels_and_predictions(y_true, y_pred)
    positives = int(y_true.sum())
    if positives == 0:
        raise InputError("recall is undefined: y_true has no positive rows")
    return float((y_true & y_pred).sum() / positives)


@dataclass(frozen=True)
class GroupRates:
    """Confusion counts and rates per sensitive group (one entry per group, same order).

    ``tpr`` is NaN for a group without positives and ``fpr`` for one without negatives:
    the rate does not exist there. ``fairness_ratio`` refuses such groups by name.

    Parameters
    ----------
    attribute : str
        The sensitive column (``"a&b"`` for columns seen together).
    groups : tuple
        The groups' values.
    count, positives, negatives, predicted_positive, true_positives, false_positives : ndarray of int
        Counts per group: rows, label 1, label 0, decided 1, both 1, decided 1 with label 0.
    """

    attribute: str
    groups: tuple
    count: np.ndarray
    positives: np.ndarray
    negatives: np.ndarray
    predicted_positive: np.ndarray
    true_positives: np.ndarray
    false_positives: np.ndarray

    @property
    def tpr(self) -> np.ndarray:
        """True-positive rate per group (NaN without positives)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.positives > 0, self.true_positives / np.maximum(self.positives, 1), np.nan)

    @property
    def fpr(self) -> np.ndarray:
        """False-positive rate per group (NaN without negatives)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.negatives > 0, self.false_positives / np.maximum(self.negatives, 1), np.nan)

    @property
    def ppr(self) -> np.ndarray:
        """Share of each group's rows decided positive."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.count > 0, self.predicted_positive / np.maximum(self.count, 1), np.nan)

    def rate(self, name: str) -> np.ndarray:
        """One of the three rates per group, by name.

        Parameters
        ----------
        name : {"tpr", "fpr", "ppr"}
            The rate.

        Returns
        -------
        ndarray of float
            The rate per group.
        """
        if name not in RATES:
            raise InputError(f"rate must be one of {RATES}, got {name!r}")
        return getattr(self, name)

    def defined(self, name: str) -> GroupRates:
        """These rates without the groups where rate ``name`` does not exist.

        E.g. the FPR of a group without negatives. Unless fewer than two groups would be left (then
        unchanged, so the ratio names them).

        Parameters
        ----------
        name : {"tpr", "fpr", "ppr"}
            The rate.

        Returns
        -------
        GroupRates
            The groups where it exists.

        Examples
        --------
        >>> rates = group_rates([1, 0, 1, 1, 0, 1], [1, 0, 1, 1, 1, 0], ["a", "a", "b", "b", "c", "c"])
        >>> rates.defined("fpr").groups, rates.defined("tpr").groups
        (('a', 'c'), ('a', 'b', 'c'))
        """
        keep = ~np.isnan(self.rate(name))
        if keep.all() or keep.sum() < 2:
            return self
        return GroupRates(self.attribute, tuple(g for g, k in zip(self.groups, keep) if k),
                          *(getattr(self, f)[keep] for f in ("count", "positives", "negatives", "predicted_positive",
                                                             "true_positives", "false_positives")))

    def to_records(self) -> list[dict]:
        """One dict per group, ready for ``pandas.DataFrame`` or a JSON artifact.

        Returns
        -------
        list of dict
            Attribute, group, counts and the three rates.
        """
        return [
            {
                "attribute": self.attribute,
                "group": group,
                "count": int(self.count[i]),
                "positives": int(self.positives[i]),
                "predicted_positive": int(self.predicted_positive[i]),
                "tpr": float(self.tpr[i]),
                "fpr": float(self.fpr[i]),
                "ppr": float(self.ppr[i]),
            }
            for i, group in enumerate(self.groups)
        ]


def _rates_for(encoded: EncodedGroups, y_true: np.ndarray, y_pred: np.ndarray) -> GroupRates:
    (codes,), (labels,) = encoded.codes, encoded.labels
    size = len(labels)
    count = np.bincount(codes, minlength=size)
    positives = np.bincount(codes, weights=y_true, minlength=size).astype(np.int64)
    predicted = np.bincount(codes, weights=y_pred, minlength=size).astype(np.int64)
    true_positives = np.bincount(codes, weights=y_true & y_pred, minlength=size).astype(np.int64)
    return GroupRates(
        attribute=encoded.names[0],
        groups=labels,
        count=count,
        positives=positives,
        negatives=count - positives,
        predicted_positive=predicted,
        true_positives=true_positives,
        false_positives=predicted - true_positives,
    )


@overload
def group_rates(y_true: ArrayLike, y_pred: ArrayLike, sensitive_features: Sensitive, *,
                intersectional: Literal[True] = ...) -> GroupRates: ...
@overload
def group_rates(y_true: ArrayLike, y_pred: ArrayLike, sensitive_features: Sensitive, *,
                intersectional: Literal[False]) -> list[GroupRates]: ...
@overload
def group_rates(y_true: ArrayLike, y_pred: ArrayLike, sensitive_features: Sensitive, *,
                intersectional: bool) -> GroupRates | list[GroupRates]: ...
def group_rates(y_true: ArrayLike, y_pred: ArrayLike, sensitive_features: Sensitive, *,
                intersectional: bool = True) -> GroupRates | list[GroupRates]:
    """Per-group confusion counts and TPR, FPR and positive rate.

    With several sensitive columns, ``intersectional=True`` gives one ``GroupRates`` over
    the groups seen together (e.g. ``("Female", "Black")``); ``False`` gives a list with
    one ``GroupRates`` per column.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Binary labels and binary decisions.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns.
    intersectional : bool, default=True
        Count the groups the columns form together, else each column on its own.

    Returns
    -------
    GroupRates or list of GroupRates
        The rates, one ``GroupRates`` per column when ``intersectional=False``.

    Examples
    --------
    >>> rates = group_rates([1, 0, 1, 0], [1, 0, 0, 1], ["a", "a", "b", "b"])
    >>> rates.groups, rates.tpr.tolist(), rates.fpr.tolist()
    (('a', 'b'), [1.0, 0.0], [0.0, 1.0])
    """
    y_true, y_pred = _labels_and_predictions(y_true, y_pred)
    encoded = encode_sensitive(sensitive_features, len(y_true), min_values=1)
    if intersectional:
        return _rates_for(encoded.intersection(), y_true, y_pred)
    return [
        _rates_for(EncodedGroups((name,), (codes,), (labels,)), y_true, y_pred)
        for name, codes, labels in zip(encoded.names, encoded.codes, encoded.labels)
    ]


def _ratio(rates: GroupRates, rate: str) -> float:
    values = rates.rate(rate)
    undefined = [group for group, value in zip(rates.groups, values) if np.isnan(value)]
    if undefined:
        missing = {"tpr": "positive rows", "fpr": "negative rows", "ppr": "rows"}[rate]
        raise InputError(
            f"{rate} is undefined for group(s) {undefined} of {rates.attribute!r}: "
            f"they have no {missing}"
        )
    if len(values) < 2:
        held = f"a single group {list(rates.groups)}" if len(values) else "no groups"
        raise InputError(f"sensitive attribute {rates.attribute!r} has {held}; a ratio needs at least two")
    highest = values.max()
    # All groups at rate 0 are treated equally: the ratio is 1.
    return float(values.min() / highest) if highest > 0 else 1.0


def fairness_ratio(y_true: ArrayLike, y_pred: ArrayLike, sensitive_features: Sensitive, *, rate: Rate = "tpr",
                   intersectional: bool = False) -> float:
    """Lowest group rate divided by the highest, in [0, 1]; 1 is parity.

    ``rate``: ``"tpr"`` (equal opportunity), ``"fpr"`` (predictive equality) or ``"ppr"``
    (demographic parity). With several sensitive columns every column counts: the result is the
    lowest of the per-column ratios, or with ``intersectional=True`` the ratio over the groups the
    columns form together (e.g. female x Black).
    When every group's rate is 0 the ratio is 1.0. A group where the rate does not exist
    (no positives for TPR, no negatives for FPR) raises ``ValueError``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Binary labels and binary decisions.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns.
    rate : {"tpr", "fpr", "ppr"}, default="tpr"
        The rate compared over groups.
    intersectional : bool, default=False
        Compare the groups the columns form together.

    Returns
    -------
    float
        The ratio in [0, 1].

    Examples
    --------
    >>> fairness_ratio([1, 1, 1, 1], [1, 1, 1, 0], ["m", "m", "f", "f"], rate="tpr")
    0.5
    """
    if rate not in RATES:
        raise InputError(f"rate must be one of {RATES}, got {rate!r}")
    return ratio_of(group_rates(y_true, y_pred, sensitive_features, intersectional=intersectional), rate)


def ratio_of(rates: GroupRates | list[GroupRates], rate: Rate = "tpr") -> float:
    """The fairness ratio of already computed :func:`group_rates` (one or a per-column list).

    Parameters
    ----------
    rates : GroupRates or list of GroupRates
        What :func:`group_rates` returned; with a list, the lowest of the per-column ratios.
    rate : {"tpr", "fpr", "ppr"}, default="tpr"
        The rate compared over groups.

    Returns
    -------
    float
        The ratio in [0, 1].

    Examples
    --------
    >>> ratio_of(group_rates([1, 1, 1, 1], [1, 1, 1, 0], ["m", "m", "f", "f"]), "tpr")
    0.5
    """
    if rate not in RATES:
        raise InputError(f"rate must be one of {RATES}, got {rate!r}")
    if isinstance(rates, GroupRates):
        return _ratio(rates, rate)
    rates = list(rates) if isinstance(rates, (list, tuple)) else [rates]
    if not rates or not all(isinstance(per_column, GroupRates) for per_column in rates):
        raise InputError(f"rates must be a GroupRates or a non-empty list of them (one per attribute), got {rates!r}")
    return min(_ratio(per_column, rate) for per_column in rates)
