"""Column names that differ only by surrounding whitespace (``x1`` and `` x1 ``): refused by name, never merged.

fairops compares column names exactly, as pandas, MLflow's signatures and scikit-learn's
``feature_names_in_`` do. Two names equal once stripped would train as two columns that a reader takes
for one, and a request naming `` x1 `` for the model's ``x1`` would have its column ignored; so a data
file, an input schema and a request holding such names are refused, naming them.

>>> space_clashes(["x1", "z", " x1 ", "x1\\t", "z"])
[('x1', ' x1 ', 'x1\\t')]
>>> describe(("x1", " x1 ")), describe(("a", " a", "a "))
("'x1' and ' x1 '", "'a', ' a' and 'a '")
>>> near_misses(["x1", "z"], [" x1 ", "z"])
{'x1': [' x1 ']}
"""

from __future__ import annotations


def space_clashes(names) -> list[tuple]:
    """Groups of distinct names that are equal once surrounding whitespace is stripped, in first-seen order."""
    groups: dict = {}
    for name in names:
        if isinstance(name, str):
            groups.setdefault(name.strip(), {})[name] = None
    return [tuple(group) for group in groups.values() if len(group) > 1]


def near_misses(wanted, names) -> dict:
    """For each name of ``wanted`` missing from ``names``: the names equal to it once stripped (when any)."""
    present = set(names)
    found = {}
    for name in wanted:
        if name not in present:
            similar = [other for other in names if isinstance(other, str) and other.strip() == name.strip()]
            if similar:
                found[name] = similar
    return found


def describe(group) -> str:
    """``'a' and ' a'``, or ``'a', ' a' and 'a '``."""
    shown = [repr(name) for name in group]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
