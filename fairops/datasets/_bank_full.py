"""The full UCI Bank Marketing data as the SCAFF paper's authors processed it (45,203 rows).

Kept apart from :mod:`fairops.datasets._bundled` because its layout is the authors' own: the label and
the sensitive columns carry the ``__y__`` / ``__Z__`` prefixes, age is only given as a group
(``<=21``, ``22-64``, ``>=65``) and marital status is binarised (married / non-married).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import Task
from ._bundle import data_path
from ._bundled import Dataset

BANK_FULL_FILE = "fair_trees_bank_marketing.csv.gz"


def load_bank_full(*, drop_sensitive: bool = False) -> Dataset:
    """Full Bank Marketing (45,203 rows), the SCAFF paper's Bank data.

    Label: the client subscribed a term deposit. Sensitive: ``age_group`` (``>=65`` vs ``<65``,
    the paper's split) and ``marital`` (married / non-married). Features: the 14 client and
    campaign columns plus the two sensitive ones unless ``drop_sensitive=True``; text columns
    have the ``category`` dtype. Task: precision at 50% TPR, TPR ratio over age group (as
    :func:`~fairops.datasets.load_bank`, the 10% sample of the same data).

    Parameters
    ----------
    drop_sensitive : bool, default=False
        Leave the two sensitive columns out of the features.

    Returns
    -------
    Dataset
        The data and its task.

    Examples
    --------
    >>> data = load_bank_full()
    >>> len(data.y), int((data.sensitive["age_group"] == ">=65").sum()), data.X.shape[1]
    (45203, 810, 16)
    """
    with data_path(BANK_FULL_FILE).open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip")
    y = frame["__y__subscription"].eq("yes").to_numpy()
    sensitive = pd.DataFrame({
        "age_group": np.where(frame["__Z__age"] == ">=65", ">=65", "<65"),
        "marital": frame["__Z__marital"].to_numpy(),
    })
    features = frame[[c for c in frame.columns if not c.startswith("__")]].copy()
    if not drop_sensitive:
        features["marital"] = sensitive["marital"].to_numpy()
        features["age_group"] = sensitive["age_group"].to_numpy()
    for column in features.columns:
        if not pd.api.types.is_numeric_dtype(features[column]):
            features[column] = features[column].astype("category")
    task = Task("precision", "tpr", 0.5, "tpr", ("age_group",))
    return Dataset(
        "bank_full",
        features.reset_index(drop=True),
        np.asarray(y, dtype=np.int8),
        sensitive.astype("category"),
        task,
        "UCI Bank Marketing (bank-full), processed as the SCAFF paper's authors did; CC BY 4.0",
    )
