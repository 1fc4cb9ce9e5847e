"""The study ``fairops tune`` runs: its data (and the rows held out), the sampler, the configuration every
worker must share, and the parameters the parent run records."""

from __future__ import annotations

from .settings import TuneSettings, target_trials


def load_source(settings: TuneSettings):
    """The bundled data set or the user's file, as a :class:`~fairops.datasets.Dataset`."""
    from ...datasets import load_dataset, load_table

    if settings.data is not None:
        # __post_init__: a file comes with its target and sensitive columns
        assert settings.target is not None and settings.sensitive is not None
        return load_table(settings.data, target=settings.target, sensitive=settings.sensitive, task=settings.task,
                          positive=settings.positive, holdout=settings.holdout, missing_group=settings.missing_group)
    assert settings.dataset is not None  # __post_init__: a data set or a file
    return load_dataset(settings.dataset)


def held_out_rows(settings: TuneSettings, data, row_ids):
    """The test rows of a file of one's own, fixed before any seed: ``--holdout``'s, else 20% chosen by row
    content (stratified), so two tunes of one file hold out the same rows and a gate on them judges both
    models on rows neither saw. ``None`` for a bundled data set (its split at ``--seed``, as the papers')."""
    from ...datasets._row_ids import content_holdout

    if settings.data is None:
        return None
    if data.held_out is not None:
        return data.held_out
    return content_holdout(data.y, data.sensitive[list(data.task.sensitive)], row_ids, share=0.2)


def held_out_words(settings: TuneSettings) -> str:
    """How a file's test rows were held out, in words for the counts line (nothing for a bundled data set).

    >>> held_out_words(TuneSettings(dataset=None, data="own.csv", target="y", sensitive="g", holdout="fresh"))
    ' held out, marked by --holdout fresh, the same in every tune of this file'
    """
    if settings.data is None:
        return ""
    how = f"marked by --holdout {settings.holdout}" if settings.holdout else "chosen by row content"
    return f" held out, {how}, the same in every tune of this file"


def make_sampler(settings: TuneSettings, configuration: dict | None = None):
    """The method's sampler: Fairband's (``configuration``, see :func:`study_configuration`, stored with a
    new study; a worker started with another one is refused, naming the first difference) or random search.
    """
    from ...fairband import FairbandSampler
    from ...tuning._baselines import FullBudgetRandomSampler, pick_alpha, start_configurations

    if settings.tuner.startswith("RS"):
        return FullBudgetRandomSampler(seed=settings.seed, min_fairness=settings.min_fairness)
    alpha = pick_alpha(settings.tuner) if settings.alpha is None else settings.alpha
    starts = start_configurations(settings.selection, (configuration or {}).get("families"), settings.profile)
    if starts is not None:
        starts = starts[:settings.s_max + 1]  # bracket 0 holds s_max + 1 configurations
    return FairbandSampler(eta=settings.eta, s_max=settings.s_max, alpha=alpha, seed=settings.seed,
                           wait_timeout=settings.wait_timeout,
                           configuration=configuration, iterations=settings.iterations,
                           min_fairness=settings.min_fairness, start_configurations=starts)


def study_configuration(settings: TuneSettings, data, families: list[str]) -> dict:
    """Everything besides the sampler's own settings that defines a tuning study (its workers must agree).

    >>> from fairops.datasets import load_german
    >>> settings = TuneSettings(dataset="german", max_train_rows=300)
    >>> sorted(study_configuration(settings, load_german(), ["logistic_regression"]))
    ['data', 'data_sha256', 'families', 'max_train_rows', 'method', 'profile', 'selection', 'sensitive', 'task']
    """
    # the decision mode is recorded only when it is not the default, so studies from before it still join
    mode: dict[str, str] = {"decision": settings.decision} if settings.decision != "single" else {}
    if settings.data is not None:
        mode["test_rows"] = f"column {settings.holdout}" if settings.holdout else "by row content"
    return {"data": settings.source_name, "data_sha256": data_sha256(data), "task": str(data.task),
            "sensitive": list(data.task.sensitive), "method": settings.tuner, "families": list(families),
            "profile": settings.profile, "max_train_rows": settings.max_train_rows, "selection": settings.selection,
            **mode, **({"blind": True} if settings.blind else {})}


def data_sha256(data) -> str:
    """sha256 of a data set's values (features, label, sensitive columns), index and column names included.

    Both the study's configuration (a worker on other data is refused) and the parent run's
    ``data_sha256`` param hold it; a study keeps its value, so the value of given data must never change.

    >>> from fairops.datasets import load_german
    >>> data_sha256(load_german())[:16]
    '1d514ec9a66fdcd9'
    """
    import hashlib

    import pandas as pd

    digest = hashlib.sha256()
    for frame in (data.X, pd.DataFrame({"label": data.y}), data.sensitive):
        digest.update(",".join(map(str, frame.columns)).encode())
        digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return digest.hexdigest()


def study_params(settings: TuneSettings, data, families, alpha) -> dict:
    """What the parent run records about the study: data and its hash, task, method, alpha rule, budget, seed."""
    from .. import _mlflow_study as mlflow_study

    return {
        "dataset": settings.source_name, "data_source": data.source or settings.source_name,
        "data_sha256": data_sha256(data), "rows": len(data.y), **mlflow_study.task_params(data),
        "method": settings.tuner, "alpha_rule": "auto (FB-auto)" if alpha == "auto" else f"{float(alpha):g}",
        "selection": settings.selection,
        "profile": settings.profile, "seed": settings.seed, "iterations": settings.iterations,
        "eta": settings.eta, "s_max": settings.s_max,
        "fits": target_trials(settings), "families": ",".join(families),
        "max_train_rows": settings.max_train_rows if settings.max_train_rows is not None else "all",
        "min_fairness": settings.min_fairness if settings.min_fairness is not None else "none",
        "decision": settings.decision, "blind": settings.blind,
        **({"missing_values": missing_counts_text(data.X)} if data.X.isna().any().any() else {}),
        **({"unlabelled_rows_left_out": data.unlabelled} if data.unlabelled else {}),
    }


def missing_counts_text(X) -> str:
    """``column=count`` of the feature columns with missing values, comma-separated.

    >>> import pandas as pd
    >>> missing_counts_text(pd.DataFrame({"a": [1.0, None], "b": [1, 2], "c": [None, None]}))
    'a=1,c=2'
    """
    counts = X.isna().sum()
    return ",".join(f"{column}={int(count)}" for column, count in counts.items() if count)
