"""``fairops compare``: every tuning method on the same budget, over several seeds (the paper's Table 3)."""

from __future__ import annotations

import csv
from pathlib import Path

from ..datasets import LOADERS
from ..errors import InputError
from ._options import (
    DEFAULT_PROJECT_DIR,
    FAMILIES_HELP,
    add_decision_options,
    add_rule_options,
    decision_words,
    rule_of,
)
from ._progress import NO_PROGRESS_HELP

METHOD_NAMES = {"rs": "RS", "rs-bal": "RS-bal", "hb": "HB", "fb-bal": "FB-bal", "fb-auto": "FB-auto"}


def write_csv(rows, path: Path) -> None:
    """One line per (seed, method) run."""
    from ..tuning._comparison import ROW_FIELDS

    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=ROW_FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def draw(rows, path: Path, title: str, task) -> None:
    """Test accuracy vs test fairness per method: each run as a dot, the mean with its spread as a cross."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..tuning._comparison import summary

    figure, axes = plt.subplots(figsize=(6, 4.5))
    for index, entry in enumerate(summary(rows)):
        colour = f"C{index}"
        runs = [row for row in rows if row["tuner"] == entry["tuner"]]
        axes.scatter([100 * r["test_acc"] for r in runs], [100 * r["test_fair"] for r in runs],
                     color=colour, alpha=0.35, s=18)
        axes.errorbar(entry["test_acc"], entry["test_fair"], xerr=entry["test_acc_sd"], yerr=entry["test_fair_sd"],
                      color=colour, marker="o", capsize=3, label=f"{entry['tuner']} ({entry['runs']} runs)")
    axes.set_xlabel(f"test {task.accuracy_name} (%)")
    axes.set_ylabel(f"test {task.fairness_name} (%)")
    axes.set_title(title)
    axes.legend(loc="best", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def mode_suffix(decision: str, blind: bool) -> str:
    """What the output files' names add for a non-default mode.

    >>> mode_suffix("single", False), mode_suffix("per-group", True)
    ('', '-per-group-blind')
    """
    return ("" if decision == "single" else f"-{decision}") + ("-blind" if blind else "")


def _run(args) -> int:
    import warnings

    import optuna

    from ..datasets import load_dataset
    from ..tuning._baselines import pick_alpha
    from ..tuning._comparison import compare_tuners, markdown_table
    from ..tuning._search_space import check_families, families_for
    from ._progress import FitProgress

    if args.seeds < 1:
        raise InputError(f"--seeds must be at least 1, got {args.seeds}")
    methods = [m.strip() for m in args.methods.split(",")]
    unknown = [m for m in methods if m not in METHOD_NAMES]
    if unknown:
        raise InputError(f"unknown method(s) {unknown}; choose from {sorted(METHOD_NAMES)}")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    data = load_dataset(args.dataset)
    families = check_families(args.families.split(",") if args.families else families_for(blind=args.blind),
                              blind=args.blind)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"comparing {', '.join(METHOD_NAMES[m] for m in methods)} on {args.dataset}, "
          f"seeds 0..{args.seeds - 1}, one Fairband iteration's budget each, selection {args.selection}, "
          f"{rule_of(args).describe()}\n"
          f"task: {data.task.describe()}\ndecisions: {decision_words(args.decision, args.blind, data)}", flush=True)

    def show(row):
        known = row["val_fair_low"] == row["val_fair_low"]  # not NaN
        interval = f" [{row['val_fair_low']:.3f}, {row['val_fair_high']:.3f}]" if known else ""
        print(f"  seed {row['seed']} {row['tuner']:<8} validation {row['val_acc']:.3f}/{row['val_fair']:.3f}"
              f"{interval}  "
              f"test {row['test_acc']:.3f}/{row['test_fair']:.3f}  ({row['fits']} fits, {row['failed']} failed, "
              f"{row['seconds']:.0f} s)", flush=True)

    def progress(seed, tuner, total):
        return FitProgress(total, pick_alpha(tuner), label=f"  seed {seed} {tuner}: ", enabled=not args.no_progress)

    rows = compare_tuners(data, range(args.seeds), tuners=[METHOD_NAMES[m] for m in methods],
                          profile=args.profile, families=families, max_train_rows=args.max_train_rows,
                          n_jobs=args.n_jobs, on_row=show, progress=progress, selection=args.selection,
                          decision=args.decision, blind=args.blind, rule=rule_of(args))
    stem = out_dir / f"compare-{args.dataset}{mode_suffix(args.decision, args.blind)}"
    write_csv(rows, stem.with_suffix(".csv"))
    draw(rows, stem.with_suffix(".png"), f"{args.dataset}: positive = {data.task.positive or 'label 1'}", data.task)
    print("\n" + markdown_table(rows, data.task))
    where = "thresholds per group" if args.decision == "per-group" else "threshold"
    print(f"({data.task.metric} = {data.task.accuracy_name}; {data.task.fairness_label} = lowest / highest over "
          f"{data.task.over}; test rows scored at the validation {where}; fairness loss = validation - test, "
          f"in pp; dominated = picks the most accurate fit's refit beats on both validation figures)")
    print(f"\nwritten: {stem.with_suffix('.csv')} and {stem.with_suffix('.png')}")
    return 0


def add_parser(subcommands) -> None:
    parser = subcommands.add_parser("compare", help="every method on the same budget over several seeds (Table 3)",
                                    description=__doc__)
    parser.add_argument("--dataset", default="adult", choices=sorted(LOADERS), metavar="NAME",
                        help=f"a bundled data set with its paper task: {', '.join(sorted(LOADERS))}")
    parser.add_argument("--seeds", type=int, default=5, help="runs per method, seeds 0..N-1")
    parser.add_argument("--methods", default="rs,rs-bal,hb,fb-bal,fb-auto",
                        help="comma-separated tuning methods (those of fairops tune --method)")
    parser.add_argument("--profile", default="fast", choices=["fast", "paper"],
                        help="search ranges: fast (small models) or paper (the paper's full ranges)")
    parser.add_argument("--families", metavar="NAMES", help=FAMILIES_HELP)
    parser.add_argument("--max-train-rows", type=int, metavar="N",
                        help="fit on a stratified sample of N training rows (default: all)")
    parser.add_argument("--selection", default="robust", choices=["robust", "fairband", "paper"],
                        help="robust (default): start the full-budget bracket with the library defaults, rank "
                             "by lower confidence bounds and choose among refits on all training rows; fairband (also "
                             "named paper): the "
                             "paper's random configurations and argmax of o = alpha * accuracy + (1 - alpha) * "
                             "fairness "
                             "over the fits' point values")
    parser.add_argument("--n-jobs", type=int, default=1,
                        help="fits run in parallel threads in this process")
    add_decision_options(parser)
    add_rule_options(parser)
    parser.add_argument("--out-dir", default=DEFAULT_PROJECT_DIR, help="where the CSV and the picture go")
    parser.add_argument("--no-progress", action="store_true",
                        help=NO_PROGRESS_HELP)
    parser.set_defaults(run=_run)
