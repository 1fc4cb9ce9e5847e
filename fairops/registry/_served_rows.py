"""Rows the gate and the monitor score, read as the served model reads them.

``fairops promote`` and ``fairops monitor`` score rows of a file with a registered version. They read those rows
through the version's own input checks, the ones ``fairops serve`` answers a request with (the model's
:class:`~fairops.models.InputSchema`, the groups of its decision, a finite probability), so a row the server
would refuse is refused here too, one line naming its row in the file, and is never scored:

- :func:`take_inputs`: the model's input columns, by name; a column named with spaces around it or missing is
  an error naming it, and the file's other columns (an ID, pandas' index, the label, times) are left out (the
  caller lists them). A column read as text because one of its values is not a number keeps its numbers as
  numbers (:func:`fairops.models._text_values.numbers_from_text`), so the check names the row of that value;
- :func:`served_output`: the model's own ``predict`` on those columns, its scores answer (``params={"answer":
  "scores"}``, :mod:`fairops.mlflow.answer`); a refusal of one row names the row by its label in the file.

>>> print(extra_columns_line(["Unnamed: 0", "id"], "gate.csv"))
  ignored 2 column(s) of gate.csv the model does not read: 'Unnamed: 0', 'id'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, RowError

if TYPE_CHECKING:
    from ..models import InputSchema

#: What the gate and the monitor ask a fairops classifier for: its scores, not its labels.
SCORES_PARAMS = {"answer": "scores"}


@dataclass(frozen=True)
class ModelInputs:
    """The input columns of a loaded model, in its order, and its input schema when it has one.

    Parameters
    ----------
    names : tuple of str or None
        The columns (None: a model that names none, which takes the rows as they are).
    schema : InputSchema or None
        fairops' input schema (None for a model saved without one).
    """

    names: tuple | None
    schema: InputSchema | None = None


def model_inputs(model) -> ModelInputs:
    """What ``model`` (a loaded pyfunc model) reads: fairops' input schema, else its MLflow signature's columns.

    Parameters
    ----------
    model : mlflow.pyfunc.PyFuncModel
        The loaded model.

    Returns
    -------
    ModelInputs
        Its input columns.
    """
    from ..models import InputSchema

    metadata = getattr(model, "metadata", None)
    document = (getattr(metadata, "metadata", None) or {}).get("fairops_input_schema")
    if document is not None:
        schema = InputSchema.from_dict(document)
        return ModelInputs(tuple(column.name for column in schema.columns), schema)
    signature = metadata.get_input_schema() if metadata is not None else None
    if signature is None or not signature.has_input_names():
        return ModelInputs(None)
    return ModelInputs(tuple(signature.input_names()))


def take_inputs(inputs: ModelInputs, X, where: str):
    """``(the model's columns of X, X's other columns)``; a missing or spaced column is an error naming it.

    Parameters
    ----------
    inputs : ModelInputs
        What the model reads.
    X : DataFrame
        Rows of a file (their index: their rows in the file).
    where : str
        The file, as messages name it.

    Returns
    -------
    tuple of (DataFrame, list of str)
        The input columns (text columns of numbers read as numbers), and the names left out.
    """
    names = list(X.columns)
    if inputs.schema is not None:
        try:
            inputs.schema.check_names(names)
        except InputError as error:
            raise InputError(f"{where}: {error}") from None
    if inputs.names is None:
        return X, []
    missing = [name for name in inputs.names if name not in X.columns]
    if missing:
        raise InputError(f"{where} lacks the model's input column(s) {missing}; it has {names}")
    from ..models._text_values import numbers_from_text

    kinds = {c.name: c.kind for c in inputs.schema.columns} if inputs.schema is not None else {}
    frame = X[list(inputs.names)].copy()
    for name in frame.columns:
        if kinds.get(name) in ("integer", "number"):
            column = frame[name]
            frame[name] = numbers_from_text(column.astype(object) if column.dtype == "category" else column)
    return frame, [name for name in names if name not in inputs.names]


def served_output(model, frame, where: str, schema=None):
    """The model's answer on ``frame`` (its input columns) through its own ``predict`` and input checks.

    With its ``schema`` (:attr:`ModelInputs.schema`), a refusal that names no row (MLflow's own conversion of a
    column of numbers holding text) is followed by the schema's check of the rows, which names the row.

    Parameters
    ----------
    model : mlflow.pyfunc.PyFuncModel
        The loaded model.
    frame : DataFrame
        Its input columns (:func:`take_inputs`); the index names each row's row in the file.
    where : str
        The file, as messages name it.
    schema : InputSchema or None, default=None
        The model's input schema.

    Returns
    -------
    DataFrame or ndarray
        What ``predict`` answered.

    Raises
    ------
    InputError
        The first row the model refuses, named by its row in the file; or what else it refused, one line.
    """
    from mlflow.exceptions import MlflowException

    from ..mlflow._scoring_app import one_line

    rows = frame.reset_index(drop=True)
    try:
        return model.predict(rows, params=scores_params(model))
    except (InputError, MlflowException) as error:
        row_error = error if isinstance(error, RowError) else getattr(error, "row_error", None)
        if row_error is None and schema is not None:
            try:
                schema.check(rows)
            except RowError as found:
                row_error = found
        if row_error is not None and 0 <= row_error.row < len(frame):
            raise row_error.at(f"{frame.index[row_error.row]} of {where}") from None
        text = error.message if isinstance(error, MlflowException) else str(error)
        raise InputError(f"{where}: {one_line(text)}") from None


def scores_params(model) -> dict | None:
    """``{"answer": "scores"}`` for a model whose signature takes the ``answer`` param; None for one saved before
    it (which answers its scores anyway)."""
    metadata = getattr(model, "metadata", None)
    params = metadata.get_params_schema() if metadata is not None else None
    return SCORES_PARAMS if params is not None and "answer" in {spec.name for spec in params.params} else None


def probability(output) -> np.ndarray:
    """The score of a model's scores answer (``probability``, or a reduction's ``chance_positive``), or the answer
    itself, for a model answering one number per row."""
    from ..mlflow.answer import score_of

    return np.asarray(score_of(output), dtype=np.float64).ravel()


def extra_columns_line(extra, where: str) -> str:
    """The one line listing the columns left out (empty when there are none)."""
    if not extra:
        return ""
    return f"  ignored {len(extra)} column(s) of {where} the model does not read: " + ", ".join(map(repr, extra))


def with_groups(X, sensitive):
    """``X`` with the columns of ``sensitive`` it lacks, row by row, keeping ``X``'s index (the rows' places).

    A blind model does not score by its groups, but its per-group decision reads them: the served model takes
    them as input columns, so the gate hands them on as a request would carry them.

    Parameters
    ----------
    X : DataFrame
        The rows.
    sensitive : DataFrame
        Their sensitive columns, one row per row of ``X``.

    Returns
    -------
    DataFrame
        The rows and every sensitive column.

    Examples
    --------
    >>> import pandas as pd
    >>> with_groups(pd.DataFrame({"x": [1, 2]}, index=[5, 9]), pd.DataFrame({"sex": ["f", "m"]})).to_dict("list")
    {'x': [1, 2], 'sex': ['f', 'm']}
    """
    import pandas as pd

    rows, groups = pd.DataFrame(X), pd.DataFrame(sensitive)
    lacking = [column for column in groups.columns if column not in rows.columns]
    if not lacking or len(groups) != len(rows):
        return rows  # a length mismatch is refused, named, by the gate's own check of the rows
    return rows.assign(**{str(column): groups[column].to_numpy() for column in lacking})


def check_gate_rows(models: dict, X, sensitive, task, source: str) -> list:
    """Check the gate's rows as each served model reads them (every row through its checks, none kept); the
    columns of ``X`` neither a model reads nor the task counts as sensitive.

    Parameters
    ----------
    models : dict
        Version -> the loaded model.
    X : DataFrame
        The rows (their index: their rows in the file).
    sensitive : DataFrame
        Their sensitive columns.
    task : Task
        The gate's task (its sensitive columns must be given).
    source : str
        The file, as messages name it.

    Returns
    -------
    list of str
        The columns no one reads.
    """
    missing = [column for column in task.sensitive if column not in sensitive.columns]
    if missing:
        raise InputError(f"{source} lack(s) the sensitive column(s) {missing} of the task ({task.fairness_name}); "
                         f"the sensitive columns given are {list(sensitive.columns)}: name {', '.join(task.sensitive)}")
    read = set(sensitive.columns)
    for version, model in models.items():
        reads = model_inputs(model)
        inputs, extra = take_inputs(reads, X, f"{source} (version {version})")
        served_output(model, inputs, source, reads.schema)
        read |= set(X.columns) - set(extra)
    return [column for column in X.columns if column not in read]
