"""The two moments of the reductions: the classification error and a parity constraint, over NumPy arrays.

Agarwal et al. (2018) write a fairness constraint as a vector of moments ``gamma(h) <= c`` and the
objective as ``err(h)``; both are linear in the predictions, so a randomized classifier ``Q`` (weights over
predictors) has ``gamma(Q)`` and ``err(Q)`` as weighted sums of its predictors' values. A prediction
vector here is each training row's chance of a positive decision (0 or 1 for a deterministic predictor).

**Parity** (:class:`ParityConstraint`) compares a rate among the rows of an *event* -- the positives
(``"tpr"``, equal opportunity), the negatives (``"fpr"``, predictive equality) or every row (``"ppr"``,
demographic parity) -- between each group ``k`` of a sensitive attribute and all event rows. With a
ratio bound ``r`` (``r = 1`` for a difference bound) the two moments of group ``k`` are

    gamma(+, k) = r * m_k - m        gamma(-, k) = r * m - m_k

where ``m`` is the mean prediction over the event rows and ``m_k`` over the event rows of group ``k``;
each must stay below the bound (the difference bound, or the ratio's additive slack). With several
attributes, ``groups="lowest"`` constrains every attribute's groups (each attribute a block of moments,
so every attribute's ratio is held, and so their lowest), ``"intersectional"`` the groups of their
combined values. A group without event rows (no positives, for ``"tpr"``) has no rate and no moment.

Moments are ordered as ``[+ for every (block, group)] + [- for every (block, group)]``, groups in
sorted order within a block.

>>> import numpy as np
>>> y = np.array([1, 1, 1, 1, 0, 0]); groups = [np.array([0, 0, 1, 1, 0, 1])]
>>> parity = ParityConstraint("tpr", y, groups)
>>> parity.gamma(np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])).round(3).tolist()  # TPR 1.0 vs 0.5, overall 0.75
[0.25, -0.25, -0.25, 0.25]
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

#: The rates a parity constraint can hold equal, named as the task grammar names fairness ratios.
CONSTRAINTS = ("tpr", "fpr", "ppr")


class ErrorObjective:
    """The weighted classification error ``(fp * #false positives + fn * #false negatives) / n``.

    >>> objective = ErrorObjective(np.array([1, 0, 1]))
    >>> objective.error(np.array([1.0, 1.0, 0.0]))  # one false positive, one false negative
    0.6666666666666666
    """

    def __init__(self, y01: np.ndarray, costs: dict | None = None):
        self.y = np.asarray(y01, dtype=np.float64)
        costs = {"fp": 1.0, "fn": 1.0} if costs is None else costs
        self.fp, self.fn = float(costs["fp"]), float(costs["fn"])

    def error(self, predictions: np.ndarray) -> float:
        missed = self.y * (1.0 - predictions)
        false_alarm = (1.0 - self.y) * predictions
        return float((self.fn * missed.sum() + self.fp * false_alarm.sum()) / len(self.y))

    def signed_weights(self) -> np.ndarray:
        """Per row: the cost of predicting 0 minus the cost of predicting 1 (times n)."""
        return np.where(self.y == 1, self.fn, -self.fp)


class ParityConstraint:
    """The parity moments of :mod:`fairops.reductions._constraints` over the training rows.

    ``y01``: 0/1 labels; ``blocks``: one integer code array per block (an attribute, or the combined
    groups), codes ``0..G-1``; ``ratio``: ``r`` (1 for a difference bound); ``bound``: the right-hand side.
    """

    def __init__(self, kind: str, y01: np.ndarray, blocks, *, ratio: float = 1.0, bound: float = 0.01):
        if kind not in CONSTRAINTS:
            raise InputError(f"constraint must be one of {CONSTRAINTS}, got {kind!r}")
        y01 = np.asarray(y01)
        self.kind, self.ratio, self.bound_value = kind, float(ratio), float(bound)
        self.n_rows = len(y01)
        self.event = np.ones(self.n_rows, bool) if kind == "ppr" else (y01 == (1 if kind == "tpr" else 0))
        self.n_event = int(self.event.sum())
        if self.n_event == 0:
            raise InputError(f"no training row is in the constraint's event ({_EVENT_WORDS[kind]})")
        # One entry per (block, group) with event rows: its block, its code, its event rows.
        pair_block: list[int] = []
        pair_group: list[int] = []
        counts, self._codes = [], []
        for block, codes in enumerate(blocks):
            codes = np.asarray(codes, dtype=np.intp)
            present = np.bincount(codes[self.event])
            groups = np.flatnonzero(present)
            # Rows of groups without event rows point at no pair (-1).
            lookup = np.full(max(int(codes.max()) + 1, len(present)), -1, dtype=np.intp)
            lookup[groups] = len(pair_group) + np.arange(len(groups))
            self._codes.append(np.where(self.event, lookup[codes], -1))
            pair_block += [block] * len(groups)
            pair_group += groups.tolist()
            counts += present[groups].tolist()
        self.pair_block, self.pair_group = np.array(pair_block), np.array(pair_group)
        self.event_share = self.n_event / self.n_rows              # P(event)
        self.pair_share = np.asarray(counts, dtype=np.float64) / self.n_rows  # P(event, group)
        self.n_pairs = len(self.pair_group)

    @property
    def n_moments(self) -> int:
        return 2 * self.n_pairs

    def bound(self) -> np.ndarray:
        return np.full(self.n_moments, self.bound_value)

    def group_means(self, predictions: np.ndarray) -> tuple[float, np.ndarray]:
        """(mean over the event rows, mean over each pair's event rows)."""
        sums = np.zeros(self.n_pairs)
        for codes in self._codes:
            inside = codes >= 0
            sums += np.bincount(codes[inside], weights=predictions[inside], minlength=self.n_pairs)
        overall = float(predictions[self.event].sum()) / self.n_event
        return overall, sums / (self.pair_share * self.n_rows)

    def gamma(self, predictions: np.ndarray) -> np.ndarray:
        overall, by_group = self.group_means(np.asarray(predictions, dtype=np.float64))
        return np.concatenate([self.ratio * by_group - overall, self.ratio * overall - by_group])

    def signed_weights(self, lambdas: np.ndarray) -> np.ndarray:
        """Per row, the change of ``sum(lambda * gamma) * n`` when the row's prediction goes from 1 to 0.

        Added to :meth:`ErrorObjective.signed_weights`, its sign is the cost-sensitive label of the
        best response and its size the row's weight (Agarwal et al.'s C^0 - C^1).
        """
        plus, minus = lambdas[:self.n_pairs], lambdas[self.n_pairs:]
        common = float((plus - self.ratio * minus).sum()) / self.event_share
        per_pair = (minus - self.ratio * plus) / self.pair_share
        weights = np.where(self.event, common, 0.0)
        for codes in self._codes:
            inside = codes >= 0
            weights[inside] += per_pair[codes[inside]]
        return weights

    def project(self, lambdas: np.ndarray) -> np.ndarray:
        """Multipliers giving the same Lagrangian for every classifier, with a smaller norm.

        For a difference bound, ``sum_k (lambda+_k - lambda-_k) (m_k - m)`` does not change when each
        block's signed multipliers move by ``P(group | event) * shift``, since a block's groups
        partition the event rows; the shift is the weighted median of ``signed / P(group | event)``.
        A ratio bound keeps the multipliers as they are.
        """
        if self.ratio != 1.0:
            return lambdas
        signed = lambdas[:self.n_pairs] - lambdas[self.n_pairs:]
        share = self.pair_share / self.event_share
        for block in np.unique(self.pair_block):
            pairs = np.flatnonzero(self.pair_block == block)
            normalized = signed[pairs] / share[pairs]
            order = np.argsort(normalized, kind="stable")
            cumulative = np.cumsum(share[pairs][order])
            median = int(np.searchsorted(cumulative, share[pairs].sum() / 2))
            signed[pairs] -= share[pairs] * normalized[order[median]]
        return np.concatenate([np.clip(signed, 0.0, None), np.clip(-signed, 0.0, None)])

    def describe(self, moment: int) -> str:
        """A moment in words, e.g. ``"+ block 0 group 1"`` (for logs and errors)."""
        pair = moment % self.n_pairs
        sign = "+" if moment < self.n_pairs else "-"
        return f"{sign} block {self.pair_block[pair]} group {self.pair_group[pair]}"


_EVENT_WORDS = {"tpr": "the positives", "fpr": "the negatives", "ppr": "every row"}
