"""A study run by Fairband and tracked in MLflow can be pickled mid-run and resumed (Optuna's FAQ way to keep an
in-memory study: ``joblib.dump(study)``), and the resumed run fits what an uninterrupted one fits."""

import copy
import pickle

import joblib
import optuna
import pytest

from fairops.datasets import load_german
from fairops.fairband import FairbandPruner, FairbandSampler, RungProgress
from fairops.tracking._callback import FairnessTrackingCallback
from fairops.tuning import FairnessObjective

# eta 3, s_max 2: one iteration is 22 fits (brackets of 9-3-1, 5-1 and 3 configurations)
SCHEDULE = {"eta": 3, "s_max": 2, "iterations": 1}


@pytest.fixture(scope="module")
def objective():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return FairnessObjective(load_german(), families=["logistic_regression"], max_train_rows=300)


def _study() -> optuna.Study:
    return optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=3, **SCHEDULE),
                               pruner=FairbandPruner(), study_name="pickled")


def _fits(study) -> list:
    return [(t.number, t.state.name, t.params, t.values, t.user_attrs.get("rung")) for t in study.trials]


def _tracked_trials(callback, study) -> list[int]:
    return sorted(callback.trial_run_ids(study))


@pytest.mark.slow  # about 7 s: two runs of 22 fits and a fresh MLflow store
def test_a_study_dumped_mid_run_resumes_to_the_fits_of_an_uninterrupted_run(objective, tmp_path):
    whole = _study()
    whole.optimize(objective)

    callback = FairnessTrackingCallback(f"sqlite:///{tmp_path}/mlflow.db", "pickled", alpha=0.5,
                                        synchronous=False)
    halfway = _study()
    # 11 fits: rung 0 of every bracket and the first of bracket 2's rung 1, which ranked rung 0
    halfway.optimize(objective, n_trials=11, callbacks=[callback])
    joblib.dump((halfway, callback), tmp_path / "study.pkl")
    resumed, resumed_callback = joblib.load(tmp_path / "study.pkl")
    resumed.optimize(objective, callbacks=[resumed_callback])
    resumed_callback.finish(resumed)

    assert len(whole.trials) == 22 + 1  # the trial past the last slot is refused (PRUNED) and stops the run
    assert _fits(resumed) == _fits(whole)
    # the loaded callback rebuilt its client and kept the study's parent run: every fit tracked once, under it
    parents = resumed_callback.client.search_runs([resumed_callback.experiment_id(resumed)],
                                                  "tags.`fairops.role` = 'study'")
    assert [run.info.run_id for run in parents] == [callback.parent_run_id(halfway)]
    assert _tracked_trials(resumed_callback, resumed) == list(range(23))


def test_deepcopy_and_pickle_keep_the_sampler_pruner_and_callback_working(tmp_path):
    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        progress = RungProgress(trial)
        for fraction in progress:
            progress.report(x * fraction, 1 - x)
        return progress.values

    study = optuna.create_study(directions=["maximize"] * 2, pruner=FairbandPruner(eta=2, s_max=1),
                                sampler=FairbandSampler(eta=2, s_max=1, mode="async", seed=0))
    callback = FairnessTrackingCallback(f"sqlite:///{tmp_path}/mlflow.db", "copies", synchronous=False)
    study.optimize(objective, n_trials=4, callbacks=[callback])
    copied, copied_callback = copy.deepcopy((study, callback))
    unpickled, unpickled_callback = pickle.loads(pickle.dumps((study, callback)))
    for each, each_callback in ((study, callback), (copied, copied_callback), (unpickled, unpickled_callback)):
        each.optimize(objective, n_trials=4, callbacks=[each_callback])
    assert _fits(copied) == _fits(unpickled) == _fits(study)
    assert copied_callback._writes is not callback._writes and copied_callback.client is not callback.client
    for each_callback in (callback, copied_callback, unpickled_callback):
        each_callback.flush()
    assert len(callback.client.search_runs([callback.experiment_id(study)], "tags.`fairops.role` = 'trial'")) == 16
