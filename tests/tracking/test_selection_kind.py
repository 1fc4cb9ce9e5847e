"""A selection says which rule made it as a value (SelectionKind), and the words and records that name the
rule read that value, not the rule's text."""

import dataclasses

import optuna
import pytest

from fairops.fairband import SelectionKind, select_best
from fairops.registry._selection_rules import describe, record, rule_kind, select


@pytest.fixture()
def study():
    study = optuna.create_study(directions=["maximize", "maximize"])
    for accuracy, fairness in [(0.9, 0.5), (0.8, 0.8), (0.6, 1.0)]:
        intervals = {"accuracy": [accuracy - 0.05, accuracy], "fairness": [fairness - 0.1, fairness]}
        study.add_trial(optuna.trial.create_trial(values=[accuracy, fairness], user_attrs={"intervals": intervals}))
    return study


def test_each_rule_names_its_kind(study):
    assert select_best(study, alpha=0.5).kind is SelectionKind.FAIRBAND
    assert select_best(study, alpha=0.5, rule="robust").kind is SelectionKind.LOWER_BOUNDS
    assert select_best(study, min_fairness=0.7).kind is SelectionKind.CONSTRAINT
    assert select(study, {"trial": 2}).kind is SelectionKind.BY_HAND
    assert [rule_kind(select(study, rule, alpha=0.5)) for rule in ("fairband", "robust", "fairness>=0.7")] \
        == ["fairband", "fairband", "constraint"]
    assert record(select(study, {"trial": 2}), study)["kind"] == "by hand"


def test_the_words_follow_the_kind_not_the_text(study):
    pick = select_best(study, alpha=0.5, rule="robust")
    assert describe(pick, study).startswith("robust: argmax alpha*accuracy_low")
    # a rule text that reads like another kind does not change what the selection is
    renamed = dataclasses.replace(pick, rule="trial 1 chosen by hand")
    assert describe(renamed, study) == describe(pick, study) and rule_kind(renamed) == "fairband"
    by_hand = dataclasses.replace(select(study, {"trial": 1}), rule="robust: says so")
    assert rule_kind(by_hand) == "by hand" and describe(by_hand, study) == "robust: says so"
