"""fairops' neighbour searches: the blocked exact search against scikit-learn's brute force, the choice by
data shape, the approximate (faiss) search, and FairLOF's scores and saved state under each."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.neighbors import LocalOutlierFactor, NearestNeighbors

from fairops.fairlof import FairLOF, _knn
from fairops.fairlof._approximate_search import HNSWKNeighbors
from fairops.fairlof._blocked_search import BlockedKNeighbors
from fairops.fairlof._top_recheck import recheck_top
from fairops.mlflow import fairlof as fairlof_flavor
from tests.fairlof.outlier_data import blobs, grouped_rows


def assert_exact_neighbours(X, distances, indices, ref_distances, ref_indices, queries=None):
    """Same k distances (rtol 1e-12) as the reference; ids may differ only among rows at a tied distance.

    The reference's neighbours come from scikit-learn's brute force, its distances from its k-d tree:
    the brute force computes distances as |x|^2 - 2 <x, y> + |y|^2 in float64, off by up to about
    1e-16 (|x|^2 + |y|^2) / d(x, y) (3e-6 relative at d = 1 here), the tree sums squared differences.
    """
    queries = X if queries is None else queries
    np.testing.assert_allclose(distances, ref_distances, rtol=1e-12, atol=0)
    # every returned id really lies at the returned distance
    own = np.sqrt(((queries[:, None, :] - X[indices]) ** 2).sum(axis=2))
    np.testing.assert_allclose(own, distances, rtol=1e-12, atol=0)
    # nearer than the k-th (beyond rounding): forced, whatever the tie-breaking
    below = distances[:, -1:] * (1 - 1e-12)
    for row in range(len(indices)):
        assert set(indices[row][distances[row] < below[row]]) == set(ref_indices[row][ref_distances[row] < below[row]])
    assert np.array_equal(indices, ref_indices) or len(np.unique(X, axis=0)) < len(X)


def reference(X, k, queries=None):
    _, indices = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors(queries)
    distances, tree_indices = NearestNeighbors(n_neighbors=k, algorithm="kd_tree").fit(X).kneighbors(queries)
    assert np.array_equal(indices, tree_indices) or len(np.unique(X, axis=0)) < len(X)
    return distances, indices


@pytest.fixture(params=["vector", "blas"])
def kernel(request, monkeypatch):
    """Both makers of float32 tiles: the compiled vector kernel (where the CPU runs it) and BLAS."""
    if request.param == "vector" and not _knn.PANEL_AVAILABLE:
        # well-formed arguments, so the only thing the kernel can refuse is the CPU
        empty, norms = np.zeros((16, 4), dtype=np.float32), np.zeros(16, dtype=np.float32)
        with pytest.raises(RuntimeError, match="cannot run the vector kernel"):
            _knn.scan_tile_float32(empty, empty.reshape(1, 4, 16), 0, 16, 0, 16, norms, norms,
                                   np.zeros((16, 1), dtype=np.float32), np.zeros((16, 1), dtype=np.int32),
                                   np.arange(16), False)
    monkeypatch.setattr(BlockedKNeighbors, "_use_vector_kernel", request.param == "vector")
    return request.param


@pytest.mark.parametrize("n, d, k", [(3000, 16, 5), (1500, 1, 5), (800, 3, 20), (1300, 40, 1), (60, 4, 58),
                                     (40, 2, 39)])
def test_blocked_search_matches_sklearn_brute_force(n, d, k, kernel):
    X = blobs(n, d, seed=n + d)
    search = BlockedKNeighbors(n_neighbors=k, tile=256).fit(X)
    distances, indices = search.kneighbors()
    assert_exact_neighbours(X, distances, indices, *reference(X, k))
    new = blobs(300, d, seed=1) * 1.2
    assert_exact_neighbours(X, *search.kneighbors(new), *reference(X, k, new), queries=new)


def test_blocked_search_with_duplicates_agrees_up_to_ties(kernel):
    rng = np.random.default_rng(5)
    base = rng.normal(size=(400, 6))
    # pairs, triples, a 14-fold row and a 45-fold one: more copies than candidates leaves ties unprovable
    X = np.r_[base, base[:150], base[:40], np.repeat(base[:1], 13, axis=0), np.repeat(base[1:2], 44, axis=0)]
    rng.shuffle(X)
    for k in (1, 5, 20):
        for n_jobs in (1, 2):
            search = BlockedKNeighbors(n_neighbors=k, tile=128, n_jobs=n_jobs).fit(X)
            distances, indices = search.kneighbors()
            assert_exact_neighbours(X, distances, indices, *reference(X, k))
            assert np.all(indices != np.arange(len(X))[:, None])
            # Each worker thread keeps its own candidates, so how many a row gets depends on how the tiles
            # fell to the threads; with one thread the float64 pass has k + 4 * extra_candidates of them.
            if n_jobs == 1 and k + 4 * search.extra_candidates < 46:  # fewer than the copies: the tree decides
                assert search.unproven_rows_ > search.tree_rows_ >= 46


def test_blocked_search_on_float32_rows_equals_the_float64_search_of_the_same_values():
    X32 = blobs(2000, 16, seed=2).astype(np.float32)
    X = X32.astype(np.float64)
    distances, indices = BlockedKNeighbors(n_neighbors=5).fit(X32).kneighbors()
    assert_exact_neighbours(X, distances, indices, *reference(X, 5))
    scores = FairLOF(n_neighbors=5, correction_strength=0.0, algorithm="blocked").fit(
        X32, sensitive_features=np.arange(2000) % 2).lof_scores_
    # FairLOF computes in float64 (scikit-learn's LOF would stay in float32 for float32 rows)
    np.testing.assert_allclose(scores, -LocalOutlierFactor(n_neighbors=5).fit(X).negative_outlier_factor_,
                               rtol=1e-12)


def test_rows_the_float32_bound_cannot_prove_are_searched_again_exactly(kernel):
    # a far row makes every float32 error bound wide, and no extra candidates leaves no margin
    X = np.r_[blobs(500, 8, seed=3), np.full((1, 8), 1e6)]
    for extra, tree_rows in ((0, len(X)), (2, 0)):  # float64 tiles prove them all when they have candidates
        search = BlockedKNeighbors(n_neighbors=4, extra_candidates=extra).fit(X)
        distances, indices = search.kneighbors()
        assert search.unproven_rows_ == len(X) and search.tree_rows_ == tree_rows
        assert_exact_neighbours(X, distances, indices, *reference(X, 4))
    proven = BlockedKNeighbors(n_neighbors=4).fit(X[:-1])
    proven.kneighbors()
    assert proven.unproven_rows_ < 5


def test_vector_kernel_and_blas_find_the_same_neighbours_and_any_tile_size_works():
    X = blobs(2500, 16, seed=9)
    answers = {}
    for use_vector, tile in ((True, 512), (False, 512), (True, 200)):  # 200: not a multiple of 16, so BLAS
        BlockedKNeighbors._use_vector_kernel = use_vector
        try:
            answers[use_vector, tile] = BlockedKNeighbors(n_neighbors=6, tile=tile).fit(X).kneighbors()
        finally:
            BlockedKNeighbors._use_vector_kernel = True
    for distances, indices in answers.values():
        np.testing.assert_array_equal(indices, answers[False, 512][1])
        np.testing.assert_array_equal(distances, answers[False, 512][0])


def test_blocked_search_gives_the_same_answer_on_one_and_two_threads():
    X = blobs(2500, 12, seed=4)
    one = BlockedKNeighbors(n_neighbors=7, n_jobs=1, tile=256).fit(X).kneighbors()
    two = BlockedKNeighbors(n_neighbors=7, n_jobs=2, tile=256).fit(X).kneighbors()
    np.testing.assert_array_equal(one[1], two[1])
    np.testing.assert_array_equal(one[0], two[0])


@pytest.fixture(scope="module")
def grouped():
    return grouped_rows()


@pytest.mark.parametrize("algorithm, d, picked", [("blocked", 16, "blocked"), ("fast", 16, "blocked"),
                                                  ("fast", 4, "kd_tree")])
@pytest.mark.parametrize("strength", [0.0, 0.5])
def test_fairlof_scores_equal_the_default_search(grouped, algorithm, d, picked, strength):
    X, S = grouped
    X = X[:, :d]
    default = FairLOF(correction_strength=strength, novelty=True).fit(X, sensitive_features=S)
    other = FairLOF(correction_strength=strength, novelty=True, algorithm=algorithm).fit(X, sensitive_features=S)
    assert other.search_algorithm_ == picked and default.search_algorithm_ == "auto"
    np.testing.assert_allclose(other.outlier_scores_, default.outlier_scores_, rtol=1e-12)
    np.testing.assert_array_equal(other.outliers_, default.outliers_)
    new = blobs(200, d, seed=9)
    groups = {"sex": S["sex"][:200], "band": S["band"][:200]}
    np.testing.assert_allclose(other.score_samples(new, sensitive_features=groups),
                               default.score_samples(new, sensitive_features=groups), rtol=1e-12)
    if strength == 0.0:
        np.testing.assert_allclose(other.outlier_scores_,
                                   -LocalOutlierFactor(n_neighbors=5).fit(X).negative_outlier_factor_, rtol=1e-12)


def test_approximate_search_finds_most_exact_neighbours_at_exact_distances():
    X = blobs(4000, 16, seed=10)
    distances, indices = HNSWKNeighbors(n_neighbors=5).fit(X).kneighbors()
    own = np.sqrt(((X[:, None, :] - X[indices]) ** 2).sum(axis=2))
    np.testing.assert_allclose(own, distances, rtol=1e-12, atol=0)  # the distances of what it found are exact
    assert np.all(np.diff(distances, axis=1) >= 0) and np.all(indices != np.arange(len(X))[:, None])
    _, exact = reference(X, 5)
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(indices, exact)])
    assert recall >= 0.95, recall


def test_blocked_search_of_some_fitted_rows_leaves_each_row_out():
    X = np.r_[blobs(700, 5, seed=13), blobs(700, 5, seed=13)[:30]]  # 30 rows twice
    rows = np.array([0, 3, 29, 500, 729])
    distances, indices = BlockedKNeighbors(n_neighbors=4).fit(X).kneighbors_of_rows(rows)
    all_distances, all_indices = BlockedKNeighbors(n_neighbors=4).fit(X).kneighbors()
    np.testing.assert_array_equal(distances, all_distances[rows])
    np.testing.assert_array_equal(indices, all_indices[rows])


def test_approximate_recheck_gives_the_top_rows_their_exact_neighbours(grouped):
    X, S = grouped
    exact = FairLOF(correction_strength=0.0, top_t=40).fit(X, sensitive_features=S)
    graph_only = FairLOF(correction_strength=0.0, top_t=40, algorithm="approximate", n_jobs=1,
                         search_params={"hnsw_m": 16, "ef_construction": 20, "ef_search": 10, "recheck": 0})
    rechecked = FairLOF(correction_strength=0.0, top_t=40, algorithm="approximate", n_jobs=1,
                        search_params={"hnsw_m": 16, "ef_construction": 20, "ef_search": 10, "recheck": 2})
    graph_only.fit(X, sensitive_features=S)
    rechecked.fit(X, sensitive_features=S)
    assert not np.array_equal(graph_only._hood.neighbors, exact._hood.neighbors)  # a poor graph
    # the rows at the top of the final ranking (2t by plain LOF) and their neighbours are exact
    top = np.argsort(-rechecked.lof_scores_, kind="stable")[:2 * exact.top_t_]
    rows = np.unique(np.r_[top, rechecked._hood.neighbors[top].ravel()])
    np.testing.assert_array_equal(rechecked._hood.neighbors[rows], exact._hood.neighbors[rows])
    np.testing.assert_allclose(rechecked._hood.distances[rows], exact._hood.distances[rows], rtol=1e-9)
    # so is the first round's band, searched before anything moved
    first = np.argsort(-graph_only.lof_scores_, kind="stable")[:2 * exact.top_t_]
    first = np.unique(np.r_[first, graph_only._hood.neighbors[first].ravel()])
    np.testing.assert_array_equal(rechecked._hood.neighbors[first], exact._hood.neighbors[first])
    search = rechecked._search
    assert search.recheck_rounds_ >= 2 and len(np.union1d(rows, first)) <= search.rechecked_rows_ < len(X)


def test_recheck_searches_every_row_once_it_has_searched_a_quarter(grouped):
    X, _ = grouped
    exact = BlockedKNeighbors(n_neighbors=5).fit(X)
    true_d, true_i = exact.kneighbors()
    rng = np.random.default_rng(4)
    wrong_i = np.array([rng.choice(np.delete(np.arange(len(X)), row), 5, replace=False) for row in range(len(X))])
    wrong_d = np.sort(np.linalg.norm(X[wrong_i] - X[:, None, :], axis=2), axis=1)
    report = recheck_top(wrong_d, wrong_i, exact, band=len(X) // 5)
    assert report.rows == len(X)
    np.testing.assert_array_equal(wrong_i, true_i)


def test_approximate_fairlof_keeps_the_exact_top_outliers(grouped):
    X, S = grouped
    exact = FairLOF(correction_strength=0.3).fit(X, sensitive_features=S)
    approximate = FairLOF(correction_strength=0.3, algorithm="approximate").fit(X, sensitive_features=S)
    assert approximate.search_algorithm_ == "approximate"
    shared = len(set(exact.outliers_) & set(approximate.outliers_))
    jaccard = shared / (2 * exact.top_t_ - shared)
    assert jaccard >= 0.95, jaccard


def test_approximate_model_file_round_trip_rebuilds_the_graph_for_new_rows(tmp_path, grouped):
    X, S = grouped
    det = FairLOF(n_neighbors=5, correction_strength=0.4, novelty=True, algorithm="approximate", n_jobs=1,
                  search_params={"hnsw_m": 16, "ef_search": 48}).fit(X, sensitive_features=S)
    meta, arrays = det._get_state()
    assert all(array.dtype != object for array in arrays.values())
    loaded = FairLOF._from_state(meta, arrays)
    assert loaded.search_algorithm_ == "approximate" and loaded.get_params() == det.get_params()
    np.testing.assert_array_equal(loaded.outliers_, det.outliers_)
    new = blobs(300, 16, seed=11)
    groups = {"sex": S["sex"][:300], "band": S["band"][:300]}
    # one thread builds the same graph again, so new rows get the same neighbours and scores
    np.testing.assert_array_equal(loaded.score_samples(new, sensitive_features=groups),
                                  det.score_samples(new, sensitive_features=groups))
    fairlof_flavor.save_model(det, tmp_path / "model", feature_names=[f"x{i}" for i in range(16)],
                              pip_requirements=[])
    native = fairlof_flavor.load_model(str(tmp_path / "model"))
    np.testing.assert_array_equal(native.predict(new, sensitive_features=groups),
                                  det.predict(new, sensitive_features=groups))


def test_approximate_detector_pickles_with_its_graph(grouped):
    import pickle

    X, S = grouped
    det = FairLOF(novelty=True, algorithm="approximate").fit(X, sensitive_features=S)
    again = pickle.loads(pickle.dumps(det))
    new = blobs(100, 16, seed=12)
    groups = {"sex": S["sex"][:100], "band": S["band"][:100]}
    np.testing.assert_array_equal(again.score_samples(new, sensitive_features=groups),
                                  det.score_samples(new, sensitive_features=groups))


@pytest.mark.parametrize("options, error, message", [
    ({"algorithm": "quick"}, ValueError, r"algorithm must be one of \[.*'fast'.*\], got 'quick'"),
    ({"algorithm": "blocked", "metric": "manhattan"}, ValueError, "algorithm='blocked' measures Euclidean"),
    ({"algorithm": "approximate", "metric": "chebyshev"}, ValueError, "algorithm='approximate' measures Euclidean"),
    ({"search_params": {"ef_search": 8}}, ValueError, "search_params applies to algorithm='approximate' only"),
    ({"algorithm": "approximate", "search_params": {"efSearch": 8}}, ValueError,
     r"search_params has unknown key\(s\) \['efSearch'\]"),
    ({"algorithm": "approximate", "search_params": {"ef_search": 0}}, ValueError,
     r"search_params\['ef_search'\] must be an integer >= 1, got 0"),
    ({"algorithm": "approximate", "search_params": {"recheck": -1}}, ValueError,
     r"search_params\['recheck'\] must be an integer >= 0, got -1"),
    ({"algorithm": "approximate", "search_params": {"hnsw_m": 1}}, ValueError,
     r"search_params\['hnsw_m'\] must be an integer >= 2, got 1"),
    ({"algorithm": "approximate", "search_params": [("hnsw_m", 8)]}, TypeError, "search_params must be None or a dict"),
])
def test_bad_search_options_are_named(options, error, message):
    X = blobs(50, 3)
    with pytest.raises(error, match=message):
        FairLOF(**options).fit(X, sensitive_features=np.arange(50) % 2)


def test_missing_faiss_names_the_extra():
    script = textwrap.dedent("""
        import sys
        sys.modules["faiss"] = None  # makes "import faiss" fail as on a machine without it
        import numpy as np
        from fairops.fairlof import FairLOF, _knn
        X = np.random.default_rng(0).normal(size=(50, 3))
        FairLOF(n_neighbors=4, novelty=True).fit(X, sensitive_features=np.arange(50) % 2)  # exact: fine
        try:
            FairLOF(algorithm="approximate").fit(X, sensitive_features=np.arange(50) % 2)
        except ImportError as error:
            print(error)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "pip install 'fairops[ann]'" in result.stdout


@pytest.mark.slow  # builds the fairops wheel once per source state (cached after)
def test_approximate_model_requires_faiss_when_served(tmp_path, grouped):
    X, S = grouped
    det = FairLOF(novelty=True, algorithm="approximate").fit(X[:300], sensitive_features={"sex": S["sex"][:300]})
    fairlof_flavor.save_model(det, tmp_path / "model", feature_names=[f"x{i}" for i in range(16)])
    requirements = (tmp_path / "model" / "requirements.txt").read_text().splitlines()
    assert any(line.startswith("faiss-cpu==1.15.") for line in requirements), requirements
