"""FairLOF at large n: fairops' neighbour searches against scikit-learn's LocalOutlierFactor in the same run.

Anchor: one scikit-learn ``LocalOutlierFactor(n_neighbors=5).fit`` at n = 100k, d = 10 (its
"auto" rule picks a k-d tree there). Rows, each timed in wall and CPU seconds (CPU = all threads
of this process; the steadier figure on a shared machine):

- scikit-learn LOF at n = 100k, d = 16 (its "auto" rule: brute force) and FairLOF with
  ``algorithm="fast"`` (exact; the blocked search at d = 16) on the same rows, fit alone and fit +
  the 11-point lambda path; the ratio to scikit-learn's LOF on the same rows is the exact speed-up;
- FairLOF fit + 11-point path at n = 1M, d = 16 with ``algorithm="approximate"`` (faiss HNSW, and
  fairops' NN-descent graph),
  and exact with ``--exact-large`` (about ten minutes here; without it the exact time is
  estimated from the measured 100k one by the search's n^2 cost, and the row says so).

Quality of the approximate search: recall of the exact k neighbours on 2000 sampled rows, and
the Jaccard of FairLOF's top-t outliers (lambda 0 and 0.3) with the exact search's, at 100k (and at
1M with ``--exact-large``); also on Adult (one-hot features, d = 97; student maths with
``--quick``), real data. ``--crossover`` times the blocked search against scikit-learn's k-d tree
by d and n (the rule ``algorithm="fast"`` follows).

Data: ``fairlof_speed.make_data`` (standard-normal features, 1% of rows spread 3x; two sensitive
attributes with 2 and 5 values).

    .venv/bin/python benchmarks/fairlof_scale.py                  # the table in docs/fairlof/large_n.md
    .venv/bin/python benchmarks/fairlof_scale.py --exact-large    # + exact search at 1M (Jaccard at 1M)
    .venv/bin/python benchmarks/fairlof_scale.py --crossover      # blocked vs k-d tree by d and n
    .venv/bin/python benchmarks/fairlof_scale.py --tile-makers    # only: vector kernel vs BLAS tiles
    .venv/bin/python benchmarks/fairlof_scale.py --goal 3         # only: the 1M time goal, best of 3 turns
    .venv/bin/python benchmarks/fairlof_scale.py --quick          # small sizes (CI smoke test, seconds)
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.neighbors import LocalOutlierFactor, NearestNeighbors

from fairlof_paper import prepared
from fairlof_speed import best_times, make_data
from fairops.fairlof import FairLOF
from fairops.fairlof._blocked_search import BlockedKNeighbors

K = 5
LAMBDA = 0.3
#: The approximate search's settings timed: faiss HNSW with fairops' defaults, a cheaper HNSW graph,
#: and fairops' own NN-descent graph with its defaults.
APPROXIMATE = {"'approximate'": None,
               "'approximate', hnsw_m 16, ef 16/12": {"hnsw_m": 16, "ef_construction": 16, "ef_search": 12},
               "'approximate', graph 'nndescent'": {"graph": "nndescent"}}
#: The setting the 1M-row time goal is measured with (``--goal``).
GOAL_SETTING = "'approximate', graph 'nndescent'"


def timed(call):
    """(result, wall seconds, CPU seconds) of one call."""
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - start_wall, time.process_time() - start_cpu


def fit_with_path(X, S, algorithm, search_params=None):
    det = FairLOF(n_neighbors=K, correction_strength=LAMBDA, algorithm=algorithm, search_params=search_params)
    det.fit(X, sensitive_features=S)
    det.path()
    return det


def jaccard(a, b) -> float:
    shared = len(set(a.tolist()) & set(b.tolist()))
    return shared / (len(a) + len(b) - shared)


def recall(X, approximate: FairLOF, n_sample: int = 2000, seed: int = 1) -> float:
    """Share of the exact k neighbours of sampled fitted rows that the approximate fit found."""
    rows = np.random.default_rng(seed).choice(len(X), min(n_sample, len(X)), replace=False)
    _, found = BlockedKNeighbors(n_neighbors=K + 1).fit(X).kneighbors(X[rows])
    exact = [[j for j in row if j != own][:K] for row, own in zip(found, rows)]
    neighbours = approximate._hood.neighbors[rows]
    return float(np.mean([len(set(a) & set(b.tolist())) / K for a, b in zip(exact, neighbours)]))


def quality(name, setting, X, exact: FairLOF, approximate: FairLOF) -> str:
    search = approximate._search
    return (f"| {name} | {setting} | {len(X):,} | {X.shape[1]} | {recall(X, approximate):.4f} "
            f"| {jaccard(exact.plain_outliers_, approximate.plain_outliers_):.3f} "
            f"| {jaccard(exact.outliers_, approximate.outliers_):.3f} | {exact.top_t_} "
            f"| {search.rechecked_rows_:,} | {search.recheck_rounds_} |")


def crossover(sizes, dims) -> None:
    print("\n| n | d | blocked wall s | blocked CPU s | k-d tree wall s | k-d tree CPU s | x tree (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        for d in dims:
            X, _ = make_data(n, d)
            _, blocked_wall, blocked_cpu = timed(lambda: BlockedKNeighbors(n_neighbors=K).fit(X).kneighbors())
            _, tree_wall, tree_cpu = timed(
                lambda: NearestNeighbors(n_neighbors=K, algorithm="kd_tree").fit(X).kneighbors())
            print(f"| {n} | {d} | {blocked_wall:.2f} | {blocked_cpu:.2f} | {tree_wall:.2f} | {tree_cpu:.2f} "
                  f"| {blocked_cpu / tree_cpu:.2f} |", flush=True)


def tile_makers(n: int, d: int = 16) -> None:
    """The blocked search's two makers of float32 tiles, one thread each: the compiled vector kernel and BLAS."""
    X, _ = make_data(n, d)
    rows = np.arange(0, n, 10)
    times, answers = {}, {}
    for use_vector in (True, False):
        BlockedKNeighbors._use_vector_kernel = use_vector
        search = BlockedKNeighbors(n_neighbors=K, n_jobs=1).fit(X)
        answers[use_vector], times[use_vector, "all"], _ = timed(search.kneighbors)
        _, times[use_vector, "rows"], _ = timed(lambda: search.kneighbors_of_rows(rows))
    BlockedKNeighbors._use_vector_kernel = True
    assert all(np.array_equal(a, b) for a, b in zip(answers[True], answers[False]))
    print(f"\n| blocked search, one thread, n = {n:,}, d = {d}, k = {K} | vector kernel s | BLAS s | x BLAS |")
    print("|---|---|---|---|")
    for what, key in (("all fitted rows (symmetric)", "all"), (f"{len(rows):,} fitted rows as queries", "rows")):
        print(f"| {what} | {times[True, key]:.2f} | {times[False, key]:.2f} | "
              f"{times[True, key] / times[False, key]:.2f} |", flush=True)


def goal(n_large: int, n_anchor: int, repeats: int) -> None:
    """The 1M-row time goal with the machine's noise taken out: anchor and FairLOF take turns, best of each."""
    X10, _ = make_data(n_anchor, 10)
    XL, SL = make_data(n_large, 16)
    cases = {"anchor": lambda: LocalOutlierFactor(n_neighbors=K).fit(X10),
             "fairlof": lambda: fit_with_path(XL, SL, "approximate", APPROXIMATE[GOAL_SETTING])}
    best_wall, best_cpu = best_times(cases, repeats)
    print(f"\n| best of {repeats}, taking turns | wall s | CPU s |")
    print("|---|---|---|")
    print(f"| anchor: scikit-learn LOF fit, {n_anchor:,} x 10 | {best_wall['anchor']:.2f} | {best_cpu['anchor']:.2f} |")
    print(f"| FairLOF fit + 11-lambda path, {n_large:,} x 16, {GOAL_SETTING} | {best_wall['fairlof']:.2f} "
          f"| {best_cpu['fairlof']:.2f} |")
    print(f"| x anchor | {best_wall['fairlof'] / best_wall['anchor']:.2f} "
          f"| {best_cpu['fairlof'] / best_cpu['anchor']:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 2000 / 6000 (CI smoke test)")
    parser.add_argument("--exact-large", action="store_true", help="also the exact search at the large n")
    parser.add_argument("--crossover", action="store_true", help="blocked search vs k-d tree by d and n")
    parser.add_argument("--no-real", action="store_true", help="skip the Adult rows")
    parser.add_argument("--goal", type=int, default=0, metavar="REPEATS",
                        help="only the 1M-row time goal: anchor and FairLOF take turns REPEATS times, best of each")
    parser.add_argument("--tile-makers", action="store_true",
                        help="only the vector kernel against BLAS in the blocked search (n = 100k)")
    args = parser.parse_args()
    if args.goal:
        goal(*((30_000, 6000) if args.quick else (1_000_000, 100_000)), repeats=args.goal)
        return
    if args.tile_makers:
        from fairops.fairlof import _knn
        print(f"vector kernel available on this CPU: {_knn.PANEL_AVAILABLE}")
        tile_makers(100_000)
        return
    n_mid, n_large = (2000, 6000) if args.quick else (100_000, 1_000_000)
    real = "student_mat" if args.quick else "adult"
    print(f"load average at start: {' '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} cores\n")
    rows, results = [], {}

    X10, _ = make_data(n_mid, 10)
    _, anchor_wall, anchor_cpu = timed(lambda: LocalOutlierFactor(n_neighbors=K).fit(X10))
    rows.append(("anchor: scikit-learn LOF fit", n_mid, 10, anchor_wall, anchor_cpu, None))

    X, S = make_data(n_mid, 16)
    lof, lof_wall, lof_cpu = timed(lambda: LocalOutlierFactor(n_neighbors=K).fit(X))
    rows.append(("scikit-learn LOF fit (its 'auto': brute force)", n_mid, 16, lof_wall, lof_cpu, lof_cpu))
    plain = FairLOF(n_neighbors=K, correction_strength=0.0, algorithm="fast").fit(X, sensitive_features=S)
    difference = float(np.max(np.abs(plain.lof_scores_ + lof.negative_outlier_factor_) / plain.lof_scores_))
    assert difference <= 1e-9, difference
    agreement = (f"agree: FairLOF algorithm='fast' at lambda 0 vs LocalOutlierFactor, n={n_mid} d=16: "
                 f"|relative difference| = {difference:.1e} <= 1e-9")
    _, wall, cpu = timed(lambda: FairLOF(n_neighbors=K, correction_strength=LAMBDA, algorithm="fast")
                         .fit(X, sensitive_features=S))
    rows.append(("FairLOF fit, algorithm='fast' (exact, blocked)", n_mid, 16, wall, cpu, lof_cpu))
    exact_mid, wall, cpu = timed(lambda: fit_with_path(X, S, "fast"))
    exact_mid_cpu = cpu
    rows.append(("FairLOF fit + 11-lambda path, 'fast'", n_mid, 16, wall, cpu, lof_cpu))
    for setting, params in APPROXIMATE.items():
        approx_mid, wall, cpu = timed(lambda: fit_with_path(X, S, "approximate", params))
        rows.append((f"FairLOF fit + 11-lambda path, {setting}", n_mid, 16, wall, cpu, lof_cpu))
        results[("synthetic", n_mid, setting)] = quality("synthetic", setting, X, exact_mid, approx_mid)

    XL, SL = make_data(n_large, 16)
    approx_large = {}
    for setting, params in APPROXIMATE.items():
        approx_large[setting], wall, cpu = timed(lambda: fit_with_path(XL, SL, "approximate", params))
        rows.append((f"FairLOF fit + 11-lambda path, {setting}", n_large, 16, wall, cpu, None))
    if args.exact_large:
        exact_large, wall, cpu = timed(lambda: fit_with_path(XL, SL, "fast"))
        rows.append(("FairLOF fit + 11-lambda path, 'fast' (exact)", n_large, 16, wall, cpu, None))
        for setting, approximate in approx_large.items():
            results[("synthetic", n_large, setting)] = quality("synthetic", setting, XL, exact_large, approximate)
    else:
        scale = (n_large / n_mid) ** 2
        estimate = exact_mid_cpu * scale
        rows.append((f"FairLOF fit + path, 'fast' (exact): ESTIMATE = {n_mid:,} CPU x (n ratio)^2", n_large, 16,
                     None, estimate, None))

    print("| what | n | d | wall s | x anchor (wall) | CPU s | x anchor (CPU) | x scikit-learn LOF same rows (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for what, n, d, wall, cpu, same in rows:
        wall_cells = "- | -" if wall is None else f"{wall:.2f} | {wall / anchor_wall:.2f}"
        same_cell = "-" if same is None else f"{cpu / same:.3f}"
        print(f"| {what} | {n:,} | {d} | {wall_cells} | {cpu:.2f} | {cpu / anchor_cpu:.2f} | {same_cell} |",
              flush=True)

    if not args.no_real:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            features, sensitive, _, _ = prepared(real, "onehot")
        groups = {name: sensitive[name].to_numpy() for name in sensitive.columns}
        exact_real = fit_with_path(features, groups, "fast")
        for setting, params in APPROXIMATE.items():
            approx_real = fit_with_path(features, groups, "approximate", params)
            results[(real, setting)] = quality(f"{real}, one-hot", setting, features, exact_real, approx_real)

    print("\nApproximate search against the exact search:\n")
    print("| data | setting | n | d | recall of the exact k neighbours | Jaccard top-t, lambda 0 | "
          f"Jaccard top-t, lambda {LAMBDA} | t | rows rechecked | recheck rounds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for line in results.values():
        print(line)
    if args.quick:
        tile_makers(1000)
    if args.crossover:
        crossover((10_000, 100_000) if not args.quick else (3000,), (2, 4, 5, 6, 8, 10) if not args.quick else (4, 8))
    print(f"\nload average at end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print(agreement)


if __name__ == "__main__":
    main()
