"""The ``fairops`` command: one subcommand per job module in ``fairops.jobs``.

Each job module offers ``add_parser(subcommands)`` (which sets ``run=callable(args) -> exit code``),
so a new subcommand needs one entry in ``COMMANDS`` and nothing else here.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable, Sequence

COMMANDS = ("tune", "promote", "monitor", "serve", "outliers", "compare", "baseline", "grpc-proxy")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairops", allow_abbrev=False, formatter_class=HelpFormatter,
        description="Fairness-aware tuning, fair models and fair outlier detection, tracked in MLflow.",
    )
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"fairops.jobs._{name.replace('-', '_')}").add_parser(subcommands)
    for subcommand in subcommands.choices.values():
        subcommand.allow_abbrev = False  # an option is refused by its full name when it does not apply
        subcommand.formatter_class = HelpFormatter
        subcommand.set_defaults(subparser=subcommand)  # whose usage a mistyped option prints
    return parser


def refuse_unknown(subparser: argparse.ArgumentParser, extra: list[str]) -> None:
    """Exit with ``subparser``'s usage and the options it does not know (argparse would print the top-level
    usage), naming the closest option it has.

    >>> parser = argparse.ArgumentParser(prog="fairops tune", exit_on_error=False)
    >>> _ = parser.add_argument("--dataset")
    >>> parser.error = lambda message: print(message)
    >>> refuse_unknown(parser, ["--datset", "german"])
    unrecognized arguments: --datset german (did you mean --dataset?)
    """
    import difflib

    known = [option for action in subparser._actions for option in action.option_strings]
    guesses = [difflib.get_close_matches(token.split("=", 1)[0], known, n=1) for token in extra
               if token.startswith("-")]
    hint = next((f" (did you mean {guess[0]}?)" for guess in guesses if guess), "")
    subparser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that shows every option's default and reads as plain text.

    A default is appended as ``(default: X)`` unless the help already names one, the option is a flag,
    or it has no default; reStructuredText's double backticks from docstrings are dropped.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (re.search(r"\bdefault\b", text)
                or any(action.default is value for value in (None, False, argparse.SUPPRESS))
                or not action.option_strings or action.nargs == 0):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain(text))

    def _expand_help(self, action: argparse.Action) -> str:
        return plain(super()._expand_help(action))


def plain(text: str) -> str:
    """Docstring markup as plain text: ``code`` and :role:`name` lose their markup.

    >>> plain("run ``fairops tune`` (see :func:`~fairops.fairband.select_best`)")
    'run fairops tune (see select_best)'
    """
    text = re.sub(r":\w+:`~?(?:[\w.]+\.)?([\w]+)`", r"\1", text)
    return text.replace("``", "")


def main(argv: Sequence[str] | None = None) -> int:
    from .jobs._options import options_in

    argv = sys.argv[1:] if argv is None else list(argv)
    args, extra = build_parser().parse_known_args(argv)
    if extra:
        refuse_unknown(args.subparser, extra)
    args.given = options_in(argv)  # what was spelled out, so a job can refuse options that do not apply
    return exit_status(args.run, args)


def exit_status(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a subcommand; an :class:`~fairops.errors.InputError` (or a missing file) is one line on stderr and
    exit status 2, Ctrl-C is 130, and any other error propagates with its traceback: it is a fault, not a
    wrong input, and a one-line message would hide where it happened.

    >>> from types import SimpleNamespace
    >>> from fairops.errors import InputError
    >>> def refuses(args):
    ...     raise InputError("--seeds must be at least 1")
    >>> exit_status(refuses, SimpleNamespace(command="compare"))
    2
    """
    from .errors import InputError
    from .jobs._running import artifact_bars_only_on_a_terminal

    try:
        with artifact_bars_only_on_a_terminal():
            return run(args)
    except (InputError, FileNotFoundError) as error:
        print(f"fairops {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nfairops {args.command}: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
