r"""MLflow's scoring server as an ASGI app, for ``fairops serve`` to put limits in front of.

``mlflow models serve`` starts uvicorn on ``mlflow.pyfunc.scoring_server.app``, an app built by
``mlflow.pyfunc.scoring_server.init(model)``; that function is not in MLflow's documented API, so it is
reached through :func:`fairops.mlflow._mlflow_internals.scoring_server_app`, used only for the MLflow
versions that module was written for (the range ``pyproject.toml`` allows, whose scoring server is this
FastAPI app), and only after checking it returns an ASGI app. The routes, request formats, status codes and
timeout stay MLflow's own.

Two things are changed in front of it. A CSV request is read here and handed on as the same rows in
JSON (:class:`CsvAsJson`): MLflow reads CSV with pandas dtypes taken from the signature, and a
signature column of type ``any`` (every whole-number, boolean and category column of a fairops
classifier) makes it refuse every CSV body, well-formed or not, with a stack trace. And its error
answers are made one line (:class:`OneLineErrors`): MLflow sends the stack trace of a CSV its parser
refuses or an unexpected error in ``stack_trace``, and a prediction or schema error as
``Failed to predict data '<the whole input>'. \nError: ...``; the client gets the reason alone, on one
line, and neither the trace nor its own request echoed back.

>>> scoring_app_supported("3.17.2"), scoring_app_supported("2.22.0"), scoring_app_supported("4.0.0")
(True, False, False)
>>> one_line("Failed to predict data '   x\n0  a'. \nError: Failed to enforce schema of data '   x\n0  a' with "
...          "schema '['x': double]'. Error: Failed to convert column x to type 'float64'.")
"Failed to convert column x to type 'float64'."
>>> one_line("Invalid input. Ensure that input is a valid JSON formatted string. Error: 'JSONDecodeError()'"
...          "\nInput: \nb'{'\n")
"Invalid input. Ensure that input is a valid JSON formatted string. Error: 'JSONDecodeError()'"
"""

from __future__ import annotations

import inspect
import json

from .._asgi import answer_json, header, read_body, replay
from .._versions import describe
from ..errors import InputError
from . import _mlflow_internals as internals

MAX_MESSAGE = 500  # characters of an error message sent back; MLflow's own quote the input
# How MLflow 3.17's scoring server words the errors it wraps around a reason.
_PREDICTION = ("Failed to predict data '", "\nError: ")
_SCHEMA = ("Failed to enforce schema of data '", "'. Error: ")


def scoring_app_supported(version: str) -> bool:
    return internals.internals_known(version)


def scoring_app(model):
    """The ASGI app ``mlflow models serve`` would run for ``model`` (a loaded ``PyFuncModel``)."""
    import mlflow

    if not scoring_app_supported(mlflow.__version__):
        raise RuntimeError(f"fairops serve was written for MLflow {describe(internals.WRITTEN_FOR)}; this is "
                           f"MLflow {mlflow.__version__}: serve with mlflow models serve instead")
    app = internals.scoring_server_app(model)
    if not (callable(app) and inspect.iscoroutinefunction(type(app).__call__)):
        raise RuntimeError(f"MLflow {mlflow.__version__}'s scoring server is not an ASGI app; "
                           "serve with mlflow models serve instead")
    return OneLineErrors(CsvAsJson(app, text_columns(model)))


def text_columns(model) -> tuple:
    """The category columns of a fairops classifier's input schema (read from CSV as text), else none."""
    from ..models import InputSchema

    document = (getattr(model.metadata, "metadata", None) or {}).get("fairops_input_schema")
    if document is None:
        return ()
    return tuple(column.name for column in InputSchema.from_dict(document).columns if column.kind == "category")


def csv_as_json(body: bytes, text: tuple = ()) -> bytes:
    r"""The rows of a CSV body as a ``dataframe_split`` JSON body (``text``: columns read as text).

    Numbers keep every digit (pandas 3 reads a float's shortest form back exactly); an empty field, ``NA`` or
    ``null`` is a missing value, as MLflow's own CSV reading has it. In a column of numbers with some text,
    the numbers stay numbers (:func:`~fairops.models._text_values.numbers_from_text`), so the model's schema names
    the row of the text. A header naming a column twice is refused (pandas would rename the second ``x.1``,
    and the model read the first alone). A body pandas cannot read is a ``ValueError`` naming why.

    >>> json.loads(csv_as_json(b"age,job,hours\n30,7,1.25\n41,,0.1\n", text=("job",)))["dataframe_split"]
    {'columns': ['age', 'job', 'hours'], 'data': [[30, '7', 1.25], [41, None, 0.1]]}
    >>> csv_as_json(b"age,job,age\n30,7,31\n")
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: the CSV header names column 'age' 2 times; send each column once
    """
    import csv
    import io

    import pandas as pd

    from ..models._text_values import numbers_from_text

    try:
        content = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"the CSV body is not UTF-8 text: {error}") from None
    try:
        header = next(csv.reader(io.StringIO(content, newline="")), [])
    except csv.Error:
        header = []  # pandas names what is wrong below
    repeated = next((name for name in header if header.count(name) > 1), None)
    if repeated is not None:
        raise InputError(f"the CSV header names column {repeated!r} {header.count(repeated)} times; send each "
                         "column once")
    try:
        frame = pd.read_csv(io.StringIO(content), dtype={name: str for name in text})
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise InputError(f"the CSV body cannot be read as a table: {str(error).strip()}") from None
    for name in frame.columns:
        if name not in text:
            frame[name] = numbers_from_text(frame[name])
    split = frame.to_dict(orient="split", index=False)
    split["data"] = [[None if isinstance(value, float) and value != value else value for value in row]
                     for row in split["data"]]
    return json.dumps({"dataframe_split": split}).encode()


def _csv_request(scope) -> bool:
    """A POST of ``text/csv`` in UTF-8 (any other parameter is left for MLflow to answer 415)."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/invocations":
        return False
    value = header(scope, b"content-type").decode("latin-1").lower()
    media, *parameters = [part.strip() for part in value.split(";")]
    return media == "text/csv" and all(p.replace(" ", "") == "charset=utf-8" for p in parameters)


class CsvAsJson:
    """ASGI middleware: a CSV scoring request handed to ``app`` as the same rows in JSON (:func:`csv_as_json`)."""

    def __init__(self, app, text: tuple = ()):
        self.app, self.text = app, tuple(text)

    async def __call__(self, scope, receive, send):
        if not _csv_request(scope):
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        if body is None:
            return None
        try:
            converted = csv_as_json(body, self.text)
        except ValueError as error:
            return await answer_json(send, 400, {"error_code": "BAD_REQUEST", "message": one_line(str(error))})
        headers = [(k, v) for k, v in scope.get("headers", ()) if k.lower() not in (b"content-type", b"content-length")]
        scope = {**scope, "headers": [*headers, (b"content-type", b"application/json"),
                                      (b"content-length", str(len(converted)).encode())]}
        return await self.app(scope, replay(converted, receive), send)


def one_line(message: str) -> str:
    """The reason in one of MLflow's error messages, on one line and at most :data:`MAX_MESSAGE` characters."""
    for opening, reason in (_PREDICTION, _SCHEMA):
        if message.startswith(opening) and reason in message:
            # the quoted input comes first, the reason after its wrapper's separator
            message = message[message.rindex(reason) + len(reason):] if opening == _SCHEMA[0] \
                else message.split(reason, 1)[1]
    lines = message.strip().splitlines()
    line = lines[0].strip() if lines else "the request was refused"
    return line if len(line) <= MAX_MESSAGE else line[:MAX_MESSAGE - 3] + "..."


def _one_line_body(body: bytes) -> bytes:
    """MLflow's JSON error answer without ``stack_trace`` and with a one-line message; other bodies as they are."""
    try:
        document = json.loads(body)
    except ValueError:
        return body
    if not isinstance(document, dict) or not isinstance(document.get("message"), str):
        return body
    document.pop("stack_trace", None)
    document["message"] = one_line(document["message"])
    return json.dumps(document).encode()


class OneLineErrors:
    """ASGI middleware: every JSON answer of status 400 or above made one line (:func:`one_line`), no stack trace.

    Answers below 400 pass through untouched, part by part; an error answer is held until its body is
    complete, rewritten, and sent with its ``content-length`` set again.
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        held = []

        async def send_one_line(message):
            if message["type"] == "http.response.start" and message["status"] >= 400 \
                    and b"json" in header(message, b"content-type"):
                held.append(message)
                return
            if not held or message["type"] != "http.response.body":
                return await send(message)
            held.append(message)
            if not message.get("more_body", False):
                start, body = held[0], _one_line_body(b"".join(m.get("body", b"") for m in held[1:]))
                headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})

        return await self.app(scope, receive, send_one_line)
