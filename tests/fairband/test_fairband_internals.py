"""The one module that reaches past Optuna's public API, on real storages.

Every attribute the schedule writes is one public storage call, whatever the storage: an in-memory,
SQLite and journal study of the same seed must come out the same, and the same as the reference run.
Base samplers read a view of public storage calls (tests/fairband/test_fairband_base_samplers.py).
"""

import uuid

import optuna
import pytest
from optuna.storages import InMemoryStorage, JournalStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend

from fairops.fairband import FairbandSampler, _optuna_internals as internals
from fairops.tuning._toy import ToyFitError
from tests.fairband.test_fairband_sync import _objective, check_against_reference

optuna.logging.set_verbosity(optuna.logging.ERROR)


def _run(storage, s_max: int = 1):
    study = optuna.create_study(directions=["maximize", "maximize"], storage=storage,
                                study_name=f"paths-{uuid.uuid4().hex[:8]}",
                                sampler=FairbandSampler(seed=7, s_max=s_max, iterations=1))
    study.optimize(_objective(), catch=(ToyFitError,))
    check_against_reference(study, "auto", s_max=s_max)
    return [(t.number, t.state, t.params, t.values, t.user_attrs,
             {k: v for k, v in t.system_attrs["fairband:claim"].items() if k != "worker"})
            for t in study.get_trials(deepcopy=False)]


def _writes(engine):
    """Count the statements that write, on ``engine`` (SQLAlchemy's public events)."""
    from sqlalchemy import event

    count = [0]

    def on_execute(connection, cursor, statement, *args):
        count[0] += statement.lstrip()[:6].upper() in ("INSERT", "UPDATE")

    event.listen(engine, "before_cursor_execute", on_execute)
    return count


def test_sqlite_and_journal_studies_equal_the_in_memory_one(tmp_path):
    in_memory = _run(InMemoryStorage())
    assert _run(RDBStorage(f"sqlite:///{tmp_path / 'study.db'}")) == in_memory
    assert _run(JournalStorage(JournalFileBackend(str(tmp_path / "study.journal")))) == in_memory


def test_a_claim_is_one_public_call_per_attribute(tmp_path):
    storage = RDBStorage(f"sqlite:///{tmp_path / 'study.db'}")
    study = optuna.create_study(directions=["maximize", "maximize"], storage=storage)
    trial = study.ask()
    writes = _writes(storage.engine)
    internals.write_trial_attrs(study, trial, user={"budget": 0.5, "rung": 1}, system={"fairband:claim": {"slot": 3}})
    stored = storage.get_trial(trial._trial_id)
    assert (stored.user_attrs, stored.system_attrs) == ({"budget": 0.5, "rung": 1}, {"fairband:claim": {"slot": 3}})
    assert writes[0] >= 3  # each attribute its own upsert: nothing written past Optuna's storage methods
    study.tell(trial, (0.5, 0.5))
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        internals.write_trial_attrs(study, trial, user={"budget": 1.0})


def test_a_stored_trial_carries_its_storage_id_and_optunas_rdb_storage_has_heartbeats():
    assert issubclass(RDBStorage, internals.BaseHeartbeat)
    storage = InMemoryStorage()
    study = optuna.create_study(storage=storage)
    study.optimize(lambda trial: 0.0, n_trials=3)
    study_id = storage.get_study_id_from_name(study.study_name)
    stored = storage.get_all_trials(study_id)
    assert [internals.stored_trial_id(t) for t in stored] == \
        [storage.get_trial_id_from_study_id_trial_number(study_id, t.number) for t in stored]
    assert [internals.trial_id_of(study, t) for t in study.trials] == [internals.stored_trial_id(t) for t in stored]


def test_the_internals_are_known_for_optuna_5_only():
    assert internals.internals_known("5.0.0") and internals.internals_known("5.9.1")
    assert not internals.internals_known("6.0.0") and not internals.internals_known("4.9.0")
