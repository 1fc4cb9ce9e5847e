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


class RowError(InputError):
    """An input refused for one of its rows, named by its position in the input given.

    Whoever hands on a part of a larger table (a window of a file, the gate's rows) names the row there
    instead, with :meth:`at`.

    Parameters
    ----------
    before : str
        The message up to the row's position.
    row : int
        The row's position in the input given (from 0).
    after : str, default=""
        The rest of the message.

    Examples
    --------
    >>> error = RowError("column 'age' must hold whole numbers; row ", 3, " has 40.5")
    >>> print(error)
    column 'age' must hold whole numbers; row 3 has 40.5
    >>> print(error.at("17 of gate.csv"))
    column 'age' must hold whole numbers; row 17 of gate.csv has 40.5
    """

    def __init__(self, before: str, row: int, after: str = ""):
        self.before, self.row, self.after = before, int(row), after
        super().__init__(f"{before}{self.row}{after}")

    def at(self, label: object) -> InputError:
        """The same refusal naming the row as ``label`` (e.g. its row in the file).

        Parameters
        ----------
        label : object
            How to name the row.

        Returns
        -------
        InputError
            The refusal, one line.
        """
        return InputError(f"{self.before}{label}{self.after}")
