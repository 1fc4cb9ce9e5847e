"""Which k-nearest-neighbour search a FairLOF fit uses (its ``algorithm`` parameter).

scikit-learn's own values ("auto", "ball_tree", "kd_tree", "brute") go to its
``NearestNeighbors`` unchanged, so "auto" finds the neighbours ``LocalOutlierFactor`` finds.
fairops adds "blocked" (its exact blocked brute force, ``fairops.fairlof._blocked_search``),
"fast" (exact: a k-d tree for few features, the blocked search otherwise) and "approximate"
(a neighbour graph, faiss's HNSW by default or fairops' own NN-descent, then exact searches of the
top of the LOF ranking: ``fairops.fairlof._approximate_search``).

>>> make_search("fast", (100_000, 16), n_neighbors=5)[1], make_search("fast", (100_000, 3), n_neighbors=5)[1]
('blocked', 'kd_tree')
>>> check_options("blocked", "manhattan", None)
Traceback (most recent call last):
...
fairops.errors.InputError: algorithm='blocked' measures Euclidean distances only: use metric='euclidean', got metric='manhattan'
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

from collections.abc import Callable

from sklearn.neighbors import NearestNeighbors

from ..errors import InputError
from ._approximate_search import HNSWKNeighbors
from ._blocked_search import BlockedKNeighbors
from ._nndescent_search import NNDescentKNeighbors
from ._search_params import check_params

SKLEARN_ALGORITHMS = ("auto", "ball_tree", "kd_tree", "brute")
FAIROPS_ALGORITHMS = ("blocked", "fast", "approximate")
ALGORITHMS: tuple[str, ...] = SKLEARN_ALGORITHMS + FAIROPS_ALGORITHMS
#: "fast" uses a k-d tree up to this many features and the blocked search above: the crossover
#: measured on standard-normal data at n = 10k to 300k, k = 5 (docs/fairlof/large_n.md).
KD_TREE_MAX_FEATURES = 6


def check_options(algorithm, metric, search_params) -> None:
    """Refuse a metric fairops' searches cannot measure and misplaced search_params (``algorithm`` is one of
    :data:`ALGORITHMS`: FairLOF's parameter table checks that)."""
    if algorithm in FAIROPS_ALGORITHMS and metric != "euclidean":
        raise InputError(f"algorithm={algorithm!r} measures Euclidean distances only: use metric='euclidean', "
                         f"got metric={metric!r}")
    if algorithm == "approximate":
        check_params(search_params)
    elif search_params is not None:
        raise InputError(f"search_params applies to algorithm='approximate' only; got {search_params!r} with "
                         f"algorithm={algorithm!r}")


def make_search(algorithm: str, shape: tuple[int, int], *, n_neighbors: int,
                metric: str | Callable[..., float] = "euclidean",
                leaf_size: int = 30, n_jobs=None, search_params=None, top_t: int = 1):
    """(unfitted search, name of what it runs) for fitted rows of ``shape``; options already checked.

    ``top_t``: the detector's outlier-list length, which sizes the approximate search's exact recheck.
    """
    if algorithm == "fast":
        algorithm = "kd_tree" if shape[1] <= KD_TREE_MAX_FEATURES else "blocked"
    if algorithm == "blocked":
        return BlockedKNeighbors(n_neighbors=n_neighbors, n_jobs=n_jobs), algorithm
    if algorithm == "approximate":
        search_class = NNDescentKNeighbors if check_params(search_params)["graph"] == "nndescent" else HNSWKNeighbors
        return search_class(n_neighbors=n_neighbors, n_jobs=n_jobs, params=search_params, top_t=top_t), algorithm
    params = {}
    if metric == "euclidean":  # LocalOutlierFactor's default spelling, for identical neighbours
        metric, params = "minkowski", {"p": 2}
    search = NearestNeighbors(n_neighbors=n_neighbors, algorithm=algorithm, leaf_size=leaf_size, metric=metric,
                              n_jobs=n_jobs, **params)
    return search, algorithm
