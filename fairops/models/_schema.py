"""The input a served model takes, checked on every request before the model sees a row.

:class:`InputSchema` is recorded from the training frame: each required column with its kind (``integer``,
``number``, ``boolean`` or ``category`` with the categories seen), and whether the model takes missing values
and unseen categories (read off the fitted model by :meth:`InputSchema.for_model`). :meth:`InputSchema.check`
refuses, with a one-line error naming the column, row and value, an empty input, a missing or space-padded
column, a value of the wrong kind, an unseen category or a missing value the model cannot take; what passes
comes back as the model was trained on it (training column order, ``int64`` whole numbers, categoricals).

>>> import pandas as pd
>>> train = pd.DataFrame({"age": [30, 41], "sex": pd.Categorical(["Female", "Male"]), "hours": [38.5, 40.0]})
>>> schema = InputSchema.from_frame(train)
>>> [(column.name, column.kind) for column in schema.columns]
[('age', 'integer'), ('sex', 'category'), ('hours', 'number')]
>>> schema.check(pd.DataFrame({"age": [40.0], "sex": ["Male"], "hours": [40]})).dtypes.astype(str).tolist()
['int64', 'category', 'float64']
>>> schema.check(pd.DataFrame({"age": [40.5], "sex": ["Male"], "hours": [40]}))
Traceback (most recent call last):
...
fairops.errors.RowError: column 'age' must hold whole numbers; row 0 has 40.5
>>> schema.check(pd.DataFrame({"age": [40], "sex": ["Alien"], "hours": [40]}))
Traceback (most recent call last):
...
fairops.errors.RowError: column 'sex' has the category 'Alien' in row 0, unseen in training (known: 'Female', 'Male')
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from .._column_names import describe, near_misses, space_clashes
from ..errors import InputError, RowError
from ._probes import columns_taking, columns_taking_missing_values, takes_unseen_categories

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    from sklearn.base import BaseEstimator

KINDS = ("integer", "number", "boolean", "category")
_SHOWN = 8  # categories named in a message


@dataclass(frozen=True)
class Column:
    """One required input column: its name, kind, known categories, and whether it may be missing.

    Parameters
    ----------
    name : str
        The column's name.
    kind : {"integer", "number", "boolean", "category"}
        What it holds.
    categories : tuple or None, default=None
        The known values of a ``category`` column (None: any).
    missing : bool, default=False
        Whether the model takes a missing value there.
    """

    name: str
    kind: str
    categories: tuple | None = None
    missing: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise InputError(f"column name must be a non-empty string, got {self.name!r}")
        if self.kind not in KINDS:
            raise InputError(f"column {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.categories is not None:
            if self.kind != "category":
                raise InputError(f"column {self.name!r}: only a category column has categories")
            if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in self.categories):
                raise InputError(f"column {self.name!r}: categories must be text or numbers")
            object.__setattr__(self, "categories", tuple(self.categories))
        if not isinstance(self.missing, bool):
            raise InputError(f"column {self.name!r}: missing must be true or false, got {self.missing!r}")


def _kind(name, series) -> str:
    import pandas as pd

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "number"
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(dtype) \
            or pd.api.types.is_string_dtype(dtype):
        return "category"
    raise TypeError(f"column {name!r} has dtype {dtype}; a served model takes integers, numbers, booleans "
                    "or categories")


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value


def _first(mask) -> int:
    return int(np.flatnonzero(np.asarray(mask))[0])


@dataclass(frozen=True)
class InputSchema:
    """Required columns in order, and whether the model takes categories unseen in training.

    Parameters
    ----------
    columns : tuple of Column
        The required columns, at least one, each named once.
    unseen_categories : bool, default=False
        Whether the model takes categories unseen in training.
    """

    columns: tuple
    unseen_categories: bool = False

    def __post_init__(self):
        columns = tuple(self.columns)
        if not columns or not all(isinstance(c, Column) for c in columns):
            raise InputError("an input schema needs at least one Column")
        names = [c.name for c in columns]
        if len(set(names)) != len(names):
            raise InputError(f"an input schema names each column once, got {names}")
        clashes = space_clashes(names)
        if clashes:
            raise InputError(f"columns {describe(clashes[0])} differ only by surrounding spaces; rename them "
                             "(column names are compared exactly)")
        object.__setattr__(self, "columns", columns)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, missing_values: Sequence[str] | Literal[True] = (),
                   unseen_categories: bool = False) -> InputSchema:
        """The schema of a training frame: its columns, kinds and categories.

        ``missing_values`` names the columns that take a missing value (``True``: all of them). A
        ``category`` column's known values are the categories of a pandas categorical; a plain text
        column accepts any value.

        Parameters
        ----------
        frame : DataFrame
            Training rows; text column names.
        missing_values : sequence of str or True, default=()
            The columns that take a missing value (``True``: all of them).
        unseen_categories : bool, default=False
            Whether the model takes categories unseen in training.

        Returns
        -------
        InputSchema
            The schema.
        """
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame of training rows, got {type(frame).__name__}")
        missing = set(frame.columns) if missing_values is True else set(missing_values or ())
        columns = []
        for name in frame.columns:
            if not isinstance(name, str):
                raise TypeError(f"column names must be text to be served, got {name!r}")
            kind = _kind(name, frame[name])
            categories = None
            if kind == "category" and isinstance(frame[name].dtype, pd.CategoricalDtype):
                categories = tuple(_scalar(v) for v in frame[name].cat.categories)
            columns.append(Column(name, kind, categories, name in missing))
        return cls(tuple(columns), bool(unseen_categories))

    @classmethod
    def for_model(cls, model: BaseEstimator, frame: pd.DataFrame, *, missing_seen_only: bool = False) -> InputSchema:
        """The schema of the training ``frame``, with what the fitted ``model`` takes read off the model.

        Parameters
        ----------
        model : estimator
            The fitted model (a pipeline is read step by step).
        frame : DataFrame
            Its training rows.
        missing_seen_only : bool, default=False
            A column takes a missing value only when ``frame`` holds some and the model takes it: a model
            learnt nothing about missing values of a column that had none (``fairops tune`` registers so).

        Returns
        -------
        InputSchema
            The schema.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from sklearn.ensemble import HistGradientBoostingClassifier
        >>> X = pd.DataFrame({"a": [0.0, 1.0, np.nan, 3.0] * 5, "b": [1.0, 0.0, 1.0, 0.0] * 5})
        >>> model = HistGradientBoostingClassifier(max_iter=2).fit(X, [0, 0, 1, 1] * 5)
        >>> [c.name for c in InputSchema.for_model(model, X).columns if c.missing]
        ['a', 'b']
        >>> [c.name for c in InputSchema.for_model(model, X, missing_seen_only=True).columns if c.missing]
        ['a']
        """
        if missing_seen_only:  # only the columns with missing values are asked about
            taking = columns_taking(model, frame, [column for column in frame.columns if frame[column].isna().any()])
        else:
            taking = columns_taking_missing_values(model, frame)
        return cls.from_frame(frame, missing_values=taking, unseen_categories=takes_unseen_categories(model))

    def to_dict(self) -> dict:
        """JSON-able form (the inverse of :meth:`from_dict`).

        Returns
        -------
        dict
            ``{"columns": [...], "unseen_categories": bool}``.
        """
        return {"columns": [{"name": c.name, "kind": c.kind, "missing": c.missing,
                             **({} if c.categories is None else {"categories": list(c.categories)})}
                            for c in self.columns],
                "unseen_categories": self.unseen_categories}

    @classmethod
    def from_dict(cls, document: object) -> InputSchema:
        """Rebuild from :meth:`to_dict`'s form; a malformed document is a ``ValueError``.

        Parameters
        ----------
        document : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        InputSchema
            The schema.
        """
        if not isinstance(document, dict) or not isinstance(document.get("columns"), list) \
                or set(document) - {"columns", "unseen_categories"}:
            raise InputError("an input schema document must be a dict with a 'columns' list and "
                             "'unseen_categories' only")
        unseen = document.get("unseen_categories", False)
        if not isinstance(unseen, bool):
            raise InputError(f"unseen_categories must be true or false, got {unseen!r}")
        columns = []
        for entry in document["columns"]:
            if not isinstance(entry, dict) or set(entry) - {"name", "kind", "categories", "missing"}:
                raise InputError(f"an input schema column has name, kind, categories and missing only, got {entry!r}")
            categories = entry.get("categories")
            if categories is not None and not isinstance(categories, list):
                raise InputError(f"categories of column {entry.get('name')!r} must be a list")
            columns.append(Column(entry.get("name"), entry.get("kind"),  # type: ignore[arg-type]  # Column checks them
                                  None if categories is None else tuple(categories), entry.get("missing", False)))
        return cls(tuple(columns), unseen)

    def check(self, data: pd.DataFrame) -> pd.DataFrame:
        """``data`` as the model was trained on (columns in order, training dtypes); else a one-line error.

        Parameters
        ----------
        data : DataFrame
            Request rows.

        Returns
        -------
        DataFrame
            The required columns, checked and converted.

        Raises
        ------
        InputError
            Naming the column, the row and the value refused.
        """
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"input must be a table of rows (a pandas DataFrame), got {type(data).__name__}")
        self.check_names(list(data.columns))
        lacking = [c.name for c in self.columns if c.name not in data.columns]
        if lacking:  # first: a served body of none of the columns reaches the model as an empty frame
            raise InputError(f"input lacks the required column(s) {lacking}")
        if len(data) == 0:
            raise InputError("input has no rows; send at least one row")
        checked = {c.name: pd.Series(self._column(c, data[c.name].reset_index(drop=True)))
                   for c in self.columns}
        return pd.DataFrame(checked)

    def check_names(self, names: Sequence[str]) -> None:
        """Refuse request column ``names`` a reader would take for the model's own.

        That is two names equal once stripped of surrounding spaces where one is (or strips to) a model
        column, or a model column sent only with spaces around its name. Names are compared exactly, never
        stripped.

        Parameters
        ----------
        names : list of str
            The request's column names.

        Examples
        --------
        >>> schema = InputSchema((Column("x1", "number"),))
        >>> schema.check_names(["x1", "other", " other"])
        >>> schema.check_names(["x1", " x1 "])
        Traceback (most recent call last):
        ...
        fairops.errors.InputError: input has columns 'x1' and ' x1 ', which differ only by surrounding spaces; send each column once, named exactly as the model's
        >>> schema.check_names([" x1 "])
        Traceback (most recent call last):
        ...
        fairops.errors.InputError: input lacks the required column 'x1'; it has ' x1 ', which differs only by surrounding spaces (names are compared exactly)
        """  # noqa: E501 - a doctest's expected output is one line
        own = {c.name.strip() for c in self.columns}
        for group in space_clashes(names):
            if group[0].strip() in own:
                raise InputError(f"input has columns {describe(group)}, which differ only by surrounding spaces; "
                                 "send each column once, named exactly as the model's")
        for name, similar in near_misses([c.name for c in self.columns], list(names)).items():
            raise InputError(f"input lacks the required column {name!r}; it has {describe(similar)}, which differs "
                             "only by surrounding spaces (names are compared exactly)")

    def _column(self, column: Column, values):
        import pandas as pd

        absent = values.isna().to_numpy()
        if absent.any() and not column.missing:
            raise RowError(f"column {column.name!r} has a missing value in row ", _first(absent),
                           "; this model cannot take missing values")
        present = values.astype(object).to_numpy()
        if column.kind in ("integer", "number"):
            wrong = [not absent[i] and (isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real))
                     for i, v in enumerate(present)]
            if any(wrong):
                row = _first(wrong)
                raise RowError(f"column {column.name!r} must hold numbers; row ", row, f" has {present[row]!r}")
            numbers_ = _as_floats(column.name, present, absent)
            infinite = np.isinf(numbers_)
            if infinite.any():
                row = _first(infinite)
                raise RowError(f"column {column.name!r} must hold finite numbers; row ", row, f" has {numbers_[row]}")
            if column.kind == "number":
                return numbers_
            fractional = ~absent & (numbers_ != np.floor(np.where(absent, 0.0, numbers_)))
            if fractional.any():
                row = _first(fractional)
                raise RowError(f"column {column.name!r} must hold whole numbers; row ", row, f" has {numbers_[row]}")
            beyond = ~absent & (np.abs(np.where(absent, 0.0, numbers_)) >= 2.0**63)
            if beyond.any():  # would wrap around when cast to int64
                row = _first(beyond)
                raise RowError(f"column {column.name!r} must hold 64-bit whole numbers; row ", row,
                               f" has {present[row]!r}")
            return numbers_ if absent.any() else numbers_.astype(np.int64)
        if column.kind == "boolean":
            wrong = [not absent[i] and not isinstance(v, (bool, np.bool_)) for i, v in enumerate(present)]
            if any(wrong):
                row = _first(wrong)
                raise RowError(f"column {column.name!r} must hold true or false; row ", row, f" has {present[row]!r}")
            return present if absent.any() else present.astype(bool)
        if column.categories is None:  # trained on plain text: any value, as text
            return pd.Series(np.where(absent, None, present), dtype=object)
        known = pd.Series(present).isin(list(column.categories)).to_numpy()
        unseen = ~absent & ~known
        if unseen.any() and not self.unseen_categories:
            row = _first(unseen)
            shown = ", ".join(repr(v) for v in column.categories[:_SHOWN])
            more = f", ... ({len(column.categories)} in all)" if len(column.categories) > _SHOWN else ""
            raise RowError(f"column {column.name!r} has the category {present[row]!r} in row ", row,
                           f", unseen in training (known: {shown}{more})")
        # trained on a pandas categorical: the same categories in the same order (an unseen value is missing)
        return pd.Series(pd.Categorical(np.where(known, present, None), categories=list(column.categories)))


def _as_floats(name, present, absent) -> np.ndarray:
    """The column as float64; a whole number too large for a float is refused by row."""
    try:
        return np.where(absent, np.nan, present).astype(np.float64)
    except OverflowError:
        # typeshed's numbers ABCs define no ordering with int
        row = next(i for i, v in enumerate(present)
                   if isinstance(v, numbers.Integral) and abs(v) > 2**1023)  # type: ignore[operator]
        raise RowError(f"column {name!r} has a number too large for a float in row ", row) from None
