"""``fairops baseline``: a plain LightGBM baseline on a bundled data set, scored on the task's metrics."""

from __future__ import annotations

import textwrap

from ..datasets import LOADERS, load_dataset, train_validation_test_split


def run_baseline(dataset: str = "adult", *, seed: int = 0, n_estimators: int = 200) -> dict:
    """Fit LightGBM on the train split; return the task's metrics on the test split.

    >>> metrics = run_baseline("german", seed=0, n_estimators=20)
    >>> sorted(metrics["test"])
    ['accuracy', 'accuracy_high', 'accuracy_low', 'auc_s', 'auc_y', 'fairness', 'fairness.sex', 'fairness_high', 'fairness_high.sex', 'fairness_low', 'fairness_low.sex', 'positive_share']
    """  # noqa: E501 - a doctest's expected output is one line
    import lightgbm

    data = load_dataset(dataset)
    task = data.task
    parts = train_validation_test_split(data.y, data.sensitive[list(task.sensitive)], seed=seed)
    model = lightgbm.LGBMClassifier(n_estimators=n_estimators, random_state=seed, verbose=-1, n_jobs=2)
    model.fit(data.X.iloc[parts.train], data.y[parts.train])
    scores = model.predict_proba(data.X.iloc[parts.test])[:, 1]  # type: ignore[call-overload]  # LightGBM's stubs
    metrics = task.evaluate(data.y[parts.test], scores, data.sensitive.iloc[parts.test], seed=seed)
    return {"dataset": dataset, "task": task.describe(), "rows": {"train": len(parts.train), "test": len(parts.test)},
            "test": metrics}


def _run(args) -> int:
    result = run_baseline(args.dataset, seed=args.seed)
    print(f"dataset: {result['dataset']}  train rows: {result['rows']['train']}  test rows: {result['rows']['test']}\n"
          f"task: {result['task']}")
    print("LightGBM baseline on the test split:")
    for name, value in result["test"].items():
        print(f"  {name:<14} {value:.4f}")
    return 0


def add_parser(subcommands) -> None:
    parser = subcommands.add_parser("baseline", help="fit a LightGBM baseline and print its task metrics",
                                    description=textwrap.fill(
                                    "fairops baseline: LightGBM with default settings (200 rounds) "
                                    "fitted on the training rows of fairops tune's split of a bundled data "
                                    "set, and the task's metrics on the test rows (the target rate set on "
                                    "those rows) with 90% intervals: a reference that a fair tune should beat "
                                    "on fairness without losing much accuracy", 100))
    parser.add_argument("--dataset", default="adult", choices=sorted(LOADERS), metavar="NAME",
                        help=f"a bundled data set with its paper task: {', '.join(sorted(LOADERS))}")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data split and the model")
    parser.set_defaults(run=_run)
