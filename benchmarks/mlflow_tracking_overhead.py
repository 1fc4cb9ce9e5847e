"""Per-trial MLflow logging overhead: FairnessTrackingCallback against optuna-integration's MLflowCallback.

    python benchmarks/mlflow_tracking_overhead.py            # 100 trials per contender, 3 rounds
    python benchmarks/mlflow_tracking_overhead.py --quick    # 5 trials, 1 round, 1,000 fit rows (smoke test)
    python benchmarks/mlflow_tracking_overhead.py --calls    # where the time goes: calls and commits per trial

A two-objective study (10 parameters, Fairband-like user attributes: budget, bracket, rung,
configuration_id, alpha, auc_y, auc_s) runs once without a callback (the base) and once per contender,
each contender writing to its own fresh SQLite tracking store (schema created before timing). Overhead
per trial = (wall time - base wall time) / trials, against the base of the same round; waited per trial =
the time the optimize loop spent inside the callback and in the final ``flush()`` (what the loop waits
for, without the effect a writer thread has on the objective's own time). The medians of the per-round
ratios to MLflowCallback are reported. Two objectives: a no-op (the logging alone, nothing to
overlap with) and a fit (a scikit-learn decision tree on ``--fit-rows`` synthetic rows, the kind of work a
tuned trial does). Contenders, all through MLflow's public client:

- ``MLflowCallback`` (optuna-integration; the anchor);
- ``FairnessTrackingCallback`` as a library user gets it (``synchronous=True``: ``create_run``,
  ``log_batch``, ``set_terminated`` before the callback returns);
- the same with ``synchronous=False`` (what ``fairops tune`` uses): the same calls on a thread of the
  callback's own while the next trial runs; the time includes waiting for it at the end (``flush()``);
- the same with MLflow's asynchronous logging (``MLFLOW_ENABLE_ASYNC_LOGGING=true``: ``log_batch``
  with ``synchronous=False``); the time includes waiting for MLflow's queue at the end (``flush()``).

``--calls`` runs each synchronous contender once more and counts, per trial, the ``MlflowClient`` calls
(by method, with the time spent in them; the fluent API MLflowCallback uses goes through the same client)
and the SQL transactions that wrote something (counted with SQLAlchemy's public connection events). On
SQLite every such transaction ends in a synced commit.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

CONTENDERS = ("MLflowCallback", "synchronous", "synchronous=False", "MLflow async logging")
BACKGROUND, MLFLOW_ASYNC = CONTENDERS[2], CONTENDERS[3]
_fit_data: list = []  # (X, y) of the fit objective, made once


def objective(trial):
    values = [trial.suggest_float(f"p{i}", 0, 1) for i in range(10)]
    for name, value in {"budget": 1 / 3, "bracket": 1, "rung": 0, "configuration_id": trial.number,
                        "alpha": 0.5, "auc_y": 0.7, "auc_s": 0.55}.items():
        trial.set_user_attr(name, value)
    if _fit_data:
        from sklearn.tree import DecisionTreeClassifier

        X, y = _fit_data[0]
        DecisionTreeClassifier(max_depth=5, random_state=trial.number).fit(X, y)
    return sum(values) / 10, 1 - values[0]


def use_fit_objective(rows: int) -> None:
    """Make ``objective`` fit a depth-5 decision tree on ``rows`` synthetic rows of 10 features (0: a no-op)."""
    import numpy as np

    _fit_data.clear()
    if rows:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(rows, 10))
        _fit_data.append((X, (X[:, 0] + rng.normal(size=rows) > 0).astype(int)))


_timed_part = [False]  # True while a study runs: what --calls counts (not the store's schema creation)


def run(n_trials, callback=None, after=None):
    """``(wall seconds, seconds the loop spent in the callback and in ``after``)`` of one study."""
    import optuna

    waited = [0.0]

    def timed(step):
        def call(*args):
            start = time.perf_counter()
            try:
                return step(*args)
            finally:
                waited[0] += time.perf_counter() - start
        return call

    study = optuna.create_study(directions=["maximize"] * 2, sampler=optuna.samplers.RandomSampler(seed=0))
    start = time.perf_counter()
    _timed_part[0] = True
    try:
        study.optimize(objective, n_trials=n_trials, callbacks=[timed(callback)] if callback else None)
        if after is not None:
            timed(after)()
    finally:
        _timed_part[0] = False
    return time.perf_counter() - start, waited[0]


def fresh_store(folder, name):
    """The URI of store ``name`` in ``folder``, its schema made outside the timed part.

    MLflow's schema migrations take seconds per store, so they run once, for a template every new store
    starts as a copy of (an existing store is used as it is).
    """
    from mlflow.tracking import MlflowClient

    template, path = Path(folder, "schema-template.db"), Path(folder, f"{name}.db")
    if not template.exists():
        MlflowClient(f"sqlite:///{template}").search_experiments()  # creates the schema
    if not path.exists():
        shutil.copyfile(template, path)
    return f"sqlite:///{path}"


def contender_seconds(name, n_trials, folder, round_):
    """``(wall, waited)`` seconds of one study with contender ``name`` writing to a fresh store (see :func:`run`)."""
    from optuna_integration.mlflow import MLflowCallback

    from fairops.tracking._callback import FairnessTrackingCallback

    uri = fresh_store(folder, f"r{round_}-{CONTENDERS.index(name)}")
    if name == "MLflowCallback":
        return run(n_trials, MLflowCallback(tracking_uri=uri, metric_name=["accuracy", "fairness"]))
    callback = FairnessTrackingCallback(uri, "bench", artifact_location=f"{folder}/a{round_}-{name}",
                                        settle_seconds=0, synchronous=name != BACKGROUND)
    if name != MLFLOW_ASYNC:
        return run(n_trials, callback, after=callback.flush)
    os.environ["MLFLOW_ENABLE_ASYNC_LOGGING"] = "true"
    try:
        return run(n_trials, callback, after=callback.flush)
    finally:
        del os.environ["MLFLOW_ENABLE_ASYNC_LOGGING"]


@contextlib.contextmanager
def counting():
    """Count ``MlflowClient`` calls (outermost only, with their time) and SQL write transactions."""
    from mlflow.tracking import MlflowClient
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    calls, seconds, writes, depth = collections.Counter(), collections.Counter(), collections.Counter(), [0]
    dirty = set()

    def on_execute(conn, cursor, statement, *args):
        if _timed_part[0] and statement.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"):
            dirty.add(id(conn))

    def on_commit(conn):
        if id(conn) in dirty:
            dirty.discard(id(conn))
            writes["write transactions"] += 1

    def timed(name, method):
        def wrapper(*args, **kwargs):
            depth[0] += 1
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0 and _timed_part[0]:
                    calls[name] += 1
                    seconds[name] += time.perf_counter() - start
        return wrapper

    names = ("create_run", "log_batch", "set_terminated", "update_run", "get_experiment_by_name", "get_run",
             "search_runs", "set_tag", "log_param", "log_metric", "get_experiment")
    originals = {name: getattr(MlflowClient, name) for name in names}
    for name, method in originals.items():
        setattr(MlflowClient, name, timed(name, method))
    event.listen(Engine, "before_cursor_execute", on_execute)
    event.listen(Engine, "commit", on_commit)
    try:
        yield calls, seconds, writes
    finally:
        event.remove(Engine, "commit", on_commit)
        event.remove(Engine, "before_cursor_execute", on_execute)
        for name, method in originals.items():
            setattr(MlflowClient, name, method)


def call_table(n_trials, folder):
    """Per trial and synchronous contender: client calls, time in them, SQL write transactions."""
    lines = ["| contender | MlflowClient calls per trial (ms per trial in them) | ms per trial in all calls "
             "| SQL write transactions per trial |", "|---|---|---|---|"]
    for name in CONTENDERS[:2]:
        with counting() as (calls, seconds, writes):
            contender_seconds(name, n_trials, folder, "calls")
        listed = ", ".join(f"{method} {calls[method] / n_trials:.2f} ({1000 * seconds[method] / n_trials:.1f})"
                           for method in sorted(calls, key=lambda m: -seconds[m]))
        lines.append(f"| {name} | {listed or '-'} | {1000 * sum(seconds.values()) / n_trials:.1f} "
                     f"| {writes['write transactions'] / n_trials:.2f} |")
    return lines


def measure(n_trials, rounds, folder):
    """Per round: the base's ms per trial, and each contender's overhead and wait in ms per trial."""
    run(n_trials)  # warm-up: imports and first-use costs stay out of every round
    rows = []
    for round_ in range(rounds):
        base = run(n_trials)[0] / n_trials
        # each round starts with another contender, so none always runs first after the base
        order = CONTENDERS[round_ % len(CONTENDERS):] + CONTENDERS[:round_ % len(CONTENDERS)]
        row = {"base": 1000 * base}
        for name in order:
            wall, waited = contender_seconds(name, n_trials, folder, round_)
            row[name] = 1000 * (wall / n_trials - base)
            row[name, "waited"] = 1000 * waited / n_trials
        rows.append(row)
    return rows


def table(title, rows):
    """The rounds as Markdown tables (overhead, then wait), then each contender's median ratios to MLflowCallback."""
    lines = [title]
    for kind, key in (("overhead: wall time minus the base's", lambda name: name),
                      ("waited: time the optimize loop spent in the callback and the final flush",
                       lambda name: (name, "waited"))):
        lines += [f"\n{kind}, ms per trial (ratio to MLflowCallback)",
                  "| round | no callback (ms per trial) | " + " | ".join(CONTENDERS) + " |",
                  "|---" * (len(CONTENDERS) + 2) + "|"]
        for i, row in enumerate(rows):
            anchor = row[key("MLflowCallback")]
            cells = [f"{row[key(name)]:.1f}" + ("" if name == "MLflowCallback" else
                                                  f" ({row[key(name)] / anchor:.2f}x)") for name in CONTENDERS]
            lines.append(f"| {i} | {row['base']:.1f} | " + " | ".join(cells) + " |")
        for name in CONTENDERS[1:]:
            ratios = sorted(row[key(name)] / row[key("MLflowCallback")] for row in rows)
            lines.append(f"median ratio {name} / MLflowCallback: {statistics.median(ratios):.2f} "
                         f"(rounds {ratios[0]:.2f}-{ratios[-1]:.2f}; goal <= 0.5)")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fit-rows", type=int, default=10000, help="rows the fit objective's tree is fitted on")
    parser.add_argument("--objectives", default="no-op,fit", help="comma-separated: no-op, fit (default: both)")
    parser.add_argument("--quick", action="store_true", help="5 trials, one round, 1,000 fit rows")
    parser.add_argument("--calls", action="store_true", help="also count client calls and SQL write transactions")
    args = parser.parse_args(argv)
    n_trials, rounds = (5, 1) if args.quick else (args.trials, args.rounds)
    if args.quick:
        args.fit_rows = 1000
    objectives = args.objectives.split(",")
    if not set(objectives) <= {"no-op", "fit"}:
        parser.error(f"--objectives takes no-op and fit, got {args.objectives!r}")

    import logging

    import mlflow  # noqa: F401  (imported before its loggers are quietened: the import sets them up)
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore")
    logging.getLogger("mlflow").setLevel(logging.WARNING)

    print(f"trials per contender and round: {n_trials}, rounds: {rounds}; overhead in ms per trial "
          "(ratio to MLflowCallback in brackets)", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for name in objectives:
            use_fit_objective(args.fit_rows if name == "fit" else 0)
            title = ("\nno-op objective" if name == "no-op" else
                     f"\nfit objective (a depth-5 decision tree on {args.fit_rows} rows x 10 features)")
            print("\n".join(table(title, measure(n_trials, rounds, folder))), flush=True)
        if args.calls or args.quick:
            use_fit_objective(0)
            print(f"\nclient calls and SQL write transactions, no-op objective, {n_trials} trials per contender:")
            print("\n".join(call_table(n_trials, folder)))


if __name__ == "__main__":
    main()
