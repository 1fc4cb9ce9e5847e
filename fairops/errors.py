"""The error fairops raises when what it was given is wrong: an option, a data file, a column, a model file.

:class:`InputError` is a ``ValueError`` (so ``except ValueError`` and scikit-learn's conventions keep
working) whose message names the problem. The ``fairops`` command answers it with one line and exit
status 2; any other exception is a fault of fairops or a library under it and keeps its traceback.

>>> try:
...     raise InputError("column 'sex' has a single value; fairness needs two groups")
... except ValueError as error:
...     print(type(error).__name__, error)
InputError column 'sex' has a single value; fairness needs two groups
"""


class InputError(ValueError):
    """Something given to fairops is wrong; the message says what and how to put it right."""
