"""What ``fairops tune`` prints at the end: the pick against the most accurate fit with intervals and counts,
notes where validation did not hold, failed fits, where the new version went and the commands to go on."""

from __future__ import annotations

import sys

from ...metrics._fairness_rule import percent
from ...tracking._stores import tracking_uri_in
from .settings import TuneSettings


def failures_of(trials) -> dict:
    """Failed fits by reason (constant validation scores, errors)."""
    from ...tuning._quiet import failures

    return dict(failures(trials))


_WHY = {
    "constant validation scores": "the model gave every validation row the same score (a configuration "
                                  "regularised so strongly that it learnt nothing), so it ranks nothing",
    "error": "the fit raised an error (reported above as it happened)",
}


def missing_lines(X, families) -> list[str]:
    """Per feature column with missing values: how many, and how the tuned families take them (LightGBM and the
    SCAFF forest split on them, a reduction as its base does, every other family imputes inside the model).

    >>> import pandas as pd
    >>> X = pd.DataFrame({"lsat": [30.0, None, 41.0, None], "tier": pd.Categorical(["a", "b", None, "a"])})
    >>> for line in missing_lines(X, ["lightgbm", "logistic_regression", "grid_search"]):
    ...     print(line)
    missing values (kept: every family takes them, and a served model answers rows missing them):
      lsat: 2 of 4 rows (50.0%): lightgbm, grid_search over lightgbm split on them; logistic_regression, grid_search over decision_tree or logistic_regression impute the median and add a missing-value indicator
      tier: 1 of 4 rows (25.0%): lightgbm, grid_search over lightgbm split on them; logistic_regression, grid_search over decision_tree or logistic_regression impute the most frequent value and add a missing-value indicator
    """  # noqa: E501 - a doctest's expected output is one line
    from ...models._families import FAMILIES

    counts = X.isna().sum()
    if not counts.any():
        return []
    native: list[str] = []
    imputing: list[str] = []
    for name in families:
        family = FAMILIES.get(name)
        if family is None:
            continue
        if not family.bases:
            (imputing if family.needs_encoding else native).append(name)
            continue
        for needs, found in ((False, native), (True, imputing)):
            bases = [base for base in family.bases if FAMILIES[base].needs_encoding == needs]
            if bases:
                found.append(f"{name} over {' or '.join(bases)}")
    lines = ["missing values (kept: every family takes them, and a served model answers rows missing them):"]
    for column, count in counts.items():
        if not count:
            continue
        value = "the median" if X[column].dtype.kind in "biuf" else "the most frequent value"
        ways = ([f"{', '.join(native)} split on them"] if native else []) + \
            ([f"{', '.join(imputing)} impute {value} and add a missing-value indicator"] if imputing else [])
        lines.append(f"  {column}: {int(count):,} of {len(X):,} rows ({count / len(X):.1%}): {'; '.join(ways)}")
    return lines


def failure_note(failures: dict, fits: int) -> str:
    """Why fits failed and whether it matters for the pick.

    >>> print(failure_note({"constant validation scores": 12}, 206))
    failed fits: 12 of 206 (5.8%): 12 constant validation scores: the model gave every validation row the same score (a configuration regularised so strongly that it learnt nothing), so it ranks nothing.
    They rank last and are never picked; with 94% of the fits compared, the pick is not affected.
    """  # noqa: E501 - a doctest's expected output is one line
    failed = sum(failures.values())
    share = failed / max(fits, 1)
    reasons = "; ".join(f"{count} {reason}: {_WHY.get(reason, reason)}" for reason, count in sorted(failures.items()))
    small_data = " (on small data, --selection robust gives every fit at least 500 rows)" \
        if failures.get("constant validation scores") else ""
    verdict = (f"with {1 - share:.0%} of the fits compared, the pick is not affected" if share <= 0.1 else
               f"{share:.0%} of the fits did not compete, so fewer configurations were compared than the schedule "
               f"planned{small_data}")
    return f"failed fits: {failed} of {fits} ({share:.1%}): {reasons}.\nThey rank last and are never picked; {verdict}."


def with_interval(figures: dict, name: str) -> str:
    """``value [low, high]`` of a validation figure (the value alone when it has no interval).

    >>> with_interval({"fairness": 0.9, "fairness_low": 0.75, "fairness_high": 1.0}, "fairness")
    '0.9000 [0.7500, 1.0000]'
    """
    low, high = figures.get(f"{name}_low"), figures.get(f"{name}_high")
    text = f"{figures[name]:.4f}"
    return text if low is None or high is None else f"{text} [{low:.4f}, {high:.4f}]"


def counts_text(task, y, sensitive, held: str = "") -> str:
    """The rows behind the task's fairness ratio, per group of each attribute (positives for TPR, negatives
    for FPR, all rows for the positive rate); ``held`` says how the rows were held out.

    >>> import numpy as np, pandas as pd
    >>> from fairops.metrics import Task
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> counts_text(task, np.array([1, 1, 0, 1]), pd.DataFrame({"sex": ["f", "m", "m", "m"]}))
    '4 rows; behind the TPR ratio: sex f 1, m 2 positives'
    """
    from ...metrics._windows import BASE_UNIT, rate_bases

    bases = rate_bases(task, y, sensitive)
    parts = [f"{attribute} " + ", ".join(f"{group} {count}" for group, count in groups.items())
             + f" {BASE_UNIT[task.fairness]}" for attribute, groups in bases.attributes.items()]
    return f"{bases.rows} rows{held}; behind the {task.fairness_label}: " + "; ".join(parts)


def outside_notes(rows: dict, choice=None) -> list[str]:
    """A line for each model whose test fairness lies outside its validation interval (and, for the robust
    pick, outside the cross-validated one): the validation figure did not hold on new rows.

    >>> rows = {"pick": {"validation": {"fairness": 0.67, "fairness_low": 0.27, "fairness_high": 1.0},
    ...                  "test": {"fairness": 0.2}}}
    >>> outside_notes(rows)
    ['note: pick: test fairness 0.2000 lies below its validation interval [0.2700, 1.0000]']
    """
    notes = []
    assessed = None if choice is None or choice.chosen.assessed is None else choice.chosen.assessed
    for number, (label, row) in enumerate(rows.items()):
        test = row["test"]["fairness"]
        intervals = [("validation", row["validation"])] + ([("cross-validated", assessed)]
                                                          if number == 0 and assessed is not None else [])
        for name, figures in intervals:
            low, high = figures.get("fairness_low"), figures.get("fairness_high")
            if low is None or high is None or low <= test <= high:
                continue
            side = "below" if test < low else "above"
            notes.append(f"note: {label}: test fairness {test:.4f} lies {side} its {name} interval "
                         f"[{low:.4f}, {high:.4f}]")
    return notes


def threshold_origin(task) -> str:
    """Where a single decision's threshold comes from, in words.

    >>> from fairops.metrics import Task
    >>> threshold_origin(Task.from_string("recall@threshold=0.3,ratio=tpr", sensitive=["sex"]))
    "task's fixed threshold (0.3)"
    """
    fixed = None if task is None else task.fixed_threshold
    return "threshold set on the validation rows" if fixed is None else f"task's fixed threshold ({fixed:g})"


def print_summary(result, *, out=None) -> None:
    """The pick vs the most accurate fit, on validation (refit, with intervals) and test, and where to look next."""
    out = out or sys.stdout
    task = result.task
    accuracy, fairness = (task.metric, task.fairness_label) if task else ("accuracy", "fairness")
    label_width = max([28, *(len(label) + 2 for label in result.rows)])
    wide = 25
    print("\n" + f"{'':<{label_width}}{'validation rows':>{2 * wide}}{'test rows, decided as served':>{2 * wide}}",
          file=out)
    print(f"{'':<{label_width}}{accuracy:>{wide}}{fairness:>{wide}}{accuracy:>{wide}}{fairness:>{wide}}", file=out)
    for label, row in result.rows.items():
        v, t = row["validation"], row["test"]
        print(f"{label:<{label_width}}{with_interval(v, 'accuracy'):>{wide}}{with_interval(v, 'fairness'):>{wide}}"
              f"{with_interval(t, 'accuracy'):>{wide}}{with_interval(t, 'fairness'):>{wide}}", file=out)
    if task is not None:
        print(f"({accuracy} = {task.accuracy_name}; {fairness} = lowest / highest over "
              f"{task.over}; positive class: {task.positive or 'label 1'})", file=out)
    where = "thresholds per group" if result.settings.decision == "per-group" else threshold_origin(task)
    print(f"(both models refit on all training rows; value [{percent(result.settings.level)} confidence interval]; "
          f"the test rows are scored at the {where})", file=out)
    if result.test_counts:
        pick = next(iter(result.rows.values()), None)
        share = None if pick is None else pick["test"].get("positive_share")
        decided = "" if share is None else f"; the pick decides positive for {share:.1%} of them"
        print(f"(test: {result.test_counts}{decided})", file=out)
    for note in result.notes:
        print(note, file=out)
    for note in outside_notes(result.rows, result.choice):
        print(f"{note}: the validation figure did not hold on these rows", file=out)
    if result.choice is not None:
        print(_refit_note(result.choice), file=out)
    if result.failures:
        print(failure_note(result.failures, result.fits), file=out)
    for line in result.missing:
        print(line, file=out)
    settings = result.settings
    if result.already_registered:
        print(f"\nalready registered by an earlier run of this study: {settings.model_name} version "
              f"{result.registered.version} (models:/{settings.model_name}/{result.registered.version}); "
              "nothing new registered", file=out)
    elif result.registered is not None:
        _print_registered(result, out)
    if result.registered is not None:
        print(serving_text(settings), file=out)
    if result.links is not None:
        print(result.links.text(), file=out)


def _refit_note(choice) -> str:
    """One line on the robust rule's refits: how many, and which the most accurate refit dominated."""
    dominated = ", ".join(f"#{n}" for n in choice.dominated)
    note = (f"(robust selection: {len(choice.refits)} fits refit on all training rows; "
            + (f"dropped as dominated by the most accurate refit: {dominated}" if dominated
               else "none dominated by the most accurate refit"))
    assessed = choice.chosen.assessed
    if assessed is not None:
        note += (f"; chosen on 5-fold cross-validation over the training and validation rows, where the pick's "
                 f"fairness is {with_interval(assessed, 'fairness')}")
    return note + ")"


def _print_registered(result, out) -> None:
    """Where the new version went: ``@champion``, or ``@challenger`` beside the champion, with the gate."""
    from ...tracking._ui_links import promote_command

    settings, registered = result.settings, result.registered
    print(f"\nregistered: models:/{settings.model_name}@{registered.alias} (version {registered.version})", file=out)
    if registered.kept_version is None:
        return
    print(f"@champion stays version {registered.kept_version}; version {registered.version} is the challenger",
          file=out)
    if result.verdict is not None:
        print(f"promotion gate on the test rows: {result.verdict.text()}", file=out)
        return
    default_uri = settings.tracking_uri == tracking_uri_in(settings.project_dir)
    command = promote_command(settings.model_name, dataset=settings.dataset, data=settings.data,
                              target=settings.target, sensitive=settings.sensitive, holdout=settings.holdout,
                              seed=settings.seed, project_dir=settings.project_dir,
                              tracking_uri=None if default_uri else settings.tracking_uri)
    print(f"gate it (fairness and accuracy against the champion on the same rows):\n  {command}", file=out)


def serving_text(settings: TuneSettings) -> str:
    """The command serving the registered model's ``@champion`` (pasted verbatim from any folder) and a request
    to try."""
    from ...tracking._ui_links import DEFAULT_SERVE_PORT, free_port, serve_command

    assert settings.tracking_uri is not None  # resolved settings
    port = free_port(DEFAULT_SERVE_PORT, avoid={settings.ui_port})  # free now, so the command runs as printed
    # @champion, not the version number: after a promotion the same command serves the promoted model
    command = serve_command(settings.tracking_uri, f"models:/{settings.model_name}@champion", port)
    return (f"serve it: {command}\n"
            f"  then POST rows to http://127.0.0.1:{port}/invocations as "
            '{"dataframe_records": [{"<column>": <value>, ...}, ...]} (one object per row, every input column)')
