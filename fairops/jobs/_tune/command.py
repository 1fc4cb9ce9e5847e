"""``fairops tune``: Fairband on a data set, every fit tracked in MLflow, the pick registered.

The job splits the data train / validation / test (stratified by label x group; for a file of one's own the
test rows are chosen by row content, or by ``--holdout COLUMN``, so every tune of the file holds out the same
rows), gives each fit a
nested stratified slice of the training rows as its budget, tunes the paper's model families plus
the SCAFF forest and the bias reductions (so fair training competes with fair tuning), logs every fit as
a child run, then
refits the pick on all training rows, scores it on the test rows and registers it with an alias.

Storage is embedded by default: ``<project>/optuna.db`` and ``<project>/mlflow.db`` (SQLite). Give
``--storage postgresql+psycopg://...`` and ``--tracking-uri http://...`` and start the same command
on many machines: every worker joins one study and the Fairband schedule stays exact.
"""

from __future__ import annotations

from ...datasets import LOADERS
from .._options import FAMILIES_HELP, UI_PORT_HELP, add_decision_options, add_rule_options, refuse_options, ui_port_of
from .._progress import NO_PROGRESS_HELP
from .job import run_tune
from .settings import METHODS, SELECTION_HELP, SELECTIONS, TASK_HELP, TuneSettings

MISSING_GROUP_HELP = ("with --data: rows missing a sensitive value form a group of this name (default: refused with "
                      "their count and rows, since such rows belong to no group the fairness ratio counts; a row "
                      "missing its label is left out and counted, a missing feature value is kept: each model "
                      "family takes it its own way)")


def _run(args) -> int:
    if args.data is not None:
        refuse_options(args, ["--dataset"], "with --data FILE: give one data source")
    else:
        refuse_options(args, ["--target", "--sensitive", "--task", "--positive", "--missing-group"],
                       "to a bundled --dataset, which brings its own label, sensitive columns and task "
                       "(they go with --data FILE)")
    settings = TuneSettings(
        dataset=None if args.data else args.dataset, data=args.data, target=args.target,
        sensitive=args.sensitive, task=args.task, method=args.method, selection=args.selection, alpha=args.alpha,
        iterations=args.iterations, eta=args.eta, s_max=args.s_max, profile=args.profile,
        families=args.families.split(",") if args.families else None, max_train_rows=args.max_train_rows,
        storage=args.storage, tracking_uri=args.tracking_uri, project_dir=args.project_dir,
        study_name=args.study_name, model_name=args.model_name, n_jobs=args.n_jobs, seed=args.seed,
        finalize=not args.no_finalize, promote=args.promote, progress=not args.no_progress, heartbeat=args.heartbeat,
        wait_timeout=args.wait_timeout, min_fairness=args.min_fairness, ui_port=ui_port_of(args.ui_port),
        positive=args.positive, holdout=args.holdout, missing_group=args.missing_group,
        decision=args.decision, blind=args.blind, fairness_line=args.fairness_line, level=args.level,
    )
    result = run_tune(settings)
    return result.verdict.exit_code if result.verdict is not None else 0


def add_parser(subcommands) -> None:
    """Add ``fairops tune`` and its options; the parser's ``run`` default runs it.

    Parameters
    ----------
    subcommands : argparse._SubParsersAction
        The ``fairops`` command's subcommands.
    """
    parser = subcommands.add_parser(
        "tune", help="Fairband over the paper's model families + SCAFF, tracked in MLflow, pick registered",
        description=__doc__.split("\n\n")[0])
    source = parser.add_argument_group("data")
    source.add_argument("--dataset", default=TuneSettings.dataset, choices=sorted(LOADERS), metavar="NAME",
                        help=f"a bundled data set with its paper task: {', '.join(sorted(LOADERS))}")
    source.add_argument("--data", metavar="FILE", help="a CSV or Parquet file of one's own (instead of --dataset)")
    source.add_argument("--target", metavar="COLUMN", help="with --data: the label column, two values (the larger "
                        "one, numbers by value, text in sorted order, is the positive class unless --positive)")
    source.add_argument("--sensitive", metavar="COLUMNS", help="with --data: sensitive column(s), comma-separated; "
                        "the fairness is the lowest of their ratios (each column's groups on its own; "
                        "groups=intersectional in --task: over their combined groups)")
    source.add_argument("--task", default=TuneSettings.task, metavar="SPEC", help=TASK_HELP)
    source.add_argument("--positive", metavar="VALUE",
                        help="with --data: the target value that is the positive class (default: the larger "
                             "value, numbers by value)")
    source.add_argument("--holdout", metavar="COLUMN",
                        help="with --data: a yes/no column (1/0, true/false, yes/no) marking the rows to hold out "
                             "as test rows, never trained or validated on (default: 20%% of the rows, chosen by "
                             "their content, the same in every tune of the file)")
    source.add_argument("--missing-group", metavar="NAME", help=MISSING_GROUP_HELP)
    source.add_argument("--max-train-rows", type=int, metavar="N",
                        help="fit on a stratified sample of N training rows (quick looks; default: all)")
    search = parser.add_argument_group("search")
    search.add_argument("--method", default=TuneSettings.method, choices=sorted(METHODS),
                        help="fb-auto: Fairband, alpha from the fits' mean accuracy and fairness; fb-bal: "
                             "Fairband, alpha 0.5; hb: Hyperband on accuracy alone (alpha 1); rs / rs-bal: "
                             "random search on all rows, picked at alpha 1 / 0.5")
    search.add_argument("--selection", default=TuneSettings.selection, choices=list(SELECTIONS), help=SELECTION_HELP)
    search.add_argument("--alpha", type=float, help="a fixed alpha in [0, 1] instead of the method's: fits rank by "
                        "alpha * accuracy + (1 - alpha) * fairness (default: the method's)")
    search.add_argument("--iterations", type=int, default=TuneSettings.iterations,
                        help="Fairband iterations, each a whole Hyperband schedule (206 fits at the default "
                             "--eta and --s-max)")
    search.add_argument("--eta", type=int, default=TuneSettings.eta,
                        help="Hyperband's reduction factor: each rung keeps 1/eta of the configurations on eta "
                             "times the budget (the paper's 3)")
    search.add_argument("--s-max", type=int, default=TuneSettings.s_max,
                        help="Hyperband's largest bracket: the smallest budget is eta**-s_max of the rows (the "
                             "paper's 4: 206 fits; 2 gives 22 fits, a quick look)")
    search.add_argument("--profile", default=TuneSettings.profile, choices=["fast", "paper"],
                        help="search ranges: fast (small models, minutes) or paper (the paper's full ranges)")
    search.add_argument("--families", metavar="NAMES", help=FAMILIES_HELP)
    search.add_argument("--seed", type=int, default=TuneSettings.seed,
                        help="seed of the data split, the sampler and the models")
    search.add_argument("--min-fairness", type=float, metavar="F",
                        help="fairness floor in [0, 1]: fits below it are infeasible (Optuna's constraints, seen "
                             "by study.best_trials and optuna-dashboard) and never picked")
    add_decision_options(search)
    add_rule_options(search)
    search.add_argument("--n-jobs", type=int, default=TuneSettings.n_jobs,
                        help="fits run in parallel threads in this process")
    where = parser.add_argument_group("storage and tracking")
    where.add_argument("--project-dir", default=TuneSettings.project_dir,
                       help="folder of the embedded SQLite stores (default: ./fairops-project)")
    where.add_argument("--storage", help="Optuna storage URL, e.g. postgresql+psycopg://..., or grpc://host:port "
                                         "for a fairops grpc-proxy (default: sqlite:///<project-dir>/optuna.db)")
    where.add_argument("--tracking-uri", help="MLflow tracking URI, e.g. http://mlflow:5000 "
                                              "(default: sqlite:///<project-dir>/mlflow.db)")
    where.add_argument("--study-name", help="join or name the study (default: from data, method, profile, seed)")
    where.add_argument("--model-name", help="registered model name (default: fairops-<data>)")
    where.add_argument("--no-finalize", action="store_true",
                       help="worker only: fit and log until every fit of the run is finished, leave the pick "
                            "and registration to another worker")
    where.add_argument("--heartbeat", type=float, default=TuneSettings.heartbeat,
                       help="seconds between worker heartbeats on RDB storages; a worker silent for 3 "
                            "heartbeats has its fits failed and fitted again by another (default: 10)")
    where.add_argument("--wait-timeout", type=float, default=TuneSettings.wait_timeout,
                       help="seconds to wait at most for another worker's fits before giving up with an error")
    where.add_argument("--promote", action="store_true",
                       help="when the new version becomes @challenger, run the promotion gate at once on the "
                            "test rows (exit 3 when refused); see fairops promote")
    where.add_argument("--no-progress", action="store_true",
                       help=NO_PROGRESS_HELP)
    where.add_argument("--ui-port", type=int, help=UI_PORT_HELP)
    parser.set_defaults(run=_run)
