"""The rows FairLOF runs on: a bundled data set or a file, sampled, with standardised features."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...datasets import LOADERS, BudgetSlicer, load_dataset
from ...datasets.custom import READERS

DEFAULT_DATASET = "credit_default"


@dataclass(frozen=True)
class OutlierData:
    """Standardised features and readable sensitive labels of the rows FairLOF runs on."""

    name: str
    features: pd.DataFrame
    sensitive: pd.DataFrame
    n_source_rows: int
    means: dict = field(default_factory=dict)
    scales: dict = field(default_factory=dict)
    dropped: tuple = ()

    @property
    def n_rows(self) -> int:
        return len(self.features)

    def preprocessing(self) -> dict:
        """What a user must apply to raw rows before scoring them with the logged model."""
        return {"standardise": {"mean": self.means, "scale": self.scales},
                "features": list(self.features.columns), "sensitive": list(self.sensitive.columns),
                "dropped_columns": list(self.dropped)}



def _split_names(text) -> list[str]:
    if text is None:
        return []
    names = [name.strip() for name in (text.split(",") if isinstance(text, str) else text)]
    if any(not name for name in names):
        raise ValueError(f"--sensitive must be comma-separated column names, got {text!r}")
    return names


def _read_table(path) -> pd.DataFrame:
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"--data file {str(path)!r} must end in one of {sorted(READERS)}")
    if not path.is_file():
        raise ValueError(f"--data file {str(path)!r} does not exist")
    return reader(path)


def _source(dataset, data, sensitive, target):
    """(name, frame of candidate feature columns, sensitive frame) before subsampling."""
    names = _split_names(sensitive)
    if data is not None:
        if dataset is not None:
            raise ValueError("give either --dataset or --data, not both")
        frame = _read_table(data)
        if not names:
            raise ValueError("--sensitive is required with --data (comma-separated column names)")
        wanted = names + ([target] if target is not None else [])
        missing = [name for name in wanted if name not in frame.columns]
        if missing:
            raise ValueError(f"column(s) {missing} not in {Path(data).name}; it has {list(frame.columns)}")
        drop = names + ([target] if target is not None else [])
        return Path(data).stem, frame.drop(columns=drop), frame[names]
    dataset = dataset or DEFAULT_DATASET
    if dataset not in LOADERS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {sorted(LOADERS)} or pass --data FILE")
    bundled = load_dataset(dataset)
    if target is not None:
        raise ValueError("--target applies to --data only (bundled data sets keep their label apart)")
    names = names or list(bundled.sensitive.columns)
    columns = {}
    for name in names:
        if name in bundled.sensitive.columns:
            columns[name] = bundled.sensitive[name]
        elif name in bundled.X.columns:
            columns[name] = bundled.X[name]
        else:
            known = sorted(set(bundled.X.columns) | set(bundled.sensitive.columns))
            raise ValueError(f"unknown sensitive column {name!r} for dataset {dataset!r}; columns: {known}")
    features = bundled.X.drop(columns=[name for name in names if name in bundled.X.columns])
    return dataset, features, pd.DataFrame(columns)


def _check_sensitive(sensitive: pd.DataFrame, where: str) -> pd.DataFrame:
    for name in sensitive.columns:
        column = sensitive[name]
        if column.isna().any():
            raise ValueError(f"sensitive column {name!r} has {int(column.isna().sum())} missing values{where}")
        if column.nunique() < 2:
            raise ValueError(f"sensitive column {name!r} has a single value{where}; "
                             "fair outlier detection needs at least two groups")
    return sensitive.astype(str).reset_index(drop=True)


def _standardised(frame: pd.DataFrame, categorical: str):
    if categorical not in ("drop", "onehot"):
        raise ValueError(f"--categorical must be 'drop' or 'onehot', got {categorical!r}")
    numeric = frame.select_dtypes(include=["number", "bool"]).astype(np.float64)
    others = [c for c in frame.columns if c not in numeric.columns]
    if categorical == "onehot" and others:
        dummies = pd.get_dummies(frame[others].astype(str), prefix_sep="=", dtype=np.float64)
        numeric = pd.concat([numeric, dummies], axis=1)
        others = []
    missing = {c: int(n) for c, n in numeric.isna().sum().items() if n}
    if missing:
        raise ValueError(f"feature column(s) with missing values {missing}; impute or drop them first")
    if not np.isfinite(numeric.to_numpy()).all():
        raise ValueError("feature columns hold infinite values; clean them first")
    scale = numeric.std(axis=0, ddof=0)
    constant = [str(c) for c in scale.index[scale <= 0]]
    numeric = numeric.loc[:, scale > 0]
    if numeric.shape[1] == 0:
        raise ValueError("no usable feature column: FairLOF needs at least one numeric, non-constant feature "
                         "(try --categorical onehot)")
    means, scales = numeric.mean(axis=0), numeric.std(axis=0, ddof=0)
    standard = ((numeric - means) / scales).reset_index(drop=True)
    standard.columns = [str(c) for c in standard.columns]
    return (standard, {str(k): float(v) for k, v in means.items()}, {str(k): float(v) for k, v in scales.items()},
            tuple(str(c) for c in others) + tuple(constant))


def load_outlier_data(dataset=None, *, data=None, sensitive=None, target=None, max_rows=None, seed=0,
                      categorical="drop") -> OutlierData:
    """Rows, standardised numeric features and sensitive labels for FairLOF.

    ``max_rows`` keeps about that many rows: a seeded sample stratified by the intersection of the
    sensitive columns (every non-empty group cell keeps at least one row; per-cell rounding
    can add or remove a few rows).

    >>> data = load_outlier_data("credit_default", max_rows=1000)
    >>> data.n_rows, data.features.shape[1], list(data.sensitive.columns)
    (1002, 20, ['SEX', 'EDUCATION', 'MARRIAGE'])
    """
    name, frame, groups = _source(dataset, data, sensitive, target)
    groups = _check_sensitive(groups, "")
    frame = frame.reset_index(drop=True)
    n_source = len(frame)
    if max_rows is not None:
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 2:
            raise ValueError(f"--max-rows must be an integer >= 2, got {max_rows!r}")
        if max_rows < n_source:
            rows = BudgetSlicer(np.zeros(n_source, dtype=np.int8), groups, seed=seed).indices(max_rows / n_source)
            frame, groups = frame.iloc[rows].reset_index(drop=True), groups.iloc[rows].reset_index(drop=True)
            groups = _check_sensitive(groups, f" in the {len(rows)}-row sample (raise --max-rows)")
    features, means, scales, dropped = _standardised(frame, categorical)
    return OutlierData(name, features, groups, n_source, means, scales, dropped)

