"""A time column read as what it says: numbers by value, times in any ISO 8601 form, each row's as one instant.

``fairops monitor --time-column T`` orders a file's rows by ``T``. A column of numbers orders by value; a column
of text is read as ISO 8601 times: dates (``2024-05-01``, ``20240501``, week dates ``2024-W18-3``, ordinal dates
``2024-122``), date and time with ``T`` or a space, minutes or seconds, a decimal fraction (``.`` or ``,``), and
an offset (``Z``, ``+02:00``, ``-0500``, ``+02``). Times with an offset are compared as the instants they are; a
time without one is taken as UTC. A value that is missing or not such a time is refused, naming its row.

>>> import pandas as pd
>>> keys = time_keys(pd.Series(["2024-05-01T12:00:00+02:00", "2024-05-01T11:00Z", "2024-W18-3"]), "t", "f.csv")
>>> keys.kind, keys.values.argsort().tolist()
('time', [2, 0, 1])
>>> time_keys(pd.Series(["2024-05-01", "yesterday"]), "t", "f.csv")
Traceback (most recent call last):
...
fairops.errors.InputError: time column 't' of f.csv holds 'yesterday' in row 1, not a time in ISO 8601 form (e.g. 2024-05-01 or 2024-05-01T13:30:00+02:00)
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from ..errors import InputError

_ORDINAL = re.compile(r"^(\d{4})-?(\d{3})(?=$|[T ])(.*)$")


@dataclass(frozen=True)
class TimeKeys:
    """Sort keys of a time column: ``kind`` ``"number"`` (float64 values) or ``"time"`` (int64 nanoseconds since
    1970-01-01 UTC)."""

    kind: str
    values: np.ndarray


def _one_time(text: str) -> datetime | None:
    """A time in one of the ISO 8601 forms ``datetime.fromisoformat`` reads, or an ordinal date; None otherwise."""
    text = text.strip()
    ordinal = _ORDINAL.match(text)
    if ordinal:
        year, day, rest = int(ordinal[1]), int(ordinal[2]), ordinal[3]
        if not 1 <= day <= 366:
            return None
        text = (datetime(year, 1, 1) + timedelta(days=day - 1)).strftime("%Y-%m-%d") + rest
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _refuse(name: str, where: str, value, row) -> InputError:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return InputError(f"time column {name!r} of {where} has a missing value in row {row}; every row needs its "
                          "time to be ordered")
    return InputError(f"time column {name!r} of {where} holds {value!r} in row {row}, not a time in ISO 8601 form "
                      "(e.g. 2024-05-01 or 2024-05-01T13:30:00+02:00)")


def time_keys(values, name: str, where: str) -> TimeKeys:
    """Sort keys of one chunk of a time column (its index names each row in the file).

    Parameters
    ----------
    values : Series
        The column as read.
    name : str
        The column's name.
    where : str
        The file, as messages name it.

    Returns
    -------
    TimeKeys
        The keys and their kind.
    """
    import pandas as pd

    rows = values.index
    if pd.api.types.is_bool_dtype(values):
        raise InputError(f"time column {name!r} of {where} holds true/false values, not times or numbers")
    if pd.api.types.is_numeric_dtype(values):
        numbers = values.to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(numbers))
        if bad.size:
            raise _refuse(name, where, None, rows[bad[0]])
        return TimeKeys("number", numbers)
    if pd.api.types.is_datetime64_any_dtype(values):
        stamps = pd.to_datetime(values, utc=True)
    else:
        text = values.astype(object)
        stamps = pd.to_datetime(text.where(text.map(lambda v: isinstance(v, str))), format="ISO8601", utc=True,
                                errors="coerce")
        for position in np.flatnonzero(stamps.isna().to_numpy()):
            value = text.iloc[position]
            moment = _one_time(value) if isinstance(value, str) else None
            if moment is None:
                raise _refuse(name, where, value, rows[position])
            stamps.iloc[position] = pd.Timestamp(moment).tz_convert("UTC")
    missing = np.flatnonzero(stamps.isna().to_numpy())
    if missing.size:
        raise _refuse(name, where, None, rows[missing[0]])
    return TimeKeys("time", stamps.dt.tz_convert("UTC").dt.as_unit("ns").astype("int64").to_numpy())
