"""Options that do not apply to what the user asked for are errors, not silently ignored.

The ``fairops`` command records the long options each invocation spelled out (``args.given``);
a job names the options that make no sense in the mode it runs in.

>>> from types import SimpleNamespace
>>> args = SimpleNamespace(given=frozenset({"--neighbors", "--tune"}))
>>> refuse_options(args, ["--neighbors", "--lambda"], "with --tune (Fairband searches them)")
Traceback (most recent call last):
...
fairops.errors.InputError: --neighbors does not apply with --tune (Fairband searches them)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import InputError


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
        raise InputError(f"{', '.join(given)} {verb} not apply {why}")


#: Where every command keeps its stores unless told otherwise.
DEFAULT_PROJECT_DIR = "fairops-project"
FAMILIES_HELP = ("comma-separated model families from logistic_regression, decision_tree, random_forest, "
                 "lightgbm, mlp (the paper's), scaff_forest (SCAFF's fair forest), exponentiated_gradient and "
                 "grid_search (bias reductions over a tree, a logistic regression or LightGBM, holding the task's "
                 "fairness ratio; they read the groups to fit, never to decide) (default: all eight; with "
                 "--blind all but scaff_forest)")


def add_decision_options(parser) -> None:
    """``--decision`` and ``--blind`` (shared by ``fairops tune`` and ``fairops compare``)."""
    parser.add_argument(
        "--decision", default="single", choices=["single", "per-group"],
        help="single: one threshold for everyone (default, the paper's); per-group: one threshold per group of "
             "the task's sensitive attributes, each group at the task's target on validation, searched with the "
             "model (where deciding per group is allowed; the served model then needs the group columns)")
    parser.add_argument(
        "--blind", action="store_true",
        help="the sensitive columns are not model inputs (still used to measure fairness); proxies such as "
             "Adult's relationship still carry them")


def add_rule_options(parser, *, recorded: bool = False) -> None:
    """``--fairness-line`` and ``--level``: the :class:`~fairops.metrics.FairnessRule` a command applies (tune,
    compare, promote, monitor); ``recorded``: the default is the rule the version was registered under."""
    from ..metrics._classification import FOUR_FIFTHS
    from ..metrics._intervals import LEVEL

    default = "the rule the version was registered with, else " if recorded else ""
    parser.add_argument(
        "--fairness-line", type=float, default=None if recorded else FOUR_FIFTHS, metavar="F",
        help="the fairness line: a ratio whose interval lies below F is unfair beyond noise (the gate refuses it, "
             "the monitor alerts), and tune picks among fits whose validation ratio meets F (default: "
             f"{default}{FOUR_FIFTHS}, the four-fifths rule; 0 turns it off)")
    parser.add_argument(
        "--level", type=float, default=None if recorded else LEVEL, metavar="L",
        help=f"confidence level of every interval shown and judged (default: {default}{LEVEL})")


def rule_of(args, tags: dict | None = None):
    """The :class:`~fairops.metrics.FairnessRule` of ``--fairness-line`` and ``--level``, the parts not given read
    from a version's ``tags``."""
    from ..metrics import FairnessRule

    return FairnessRule.from_tags(tags or {}, line=args.fairness_line, level=args.level)


def decision_words(decision: str, blind: bool, data) -> str:
    """The decision mode in one line (printed before a run).

    >>> from fairops.datasets import load_german
    >>> decision_words("per-group", True, load_german())
    "one threshold per group of sex, each at the task's target on validation; models do not see sex"
    """
    columns, fixed = ", ".join(data.task.sensitive), data.task.fixed_threshold
    rule = (f"one threshold per group of {columns}, each at the task's target on validation"
            if decision == "per-group" else "one threshold for everyone, set on validation" if fixed is None
            else f"one threshold for everyone, the task's fixed {fixed:g}")
    unseen = [c for c in data.sensitive.columns if c in data.X.columns]
    inputs = f"models do not see {', '.join(unseen)}" if blind else "sensitive columns are model inputs"
    return f"{rule}; {inputs}"


UI_PORT_HELP = ("port of mlflow ui in the printed command and links (default: 5000 when free, else a free one; "
                "the printed serve command takes another free port)")


def ui_port_of(given: int | None) -> int:
    """``--ui-port`` as given, else 5000 when nothing listens there, else a port free now.

    >>> ui_port_of(8080)
    8080
    """
    from ..tracking._ui_links import DEFAULT_UI_PORT, free_port

    return free_port(DEFAULT_UI_PORT) if given is None else given
