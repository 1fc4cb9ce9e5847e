"""fairops' NN-descent graph (``search_params={"graph": "nndescent"}``): the graph against scikit-learn's
brute force, its independence from the thread count, FairLOF on it (the exact recheck of both rankings,
new rows searched exactly, saved models that need no extra library), and its options."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from fairops.fairlof import FairLOF, _nndescent
from fairops.fairlof._blocked_search import BlockedKNeighbors
from fairops.fairlof._nndescent_search import NNDescentKNeighbors, nndescent_graph
from fairops.mlflow import fairlof as fairlof_flavor
from tests.fairlof.outlier_data import blobs, grouped_rows

NNDESCENT = {"graph": "nndescent"}


@pytest.fixture(scope="module")
def grouped():
    return grouped_rows()


def recall(found, exact):
    return np.mean([len(set(a) & set(b)) / exact.shape[1] for a, b in zip(found, exact)])


@pytest.mark.parametrize("n, d, width", [(3000, 8, 10), (2000, 16, 12), (500, 3, 6)])
def test_graph_finds_nearly_all_exact_neighbours_at_their_squared_distances(n, d, width):
    X = blobs(n, d, seed=n)
    ids, squared = nndescent_graph(X, width, n_jobs=2)
    assert ids.shape == squared.shape == (n, width)
    assert np.all(ids != np.arange(n)[:, None]) and np.all(ids >= 0)
    assert all(len(set(row)) == width for row in ids)  # no neighbour twice
    assert np.all(np.diff(squared, axis=1) >= 0)
    own = ((X[:, None, :] - X[ids]) ** 2).sum(axis=2)
    np.testing.assert_allclose(squared, own, rtol=1e-4, atol=1e-5)  # float32 sums of the same squares
    _, exact = NearestNeighbors(n_neighbors=width).fit(X).kneighbors()
    assert recall(ids, exact) >= 0.95


def test_graph_is_the_same_on_one_and_two_threads():
    X = blobs(5000, 12, seed=3)
    one = nndescent_graph(X, 8, n_jobs=1, max_rounds=3)
    two = nndescent_graph(X, 8, n_jobs=2, max_rounds=3)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])


@pytest.mark.slow  # over 5 s in the quick tier
def test_more_rounds_improve_the_graph():
    X = blobs(20000, 16, seed=4)
    _, exact = NearestNeighbors(n_neighbors=5).fit(X).kneighbors()
    recalls = [recall(nndescent_graph(X, 10, max_rounds=rounds, n_trees=2)[0][:, :5], exact) for rounds in (1, 8)]
    assert recalls[1] > recalls[0] + 0.3, recalls
    with pytest.raises(ValueError, match="n_trees must be at least 2, got 1"):
        nndescent_graph(X, 10, n_trees=1)


def test_random_projection_leaves_partition_the_rows_within_their_size_bounds():
    X = blobs(10000, 5, seed=5).astype(np.float32)
    order = np.arange(len(X), dtype=np.int32)
    starts = _nndescent.rp_tree_leaves(X, order, 40, 7)
    assert np.array_equal(np.sort(order), np.arange(len(X)))  # a permutation
    sizes = np.diff(starts)
    assert starts[0] == 0 and starts[-1] == len(X) and sizes.min() >= 20 and sizes.max() <= 40


def test_graph_of_tiny_data_and_duplicate_rows():
    X = np.r_[np.zeros((6, 2)), np.ones((6, 2))]  # two clumps of six identical rows
    ids, squared = nndescent_graph(X, 5, n_jobs=1)
    assert np.all(squared == 0.0)
    assert all(set(row) == set(range(6)) - {i} for i, row in enumerate(ids[:6]))
    with pytest.raises(ValueError, match=r"n_neighbors=12 must be in \[1, 11\] for 12 rows"):
        nndescent_graph(X, 12)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"X must be 2-D and finite \(no NaN or infinity\)"):
        nndescent_graph(X, 5)


def test_fairlof_makes_the_top_of_both_rankings_exact(grouped):
    X, S = grouped
    exact = BlockedKNeighbors(n_neighbors=5).fit(X)
    true_d, true_i = exact.kneighbors()
    params = {**NNDESCENT, "graph_neighbors": 6, "recheck": 2}
    det = FairLOF(correction_strength=0.6, top_t=20, algorithm="approximate", search_params=params)
    det.fit(X, sensitive_features=S)
    graph_only = FairLOF(correction_strength=0.6, top_t=20, algorithm="approximate",
                         search_params={**params, "recheck": 0}).fit(X, sensitive_features=S)
    assert not np.array_equal(graph_only._hood.neighbors, true_i)  # a poor graph
    band = 2 * det.top_t_
    for scores in (det.lof_scores_, det.outlier_scores_):
        top = np.argsort(-scores, kind="stable")[:band]
        rows = np.unique(np.r_[top, det._hood.neighbors[top].ravel()])
        np.testing.assert_array_equal(det._hood.neighbors[rows], true_i[rows])
        np.testing.assert_allclose(det._hood.distances[rows], true_d[rows], rtol=1e-12)
    assert det._search.recheck_rounds_ >= 2 and det._search.rechecked_rows_ < len(X)
    assert det._search._top_recheck is None  # the fitted detector lets go of the recheck's exact search


def test_fairlof_on_the_graph_keeps_the_exact_top_outliers():
    X, S = grouped_rows(n=30000, seed=21)
    exact = FairLOF(correction_strength=0.3, top_t=60, algorithm="fast").fit(X, sensitive_features=S)
    approximate = FairLOF(correction_strength=0.3, top_t=60, algorithm="approximate", search_params=NNDESCENT)
    approximate.fit(X, sensitive_features=S)
    assert approximate._search.rechecked_rows_ < len(X) // 4  # the recheck did not turn into an exact search
    for mine, theirs in ((approximate.plain_outliers_, exact.plain_outliers_),
                         (approximate.outliers_, exact.outliers_)):
        shared = len(set(mine) & set(theirs))
        assert shared / (2 * exact.top_t_ - shared) >= 0.95


def test_new_rows_are_searched_exactly_and_saved_models_need_no_extra_library(tmp_path, grouped):
    X, S = grouped
    det = FairLOF(correction_strength=0.4, novelty=True, algorithm="approximate",
                  search_params={**NNDESCENT, "recheck": 1}).fit(X, sensitive_features=S)
    new = blobs(300, 16, seed=11)
    groups = {"sex": S["sex"][:300], "band": S["band"][:300]}
    distances, neighbours = det._searcher().kneighbors(new)
    ref_d, ref_i = NearestNeighbors(n_neighbors=5).fit(X).kneighbors(new)
    np.testing.assert_array_equal(neighbours, ref_i)
    np.testing.assert_allclose(distances, ref_d, rtol=1e-12)
    loaded = FairLOF._from_state(*det._get_state())
    assert loaded.get_params() == det.get_params()
    np.testing.assert_array_equal(loaded.score_samples(new, sensitive_features=groups),
                                  det.score_samples(new, sensitive_features=groups))
    again = pickle.loads(pickle.dumps(det))
    np.testing.assert_array_equal(again.score_samples(new, sensitive_features=groups),
                                  det.score_samples(new, sensitive_features=groups))
    fairlof_flavor.save_model(det, tmp_path / "model", feature_names=[f"x{i}" for i in range(16)])
    requirements = (tmp_path / "model" / "requirements.txt").read_text()
    assert "faiss" not in requirements, requirements
    native = fairlof_flavor.load_model(str(tmp_path / "model"))
    np.testing.assert_array_equal(native.predict(new, sensitive_features=groups),
                                  det.predict(new, sensitive_features=groups))


def test_the_graph_runs_without_faiss():
    script = textwrap.dedent("""
        import sys
        sys.modules["faiss"] = None  # makes "import faiss" fail as on a machine without it
        import numpy as np
        from fairops.fairlof import FairLOF
        X = np.random.default_rng(0).normal(size=(400, 6))
        det = FairLOF(algorithm="approximate", search_params={"graph": "nndescent"})
        print(det.fit(X, sensitive_features=np.arange(400) % 2).search_algorithm_)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "approximate"


@pytest.mark.parametrize("params, message", [
    ({"graph": "annoy"}, r"search_params\['graph'\] must be one of \['hnsw', 'nndescent'\], got 'annoy'"),
    ({"graph": "nndescent", "hnsw_m": 16}, r"unknown key\(s\) \['hnsw_m'\] for graph 'nndescent'"),
    ({"graph": "hnsw", "graph_neighbors": 16}, r"unknown key\(s\) \['graph_neighbors'\] for graph 'hnsw'"),
    ({"graph": "nndescent", "max_rounds": 0}, r"search_params\['max_rounds'\] must be an integer >= 1, got 0"),
    ({"graph": "nndescent", "n_trees": 2.5}, r"search_params\['n_trees'\] must be an integer >= 2, got 2.5"),
    ({"graph": "nndescent", "n_trees": 1}, r"search_params\['n_trees'\] must be an integer >= 2, got 1"),
])
def test_bad_graph_options_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        FairLOF(algorithm="approximate", search_params=params).fit(blobs(50, 3), sensitive_features=np.arange(50) % 2)


def test_search_object_answers_like_nearest_neighbors():
    X = blobs(600, 4, seed=2)
    search = NNDescentKNeighbors(n_neighbors=3, params={"recheck": 0}).fit(X)
    distances, indices = search.kneighbors()
    assert distances.shape == indices.shape == (600, 3) and search.rechecked_rows_ == 0
    ref_d, ref_i = NearestNeighbors(n_neighbors=3).fit(X).kneighbors()
    assert recall(indices, ref_i) >= 0.97
    with pytest.raises(ValueError, match=r"n_neighbors=600 must be in \[1, 599\]"):
        search.kneighbors(n_neighbors=600)
