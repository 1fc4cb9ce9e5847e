"""FairLOF speed and peak memory against scikit-learn's LocalOutlierFactor in the same run.

Data: n rows of d = 16 standard-normal features (plus 1% scattered far points), two
sensitive attributes with 2 and 5 values. Per (n, k): plain LOF fit, FairLOF fit
(lambda = 0.3), FairLOF fit + the 11-point lambda path, FairLOF fit with lambda "auto"
(the guide point searched on the 0.1 grid inside fit), each the best of --repeats;
ratios are against the LOF fit measured in this run. Peak memory: each call runs in a
fresh process that reports the peak of the NumPy/Python allocations made during the
call (tracemalloc; scikit-learn's compiled neighbour-search scratch buffers, the
same for both detectors, are not seen).
PyOD's LOF is timed too when it is already installed.

    .venv/bin/python benchmarks/fairlof_speed.py            # n = 10k and 100k, k = 5 and 20
    .venv/bin/python benchmarks/fairlof_speed.py --quick    # n = 1000, k = 5, one repeat (CI smoke test)
    .venv/bin/python benchmarks/fairlof_speed.py --sizes 100000 --ks 5   # one case
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from sklearn.neighbors import LocalOutlierFactor

from fairops.fairlof import FairLOF


def make_data(n: int, d: int = 16, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    far = rng.choice(n, max(1, n // 100), replace=False)
    X[far] *= 3.0
    S = np.c_[rng.integers(0, 2, n), rng.choice(5, n, p=[0.4, 0.25, 0.15, 0.12, 0.08])]
    return X, S


def best_times(cases: dict, repeats: int) -> tuple[dict, dict]:
    """Best wall and best CPU time of each call; the calls take turns so machine noise hits all alike.

    CPU time (all threads of this process) is the steadier figure on a shared machine.
    """
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    for _ in range(repeats):
        for name, call in cases.items():
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            call()
            wall[name].append(time.perf_counter() - start_wall)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: min(v) for name, v in wall.items()}, {name: min(v) for name, v in cpu.items()}


def peak_mib(name: str, n: int, k: int) -> str:
    """Peak MiB of the NumPy/Python allocations of one call, measured in a fresh process."""
    command = [sys.executable, __file__, "--peak-of", name, "--n", str(n), "--k", str(k)]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def _report_peak(name: str, n: int, k: int) -> None:
    X, S = make_data(n)
    call = runners(X, S, k)[name]
    FairLOF(n_neighbors=2, correction_strength=0.0).fit(X[:50], sensitive_features=S[:50])  # warm imports
    LocalOutlierFactor(n_neighbors=2).fit(X[:50])
    tracemalloc.start()
    call()
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"{traced:.1f}")


def runners(X, S, k):
    def lof():
        LocalOutlierFactor(n_neighbors=k).fit(X)

    def fair():
        FairLOF(n_neighbors=k, correction_strength=0.3).fit(X, sensitive_features=S)

    def fair_path():
        FairLOF(n_neighbors=k, correction_strength=0.3).fit(X, sensitive_features=S).path()

    def fair_auto():
        FairLOF(n_neighbors=k, correction_strength="auto").fit(X, sensitive_features=S)

    cases = {"sklearn LOF fit": lof, "FairLOF fit": fair, "FairLOF fit + 11-lambda path": fair_path,
             "FairLOF fit, lambda 'auto'": fair_auto}
    try:
        from pyod.models.lof import LOF as PyodLOF
    except ImportError:
        pass
    else:
        cases["PyOD LOF fit"] = lambda: PyodLOF(n_neighbors=k).fit(X)
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small case (n=1000, k=5), one repeat")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--sizes", default=None, help="comma-separated n (default 10000,100000)")
    parser.add_argument("--ks", default=None, help="comma-separated k (default 5,20)")
    parser.add_argument("--peak-of", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--k", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_of:
        _report_peak(args.peak_of, args.n, args.k)
        return
    sizes, ks = ((1000,), (5,)) if args.quick else ((10_000, 100_000), (5, 20))
    if args.sizes:
        sizes = tuple(int(value) for value in args.sizes.split(","))
    if args.ks:
        ks = tuple(int(value) for value in args.ks.split(","))
    agreements = []
    print("| n | k | what | wall s | x LOF fit (wall) | CPU s | x LOF fit (CPU) | peak MiB (traced) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        X, S = make_data(n)
        repeats = args.repeats or (1 if args.quick else 7 if n <= 10_000 else 2)
        for k in ks:
            cases = runners(X, S, k)
            # the anchor and FairLOF at lambda = 0 compute the same scores: check before timing them
            plain = -LocalOutlierFactor(n_neighbors=k).fit(X).negative_outlier_factor_
            ours = -FairLOF(n_neighbors=k, correction_strength=0.0).fit(
                X, sensitive_features=S).negative_outlier_factor_
            difference = float(np.max(np.abs(plain - ours) / np.abs(plain)))
            assert difference <= 1e-9, difference
            agreements.append(f"agree: FairLOF at lambda 0 vs LocalOutlierFactor, n={n} k={k}: "
                              f"|relative difference| = {difference:.1e} <= 1e-9")
            fitted = FairLOF(n_neighbors=k, correction_strength=0.3).fit(X, sensitive_features=S)
            times, cpu = best_times({**cases, "path alone": fitted.path}, repeats)
            peaks = {name: peak_mib(name, n, k) for name in cases}
            anchor, cpu_anchor = times["sklearn LOF fit"], cpu["sklearn LOF fit"]
            for name in [*cases, "path alone"]:
                label = "path alone (11 lambdas, neighbours reused)" if name == "path alone" else name
                peak = peaks.get(name, "-")
                print(f"| {n} | {k} | {label} | {times[name]:.3f} | {times[name] / anchor:.2f} "
                      f"| {cpu[name]:.3f} | {cpu[name] / cpu_anchor:.2f} | {peak} |", flush=True)
    print("\n".join(["", *agreements]))
    try:
        import pyod  # noqa: F401
    except ImportError:
        print("\nPyOD is not installed here: its LOF was not timed.")


if __name__ == "__main__":
    main()
