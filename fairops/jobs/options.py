"""Options that do not apply to what the user asked for are errors, not silently ignored.

The ``fairops`` command records the long options each invocation spelled out (``args.given``);
a job names the options that make no sense in the mode it runs in.

>>> from types import SimpleNamespace
>>> args = SimpleNamespace(given=frozenset({"--neighbors", "--tune"}))
>>> refuse_options(args, ["--neighbors", "--lambda"], "with --tune (Fairband searches them)")
Traceback (most recent call last):
...
ValueError: --neighbors does not apply with --tune (Fairband searches them)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def options_in(argv: Sequence[str]) -> frozenset[str]:
    """The long options spelled out in ``argv`` (``--name`` or ``--name=value``).

    >>> sorted(options_in(["tune", "--dataset", "german", "--seed=3"]))
    ['--dataset', '--seed']
    """
    return frozenset(token.split("=", 1)[0] for token in argv if token.startswith("--") and token != "--")


def refuse_options(args, options: Iterable[str], why: str) -> None:
    """Raise ``ValueError`` naming every option of ``options`` the user gave, and ``why`` it does not apply."""
    given = [option for option in options if option in getattr(args, "given", frozenset())]
    if given:
        verb = "does" if len(given) == 1 else "do"
        raise ValueError(f"{', '.join(given)} {verb} not apply {why}")
