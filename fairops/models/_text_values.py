"""Values read from text as a reader of the text means them: a column of numbers stays numbers where one
value is text, so a check names the row of that value, not the first row's ``"18"``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def numbers_from_text(values: pd.Series) -> pd.Series:
    """A column read as text with each value that reads as a number made that number, the others kept.

    A reader of a text file (pandas, for one) gives a column text as soon as one value is not a number; the
    schema then names that value's row, not the first row's ``"18"``. Whole numbers stay whole.

    Parameters
    ----------
    values : Series
        A column as read.

    Returns
    -------
    Series
        The same column, numbers in place of the text that spells them (unchanged unless it held text).

    Examples
    --------
    >>> import pandas as pd
    >>> numbers_from_text(pd.Series(["18", "thirty", "40.5", None])).tolist()
    [18, 'thirty', 40.5, nan]
    """
    import pandas as pd

    if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
        return values
    numbers = pd.to_numeric(values.where(values.map(lambda v: isinstance(v, str))), errors="coerce")
    spelled = numbers.notna().to_numpy()
    if not spelled.any():
        return values
    finite = numbers.fillna(0.5).to_numpy(dtype=np.float64)
    whole = spelled & np.isfinite(finite) & (finite == np.floor(finite)) & (np.abs(finite) < 2.0**63)
    read = [int(n) if is_whole else float(n) for n, is_whole in zip(numbers.to_numpy()[spelled], whole[spelled])]
    converted = values.to_numpy(dtype=object).copy()
    converted[spelled] = read
    return pd.Series(converted, index=values.index, name=values.name, dtype=object)
