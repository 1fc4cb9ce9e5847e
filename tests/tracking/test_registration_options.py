"""register_best's options: each refuses a wrong value when it is made, and register_best refuses what is not one
of them (the flat keywords of earlier versions included) before it selects or touches a store."""

import dataclasses

import optuna
import pytest

from fairops.errors import InputError
from fairops.registry import Placement, Refit, VersionDetails
from fairops.registry._registration import register_best

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture
def study():
    study = optuna.create_study(directions=["maximize", "maximize"], study_name="options")
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
    return study


def test_the_defaults_are_those_register_best_always_had():
    assert Placement() == Placement(alias="champion", if_taken="challenger", once=False)
    assert VersionDetails() == VersionDetails(description=None, tags=None, card_notes=None)
    assert Refit(print).input_example is None and Refit(print).log_options is None


@pytest.mark.parametrize("make, error, message", [
    (lambda: Placement(alias="v3"), InputError, "alias must be a non-empty name"),
    (lambda: Placement(alias=""), InputError, "alias must be a non-empty name"),
    (lambda: Placement(if_taken="V12"), InputError, "if_taken must be a non-empty name"),
    (lambda: Placement(alias="candidate", if_taken="candidate"), InputError, "if_taken must differ from alias"),
    (lambda: Placement(once="yes"), TypeError, "once must be True or False"),
    (lambda: Refit("not callable"), TypeError, "fit must be a callable"),
    (lambda: Refit(print, log_options=[("input_schema", None)]), TypeError, "log_options must be None or a mapping"),
    (lambda: Refit(print, log_options={"pip_requirements": []}), InputError, "'pip_requirements'.*a field of Refit"),
    (lambda: Refit(print, log_options={"registered_model_name": "x"}), InputError, "register_best passes it"),
    (lambda: VersionDetails(description=3), TypeError, "description must be None or a string"),
    (lambda: VersionDetails(tags=["owner"]), TypeError, "tags must be None or a mapping"),
    (lambda: VersionDetails(card_notes="risk team"), TypeError, "card_notes must be None or a mapping"),
])
def test_an_option_refuses_a_wrong_value_when_it_is_made(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_the_options_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Placement().alias = "candidate"  # type: ignore[misc]


@pytest.mark.parametrize("keyword", ["alias", "if_taken", "once", "input_example", "pip_requirements", "log_options",
                                     "description", "extra_tags", "card_notes", "tracking_uri", "experiment_name"])
def test_a_flat_keyword_of_earlier_versions_is_refused_by_name(study, keyword):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{keyword}'"):
        register_best(study, "m", **{keyword: None})


@pytest.mark.parametrize("keywords, message", [
    ({"refit": lambda params, trial: None}, r"refit must be None or a fairops.registry.Refit.*refit=Refit\(fit\)"),
    ({"placement": "champion"}, "placement must be a fairops.registry.Placement"),
    ({"details": {"tags": {}}}, "details must be a fairops.registry.VersionDetails"),
    ({"session": "sqlite:///mlflow.db"}, r"session must be .*pass session=TrackingSession\(uri\)"),
])
def test_register_best_refuses_what_is_not_its_option_before_it_selects(study, keywords, message):
    with pytest.raises(TypeError, match=message):
        register_best(study, "m", {"trial": 0}, **keywords)


def test_register_best_refuses_an_empty_name(study):
    with pytest.raises(InputError, match="name must be a non-empty registered model name"):
        register_best(study, "")
