"""Request bodies MLflow's scoring server would read into the wrong rows, found before it parses them.

Two malformed bodies are answered 200 by ``mlflow models serve``, with scores of rows the client never sent:

- a CSV row with one field more than its header: pandas reads the first field as the row's index and
  shifts the others one column left (``x,z`` then ``1,2,3`` is scored as ``x=2, z=3``); a row with fewer
  fields gets missing values;
- a ``dataframe_split`` whose ``index`` has more labels than ``data`` has rows: pandas repeats a single
  row once per label.

:func:`shape_problem` names either in one line (``fairops serve`` answers it with a 400), and None for
anything else, which MLflow's parser then reads as usual.

>>> shape_problem("text/csv", b"x,z\\n1,2\\n3,4\\n") is None
True
>>> shape_problem("text/csv", b"x,z\\n1,2\\n1,2,3\\n")
'CSV data row 2 has 3 field(s), its header names 2 columns'
>>> shape_problem("application/json", b'{"dataframe_split": {"columns": ["x"], "data": [[1]], "index": [0, 1]}}')
"dataframe_split has 1 row(s) of 'data' and 2 'index' labels; send one label per row, or no 'index'"
"""

from __future__ import annotations

import csv
import io
import json


def csv_problem(body: bytes) -> str | None:
    """The first data row whose number of fields differs from the header's (blank lines are skipped, as pandas does)."""
    try:
        rows = csv.reader(io.StringIO(body.decode("utf-8"), newline=""))
        header = next(rows, None)
        if header is None:
            return None
        for number, row in enumerate(rows, start=1):
            if row and len(row) != len(header):
                return f"CSV data row {number} has {len(row)} field(s), its header names {len(header)} columns"
    except (UnicodeDecodeError, csv.Error):  # MLflow's parser refuses these itself, in one line
        return None
    return None


def split_index_problem(body: bytes) -> str | None:
    """A ``dataframe_split`` with as many ``index`` labels as ``data`` rows, or a line saying it has not.

    Only a body that holds the key ``"index"`` is parsed here (the nesting depth is already bounded).
    """
    if b'"index"' not in body:
        return None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    split = document.get("dataframe_split") if isinstance(document, dict) else None
    if not isinstance(split, dict) or not isinstance(split.get("index"), list) \
            or not isinstance(split.get("data"), list) or len(split["index"]) == len(split["data"]):
        return None
    return (f"dataframe_split has {len(split['data'])} row(s) of 'data' and {len(split['index'])} 'index' labels; "
            "send one label per row, or no 'index'")


def shape_problem(content_type: str, body: bytes) -> str | None:
    """What is wrong with the shape of a scoring request's body of ``content_type``, or None."""
    media = content_type.split(";")[0].strip().lower()
    if media == "text/csv":
        return csv_problem(body)
    if media == "application/json":
        return split_index_problem(body)
    return None
