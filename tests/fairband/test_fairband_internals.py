"""The one module that reaches past Optuna's public API: both of its paths, on real storages.

Inside the Optuna versions it was written for, attributes go in one transaction (RDB) or one append
(Journal); outside them, or when switched off, one public storage call each. Both paths must leave the
same study behind; the fast one must really save storage writes.
"""

import uuid

import optuna
import pytest
from optuna.storages import JournalStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend

from fairops.fairband import FairbandSampler, _optuna_internals as internals
from fairops.tuning.toy import ToyFitError
from tests.fairband.test_fairband_sync import _objective, check_against_reference

optuna.logging.set_verbosity(optuna.logging.ERROR)


def _run(storage, fast: bool, s_max: int = 1):
    study = optuna.create_study(directions=["maximize", "maximize"], storage=storage,
                                study_name=f"paths-{uuid.uuid4().hex[:8]}",
                                sampler=FairbandSampler(seed=7, s_max=s_max, iterations=1))
    with internals.use_internals(fast):
        study.optimize(_objective(), catch=(ToyFitError,))
    check_against_reference(study, "auto", s_max=s_max)
    return [(t.number, t.state, t.params, t.values, t.user_attrs,
             {k: v for k, v in t.system_attrs["fairband:claim"].items() if k != "worker"})
            for t in study.get_trials(deepcopy=False)]


def _commits(engine):
    from sqlalchemy import event

    count = [0]
    event.listen(engine, "commit", lambda connection: count.__setitem__(0, count[0] + 1))
    return count


def test_rdb_paths_leave_the_same_study_and_the_fast_one_commits_less(tmp_path):
    fast_storage = RDBStorage(f"sqlite:///{tmp_path / 'fast.db'}")
    public_storage = RDBStorage(f"sqlite:///{tmp_path / 'public.db'}")
    fast_commits, public_commits = _commits(fast_storage.engine), _commits(public_storage.engine)
    assert _run(fast_storage, True) == _run(public_storage, False)
    # a rung-0 slot's claim and five attributes in one commit, not six
    assert fast_commits[0] + 5 * 5 <= public_commits[0]


def test_journal_paths_leave_the_same_study(tmp_path):
    fast = JournalStorage(JournalFileBackend(str(tmp_path / "fast.journal")))
    public = JournalStorage(JournalFileBackend(str(tmp_path / "public.journal")))
    assert _run(fast, True, s_max=2) == _run(public, False, s_max=2)
    fast_lines = sum(1 for _ in open(tmp_path / "fast.journal"))
    assert fast_lines == sum(1 for _ in open(tmp_path / "public.journal"))  # the same lines, fewer appends


def test_outside_the_known_versions_only_public_calls_are_made(monkeypatch, tmp_path):
    assert internals.internals_known("5.0.0") and internals.internals_known("5.9.1")
    assert not internals.internals_known("6.0.0") and not internals.internals_known("4.9.0")
    monkeypatch.setattr(optuna, "__version__", "6.0.0")
    monkeypatch.setattr(internals, "_warned", set())
    with pytest.warns(RuntimeWarning, match="written for Optuna 5.x"):
        assert internals.fast_paths_on() is False
    storage = RDBStorage(f"sqlite:///{tmp_path / 'future.db'}")
    commits = _commits(storage.engine)
    _run(storage, True)  # asked for the fast path, but the version is unknown
    reference = RDBStorage(f"sqlite:///{tmp_path / 'public.db'}")
    public_commits = _commits(reference.engine)
    _run(reference, False)
    assert commits[0] == public_commits[0]
