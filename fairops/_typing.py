"""Names for the shapes of input the public functions take, shared by their annotations."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal, TypeAlias

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

__all__ = ["ArrayLike", "Decision", "Features", "FloatArray", "IntArray", "Matrix", "MaxFeatures", "NDArray",
           "RandomState", "Rate", "Sensitive", "StrPath"]

#: Sensitive columns: a frame, one series, a mapping of column name to values, or one array of values.
Sensitive: TypeAlias = pd.DataFrame | pd.Series | Mapping[str, ArrayLike] | ArrayLike
#: A model's input rows: a frame, or an array of shape (n_samples, n_features).
Features: TypeAlias = pd.DataFrame | ArrayLike
#: Float and integer arrays the metrics return.
FloatArray: TypeAlias = NDArray[np.float64]
IntArray: TypeAlias = NDArray[np.integer]
#: How a score becomes a decision: one threshold for all rows, or one per sensitive group.
Decision: TypeAlias = Literal["single", "per-group"]
#: The group rate a fairness ratio compares.
Rate: TypeAlias = Literal["tpr", "fpr", "ppr"]
#: What a seeded estimator takes as its ``random_state``.
RandomState: TypeAlias = int | np.random.RandomState | None
#: How many features a SCAFF split looks at: a rule, a count, a fraction, or all of them.
MaxFeatures: TypeAlias = Literal["sqrt", "log2"] | int | float | None
#: Rows a reduction fits on: anything :data:`Features` is, or a SciPy sparse matrix.
Matrix: TypeAlias = pd.DataFrame | ArrayLike | sparse.spmatrix | sparse.sparray
#: A file or folder: a string or a path object.
StrPath: TypeAlias = str | os.PathLike[str]
