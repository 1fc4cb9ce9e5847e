"""Small synthetic rows where the label leans on a sensitive attribute: for fitting models to save."""

import numpy as np
import pandas as pd


def biased_rows(seed: int, n_rows: int = 300, n_features: int = 4):
    """``(X, y, s)``: normal features named a, b, ..., s in {"f", "m"}, y = [a + (s == "m") + noise > 0.5]."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n_rows, n_features)), columns=[chr(ord("a") + j) for j in range(n_features)])
    s = rng.choice(["f", "m"], n_rows)
    y = ((X["a"] + (s == "m") + rng.normal(scale=0.5, size=n_rows)) > 0.5).astype(int)
    return X, y, s
