"""fairops' exact k-nearest-neighbour search for Euclidean distances: float32 BLAS tiles, float64 answers.

The fitted rows are centred and cut into tiles; each pair of tiles costs one float32 matrix
product (BLAS, one thread per worker), which with the squared norms gives approximate squared
distances, and a compiled scan keeps each row's ``k + extra_candidates`` smallest. Searching the
fitted rows against themselves computes each pair of tiles once and offers it to both sides.
The candidates' distances are then computed exactly in float64 and the k nearest kept. A
rounding-error bound of the float32 step proves, per row, that no row outside the candidates is
nearer. A row without that proof (a gap between its k-th and its last candidate within float32
rounding: rare on continuous data with many features, common on one-hot data full of ties and
with one or two features, where trees are faster anyway) is searched again the same way with
float64 tiles and more candidates, and a row still unproven (exact ties around its k-th
neighbour) by scikit-learn's k-d tree. So the neighbour distances are the exact k smallest,
as scikit-learn's ``NearestNeighbors`` finds them (rows at exactly equal distances may come in
another order, or another of them be chosen).

>>> import numpy as np
>>> from sklearn.neighbors import NearestNeighbors
>>> X = np.random.default_rng(0).normal(size=(2000, 8))
>>> distances, indices = BlockedKNeighbors(n_neighbors=5).fit(X).kneighbors()
>>> ref_d, ref_i = NearestNeighbors(n_neighbors=5, algorithm="brute").fit(X).kneighbors()
>>> bool(np.array_equal(indices, ref_i)), bool(np.allclose(distances, ref_d, rtol=1e-12, atol=0))
(True, True)
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_limits

from ..errors import InputError
from . import _knn  # type: ignore[attr-defined]  # a compiled kernel: no source for mypy to read

#: Rows per tile: a (TILE x TILE) float32 block of products is 1 MiB, about a core's L2 cache.
TILE = 512
#: Candidates kept per row beyond k, so that the error bound proves almost every row.
EXTRA_CANDIDATES = 8


def effective_threads(n_jobs) -> int:
    """Worker threads for ``n_jobs``: None or -1 -> every core this process may use."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if n_jobs is None or n_jobs == -1:
        return available
    if n_jobs < -1:
        return max(1, available + 1 + n_jobs)
    return int(n_jobs)


class BlockedKNeighbors:
    """Exact Euclidean k nearest neighbours by float32 tiles with exact float64 re-ranking.

    The same ``fit`` / ``kneighbors`` calls as scikit-learn's ``NearestNeighbors`` for what
    FairLOF needs: ``kneighbors()`` searches the fitted rows (each row's own entry excluded),
    ``kneighbors(X)`` new rows. ``n_jobs``: worker threads (None = every core, as
    scikit-learn's brute-force search uses). After each ``kneighbors`` call, ``unproven_rows_``
    is how many rows the float32 bound could not prove (searched again with float64 tiles and
    ``4 * extra_candidates`` candidates), and ``tree_rows_`` how many of those that could not
    prove either (exactly tied distances around the k-th) scikit-learn's k-d tree searched.
    """

    #: False keeps float32 tiles on BLAS even where the vector kernel runs (tests compare the two).
    _use_vector_kernel = True

    def __init__(self, n_neighbors: int = 5, n_jobs=None, tile: int = TILE, extra_candidates: int = EXTRA_CANDIDATES):
        self.n_neighbors = n_neighbors
        self.n_jobs = n_jobs
        self.tile = tile
        self.extra_candidates = extra_candidates

    def fit(self, X) -> BlockedKNeighbors:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] < 2:
            raise InputError(f"X must be 2-D with at least 2 rows, got shape {X.shape}")
        self._fit_X = X
        self._mean = X.mean(axis=0)
        centred = X - self._mean
        self._norms64 = np.einsum("ij,ij->i", centred, centred)
        self._max_norm = float(np.sqrt(self._norms64.max()))
        # (centred rows, squared norms) in each tile dtype; float64 only when some row needs it
        self._fit_side = {np.float32: (centred.astype(np.float32), self._norms64.astype(np.float32))}
        if _knn.PANEL_AVAILABLE:  # float32 tiles by _knn.scan_tile_float32, which reads rows packed by 16
            self._packed32, self._fit_norms32 = _packed(self._fit_side[np.float32][0], self._fit_side[np.float32][1])
        return self

    def kneighbors(self, X=None, n_neighbors=None):
        """(distances, indices), each (n_queries, k), nearest first; ``X=None``: the fitted rows, self excluded."""
        k = int(self.n_neighbors if n_neighbors is None else n_neighbors)
        n_fit = self._fit_X.shape[0]
        self_search = X is None or isinstance(X, _FittedRows)
        if k < 1 or k > n_fit - self_search:
            raise InputError(f"n_neighbors={k} must be in [1, {n_fit - self_search}] for {n_fit} fitted rows")
        if X is None:
            queries, own = self._fit_X, np.arange(n_fit, dtype=np.intp)
        elif self_search:
            queries, own = self._fit_X[X.rows], X.rows
        else:
            queries = np.ascontiguousarray(X, dtype=np.float64)
            if queries.ndim != 2 or queries.shape[1] != self._fit_X.shape[1]:
                raise InputError(f"X must have shape (n, {self._fit_X.shape[1]}), got {queries.shape}")
            own = np.full(len(queries), -1, dtype=np.intp)
        distances, indices, proven = self._search(np.float32, queries, own, k, k + self.extra_candidates,
                                                  symmetric=X is None)
        rows = np.flatnonzero(~proven)
        self.unproven_rows_, self.tree_rows_ = int(rows.size), 0
        if rows.size:
            found = self._search(np.float64, queries[rows], own[rows], k, k + 4 * self.extra_candidates,
                                 symmetric=False)
            distances[rows], indices[rows] = found[:2]
            rows = rows[~found[2]]
            self.tree_rows_ = int(rows.size)
        if rows.size:
            distances[rows], indices[rows] = self._exact(queries[rows], k, self_search, own, rows)
        return distances, indices

    def kneighbors_of_rows(self, rows, n_neighbors=None):
        """(distances, indices) of the fitted rows ``rows`` (ids), each row's own entry excluded."""
        return self.kneighbors(_FittedRows(np.asarray(rows, dtype=np.intp)), n_neighbors)

    def _search(self, dtype, queries, own, k, width, symmetric):
        """(distances, indices, proven) of ``queries`` from ``dtype`` tiles and exact re-ranking."""
        if dtype not in self._fit_side:
            self._fit_side[dtype] = (self._fit_X - self._mean, self._norms64)
        if symmetric:
            centred, norms = self._fit_side[dtype]
            norms64 = self._norms64
        else:
            shifted = queries - self._mean
            norms64 = np.einsum("ij,ij->i", shifted, shifted)
            centred, norms = shifted.astype(dtype), norms64.astype(dtype)
        width = min(width, self._fit_X.shape[0] - (own >= 0).any())
        heaps = self._scan(centred, norms, own, width, symmetric)
        candidates = np.ascontiguousarray(np.concatenate([indices for _, indices in heaps], axis=1))
        cutoffs = np.min([values[:, 0] for values, _ in heaps], axis=0).astype(np.float64)
        unit_roundoff = float(np.finfo(dtype).eps) / 2
        errors = (2 * queries.shape[1] + 20) * unit_roundoff * (np.sqrt(norms64) + self._max_norm) ** 2
        return _knn.rerank(queries, self._fit_X, candidates, cutoffs, errors, k)

    def _scan(self, centred, norms, own, width, symmetric):
        """Per worker thread, the heaps (values, indices) of every query row after its share of the tiles."""
        fit_centred, fit_norms = self._fit_side[centred.dtype.type]
        n_queries, n_fit, tile = centred.shape[0], fit_centred.shape[0], self.tile
        scaled = centred * centred.dtype.type(-2.0)  # exact: the products come out as -2 <q, x>
        row_starts, col_starts = range(0, n_queries, tile), range(0, n_fit, tile)
        if symmetric:
            pairs = [(i, j) for i in row_starts for j in col_starts if j >= i]
        else:
            pairs = [(i, j) for i in row_starts for j in col_starts]
        threads = max(1, min(effective_threads(self.n_jobs), len(pairs)))
        work, lock = iter(pairs), threading.Lock()

        vector_kernel = (centred.dtype == np.float32 and _knn.PANEL_AVAILABLE and self._use_vector_kernel
                         and tile % _knn.PANEL_WIDTH == 0)

        def worker():
            values = np.full((n_queries, width), np.inf, dtype=centred.dtype)
            indices = np.full((n_queries, width), -1, dtype=np.int32)
            products = None if vector_kernel else np.empty(tile * tile, dtype=centred.dtype)
            while True:
                with lock:
                    pair = next(work, None)
                if pair is None:
                    return values, indices
                i, j = pair
                if vector_kernel:
                    _knn.scan_tile_float32(scaled, self._packed32, i, min(i + tile, n_queries), j, min(j + tile, n_fit),
                                           norms, self._fit_norms32, values, indices, own, symmetric and i != j)
                    continue
                rows, cols = scaled[i:i + tile], fit_centred[j:j + tile]
                block = products[:len(rows) * len(cols)].reshape(len(rows), len(cols))
                np.matmul(rows, cols.T, out=block)
                _knn.scan_tile(block, i, j, norms, fit_norms, values, indices, own, symmetric and i != j)

        with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(threads) as pool:
            futures = [pool.submit(worker) for _ in range(threads)]
            return [future.result() for future in futures]

    def _exact(self, queries, k, self_search, own, rows):
        """scikit-learn's k-d tree for the rows no bound could prove.

        Not its brute force: that computes distances as |x|^2 - 2 <x, y> + |y|^2 in float64, which
        loses digits where the tiles did (neighbours much nearer to each other than to the mean);
        the tree sums squared differences.
        """
        search = NearestNeighbors(n_neighbors=k, algorithm="kd_tree").fit(self._fit_X)
        if not self_search:
            return search.kneighbors(queries, n_neighbors=k)
        distances, indices = search.kneighbors(queries, n_neighbors=k + 1)
        keep = without_own(indices, own[rows])
        return distances[keep].reshape(len(rows), k), indices[keep].reshape(len(rows), k)


def _packed(rows: np.ndarray, norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` in groups of ``_knn.PANEL_WIDTH`` (group, feature, lane), zero padded, and ``norms`` padded
    with +inf."""
    width = _knn.PANEL_WIDTH
    n, d = rows.shape
    groups = -(-n // width)
    padded = np.zeros((groups * width, d), dtype=np.float32)
    padded[:n] = rows
    padded_norms = np.full(groups * width, np.inf, dtype=np.float32)
    padded_norms[:n] = norms
    return np.ascontiguousarray(padded.reshape(groups, width, d).transpose(0, 2, 1)), padded_norms


class _FittedRows:
    """Some of the fitted rows, named by id, as ``kneighbors``' query (each without itself)."""

    def __init__(self, rows: np.ndarray):
        self.rows = rows


def without_own(indices: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Mask of the (n, k + 1) neighbour ids to keep: all but each row's own id, or, where the search did
    not return it (duplicates of the row filled the k + 1), all but the last, as scikit-learn does."""
    is_own = indices == own[:, None]
    is_own[~is_own.any(axis=1), -1] = True
    return ~is_own
