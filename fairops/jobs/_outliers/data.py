"""The rows FairLOF runs on: a bundled data set or a file, sampled, encoded by a fitted ``FeatureEncoder``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...datasets import LOADERS, BudgetSlicer, load_dataset
from ...datasets._custom import READERS
from ...errors import InputError
from ...fairlof._features import CATEGORICAL, FeatureEncoder

DEFAULT_DATASET = "credit_default"


@dataclass(frozen=True)
class OutlierData:
    """Raw rows, their encoded (standardised) features and readable sensitive labels for FairLOF.

    Parameters
    ----------
    name : str
        The data set's name (a file's stem).
    raw : DataFrame
        The columns a served model takes (the encoder's input columns, sensitive ones included).
    features : DataFrame
        The standardised features ``encoder`` makes of ``raw``.
    sensitive : DataFrame
        The sensitive columns as text labels.
    encoder : FeatureEncoder
        The fitted encoding.
    n_source_rows : int
        Rows before sampling.
    """

    name: str
    raw: pd.DataFrame
    features: pd.DataFrame
    sensitive: pd.DataFrame
    encoder: FeatureEncoder
    n_source_rows: int

    @property
    def n_rows(self) -> int:
        """Rows kept."""
        return len(self.features)

    @property
    def dropped(self) -> tuple:
        """Columns the encoder left out (unused text columns and constant features)."""
        return tuple(self.encoder.dropped_columns_)

    def preprocessing(self) -> dict:
        """The fitted encoding of raw rows (column order, one-hot categories, means, scales, sensitive columns).

        Returns
        -------
        dict
            :meth:`FeatureEncoder.to_dict <fairops.fairlof.FeatureEncoder.to_dict>`'s document.
        """
        return self.encoder.to_dict()


def _split_names(text) -> list[str]:
    if text is None:
        return []
    names = [name.strip() for name in (text.split(",") if isinstance(text, str) else text)]
    if any(not name for name in names):
        raise InputError(f"--sensitive must be comma-separated column names, got {text!r}")
    return names


def _read_table(path) -> pd.DataFrame:
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise InputError(f"--data file {str(path)!r} must end in one of {sorted(READERS)}")
    if not path.is_file():
        raise InputError(f"--data file {str(path)!r} does not exist")
    return reader(path)


def _source(dataset, data, sensitive, target):
    """(name, frame of candidate feature columns, sensitive frame) before subsampling."""
    names = _split_names(sensitive)
    if data is not None:
        if dataset is not None:
            raise InputError("give either --dataset or --data, not both")
        frame = _read_table(data)
        if not names:
            raise InputError("--sensitive is required with --data (comma-separated column names)")
        wanted = names + ([target] if target is not None else [])
        missing = [name for name in wanted if name not in frame.columns]
        if missing:
            raise InputError(f"column(s) {missing} not in {Path(data).name}; it has {list(frame.columns)}")
        drop = names + ([target] if target is not None else [])
        return Path(data).stem, frame.drop(columns=drop), frame[names]
    dataset = dataset or DEFAULT_DATASET
    if dataset not in LOADERS:
        raise InputError(f"unknown dataset {dataset!r}; choose one of {sorted(LOADERS)} or pass --data FILE")
    bundled = load_dataset(dataset)
    if target is not None:
        raise InputError("--target applies to --data only (bundled data sets keep their label apart)")
    names = names or list(bundled.sensitive.columns)
    columns = {}
    for name in names:
        if name in bundled.sensitive.columns:
            columns[name] = bundled.sensitive[name]
        elif name in bundled.X.columns:
            columns[name] = bundled.X[name]
        else:
            known = sorted(set(bundled.X.columns) | set(bundled.sensitive.columns))
            raise InputError(f"unknown sensitive column {name!r} for dataset {dataset!r}; columns: {known}")
    features = bundled.X.drop(columns=[name for name in names if name in bundled.X.columns])
    return dataset, features, pd.DataFrame(columns)


def _check_sensitive(sensitive: pd.DataFrame, where: str) -> pd.DataFrame:
    for name in sensitive.columns:
        column = sensitive[name]
        if column.isna().any():
            raise InputError(f"sensitive column {name!r} has {int(column.isna().sum())} missing values{where}")
        if column.nunique() < 2:
            raise InputError(f"sensitive column {name!r} has a single value{where}; "
                             "fair outlier detection needs at least two groups")
    return sensitive.astype(str).reset_index(drop=True)


def load_outlier_data(dataset=None, *, data=None, sensitive=None, target=None, max_rows=None, seed=0,
                      categorical="drop") -> OutlierData:
    """Rows, standardised numeric features and sensitive labels for FairLOF.

    ``max_rows`` keeps about that many rows: a seeded sample stratified by the intersection of the
    sensitive columns (every non-empty group cell keeps at least one row; per-cell rounding
    can add or remove a few rows).

    Parameters
    ----------
    dataset : str or None, default=None
        A bundled data set (None without ``data``: ``credit_default``).
    data : str or Path or None, default=None
        A ``.csv`` or ``.parquet`` file instead (with ``sensitive``).
    sensitive : str, list of str or None, default=None
        Sensitive columns, comma-separated (default for bundled data: all of its sensitive ones).
    target : str or None, default=None
        A label column of ``data`` to leave out of the features.
    max_rows : int or None, default=None
        Keep about that many rows, as above.
    seed : int, default=0
        Seeds the sample.
    categorical : {"drop", "onehot"}, default="drop"
        Text columns are dropped or one-hot encoded.

    Returns
    -------
    OutlierData
        The rows and their encoding.

    Examples
    --------
    >>> data = load_outlier_data("credit_default", max_rows=1000)
    >>> data.n_rows, data.features.shape[1], list(data.sensitive.columns)
    (1002, 20, ['SEX', 'EDUCATION', 'MARRIAGE'])
    """
    if categorical not in CATEGORICAL:
        raise InputError(f"--categorical must be 'drop' or 'onehot', got {categorical!r}")
    name, frame, groups = _source(dataset, data, sensitive, target)
    groups = _check_sensitive(groups, "")
    frame = frame.reset_index(drop=True)
    n_source = len(frame)
    if max_rows is not None:
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 2:
            raise InputError(f"--max-rows must be an integer >= 2, got {max_rows!r}")
        if max_rows < n_source:
            rows = BudgetSlicer(np.zeros(n_source, dtype=np.int8), groups, seed=seed).indices(max_rows / n_source)
            frame, groups = frame.iloc[rows].reset_index(drop=True), groups.iloc[rows].reset_index(drop=True)
            groups = _check_sensitive(groups, f" in the {len(rows)}-row sample (raise --max-rows)")
    table = pd.concat([frame.drop(columns=list(groups.columns), errors="ignore"), groups], axis=1)
    encoder = FeatureEncoder(categorical=categorical, sensitive=list(groups.columns)).fit(table)
    raw = table[encoder.input_columns_]
    raw = raw.astype({c: str for c in encoder.categories_})  # labels as text, as a served request carries them
    return OutlierData(name, raw, encoder.transform(raw), groups, encoder, n_source)

