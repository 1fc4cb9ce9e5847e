"""The ``fairops`` command."""

from __future__ import annotations

import argparse
import sys

from .datasets import LOADERS


def _baseline(args) -> int:
    from .jobs.baseline import run_baseline

    result = run_baseline(args.dataset, seed=args.seed)
    print(f"dataset: {result['dataset']}  task: {result['task']}  "
          f"train rows: {result['rows']['train']}  test rows: {result['rows']['test']}")
    print("LightGBM baseline on the test split:")
    for name, value in result["test"].items():
        print(f"  {name:<9} {value:.4f}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fairops", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    baseline = commands.add_parser("baseline", help="fit a LightGBM baseline and print its task metrics")
    baseline.add_argument("--dataset", default="adult", choices=sorted(LOADERS))
    baseline.add_argument("--seed", type=int, default=0)
    baseline.set_defaults(run=_baseline)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
