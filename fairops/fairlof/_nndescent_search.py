"""fairops' own approximate k-nearest-neighbour graph by NN-descent, compiled (no extra library).

NN-descent (Dong, Moses and Li, WWW 2011) improves a first graph (here: the rows sharing a leaf of
random projection trees) in rounds: two rows that share a neighbour are compared, and each keeps
the nearer rows it meets.
On the 16-feature data of ``docs/fairlof/large_n.md`` a graph of 10 neighbours per row finds
most of the exact 5 nearest in a fraction of the time of an HNSW graph of similar recall. The
graph is only the first step: as for faiss's graph, the neighbour distances are recomputed
exactly in float64 and the top of the LOF ranking is searched again exactly
(``fairops.fairlof._top_recheck``). New rows (``novelty=True``) are searched exactly by
``fairops.fairlof._blocked_search`` against the fitted rows, so a saved model needs nothing to
score them but the fitted rows.

>>> import numpy as np
>>> X = np.random.default_rng(0).normal(size=(2000, 8))
>>> ids, squared = nndescent_graph(X, n_neighbors=10, n_jobs=1)
>>> ids.shape, bool(np.all(ids != np.arange(2000)[:, None])), bool(np.all(np.diff(squared, axis=1) >= 0))
((2000, 10), True, True)
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InputError
from . import _knn, _nndescent  # type: ignore[attr-defined]  # a compiled kernel: no source for mypy to read
from ._blocked_search import BlockedKNeighbors, effective_threads
from ._search_params import check_params
from ._top_recheck import RecheckedSearch

#: Rows whose joins run before their updates are applied; smaller blocks let later rows see the
#: improvements of earlier ones within a round.
BLOCK_ROWS = 16384


class _Threads:
    """A thread pool that runs compiled steps over each thread's share of a range of rows."""

    def __init__(self, pool: ThreadPoolExecutor, threads: int):
        self.pool, self.threads = pool, threads

    def split(self, start: int, stop: int) -> np.ndarray:
        """Each thread's [start, stop) share of a range."""
        return np.linspace(start, stop, self.threads + 1).astype(int)

    def each_thread(self, function) -> list:
        return list(self.pool.map(function, range(self.threads)))

    def each_range(self, function, *args, count: int) -> None:
        bounds = self.split(0, count)
        self.each_thread(lambda t: function(*args, bounds[t], bounds[t + 1]))


def _checked(X, n_neighbors, n_trees) -> tuple[np.ndarray, int]:
    X = np.ascontiguousarray(X, dtype=np.float32)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise InputError(f"X must be 2-D and finite (no NaN or infinity), got shape {X.shape}")
    n = X.shape[0]
    K = int(n_neighbors)
    if not 1 <= K < n:
        raise InputError(f"n_neighbors={K} must be in [1, {n - 1}] for {n} rows")
    if n_trees < 2:
        raise InputError(f"n_trees must be at least 2, got {n_trees}: the rows of one tree's leaves share "
                         "no neighbour with other leaves, so the rounds could never join them")
    return X, K


def _tree_graph(run: _Threads, X, K: int, n_trees: int, leaf: int, seed: int):
    """(memory order, X in that order, (heap_d, heap_i, heap_new)): the first graph, from the rows sharing a leaf
    of a random projection tree, topped up with random rows."""
    n = X.shape[0]

    def tree(t, data):
        order = np.arange(n, dtype=np.int32)
        return order, _nndescent.rp_tree_leaves(data, order, leaf, seed + t)

    memory_order, first_starts = tree(0, X)
    X = np.ascontiguousarray(X[memory_order])
    heap = (np.full((n, K), np.inf, dtype=np.float32), np.full((n, K), -1, dtype=np.int32),
            np.ones((n, K), dtype=np.uint8))
    forests = [(np.arange(n, dtype=np.int32), first_starts)]
    forests += list(run.pool.map(lambda t: tree(t, X), range(1, n_trees)))
    for order, starts in forests:
        run.each_range(_nndescent.join_leaves, X, *heap, order, starts, count=len(starts) - 1)
    run.each_range(_nndescent.fill_random, X, *heap, seed, count=n)
    return memory_order, X, heap


def _descent_round(run: _Threads, X, heap, width: int, seed: int, round_: int, buffers) -> int:
    """One NN-descent round: sample join candidates, join them block by block; the number of heap changes."""
    heap_d, heap_i, heap_new = heap
    n = X.shape[0]
    new_cand = np.full((n, width), -1, dtype=np.int32)
    old_cand = np.full((n, width), -1, dtype=np.int32)
    new_key = np.full((n, width), np.iinfo(np.uint32).max, dtype=np.uint32)
    old_key = new_key.copy()
    run.each_thread(lambda t: _nndescent.sample_candidates(heap_i, heap_new, new_cand, new_key, old_cand, old_key,
                                                           seed, round_, t, run.threads))
    run.each_range(_nndescent.mark_sampled_old, heap_i, heap_new, new_cand, count=n)
    updates, update_d = buffers
    changed = 0
    for block in range(0, n, BLOCK_ROWS):
        bounds = run.split(block, min(block + BLOCK_ROWS, n))
        counts = run.each_thread(lambda t: _nndescent.local_join(X, heap_d, new_cand, old_cand, bounds[t],
                                                                 bounds[t + 1], updates[t], update_d[t]))

        def apply(t):
            return sum(_nndescent.apply_updates(heap_d, heap_i, heap_new, updates[s], update_d[s], counts[s], t,
                                                run.threads) for s in range(run.threads))
        changed += sum(run.each_thread(apply))
    return changed


def nndescent_graph(X, n_neighbors: int = 10, *, n_jobs=None, seed: int = 0, n_trees: int = 4,
                    leaf_size: int | None = None, max_candidates: int | None = None, max_rounds: int | None = None,
                    delta: float = 0.001):
    """(ids, squared distances), each (n, n_neighbors), nearest first, each row's own id excluded.

    The first graph joins the rows within each leaf of ``n_trees`` random projection trees
    (leaves of ``leaf_size // 2`` to ``leaf_size`` rows, default ``4 * n_neighbors``); the rows are
    then kept in the first tree's leaf order, so that rows near in space are near in memory.
    ``max_candidates``: join candidates per row and kind (new, old), default ``n_neighbors``.
    ``max_rounds``: default ``max(5, round(log2 n))``. The rounds stop early once a round changes
    fewer than ``delta * n * n_neighbors`` entries. Distances are float32 squared distances.
    """
    X, K = _checked(X, n_neighbors, n_trees)
    n = X.shape[0]
    width = int(max_candidates or K)
    rounds = int(max_rounds or max(5, round(np.log2(n))))
    threads = max(1, effective_threads(n_jobs))
    with ThreadPoolExecutor(threads) as pool:
        run = _Threads(pool, threads)
        memory_order, X, heap = _tree_graph(run, X, K, n_trees, int(leaf_size or 4 * K), seed)
        updates = [np.empty((-(-BLOCK_ROWS // threads) * (width * (width - 1) // 2 + width * width), 2),
                            dtype=np.int32) for _ in range(threads)]
        buffers = updates, [np.empty(len(buffer), dtype=np.float32) for buffer in updates]
        for round_ in range(rounds):
            if _descent_round(run, X, heap, width, seed, round_, buffers) <= delta * n * K:
                break
    heap_d, heap_i, _ = heap
    nearest_first = np.argsort(heap_d, axis=1, kind="stable")
    ids = np.empty_like(heap_i)
    squared = np.empty_like(heap_d)
    ids[memory_order] = memory_order[np.take_along_axis(heap_i, nearest_first, axis=1)]
    squared[memory_order] = np.take_along_axis(heap_d, nearest_first, axis=1)
    return ids, squared


class NNDescentKNeighbors(RecheckedSearch):
    """k nearest neighbours (Euclidean) of the fitted rows from fairops' NN-descent graph, then the
    exact recheck of the top of the LOF ranking; ``fit`` / ``kneighbors`` as scikit-learn's
    ``NearestNeighbors``. New rows are searched exactly (the blocked search).

    ``params``: ``search_params`` of ``FairLOF(algorithm="approximate")`` with ``graph="nndescent"``:
    ``graph_neighbors`` (graph width, at least k), ``n_trees``, ``max_rounds``, ``recheck``. The
    graph is the same for any ``n_jobs`` (its random choices are hashed from the rows, not drawn
    in turn), so a fit gives the same neighbours on every run.
    """

    def fit(self, X) -> NNDescentKNeighbors:
        self._settings = check_params({"graph": "nndescent", **(self.params or {})})
        self._exact = BlockedKNeighbors(n_neighbors=self.n_neighbors, n_jobs=self.n_jobs).fit(X)
        self._fit_X = self._exact._fit_X
        return self

    def kneighbors(self, X=None, n_neighbors=None):
        """(distances, indices), each (n_queries, k), nearest first; ``X=None``: the fitted rows, self excluded."""
        k = int(self.n_neighbors if n_neighbors is None else n_neighbors)
        if X is not None:
            return self._exact.kneighbors(X, n_neighbors=k)
        n_fit = self._fit_X.shape[0]
        if k < 1 or k > n_fit - 1:
            raise InputError(f"n_neighbors={k} must be in [1, {n_fit - 1}] for {n_fit} fitted rows")
        settings = self._settings
        width = min(n_fit - 1, max(k, settings["graph_neighbors"]))
        found, _ = nndescent_graph(self._fit_X, width, n_jobs=self.n_jobs, n_trees=settings["n_trees"],
                                   max_rounds=settings["max_rounds"])
        # exact float64 distances of the graph's neighbours, the k nearest kept, ties by index
        unused = np.zeros(n_fit)
        distances, indices, _ = _knn.rerank(self._fit_X, self._fit_X, found, unused, unused, k)
        self._recheck_plain(distances, indices, self._exact, settings["recheck"] * self.top_t)
        return distances, indices
