"""Registered versions for the lifecycle tests: real classifiers on synthetic rows, registered with
register_best and the tags fairops tune sets (task, validation threshold, validation fairness)."""

import numpy as np
import optuna
import pandas as pd
from sklearn.linear_model import LogisticRegression

from fairops.metrics import Task
from fairops.mlflow.registry import register_best
from fairops.mlflow.version_record import validation_tags
from fairops.models import InputSchema

TASK = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
FEATURES = ["a", "b", "c"]


def rows(seed: int, n: int, *, collapse: bool = False) -> pd.DataFrame:
    """Labelled rows; ``collapse=True`` makes the women's positives look like negatives to the model
    (their label no longer follows ``a``), so the model's TPR for women, and its TPR ratio, collapse."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["f", "m"], n)
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=FEATURES)
    y = (frame["a"] + 0.3 * frame["b"] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    if collapse:
        women = sex == "f"
        frame.loc[women, "a"] = -np.abs(frame.loc[women, "a"]) * np.where(y[women] == 1, 1.0, -1.0)
    return frame.assign(sex=sex, y=y)


def register(uri: str, name: str, *, C: float = 1.0, seed: int = 0, study_name: str = "lifecycle",
             extra_tags: dict | None = None):
    """Fit a logistic regression on rows of ``seed``, set its threshold on validation rows, register it."""
    train, validation = rows(seed, 2000), rows(seed + 100, 2000)
    model = LogisticRegression(C=C).fit(train[FEATURES], train["y"])
    scores = model.predict_proba(validation[FEATURES])[:, 1]
    tags = validation_tags(TASK, validation["y"].to_numpy(), scores, validation[["sex"]])
    study = optuna.create_study(directions=["maximize", "maximize"], study_name=f"{study_name}-{seed}")
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={"C": C},
                                              distributions={"C": optuna.distributions.FloatDistribution(1e-3, 10)}))
    return register_best(study, name, rule={"trial": 0}, if_taken="challenger", refit=lambda params, trial: model,
                         tracking_uri=uri, experiment_name=f"{study_name}-{seed}", pip_requirements=["fairops"],
                         log_options={"input_schema": InputSchema.for_model(model, train[FEATURES])},
                         extra_tags={**tags, **(extra_tags or {})})
