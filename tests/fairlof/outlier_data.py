"""Synthetic rows for the neighbour-search tests: Gaussian blobs with 1% of rows spread out, and two
sensitive attributes (2 and 5 values, the second skewed)."""

import numpy as np


def blobs(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.choice(n, max(1, n // 100), replace=False)] *= 3.0
    return X


def grouped_rows(n=3000, seed=8):
    rng = np.random.default_rng(seed)
    X = blobs(n, 16, seed=seed)
    S = {"sex": rng.choice(["f", "m"], n), "band": rng.choice(list("abcde"), n, p=[0.4, 0.25, 0.15, 0.12, 0.08])}
    return X, S
