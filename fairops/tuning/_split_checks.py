"""Refuse, before any fit, a split on which no fit can succeed, naming why.

Every fit is trained on (a slice of) the training rows, has its threshold set and is scored on the
validation rows, and the pick is scored on the test rows. A part without both classes makes every fit
fail (no model to train, no TPR or FPR to reach, nothing to score), and so does a part with no rows at
all: the split shares out each label x group cell, and a cell of one or two rows goes to training only,
so data made of many tiny groups leaves validation and test empty. A ``top_k`` target is a number of
validation rows, so it must not exceed them.

>>> import numpy as np
>>> from fairops.metrics import Task
>>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["g"])
>>> y = np.array([0, 1] * 6)
>>> parts = {"train": np.arange(8), "validation": np.arange(8, 10), "test": np.arange(10, 12)}
>>> check_split(task, y, parts, n_cells=4, n_small_cells=0)
>>> check_split(task, y, {**parts, "validation": np.array([], dtype=int)}, n_cells=12, n_small_cells=12)
Traceback (most recent call last):
...
fairops.errors.InputError: no fit can succeed: the validation part of the data holds no rows; the split shares out each label x group cell and a cell of fewer than 3 rows goes to training only (12 of the 12 cells are that small); use fewer, larger groups
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

import numpy as np

from ..errors import InputError


def check_split(task, y, parts: dict, *, n_cells: int, n_small_cells: int) -> None:
    """Raise ValueError when no fit can succeed on ``parts`` (``{"train"|"validation"|"test": row indices}``)."""
    y = np.asarray(y)
    for name, rows in parts.items():
        where = f"the {'training' if name == 'train' else name} part of the data"
        if len(rows) == 0:
            raise InputError(f"no fit can succeed: {where} holds no rows; the split shares out each label x group "
                             f"cell and a cell of fewer than 3 rows goes to training only ({n_small_cells} of the "
                             f"{n_cells} cells are that small); use fewer, larger groups")
        positives = int(y[rows].sum())
        if positives in (0, len(rows)):
            missing, total = ("positive", int(y.sum())) if positives == 0 else ("negative", int(len(y) - y.sum()))
            raise InputError(f"no fit can succeed: {where} ({len(rows)} rows) holds no {missing} rows ({total} in "
                             f"all the data); every part needs both classes")
    task.check_rows(len(parts["validation"]), "the validation part of the data (where the threshold is set)")


def cell_sizes(y, groups) -> np.ndarray:
    """Rows per label x group cell (``groups``: a frame of the sensitive columns).

    >>> import pandas as pd
    >>> sorted(cell_sizes([0, 1, 1, 1], pd.DataFrame({"g": ["a", "a", "a", "b"]})).tolist())
    [1, 1, 2]
    """
    import pandas as pd

    keys = pd.concat([pd.Series(np.asarray(y), name="label", index=groups.index), groups], axis=1)
    return keys.astype(str).value_counts(sort=False).to_numpy()


def floor_fraction(min_rows, min_positives, n_train: int, n_positives: int) -> float:
    """The smallest share of the training rows that holds ``min_rows`` rows and ``min_positives`` positives."""
    floor = 0.0
    for name, wanted, available in (("min_rows", min_rows, n_train), ("min_positives", min_positives, n_positives)):
        if wanted is None:
            continue
        if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 1:
            raise InputError(f"{name} must be None or a positive integer, got {wanted!r}")
        floor = max(floor, min(1.0, wanted / max(available, 1)))
    return floor
