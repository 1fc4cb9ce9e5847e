"""Turning scores into decisions at a target operating point."""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_binary_labels, as_scores, check_same_length


def ranking_order(y_score: np.ndarray, seed: int) -> np.ndarray:
    """Row indices from the highest score down; ties in random order fixed by ``seed``."""
    tie_breaker = np.random.default_rng(seed).permutation(len(y_score))
    return np.lexsort((tie_breaker, -y_score))


def binarize(y_score, y_true, *, tpr=None, fpr=None, top_k=None, seed=0) -> np.ndarray:
    """Predict positive for the top-scored rows until a target is met exactly.

    Give exactly one target:

    - ``tpr=t``: the shortest top of the ranking holding ``ceil(t * n_pos)`` true positives
      (the highest threshold whose true-positive rate reaches ``t``);
    - ``fpr=f``: the longest top of the ranking holding ``floor(f * n_neg)`` false positives
      (the lowest threshold whose false-positive rate stays within ``f``);
    - ``top_k=k``: the ``k`` top-scored rows.

    Rows with equal scores are ordered at random with ``seed``, so the target is met
    exactly and the result is reproducible.

    >>> import numpy as np
    >>> scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    >>> labels = np.array([1, 0, 1, 0, 1, 0])
    >>> binarize(scores, labels, tpr=0.5).tolist()   # 2 of 3 positives needed
    [1, 1, 1, 0, 0, 0]
    >>> binarize(scores, labels, fpr=0.34).tolist()  # 1 of 3 negatives allowed
    [1, 1, 1, 0, 0, 0]
    >>> binarize(scores, labels, top_k=1).tolist()
    [1, 0, 0, 0, 0, 0]
    """
    y_score = as_scores(y_score, "y_score")
    y_true = as_binary_labels(y_true, "y_true")
    n = check_same_length(y_score=y_score, y_true=y_true)
    targets = {"tpr": tpr, "fpr": fpr, "top_k": top_k}
    given = [name for name, value in targets.items() if value is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one of tpr, fpr, top_k; got {given or 'none'}")

    order = ranking_order(y_score, seed)
    ranked_labels = y_true[order]
    if tpr is not None:
        if not 0 < tpr <= 1:
            raise ValueError(f"tpr must be in (0, 1], got {tpr}")
        n_pos = int(ranked_labels.sum())
        if n_pos == 0:
            raise ValueError("tpr target is unreachable: y_true has no positive rows")
        needed = math.ceil(tpr * n_pos - 1e-12)
        true_positives = np.cumsum(ranked_labels)
        cut = int(np.searchsorted(true_positives, needed)) + 1
    elif fpr is not None:
        if not 0 <= fpr <= 1:
            raise ValueError(f"fpr must be in [0, 1], got {fpr}")
        n_neg = n - int(ranked_labels.sum())
        if n_neg == 0:
            raise ValueError("fpr target is unreachable: y_true has no negative rows")
        allowed = math.floor(fpr * n_neg + 1e-12)
        false_positives = np.cumsum(1 - ranked_labels)
        cut = int(np.searchsorted(false_positives, allowed, side="right"))
    else:
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 0:
            raise ValueError(f"top_k must be a non-negative integer, got {top_k!r}")
        if top_k > n:
            raise ValueError(f"top_k={top_k} is unreachable: only {n} rows")
        cut = int(top_k)
    y_pred = np.zeros(n, dtype=np.int8)
    y_pred[order[:cut]] = 1
    return y_pred
