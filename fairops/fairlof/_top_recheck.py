"""Exact neighbours for the top of an approximate LOF ranking (``search_params["recheck"]``).

An approximate graph moves the top of a LOF ranking far more than its mean recall suggests.
LOF of x divides its neighbours' local reachability density by its own, so a missed neighbour
of x inflates its k-distance and its LOF, and a missed neighbour of one of x's neighbours
deflates that neighbour's density and x's LOF. The rows at the top of the ranking are the
isolated ones, exactly where a graph misses most (docs/fairlof/large_n.md).

:func:`recheck_top` repairs the top by rounds: score plain LOF from the current neighbours,
take the ``band`` rows of highest LOF, and search those rows and their neighbours again exactly
where they were not searched yet. A row that was only high because of a missed neighbour then
falls, and the rows it hid rise into the band and are searched in the next round. The rounds
stop when the band and the band's neighbours are all exact. Should the rows searched pass a
quarter of all rows, the rest are searched too (one exact pass is then cheaper than more rounds).

>>> import numpy as np
>>> from fairops.fairlof._blocked_search import BlockedKNeighbors
>>> X = np.random.default_rng(0).normal(size=(400, 3))
>>> exact = BlockedKNeighbors(n_neighbors=4).fit(X)
>>> true_d, true_i = exact.kneighbors()
>>> d, i = true_d.copy(), true_i.copy()
>>> d[:, -1] *= 3.0                                   # every row's k-distance now wrong
>>> report = recheck_top(d, i, exact, band=10)
>>> top = np.argsort(-plain_lof(d, i), kind="stable")[:10]
>>> bool(np.array_equal(d[top], true_d[top])), report.rounds >= 1
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._scoring import Neighbourhood

#: Once the rows searched exceed this share of all rows, the remaining rows are searched too.
EXHAUSTIVE_SHARE = 0.25


@dataclass(frozen=True)
class RecheckReport:
    """How much exact searching the recheck did: rounds and distinct rows searched."""

    rounds: int
    rows: int


def plain_lof(distances: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """scikit-learn's LOF of every fitted row from its (n, k) neighbour arrays."""
    terms = np.zeros(indices.shape)
    return Neighbourhood(distances, indices, distances[:, -1].copy(), terms).scores(0.0, 1.0).scores


class TopRecheck:
    """The recheck over one set of fitted rows, remembering which rows are already exact, so that a
    second ranking (FairLOF at the fitted lambda, after plain LOF) searches only rows not yet searched.

    ``exact_search``: a fitted :class:`~fairops.fairlof._blocked_search.BlockedKNeighbors` over the
    rows (its ``kneighbors_of_rows`` answers each searched row); ``band``: rows at the top of a
    ranking that must end exact, with their neighbours.
    """

    def __init__(self, exact_search, n_rows: int, band: int):
        self.exact_search = exact_search
        self.band = band
        self.searched = np.zeros(n_rows, dtype=bool)
        self.rounds = 0

    def run(self, distances: np.ndarray, indices: np.ndarray, scores=plain_lof) -> None:
        """Rounds until the ``band`` rows of highest ``scores(distances, indices)`` and their
        neighbours are all exact (arrays updated in place). The last call of ``scores`` sees the
        final arrays."""
        n = len(indices)
        while True:
            top = np.argsort(-scores(distances, indices), kind="stable")[:self.band]
            rows = np.unique(np.r_[top, indices[top].ravel()])
            rows = rows[~self.searched[rows]]
            if rows.size == 0:
                return
            if self.searched.sum() + rows.size > EXHAUSTIVE_SHARE * n:
                rows = np.flatnonzero(~self.searched)
            distances[rows], indices[rows] = self.exact_search.kneighbors_of_rows(rows)
            self.searched[rows] = True
            self.rounds += 1

    @property
    def report(self) -> RecheckReport:
        return RecheckReport(rounds=self.rounds, rows=int(self.searched.sum()))


def recheck_top(distances: np.ndarray, indices: np.ndarray, exact_search, band: int) -> RecheckReport:
    """Give the ``band`` rows of highest plain LOF, and their neighbours, their exact neighbours (in place).

    ``exact_search``: a fitted :class:`~fairops.fairlof._blocked_search.BlockedKNeighbors` over the
    same rows (its ``kneighbors_of_rows`` answers each searched row).
    """
    recheck = TopRecheck(exact_search, len(indices), band)
    recheck.run(distances, indices)
    return recheck.report


class RecheckedSearch:
    """What the approximate searches share: their settings, and after ``kneighbors()`` the top of
    plain LOF is exact; :meth:`recheck_ranking` makes the top of another ranking exact too (FairLOF
    calls it with its scores at the fitted lambda) and :meth:`end_recheck` lets go of the recheck's
    state. ``rechecked_rows_`` and ``recheck_rounds_`` count both rankings.

    ``params``: ``search_params`` of ``FairLOF(algorithm="approximate")``; ``top_t``: the
    detector's outlier-list length, which sizes the band (``params["recheck"] * top_t``).
    """

    _top_recheck: TopRecheck | None  # from the fit's first ranking to end_recheck

    def __init__(self, n_neighbors: int = 5, n_jobs=None, params=None, top_t: int = 1):
        self.n_neighbors = n_neighbors
        self.n_jobs = n_jobs
        self.params = params
        self.top_t = top_t

    def _recheck_plain(self, distances, indices, exact_search, band: int) -> None:
        """``band`` 0: the recheck is off (``exact_search`` may then be None)."""
        self._top_recheck = TopRecheck(exact_search, len(indices), band)
        self.recheck_ranking(distances, indices, plain_lof)

    def recheck_ranking(self, distances, indices, scores) -> None:
        """Exact neighbours for the rows of highest ``scores(distances, indices)`` and their
        neighbours, in rounds (arrays updated in place). ``scores`` is called at least once, the
        last time on the final arrays, also when the recheck is off."""
        recheck = self._top_recheck
        assert recheck is not None, "recheck_ranking runs between the fit's first ranking and end_recheck"
        recheck.run(distances, indices, scores)
        report = recheck.report
        self.rechecked_rows_, self.recheck_rounds_ = report.rows, report.rounds

    def end_recheck(self) -> None:
        """Drop the recheck's state (its exact search and the rows it searched): a fitted detector keeps
        the search for new rows only."""
        self._top_recheck = None
