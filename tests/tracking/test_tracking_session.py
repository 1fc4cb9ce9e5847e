"""The MLflow session: filter values as MLflow's grammar reads them, paged searches, the run-once registration."""

import pickle

import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression

from fairops.registry import Placement, Refit
from fairops.registry._registration import register_best
from fairops.registry._run_once import register_once
from fairops.tracking._callback import FairnessTrackingCallback
from fairops.tracking._search import paged, quoted
from fairops.tracking._session import TrackingSession
from tests.mlflow_stores import empty_store_uri

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture
def uri(tmp_path):
    return empty_store_uri(tmp_path / "mlflow.db")


@pytest.mark.parametrize("value", ["plain", "it's", 'say "hi"', "back\\slash", "100%_"])
def test_a_quoted_value_matches_exactly_itself(uri, value):
    client = MlflowClient(uri)
    experiment = client.create_experiment("quotes")
    for text in (value, value + "x", "it\\'s"):
        client.create_run(experiment, tags={"t": text, "u": "y"})
    found = client.search_runs([experiment], f"tags.t = {quoted(value)} and tags.u = 'y'")
    assert [run.data.tags["t"] for run in found] == [value]


@pytest.mark.parametrize("value", ["both ' and \"", "ends in \\"])
def test_a_value_no_filter_can_match_is_refused(value):
    with pytest.raises(ValueError, match="MLflow's search filter cannot match"):
        quoted(value)


def test_paged_reads_past_the_first_page(uri):
    client = MlflowClient(uri)
    experiment = client.create_experiment("pages")
    for _ in range(5):
        client.create_run(experiment)
    assert len(paged(client.search_runs, [experiment], "", page_size=2)) == 5


def test_a_copied_session_keeps_the_parent_runs_and_opens_its_own_client(uri):
    session = TrackingSession(uri, settle_seconds=0)
    study = optuna.create_study(study_name="copied")
    parent = session.parent_run_id(study)
    copied = pickle.loads(pickle.dumps(session))
    assert copied.client is not session.client and copied.parent_run_id(study) == parent


def test_a_study_named_with_a_quote_finds_its_parent_and_trial_runs(uri):
    callback = FairnessTrackingCallback(uri, settle_seconds=0)
    study = optuna.create_study(study_name="it's a study")
    study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=3, callbacks=[callback])
    callback.finish(study)
    assert sorted(callback.trial_run_ids(study)) == [0, 1, 2]
    again = TrackingSession(uri, settle_seconds=0)  # a new session elects the same parent run
    study.set_user_attr("fairops:mlflow_parent", None)
    assert again.parent_run_id(study) == callback.parent_run_id(study)


def test_register_once_calls_an_inner_registration_of_the_same_model_without_the_lock(uri):
    session = TrackingSession(uri)
    study = optuna.create_study(study_name="nested")
    inner = lambda: register_once(session, study, "m", 0, lambda: "made")  # noqa: E731
    assert register_once(session, study, "m", 0, inner) == (("made", False), False)


@pytest.mark.slow
def test_register_best_once_returns_the_version_an_earlier_registration_made(uri):
    study = optuna.create_study(directions=["maximize", "maximize"], study_name="once")
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
    callback = FairnessTrackingCallback(uri, settle_seconds=0)

    rows = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0]})
    model = LogisticRegression().fit(rows, [0, 0, 1, 1])
    common = {"rule": {"trial": 0},
              "refit": Refit(lambda params, trial: model, input_example=rows, pip_requirements=["fairops"])}
    first = register_best(study, "once-model", session=callback, placement=Placement(once=True), **common)
    again = register_best(study, "once-model", session=callback.session, placement=Placement(once=True), **common)
    assert (first.version, first.registered_before) == ("1", False)
    assert (again.version, again.alias, again.run_id, again.registered_before) == ("1", "champion", first.run_id,
                                                                                  True)
    assert again.card == first.card
    other = register_best(study, "once-model", session=TrackingSession(uri), **common)
    assert (other.version, other.alias, other.kept_version) == ("2", "challenger", "1")
