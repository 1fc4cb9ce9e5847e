"""``fairops promote MODEL``: the fairness gate between ``@challenger`` and ``@champion``.

Scores the candidate and the champion on the same labelled rows with MLflow's evaluator API and the
fairops evaluator, decides with ``mlflow.validate_evaluation_results`` plus fairops' interval rule
(:mod:`fairops.registry._promotion`), records the verdict, then moves ``@champion``. Exit status 0: the
champion moved, or the candidate already is the champion; 3: refused, one line per failing check;
2: a usage or data error.

With ``--dataset NAME`` the rows are the test rows of the split ``fairops tune --seed S`` makes of
that data set (rows no model of such a run was fitted or thresholded on); fresh labelled rows of one's
own (``--data FILE``) make the stronger gate.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from ..datasets import LOADERS
from ..errors import InputError
from ..tracking._stores import mlflow_file_in
from ._options import add_rule_options, refuse_options

DEFAULT_DROP = 0.02


def gate_rows(dataset: str | None, data: str | None, target=None, sensitive=None, task=None, seed: int = 0,
              holdout: str | None = None):
    """``(X, y, sensitive, task)``: a bundled data set's test rows (tune's split at ``seed``), or a file's rows
    (only those its ``holdout`` column marks, when given)."""
    from ..datasets import load_dataset, load_table, train_validation_test_split
    from ..metrics import Task

    if data is not None:
        loaded = load_table(data, target=target, sensitive=sensitive, holdout=holdout)
        columns = list(loaded.sensitive.columns)
        rows = slice(None) if loaded.held_out is None else loaded.held_out
        return loaded.X.iloc[rows], loaded.y[rows], loaded.sensitive.iloc[rows], \
            (Task.from_string(task, sensitive=columns) if task else None)
    loaded = load_dataset(dataset)  # type: ignore[arg-type]  # the options give a file or a data set
    groups = loaded.sensitive[list(loaded.task.sensitive)]
    rows = train_validation_test_split(loaded.y, groups, seed=seed).test
    return loaded.X.iloc[rows], loaded.y[rows], loaded.sensitive.iloc[rows], loaded.task


def tracking_uri_of(project_dir: str, tracking_uri: str | None) -> str:
    """The tracking URI ``fairops tune`` used for this project (its SQLite store unless one was given).

    ``MLFLOW_TRACKING_URI`` is not read: a command's arguments name its store, and ``mlflow.set_tracking_uri``
    writes that variable into the environment every child process inherits.
    """
    if tracking_uri:
        return tracking_uri
    path = mlflow_file_in(Path(project_dir).resolve())
    if not path.is_file():
        raise InputError(f"no MLflow store at {path}: give the --project-dir of a fairops tune run, or --tracking-uri")
    return f"sqlite:///{path}"


def _run(args) -> int:
    from ..registry._promotion import promote
    from ._running import quiet_libraries

    if args.data is not None:
        refuse_options(args, ["--dataset", "--seed"], "with --data FILE: every row of the file is scored")
    else:
        refuse_options(args, ["--target", "--sensitive", "--task", "--holdout"],
                       "to a bundled --dataset, which brings its own label, sensitive columns and task")
        args.dataset = args.dataset or "adult"
    if args.data is not None and (not args.target or not args.sensitive):
        raise InputError("--data needs --target COLUMN and --sensitive COLUMN[,COLUMN...]")
    quiet_libraries()
    uri = tracking_uri_of(args.project_dir, args.tracking_uri)
    X, y, sensitive, task = gate_rows(args.dataset, args.data, args.target, args.sensitive, args.task, args.seed,
                                      args.holdout)
    source = Path(args.data).name if args.data is not None else f"the {args.dataset} test rows"
    verdict = promote(args.model, X, y, sensitive, candidate=args.candidate, task=task,
                      min_fairness=args.min_fairness, max_accuracy_drop=args.max_accuracy_drop,
                      fairness_line=args.fairness_line, level=args.level, tracking_uri=uri,
                      row_record=not args.no_row_record, source=source)
    stream = sys.stdout if verdict.passed else sys.stderr
    print(verdict.text(), file=stream)
    if verdict.run_id:
        print(f"promotion run: {verdict.run_id} (both evaluations, the checks and gate.json)", file=stream)
    return verdict.exit_code


def model_parser(subcommands, command: str, help: str, doc: str,
                 model_help: str = "registered model name (e.g. fairops-german)"):
    """A subcommand on one registered model: ``MODEL`` and where its registry is (as ``fairops tune`` has it)."""
    parser = subcommands.add_parser(command, help=help, description=doc.split("\n\n")[0])
    parser.add_argument("model", metavar="MODEL", help=model_help)
    where = parser.add_argument_group("registry")
    where.add_argument("--project-dir", default="fairops-project", help="the fairops tune project folder")
    where.add_argument("--tracking-uri", help="MLflow tracking URI (e.g. http://mlflow:5000)")
    return parser


def add_parser(subcommands) -> None:
    parser = model_parser(subcommands, "promote", "gate @challenger against @champion on the same rows; "
                          "move @champion only if it passes", __doc__)
    parser.epilog = textwrap.fill("exit status: 0 passed (@champion moved to the candidate, or it already was the "
                     "champion), "
                     "3 refused by the gate (@champion stays; the reasons are printed and recorded on the "
                     "candidate version), 2 a usage or data error (nothing gated)", 100)
    parser.add_argument("--candidate", default="@challenger",
                        help="the version to gate: a number or @alias (default: @challenger)")
    source = parser.add_argument_group("rows scored")
    source.add_argument("--dataset", choices=sorted(LOADERS),
                        help="a bundled data set: its test rows in fairops tune's split")
    source.add_argument("--seed", type=int, default=0, help="with --dataset: the tune --seed whose split to use")
    source.add_argument("--data", help="a CSV or Parquet file of labelled rows (instead of --dataset)")
    source.add_argument("--target", help="with --data: the label column")
    source.add_argument("--sensitive", help="with --data: sensitive column(s), comma-separated")
    source.add_argument("--holdout", metavar="COLUMN", help="with --data: a yes/no column; only the rows it marks "
                        "are scored")
    source.add_argument("--task", help="with --data: the task (default: the candidate's registered task)")
    gate = parser.add_argument_group("gate")
    add_rule_options(gate, recorded=True)
    gate.add_argument("--min-fairness", type=float,
                      help="floor for the candidate's fairness ratio and for its interval's lower bound")
    gate.add_argument("--max-accuracy-drop", type=float, default=DEFAULT_DROP,
                      help=f"largest accuracy loss against the champion (default {DEFAULT_DROP})")
    gate.add_argument("--no-row-record", action="store_true",
                      help="score every row, without leaving out those either version was trained or validated on "
                           "(by the row record fairops tune keeps with a version; a version without a sound record "
                           "is refused otherwise); the verdict says the overlap was not checked")
    parser.set_defaults(run=_run)
