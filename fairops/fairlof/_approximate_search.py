"""Approximate k nearest neighbours from a graph, then exact searches of the top of the rankings.

``search_params["graph"]`` picks the graph:

- ``"hnsw"`` (default): faiss's ``IndexHNSWFlat`` (the optional extra ``fairops[ann]``; faiss is
  imported only here, and only when this graph is asked for). Settings: ``hnsw_m`` (32, links per
  node), ``ef_construction`` (40, candidate list while building), ``ef_search`` (32, candidate list
  while searching; at least k + 1 is used).
- ``"nndescent"``: fairops' own compiled NN-descent (``fairops.fairlof._nndescent_search``), no
  extra library. Settings: ``graph_neighbors``, ``n_trees``, ``max_rounds``.

Either way the graph only finds the neighbour ids; their distances are computed again exactly in
float64 and the neighbours sorted by them, so only *which* rows are neighbours is approximate,
never a distance. ``recheck`` (0 = off) is fairops' own step after the graph
(``fairops.fairlof._top_recheck``): the ``recheck * top_t`` rows with the highest plain LOF, and
their neighbours, are searched again exactly (``fairops.fairlof._blocked_search``), in rounds until
the rows at the top of the ranking and their neighbours are all exact; FairLOF then does the same
for its own ranking at the fitted lambda. The top of a LOF ranking hangs on a few rows'
neighbours: a graph that misses one near neighbour of an inlier inflates its k-distance and can
lift it among the top-t, although the graph finds 99% of all neighbours (see
``docs/fairlof/large_n.md``). ``rechecked_rows_`` and ``recheck_rounds_`` tell how much was searched.

>>> import numpy as np
>>> X = np.random.default_rng(0).normal(size=(500, 4))
>>> distances, indices = HNSWKNeighbors(n_neighbors=3).fit(X).kneighbors()
>>> distances.shape, indices.shape, bool(np.all(indices != np.arange(500)[:, None]))
((500, 3), (500, 3), True)
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..errors import InputError
from . import _knn  # type: ignore[attr-defined]  # a compiled kernel: no source for mypy to read
from ._blocked_search import BlockedKNeighbors, effective_threads, without_own
from ._search_params import check_params
from ._top_recheck import RecheckedSearch

_MISSING = ("approximate neighbour search with faiss's HNSW graph needs faiss, which fairops lists as an "
            "optional extra: pip install 'fairops[ann]' (or pip install faiss-cpu); "
            "search_params={'graph': 'nndescent'} needs no extra library")


def import_faiss():
    """The faiss module, or an ImportError that names the extra to install."""
    try:
        import faiss
    except ImportError as error:
        raise ImportError(_MISSING) from error
    return faiss


@contextmanager
def _threads(faiss, n_jobs):
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(effective_threads(n_jobs))
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class HNSWKNeighbors(RecheckedSearch):
    """k nearest neighbours (Euclidean) through faiss's ``IndexHNSWFlat``; ``fit`` / ``kneighbors``
    as scikit-learn's ``NearestNeighbors``. ``n_jobs``: faiss threads (None = every core); with
    ``n_jobs=1`` the graph, and so the neighbours, are the same on every run.

    Pickling keeps the graph (faiss's own serialisation); fairops' model files keep only the
    settings and the fitted rows, and the graph is built again when new rows are scored.
    """

    def fit(self, X) -> HNSWKNeighbors:
        faiss = import_faiss()
        settings = check_params(self.params)
        self._fit_X = np.ascontiguousarray(X, dtype=np.float64)
        index = faiss.IndexHNSWFlat(self._fit_X.shape[1], settings["hnsw_m"])
        index.hnsw.efConstruction = settings["ef_construction"]
        with _threads(faiss, self.n_jobs):
            index.add(self._fit_X.astype(np.float32))
        self._index, self._ef_search, self._recheck = index, settings["ef_search"], settings["recheck"]
        return self

    def kneighbors(self, X=None, n_neighbors=None):
        """(distances, indices), each (n_queries, k), nearest first; ``X=None``: the fitted rows, self excluded."""
        faiss = import_faiss()
        k = int(self.n_neighbors if n_neighbors is None else n_neighbors)
        n_fit = self._fit_X.shape[0]
        self_search = X is None
        if k < 1 or k > n_fit - self_search:
            raise InputError(f"n_neighbors={k} must be in [1, {n_fit - self_search}] for {n_fit} fitted rows")
        queries = self._fit_X if self_search else np.ascontiguousarray(X, dtype=np.float64)
        wanted = k + self_search
        parameters = faiss.SearchParametersHNSW()
        parameters.efSearch = max(self._ef_search, wanted)
        with _threads(faiss, self.n_jobs):
            _, found = self._index.search(queries.astype(np.float32), wanted, params=parameters)
        found = found.astype(np.intp)
        if self_search:
            found = found[without_own(found, np.arange(n_fit))].reshape(n_fit, k)
        _check_found(found)
        # exact float64 distances of the neighbours found, sorted by (distance, index)
        unused = np.zeros(len(found))
        distances, indices, _ = _knn.rerank(queries, self._fit_X, found.astype(np.int32), unused, unused, k)
        if self_search:
            exact = BlockedKNeighbors(n_neighbors=k, n_jobs=self.n_jobs).fit(self._fit_X) if self._recheck else None
            self._recheck_plain(distances, indices, exact, self._recheck * self.top_t)
        return distances, indices

    def __getstate__(self):
        state = self.__dict__.copy()
        if "_index" in state:
            state["_index"] = import_faiss().serialize_index(state["_index"])
        return state

    def __setstate__(self, state):
        if "_index" in state:
            state["_index"] = import_faiss().deserialize_index(state["_index"])
        self.__dict__.update(state)


def _check_found(found: np.ndarray) -> None:
    """The graph answers -1 where it found fewer than k rows; such a row is refused rather than guessed."""
    missing = np.flatnonzero((found < 0).any(axis=1))
    if missing.size:
        raise InputError(f"the approximate search found fewer than {found.shape[1]} neighbours for "
                         f"{missing.size} row(s) (first: {missing[0]}); raise search_params['ef_search']")
