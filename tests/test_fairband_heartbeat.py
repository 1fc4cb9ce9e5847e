"""A worker that dies between creating a trial and starting its fit must not block the schedule.

Optuna starts its heartbeat thread only when ``ask()`` has returned, so such a trial would have no
heartbeat at all and ``fail_stale_trials`` would never fail it. ``study.ask()`` without ``tell`` is
exactly that state: the trial exists, RUNNING, and nothing beats for it afterwards.
"""

import optuna
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from fairops.fairband import FairbandSampler
from fairops.fairband.toy import make_toy_objective


def test_a_trial_abandoned_right_after_ask_is_failed_and_the_iteration_completes(tmp_path):
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    storage = RDBStorage(f"sqlite:///{tmp_path / 'hb.db'}", heartbeat_interval=1, grace_period=2)
    study = optuna.create_study(directions=["maximize", "maximize"], storage=storage,
                                sampler=FairbandSampler(seed=0, wait_timeout=60))
    abandoned = study.ask()  # the "dead worker": never told, never beats again
    study.optimize(make_toy_objective(), n_trials=205)
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == 206
    assert trials[abandoned.number].state == TrialState.FAIL
    assert all(t.state == TrialState.COMPLETE for t in trials if t.number != abandoned.number)
    assert {t.user_attrs["rung"] for t in trials} == {0, 1, 2, 3, 4}
