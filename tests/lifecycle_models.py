"""Registered versions for the lifecycle tests, made by examples/promote_and_monitor.py's own functions:
real classifiers on synthetic rows, registered with register_best and the tags fairops tune sets; and a
version whose task holds two sensitive attributes (sex and race), with the rows that drift in one of them."""

import importlib.util
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
from sklearn.linear_model import LogisticRegression

from fairops.metrics import Task
from fairops.models import InputSchema
from fairops.registry import Refit, VersionDetails
from fairops.registry._registration import register_best
from fairops.registry._version_record import validation_tags
from fairops.tracking import TrackingSession

_PATH = Path(__file__).resolve().parents[1] / "examples" / "promote_and_monitor.py"
_SPEC = importlib.util.spec_from_file_location("promote_and_monitor", _PATH)
example = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(example)

FEATURES, rows = example.FEATURES, example.make_rows
register = example.register_version

SEX_AND_RACE = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])


def sex_and_race_rows(seed: int, n: int, *, drift: bool = False) -> pd.DataFrame:
    """Rows (features a, b, c; sex F/M; race a/b/c at 60/30/10%; label y) where ``a`` tells the label apart.
    ``drift=True``: the positives of sex F take the features of negatives, so the champion's TPR ratio over
    sex falls from about 0.8-1.0 to 0.25-0.4 while race's stays."""
    rng = np.random.default_rng(seed)
    sex, race = rng.choice(["F", "M"], n), rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    y = rng.integers(0, 2, n)
    mean = np.where(y == 1, 0.5, -0.5)
    if drift:
        mean[(sex == "F") & (y == 1)] = -0.5
    frame = pd.DataFrame({"a": rng.normal(mean, 1.0), "b": rng.normal(size=n), "c": rng.normal(size=n)})
    return frame.assign(sex=sex, race=race, y=y)


def register_sex_and_race(uri: str, name: str, *, attribute_baselines: bool = True):
    """Register a logistic regression for :data:`SEX_AND_RACE` as ``fairops tune`` does; without
    ``attribute_baselines`` its tags are those of a version registered before they were recorded."""
    train, validation = sex_and_race_rows(0, 2000), sex_and_race_rows(1, 2000)
    model = LogisticRegression().fit(train[FEATURES], train["y"])
    tags = validation_tags(SEX_AND_RACE, validation["y"].to_numpy(), model.predict_proba(validation[FEATURES])[:, 1],
                           validation[["sex", "race"]])
    if not attribute_baselines:
        tags.pop("fairops.validation_fairness_by_attribute", None)
    study = optuna.create_study(directions=["maximize", "maximize"], study_name=name)
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
    return register_best(study, name, rule={"trial": 0},
                         refit=Refit(lambda params, trial: model, pip_requirements=["fairops"],
                                     log_options={"input_schema": InputSchema.for_model(model, train[FEATURES])}),
                         details=VersionDetails(tags=tags), session=TrackingSession(uri, name))
