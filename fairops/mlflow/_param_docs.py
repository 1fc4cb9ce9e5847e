"""Parameter docs the flavors share, written once and formatted into their docstrings.

A docstring line holding only ``{{ name }}`` becomes the text of that name, indented as the placeholder
was; ``{{ parameters }}`` becomes the entries of the function's parameters in the signature's order. An
unknown name or an undocumented parameter fails at import, so no placeholder reaches ``help()``.

>>> @with_param_docs(answer=param("answer", "str", "What to answer."))
... def f(path, answer):
...     '''Do it.
...
...     Parameters
...     ----------
...     {{ parameters }}
...     '''
>>> print(f.__doc__.splitlines()[4:7])
['    path : str or os.PathLike', '        The model directory (missing or empty).', '    answer : str']
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar

_PLACEHOLDER = re.compile(r"^( *)\{\{ (\w+) \}\}$", re.MULTILINE)
_Function = TypeVar("_Function", bound=Callable[..., Any])


def param(name: str, kind: str, description: str) -> str:
    """One numpydoc parameter entry: ``name : kind`` and its description, indented under it."""
    return f"{name} : {kind}\n" + "\n".join("    " + line for line in description.splitlines())


#: The entries every flavor's ``save_model`` / ``log_model`` shares, by placeholder name.
SHARED = {
    "path": param("path", "str or os.PathLike", "The model directory (missing or empty)."),
    "conda_env": param("conda_env", "dict, str or None, default=None", "A conda environment, instead of pip "
                       "requirements."),
    "mlflow_model": param("mlflow_model", "mlflow.models.Model or None, default=None",
                          "The model description to add the flavor to (None: a new one)."),
    "signature": param("signature", "mlflow.models.ModelSignature, False or None, default=None",
                       "Inferred from ``input_example`` when None; False: none."),
    "input_example": param("input_example", "DataFrame or None, default=None", "Rows saved with the model."),
    "pip_requirements": param("pip_requirements", "list of str or None, default=None",
                              "None: the shipped fairops wheel and the pinned libraries its files depend on."),
    "extra_pip_requirements": param("extra_pip_requirements", "list of str or None, default=None",
                                    "Added to the default requirements."),
    "metadata": param("metadata", "dict or None, default=None", "Custom metadata recorded in ``MLmodel``."),
    "name": param("name", 'str, default="model"', "The model's name in the run."),
    "kwargs": "**kwargs\n    :func:`save_model`'s arguments and ``Model.log``'s (``registered_model_name``, ...).",
    "saved_returns": "Returns\n-------\nmlflow.models.Model\n    The saved model's description.",
    "logged_returns": "Returns\n-------\nmlflow.models.model.ModelInfo\n    What MLflow logged.",
}


def with_param_docs(**own: str) -> Callable[[_Function], _Function]:
    """Format :data:`SHARED`'s entries, and ``own`` (name -> entry text), into a function's docstring."""
    docs = {**SHARED, **own}

    def fill(match: re.Match[str]) -> str:
        indent, name = match.groups()
        if name not in docs:
            raise KeyError(f"no parameter doc named {name!r}")
        return "\n".join(indent + line if line else line for line in docs[name].splitlines())

    def decorate(function: _Function) -> _Function:
        names = inspect.signature(function).parameters
        docs["parameters"] = "\n".join(docs[name] for name in names)
        function.__doc__ = _PLACEHOLDER.sub(fill, function.__doc__ or "")
        return function

    return decorate
