"""What a k-nearest-neighbour graph of 1M rows x 16 features costs on this machine, by library.

FairLOF's 1M-row goal (fit + 11-point lambda path within one scikit-learn LocalOutlierFactor fit
at 100k x 10) leaves the neighbour graph only part of that time. This benchmark times the graph
alone, with the anchor in the same run, for:

- faiss's ``IndexHNSWFlat`` (what ``FairLOF(algorithm="approximate")`` uses): build, then search
  every row, at the settings in ``HNSW_SETTINGS``;
- fairops' own NN-descent (``FairLOF(algorithm="approximate", search_params={"graph": "nndescent"})``)
  at the settings in ``FAIROPS_NNDESCENT_SETTINGS``;
- pynndescent's ``NNDescent`` (the k-NN graph builder of UMAP), if it is installed (it is not a
  fairops dependency: ``pip install pynndescent``), at the graph widths in ``NNDESCENT_WIDTHS``; its
  first call in the process (numba compiling it) is timed apart and left out of its rows.

Each row gives wall and CPU seconds, their ratio to the anchor, and the recall of the exact
5 nearest neighbours (fairops' exact blocked search, over all rows). Then fairops' recheck
(``fairops.fairlof._top_recheck``) runs on each graph with bands of 4 and 8 times t = 500: its
wall seconds, and the Jaccard of LOF's top-500 with the exact top-500 after it. Data:
``fairlof_speed.make_data`` (standard-normal features, 1% of rows spread 3x), as in
``fairlof_scale.py``.

    .venv/bin/python benchmarks/knn_graph_cost.py            # the table in docs/fairlof/large_n.md
    .venv/bin/python benchmarks/knn_graph_cost.py --quick    # 5k rows (CI smoke test)
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.neighbors import LocalOutlierFactor

from fairlof_speed import make_data
from fairops.fairlof import _knn
from fairops.fairlof._approximate_search import import_faiss
from fairops.fairlof._blocked_search import BlockedKNeighbors, without_own
from fairops.fairlof._nndescent_search import nndescent_graph
from fairops.fairlof._top_recheck import plain_lof, recheck_top

K = 5
#: (links per node, ef while building, ef while searching)
HNSW_SETTINGS = ((32, 40, 32), (16, 20, 16), (16, 16, 12))
#: fairops' NN-descent: (neighbours per row, trees, rounds); the first is FairLOF's default
FAIROPS_NNDESCENT_SETTINGS = ((10, 12, 6), (10, 8, 8))
#: neighbours per row of pynndescent's graph (the 5 nearest of them are scored)
NNDESCENT_WIDTHS = (10, 20, 30)
TOP_T = 500
#: recheck bands, in multiples of TOP_T
RECHECK_BANDS = (4, 6, 8)


def timed(call):
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - start_wall, time.process_time() - start_cpu


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    return float((found[:, :, None] == exact[:, None, :]).any(axis=2).mean())


def nearest_k(X: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The K nearest of each row's candidate ids (itself excluded), by exact distance."""
    candidates = np.where(candidates == np.arange(len(X))[:, None], -1, candidates).astype(np.int32)
    unused = np.zeros(len(X))
    return _knn.rerank(X, X, np.ascontiguousarray(candidates), unused, unused, K)[1]


def hnsw(X, m, ef_construction, ef_search, threads):
    faiss = import_faiss()
    faiss.omp_set_num_threads(threads)
    rows = X.astype(np.float32)
    index = faiss.IndexHNSWFlat(X.shape[1], m)
    index.hnsw.efConstruction = ef_construction
    _, build_wall, build_cpu = timed(lambda: index.add(rows))
    parameters = faiss.SearchParametersHNSW()
    parameters.efSearch = ef_search
    (_, found), search_wall, search_cpu = timed(lambda: index.search(rows, K + 1, params=parameters))
    found = found.astype(np.intp)
    found = found[without_own(found, np.arange(len(X)))].reshape(len(X), K)
    return found, build_wall + search_wall, build_cpu + search_cpu


def fairops_nndescent(X, width, trees, rounds, threads):
    (graph, _), wall, cpu = timed(lambda: nndescent_graph(X, width, n_jobs=threads, n_trees=trees, max_rounds=rounds))
    return nearest_k(X, graph), wall, cpu


def pynndescent_compile(threads) -> float:
    """Wall seconds of pynndescent's first graph in this process (2000 rows): numba compiling it."""
    from pynndescent import NNDescent
    X = np.random.default_rng(0).normal(size=(2000, 16)).astype(np.float32)
    return timed(lambda: NNDescent(X, n_neighbors=10, n_jobs=threads, random_state=0).neighbor_graph)[1]


def nndescent(X, width, threads):
    from pynndescent import NNDescent
    NNDescent(X[:5000].astype(np.float32), n_neighbors=width, n_jobs=threads, random_state=0)  # compiled already
    graph, wall, cpu = timed(lambda: NNDescent(X.astype(np.float32), n_neighbors=width, n_jobs=threads,
                                                random_state=0).neighbor_graph)
    return nearest_k(X, graph[0]), wall, cpu


def after_recheck(X, found, exact_search, exact_top, band):
    """(wall seconds, Jaccard of the top-t with the exact top-t) of the recheck on the graph ``found``."""
    unused = np.zeros(len(X))
    distances, indices, _ = _knn.rerank(X, X, np.ascontiguousarray(found, dtype=np.int32), unused, unused, K)
    _, wall, _ = timed(lambda: recheck_top(distances, indices, exact_search, band))
    top = np.argsort(-plain_lof(distances, indices), kind="stable")[:TOP_T]
    shared = len(set(top.tolist()) & set(exact_top.tolist()))
    return wall, shared / (2 * TOP_T - shared)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k rows, anchor at 2k (CI smoke test)")
    args = parser.parse_args()
    n, n_anchor = (5_000, 2_000) if args.quick else (1_000_000, 100_000)
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"load average at start: {' '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} cores\n")
    X_anchor, _ = make_data(n_anchor, 10)
    _, anchor_wall, anchor_cpu = timed(lambda: LocalOutlierFactor(n_neighbors=K).fit(X_anchor))
    X = np.ascontiguousarray(make_data(n, 16)[0])
    exact_search = BlockedKNeighbors(n_neighbors=K).fit(X)
    (exact_d, exact), exact_wall, exact_cpu = timed(exact_search.kneighbors)
    exact_top = np.argsort(-plain_lof(exact_d, exact), kind="stable")[:TOP_T]
    rows = [(f"anchor: scikit-learn LOF fit, {n_anchor:,} x 10", anchor_wall, anchor_cpu, None, None),
            ("fairops exact blocked search (all rows)", exact_wall, exact_cpu, 1.0, None)]

    def checked(found):
        return [after_recheck(X, found, exact_search, exact_top, band * TOP_T) for band in RECHECK_BANDS]

    for m, ef_construction, ef_search in HNSW_SETTINGS:
        found, wall, cpu = hnsw(X, m, ef_construction, ef_search, threads)
        rows.append((f"faiss HNSW, {m} links, ef {ef_construction}/{ef_search}: build + search", wall, cpu,
                     recall(found, exact), checked(found)))
    for width, trees, rounds in FAIROPS_NNDESCENT_SETTINGS:
        found, wall, cpu = fairops_nndescent(X, width, trees, rounds, threads)
        rows.append((f"fairops NN-descent, {width} neighbours, {trees} trees, {rounds} rounds", wall, cpu,
                     recall(found, exact), checked(found)))
    try:
        import pynndescent
    except ImportError:
        print("pynndescent is not installed: its rows are left out (pip install pynndescent)\n")
    else:
        print(f"pynndescent's first graph in this process (2000 rows; numba compiling): "
              f"{pynndescent_compile(threads):.1f} s wall, not in its rows below\n")
        for width in NNDESCENT_WIDTHS:
            found, wall, cpu = nndescent(X, width, threads)
            rows.append((f"pynndescent {pynndescent.__version__} NNDescent, {width} neighbours", wall, cpu,
                         recall(found, exact), checked(found)))
    bands = " | ".join(f"+ recheck {band}t wall s | x anchor (wall), with {band}t | Jaccard top-{TOP_T} after {band}t"
                       for band in RECHECK_BANDS)
    print(f"| graph of {n:,} x 16, k = {K}, {threads} threads | wall s | x anchor (wall) | CPU s | x anchor (CPU) "
          f"| recall of the exact 5 | {bands} |")
    print("|---" * (6 + 3 * len(RECHECK_BANDS)) + "|")
    for what, wall, cpu, found, after in rows:
        recall_cell = "-" if found is None else f"{found:.4f}"
        if after is None:
            after_cells = " | ".join("- | - | -" for _ in RECHECK_BANDS)
        else:
            after_cells = " | ".join(f"{extra:.1f} | {(wall + extra) / anchor_wall:.2f} | {jaccard:.3f}"
                                     for extra, jaccard in after)
        print(f"| {what} | {wall:.1f} | {wall / anchor_wall:.2f} | {cpu:.1f} | {cpu / anchor_cpu:.2f} | {recall_cell} "
              f"| {after_cells} |", flush=True)
    print(f"\nload average at end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
