"""The ``fairops`` command: one subcommand per job module in ``fairops.jobs``.

Each job module offers ``add_parser(subcommands)`` (which sets ``run=callable(args) -> exit code``),
so a new subcommand needs one entry in ``COMMANDS`` and nothing else here.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ("tune", "outliers", "compare", "baseline", "grpc-proxy")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairops",
        description="Fairness-aware tuning, fair models and fair outlier detection, tracked in MLflow.",
    )
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module_name = f"fairops.jobs.{name.replace('-', '_')}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue  # a job not built yet
        module.add_parser(subcommands)
    return parser


class UserError(Exception):
    """A problem with the user's input or environment: printed as one line, exit status 2."""


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (UserError, ValueError, FileNotFoundError) as error:
        print(f"fairops {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nfairops {args.command}: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
