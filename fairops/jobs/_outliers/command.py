"""The ``fairops outliers`` command line: its arguments and the entry that runs one fit or a tuning."""

from __future__ import annotations

from ...datasets import LOADERS
from .._options import UI_PORT_HELP, refuse_options, ui_port_of
from .._progress import NO_PROGRESS_HELP
from .._running import HEARTBEAT_SECONDS
from .data import DEFAULT_DATASET
from .single import run_single
from .tracking import DEFAULT_EXPERIMENT, DEFAULT_PROJECT
from .tuning import METHODS, TUNE_MAX_ROWS, run_tune


def _run(args) -> int:
    if args.tune:
        refuse_options(args, ["--neighbors", "--lambda", "--target-jaccard", "--weight-exponent", "--share-exponent"],
                       "with --tune: Fairband searches k, lambda and the Flex exponents itself")
    else:
        refuse_options(args, ["--method", "--fairband-alpha", "--iterations", "--trials", "--study-name",
                              "--storage", "--n-jobs", "--heartbeat", "--no-progress"], "without --tune")
        if args.lambda_ != "auto":
            refuse_options(args, ["--target-jaccard"], "with a fixed --lambda (it is the guide point of 'auto')")
    args.ui_port = ui_port_of(args.ui_port)
    return run_tune(args) if args.tune else run_single(args)


def add_parser(subcommands) -> None:
    """Add ``fairops outliers`` and its options; the parser's ``run`` default runs it.

    Parameters
    ----------
    subcommands : argparse._SubParsersAction
        The ``fairops`` command's subcommands.
    """
    parser = subcommands.add_parser(
        "outliers", help="FairLOF vs LOF on a data set (optionally tuned with Fairband), tracked in MLflow",
        description="FairLOF against plain LOF: metrics printed and logged to MLflow with the model. "
                    "Features: numeric columns standardised (categoricals dropped or one-hot); the logged model "
                    "takes raw rows.")
    source = parser.add_argument_group("data")
    source.add_argument("--dataset", default=None,
                        metavar="NAME",
                        help=f"bundled data set, one of {', '.join(sorted(LOADERS))} (default: {DEFAULT_DATASET})")
    source.add_argument("--data", default=None, help="a .csv or .parquet file of one's own (with --sensitive)")
    source.add_argument("--sensitive", default=None,
                        help="comma-separated sensitive columns (default for bundled data: all of its sensitive ones)")
    source.add_argument("--target", default=None, help="label column of --data to leave out of the features")
    source.add_argument("--categorical", default="drop", help="text columns: 'drop' them or 'onehot' encode them")
    source.add_argument("--max-rows", type=int, default=None,
                        help=f"stratified seeded sample of about this many rows (all; {TUNE_MAX_ROWS} with --tune)")
    model = parser.add_argument_group("FairLOF")
    model.add_argument("--neighbors", type=int, default=5, help="k, the neighbours each row's density is measured over")
    model.add_argument("--lambda", dest="lambda_", metavar="LAMBDA", default="auto",
                       help="the paper's lambda (correction_strength): a number in [0, 1], or 'auto': the guide "
                            "point on the grid 0, 0.1, ..., 1 for --target-jaccard")
    model.add_argument("--target-jaccard", type=float, default=0.9,
                       help="with --lambda auto: the Jaccard of FairLOF's top outliers with LOF's to keep")
    model.add_argument("--weight-exponent", type=float, default=1.0,
                       help="FairLOF-Flex exponent on W, the group skew (1 = FairLOF)")
    model.add_argument("--share-exponent", type=float, default=1.0,
                       help="FairLOF-Flex exponent on D, the share of the row's own group (1 = FairLOF)")
    model.add_argument("--correction", choices=("paper", "per_value"), default="paper",
                       help="the paper's equations or fairops' per-value variant (see docs/fairlof/equations.md)")
    model.add_argument("--top-t", type=int, default=None, help="outlier list size (default min(500, 5%% of rows))")
    tune = parser.add_argument_group(
        "tuning (--tune)", "Fairband searches k, lambda and the Flex exponents itself (--neighbors, --lambda, "
        "--weight-exponent, --share-exponent are then refused); quality = Jaccard vs LOF, fairness = share of "
        "LOF's Wasserstein disparity removed, budget = share of the rows")
    tune.add_argument("--tune", action="store_true", help="search k, lambda and the Flex exponents with Fairband")
    tune.add_argument("--method", default="fb-auto", choices=sorted(METHODS),
                      help="Fairband alpha rule, as in fairops tune --method")
    tune.add_argument("--fairband-alpha", type=float, default=None, help="fixed Fairband alpha (overrides --method)")
    tune.add_argument("--iterations", type=int, default=1, help="Fairband iterations of 206 fits")
    tune.add_argument("--trials", type=int, default=None, help="stop after this many fits (a short run)")
    tune.add_argument("--study-name", default=None,
                      help="Optuna study name (default outliers-<data>-<method>-seed<seed>)")
    tune.add_argument("--storage", default=None, help="Optuna storage URL (default sqlite:///<project>/optuna.db)")
    tune.add_argument("--n-jobs", type=int, default=1, help="fits run in parallel threads in this process")
    tune.add_argument("--heartbeat", type=float, default=HEARTBEAT_SECONDS,
                      help="seconds between worker heartbeats on RDB storages; a worker silent for 3 heartbeats "
                           "has its fits failed (each logged as a failed child run) and fitted again by another")
    tune.add_argument("--no-progress", action="store_true",
                      help=NO_PROGRESS_HELP)
    where = parser.add_argument_group("tracking")
    where.add_argument("--project-dir", default=DEFAULT_PROJECT,
                       help="folder of the embedded SQLite stores")
    where.add_argument("--tracking-uri", default=None,
                       help="MLflow tracking URI (default sqlite:///<project>/mlflow.db)")
    where.add_argument("--experiment", default=DEFAULT_EXPERIMENT, help="MLflow experiment the runs go to")
    where.add_argument("--model-name", help="registered model name of the FairLOF model (default: "
                                            "fairops-outliers-<data>)")
    where.add_argument("--ui-port", type=int, help=UI_PORT_HELP)
    parser.add_argument("--seed", type=int, default=0, help="seed of the row sample, tie-breaks and the search")
    parser.set_defaults(run=_run)
