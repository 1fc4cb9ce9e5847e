"""Turning scores into decisions at a target operating point.

:func:`binarize` meets a target (TPR, FPR or top-k) exactly on the rows it is given, or cuts at a fixed
score (``threshold``). :func:`operating_point` records where that cut falls, so the same rule can be
applied unchanged to other rows (the paper's protocol: the threshold is set on the validation rows and
used as is on the test rows, where the target is then met only approximately; a fixed threshold is the
same cut everywhere). :func:`checked_target` validates a target given as a mapping (a config file's).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ._inputs import as_binary_labels, as_scores, check_same_length

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray

#: The targets a cut can be set by: three met exactly on the rows given, and a fixed score.
TARGETS = ("tpr", "fpr", "top_k", "threshold")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def check_target_value(name: str, value):
    """``value`` if it is a valid value of target ``name``, else a ValueError naming the target.

    TPR in (0, 1], FPR in [0, 1], top-k a non-negative integer (a row count), threshold a finite score.

    >>> check_target_value("fpr", 0.0), check_target_value("threshold", -2.5)
    (0.0, -2.5)
    >>> check_target_value("tpr", "0.5")
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: tpr must be a number in (0, 1], got '0.5'
    """
    if name == "top_k":
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InputError(f"top_k must be a non-negative integer, got {value!r}")
    elif name == "threshold":
        if not _is_number(value):
            raise InputError(f"threshold must be a finite number, got {value!r}")
    elif name in ("tpr", "fpr"):
        low_ok = _is_number(value) and (value >= 0 if name == "fpr" else value > 0)
        if not (low_ok and value <= 1):
            raise InputError(f"{name} must be a number in {'[0, 1]' if name == 'fpr' else '(0, 1]'}, got {value!r}")
    else:
        raise InputError(f"target key {name!r} is not one of {TARGETS}")
    return value


def checked_target(target) -> dict:
    """A target given as a mapping of one key (``{"tpr": 0.5}``, ``{"threshold": 0.5}``, ...), checked by
    name and value: the keyword :func:`binarize` takes.

    >>> checked_target({"top_k": 10})
    {'top_k': 10}
    >>> checked_target({"cut": 0.5})
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: target key 'cut' is not one of ('tpr', 'fpr', 'top_k', 'threshold')
    """
    if not isinstance(target, dict) or len(target) != 1:
        raise InputError(f"target must hold exactly one key of {TARGETS} with its value, e.g. {{'tpr': 0.5}}; "
                         f"got {target!r}")
    ((name, value),) = target.items()
    return {name: check_target_value(name, value)}


def given_target(**targets) -> tuple[str, object]:
    """The one target given among keyword arguments set to None when not given, checked.

    >>> given_target(tpr=None, fpr=None, top_k=None, threshold=0.5)
    ('threshold', 0.5)
    """
    given = [name for name, value in targets.items() if value is not None]
    if len(given) != 1:
        raise InputError(f"give exactly one of {', '.join(TARGETS)}; got {given or 'none'}")
    return given[0], check_target_value(given[0], targets[given[0]])


def ranking_order(y_score: np.ndarray, seed: int) -> np.ndarray:
    """Row indices from the highest score down; ties in random order fixed by ``seed``."""
    tie_breaker = np.random.default_rng(seed).permutation(len(y_score))
    return np.lexsort((tie_breaker, -y_score))


def binarize(y_score: ArrayLike, y_true: ArrayLike | None, *, tpr: float | None = None, fpr: float | None = None,
             top_k: int | None = None, threshold: float | None = None, seed: int = 0) -> NDArray[np.int8]:
    """Predict positive for the top-scored rows until a target is met exactly, or at a fixed score.

    Give exactly one target:

    - ``tpr=t``: the shortest top of the ranking holding ``ceil(t * n_pos)`` true positives
      (the highest threshold whose true-positive rate reaches ``t``);
    - ``fpr=f``: the longest top of the ranking holding ``floor(f * n_neg)`` false positives
      (the lowest threshold whose false-positive rate stays within ``f``);
    - ``top_k=k``: the ``k`` top-scored rows;
    - ``threshold=c``: every row scoring ``c`` or more (a fixed cut: no rate is met, and the labels
      are not read).

    Rows with equal scores are ordered at random with ``seed``, so the target is met
    exactly and the result is reproducible.

    Parameters
    ----------
    y_score, y_true : array-like of shape (n_samples,)
        Scores and binary labels.
    tpr, fpr : float, optional
        Target true- or false-positive rate in [0, 1].
    top_k : int, optional
        Number of rows predicted positive.
    threshold : float, optional
        A fixed score cut.
    seed : int, default=0
        Orders tied scores.

    Returns
    -------
    ndarray of int8
        One 0/1 decision per row.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    >>> labels = np.array([1, 0, 1, 0, 1, 0])
    >>> binarize(scores, labels, tpr=0.5).tolist()   # 2 of 3 positives needed
    [1, 1, 1, 0, 0, 0]
    >>> binarize(scores, labels, fpr=0.34).tolist()  # 1 of 3 negatives allowed
    [1, 1, 1, 0, 0, 0]
    >>> binarize(scores, labels, top_k=1).tolist()
    [1, 0, 0, 0, 0, 0]
    >>> binarize(scores, labels, threshold=0.5).tolist()
    [1, 1, 1, 1, 1, 0]
    """
    y_score = as_scores(y_score, "y_score")
    order, cut = _cut(y_score, y_true, tpr, fpr, top_k, threshold, seed)
    y_pred = np.zeros(len(y_score), dtype=np.int8)
    y_pred[order[:cut]] = 1
    return y_pred


def _cut(y_score, y_true, tpr, fpr, top_k, threshold, seed) -> tuple[np.ndarray, int]:
    """The ranking (ties in seeded random order) and how many of its top rows are predicted positive."""
    y_true = as_binary_labels(y_true, "y_true")
    n = check_same_length(y_score=y_score, y_true=y_true)
    given_target(tpr=tpr, fpr=fpr, top_k=top_k, threshold=threshold)

    order = ranking_order(y_score, seed)
    ranked_labels = y_true[order]
    if threshold is not None:  # the rows at or above it are a top of the ranking
        cut = int(np.count_nonzero(y_score >= threshold))
    elif tpr is not None:
        n_pos = int(ranked_labels.sum())
        if n_pos == 0:
            raise InputError("tpr target is unreachable: y_true has no positive rows")
        needed = math.ceil(tpr * n_pos - 1e-12)
        true_positives = np.cumsum(ranked_labels)
        cut = int(np.searchsorted(true_positives, needed)) + 1
    elif fpr is not None:
        n_neg = n - int(ranked_labels.sum())
        if n_neg == 0:
            raise InputError("fpr target is unreachable: y_true has no negative rows")
        allowed = math.floor(fpr * n_neg + 1e-12)
        false_positives = np.cumsum(1 - ranked_labels)
        cut = int(np.searchsorted(false_positives, allowed, side="right"))
    else:
        if top_k > n:
            raise InputError(f"top_k={top_k} is unreachable: only {n} rows")
        cut = int(top_k)
    return order, cut


@dataclass(frozen=True)
class OperatingPoint:
    """A decision rule taken from one set of rows: positive above ``threshold``, and at it a share.

    Rows scoring above ``threshold`` are positive, rows below are negative, and of the rows scoring
    exactly ``threshold`` the share ``tie_share`` is positive (chosen at random with a seed, the way
    :func:`binarize` breaks ties). ``threshold`` is ``inf`` when nothing was positive and ``-inf`` when
    everything was.

    Parameters
    ----------
    threshold : float
        The cut; not NaN.
    tie_share : float
        Share in [0, 1] of the rows at the threshold that are positive.

    Examples
    --------
    >>> point = OperatingPoint(0.5, 0.0)
    >>> point.apply([0.9, 0.5, 0.1]).tolist()
    [1, 0, 0]
    """

    threshold: float
    tie_share: float

    def __post_init__(self):
        if math.isnan(self.threshold):
            raise InputError("threshold must not be NaN")
        if not 0.0 <= self.tie_share <= 1.0:
            raise InputError(f"tie_share must be in [0, 1], got {self.tie_share}")

    def apply(self, y_score: ArrayLike, *, seed: int = 0) -> NDArray[np.int8]:
        """0/1 decisions for scores; on the rows it was set on (same seed) it gives :func:`binarize`'s.

        Parameters
        ----------
        y_score : array-like of shape (n_samples,)
            Scores to decide on.
        seed : int, default=0
            Chooses which tied rows are positive.

        Returns
        -------
        ndarray of int8
            One 0/1 decision per row.
        """
        y_score = as_scores(y_score, "y_score")
        y_pred = (y_score > self.threshold).astype(np.int8)
        tied = np.flatnonzero(y_score == self.threshold)
        if len(tied):
            # binarize orders tied rows by a seeded permutation of all rows; take the same ones first
            tie_breaker = np.random.default_rng(seed).permutation(len(y_score))
            taken = int(round(self.tie_share * len(tied)))
            y_pred[tied[np.argsort(tie_breaker[tied], kind="stable")[:taken]]] = 1
        return y_pred


def operating_point(y_score: ArrayLike, y_true: ArrayLike | None, *, tpr: float | None = None,
                    fpr: float | None = None, top_k: int | None = None, threshold: float | None = None,
                    seed: int = 0) -> OperatingPoint:
    """Where :func:`binarize` cuts these rows, as a rule that other rows can be scored with.

    A fixed ``threshold`` is its own rule, whatever the rows: ``OperatingPoint(threshold, 1.0)`` (positive at
    or above it).

    Parameters
    ----------
    y_score, y_true : array-like of shape (n_samples,)
        Scores and binary labels of the rows the rule is set on.
    tpr, fpr : float, optional
        Target true- or false-positive rate in [0, 1].
    top_k : int, optional
        Number of rows predicted positive.
    threshold : float, optional
        A fixed score cut.
    seed : int, default=0
        Orders tied scores.

    Returns
    -------
    OperatingPoint
        The threshold and the share of its ties that are positive.

    Examples
    --------
    >>> import numpy as np
    >>> validation = np.array([0.9, 0.8, 0.7, 0.6]); labels = np.array([1, 0, 1, 0])
    >>> point = operating_point(validation, labels, tpr=0.5)
    >>> point
    OperatingPoint(threshold=0.9, tie_share=1.0)
    >>> point.apply(np.array([0.95, 0.85, 0.9])).tolist()   # test rows: the same threshold
    [1, 0, 1]
    >>> operating_point(validation, labels, threshold=0.75)
    OperatingPoint(threshold=0.75, tie_share=1.0)
    """
    y_score = as_scores(y_score, "y_score")
    order, cut = _cut(y_score, y_true, tpr, fpr, top_k, threshold, seed)
    if threshold is not None:
        return OperatingPoint(float(threshold), 1.0)
    if cut == 0:
        return OperatingPoint(math.inf, 0.0)
    if cut == len(y_score):
        return OperatingPoint(-math.inf, 1.0)
    threshold = float(y_score[order[cut - 1]])
    tied = int(np.count_nonzero(y_score == threshold))
    taken = int(np.count_nonzero(y_score[order[:cut]] == threshold))
    return OperatingPoint(threshold, taken / tied)
